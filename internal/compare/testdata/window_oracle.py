#!/usr/bin/env python3
"""Oracle for compare's SLA windows (issue 30), apart from the Go code.

It generates the multi-day probe recordings of window_test.go (the same
rule, written again here; the sha256 of each file ties the two), and
computes, for a window of local hours in a zone, the figures the SLA checks
judge: sent, lost, loss = lost/sent, p50 and p95 by nearest rank
(rank ceil(p/100 n) of the ascending RTTs) and the mean |D| jitter over
consecutive answered RTTs in send order. A probe is in a window when its
local time (zoneinfo, so summer time is the zone's own) is in [from, to),
on one of the days the window starts on; a window whose end is not after
its start crosses midnight.

    python3 window_oracle.py            # every scenario of window_test.go
    python3 window_oracle.py file PATH ZONE HH:MM HH:MM [target]
"""
import datetime as dt
import hashlib
import json
import sys
from zoneinfo import ZoneInfo

UTC = dt.timezone.utc


def gen(start, minutes, zone, degrade, base, addr):
    """The recording: one probe a minute from start (UTC). Each probe's RTT is
    base + ((i*37) mod 100)/10 ms; with degrade, in the local evening
    20:00-23:00 of zone (k = the minute of the evening) the probe is lost
    when k mod 22 = 21, and answered in 105 + k mod 7 ms when k mod 15 = 7."""
    tz = ZoneInfo(zone)
    lines = []
    for i in range(minutes):
        t = start + dt.timedelta(minutes=i)
        lt = t.astimezone(tz)
        m = lt.hour * 60 + lt.minute
        rtt = base + ((i * 37) % 100) / 10
        lost = False
        if degrade and 20 * 60 <= m < 23 * 60:
            k = m - 20 * 60
            if k % 22 == 21:
                lost = True
            elif k % 15 == 7:
                rtt = 105 + k % 7
        stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        if lost:
            lines.append('{"schema":"linecheck.probe/v1","time":"%s","target":"%s","addr":"%s","protocol":"icmp","seq":%d,"status":"lost","rtt_ms":null}' % (stamp, addr, addr, i))
        else:
            lines.append('{"schema":"linecheck.probe/v1","time":"%s","target":"%s","addr":"%s","protocol":"icmp","seq":%d,"status":"ok","rtt_ms":%.1f}' % (stamp, addr, addr, i, rtt))
    return "\n".join(lines) + "\n"


def clock(s):
    h, m = s.split(":")
    return int(h) * 60 + int(m)


def in_window(t, tz, frm, to, days):
    lt = t.astimezone(tz)
    m = lt.hour * 60 + lt.minute
    day = lt.date()
    if frm < to:
        if not (frm <= m < to):
            return False
    elif m >= frm:
        pass
    elif m < to:
        day = day - dt.timedelta(days=1)
    else:
        return False
    return not days or day.strftime("%a").lower() in days


def figures(records, keep):
    sent = lost = 0
    rtts = []
    for r in records:
        t = dt.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        if not keep(t):
            continue
        sent += 1
        if r["status"] == "ok":
            rtts.append(r["rtt_ms"])
        else:
            lost += 1
    out = {"sent": sent, "lost": lost, "loss": None, "p50": None, "p95": None, "jitter": None}
    if sent:
        out["loss"] = round(lost / sent, 6)
    if rtts:
        s = sorted(rtts)
        n = len(s)
        out["p50"] = s[max((50 * n + 99) // 100, 1) - 1]
        out["p95"] = s[max((95 * n + 99) // 100, 1) - 1]
        if n > 1:
            out["jitter"] = round(sum(abs(b - a) for a, b in zip(rtts, rtts[1:])) / (n - 1), 4)
        else:
            out["jitter"] = 0.0
    return out


def read(text, target=None):
    recs = [json.loads(l) for l in text.splitlines() if l.strip()]
    recs = [r for r in recs if target is None or (r["addr"], r["protocol"], r.get("port")) == target]
    recs.sort(key=lambda r: (r["time"], r["seq"]))
    return recs


def window(recs, zone, frm, to, days=()):
    tz = ZoneInfo(zone)
    return figures(recs, lambda t: in_window(t, tz, clock(frm), clock(to), days))


def show(label, f):
    print("%-44s sent %5d lost %3d loss %s p50 %s p95 %s jitter %s" % (label, f["sent"], f["lost"], f["loss"], f["p50"], f["p95"], f["jitter"]))


def scenarios():
    sh = dt.datetime(2026, 11, 1, 16, 0, tzinfo=UTC)  # 2 Nov 00:00 Shanghai, a Monday
    files = {
        "lossy": gen(sh, 3 * 1440, "Asia/Shanghai", True, 50, "127.0.0.1"),
        "steady": gen(sh, 3 * 1440, "Asia/Shanghai", False, 55, "127.0.0.2"),
        # 31 Oct 00:00 in New York (EDT); summer time ends on 1 Nov 02:00.
        "newyork": gen(dt.datetime(2026, 10, 31, 4, 0, tzinfo=UTC), 3 * 1440, "America/New_York", True, 50, "127.0.0.3"),
    }
    for name, text in files.items():
        print("%-8s sha256 %s" % (name, hashlib.sha256(text.encode()).hexdigest()))
    lossy, steady, ny = (read(files[k]) for k in ("lossy", "steady", "newyork"))
    show("lossy all", figures(lossy, lambda t: True))
    show("lossy evening 20:00-23:00 Asia/Shanghai", window(lossy, "Asia/Shanghai", "20:00", "23:00"))
    show("lossy night 22:00-02:00 Asia/Shanghai", window(lossy, "Asia/Shanghai", "22:00", "02:00"))
    show("lossy dawn 04:00-05:00 sun Asia/Shanghai", window(lossy, "Asia/Shanghai", "04:00", "05:00", ("sun",)))
    show("steady all", figures(steady, lambda t: True))
    show("steady evening 20:00-23:00 Asia/Shanghai", window(steady, "Asia/Shanghai", "20:00", "23:00"))
    show("newyork all", figures(ny, lambda t: True))
    show("newyork evening 20:00-23:00 America/New_York", window(ny, "America/New_York", "20:00", "23:00"))
    # The same hours read at a fixed UTC-4 (no change of summer time): what a
    # fixed offset would judge instead.
    show("newyork evening at fixed -04:00 (wrong)", window(ny, "Etc/GMT+4", "20:00", "23:00"))
    tz = ZoneInfo("Asia/Shanghai")
    for h in (12, 20, 21, 22, 23):
        show("lossy hour %02d Asia/Shanghai" % h, figures(lossy, lambda t, h=h: t.astimezone(tz).hour == h))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "file":
        path, zone, frm, to = sys.argv[2:6]
        target = None
        if len(sys.argv) > 6:
            a, p, *port = sys.argv[6].split(":")
            target = (a, p, int(port[0]) if port else None)
        recs = read(open(path).read(), target)
        show("all", figures(recs, lambda t: True))
        show("%s-%s %s" % (frm, to, zone), window(recs, zone, frm, to))
    else:
        scenarios()

#!/usr/bin/env python3
"""An independent reader of RIPE Atlas and Globalping ping results, written
from their documentation with the json module only, for pingfile_test.go: it
prints, per vantage, the probes sent, answered in time, late and duplicated,
the loss and the RTT percentiles, as JSON. linecheck's figures must be the
same.

RIPE Atlas (https://atlas.ripe.net/docs/apis/result-format/, ping): a list
  of results, one per probe run ("prb_id"); "result" holds one entry per
  packet: {"rtt": ms} answered, {"x": "*"} timed out, {"error": msg} not sent
  (not a probe), {"rtt", "dup": 1} a duplicate answer (not a probe), and
  {"late": n, "rtt"} the answer to the packet n entries back after its
  timeout (that packet is late: sent, not received).
Globalping (https://globalping.io/docs/api.globalping.io, GET
  /v1/measurements/{id}, type ping): results[].result.stats.total packets
  sent, stats.rcv answered; timings[].rtt the answers' RTTs (more timings
  than rcv: the extra, last ones, are duplicates); status "failed": nothing
  measured.
The percentile is the nearest rank: the value of rank ceil(p/100 * n).
"""
import json
import math
import sys


def nearest_rank(values, p):
    v = sorted(values)
    r = math.ceil(round(p * 10) * len(v) / 1000)
    return v[min(max(r, 1), len(v)) - 1]


def figures(sent, rtts, late, dup):
    out = {"sent": sent, "recv": len(rtts), "late": late, "dup": dup}
    out["loss"] = None if sent == 0 else 1 - len(rtts) / sent
    if rtts:
        out.update(min=min(rtts), p50=nearest_rank(rtts, 50), p95=nearest_rank(rtts, 95),
                   p99=nearest_rank(rtts, 99), max=max(rtts))
    return out


def atlas(doc):
    order, acc = [], {}
    for res in sorted(doc, key=lambda r: r["timestamp"]):
        key = "ripe-atlas:%d" % res["prb_id"]
        if key not in acc:
            order.append(key)
            acc[key] = {"sent": 0, "rtts": [], "late": 0, "dup": 0}
        a = acc[key]
        packets = []  # per packet sent: its RTT, "*" or "late"
        for e in res["result"]:
            if "error" in e:
                continue
            if "late" in e:
                packets[len(packets) - e["late"]] = "late"
            elif e.get("dup"):
                a["dup"] += 1
            elif e.get("x") == "*":
                packets.append("*")
            else:
                packets.append(e["rtt"])
        a["sent"] += len(packets)
        a["late"] += packets.count("late")
        a["rtts"] += [p for p in packets if not isinstance(p, str)]
    return {k: figures(acc[k]["sent"], acc[k]["rtts"], acc[k]["late"], acc[k]["dup"]) for k in order}


def globalping(doc):
    out = {}
    for i, res in enumerate(doc["results"]):
        key = "globalping:%d" % (i + 1)
        r = res["result"]
        if r["status"] == "failed":
            out[key] = figures(0, [], 0, 0)
            continue
        rcv = r["stats"]["rcv"]
        rtts = [t["rtt"] for t in r["timings"]]
        out[key] = figures(r["stats"]["total"], rtts[:rcv], 0, len(rtts) - rcv)
    return out


def main(path):
    with open(path) as f:
        doc = json.load(f)
    print(json.dumps(atlas(doc) if isinstance(doc, list) else globalping(doc), indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""An independent reader of the measurement networks' trace files, written
from their documentation with the json module only, for
trace_format_vantage_test.go: it prints, per trace (per vantage), the hops
with the probes sent, the late and duplicate replies, and each responder's
RTTs in ms, as JSON. The Go readers must give the same.

RIPE Atlas (https://atlas.ripe.net/docs/apis/result-format/, traceroute):
  a list of results (or one); result[] holds {"hop": n, "result": [reply]}
  or {"error": msg} (the run stopped). A reply is {"x": "*"} (no answer),
  or {"from", "rtt", "ttl", "size", ...}; "late": n marks a reply that came
  n packets late (not a probe of its own, not received), "dup" a duplicate,
  "edst" a reply quoting another destination (not ours: not received, not
  a responder); "err" replies (ICMP unreachable) still answer the probe.
Globalping (https://globalping.io/docs/api.globalping.io, GET
  /v1/measurements/{id}): results[].probe {asn, city, country, network},
  results[].result.hops[] in TTL order, each {resolvedAddress, timings:
  [{rtt}]} and for mtr stats.total (the probes sent). traceroute does not
  say how many probes a hop got: take the most timings any hop has.
NextTrace (nexttrace --json): {"Hops": [[attempt]]}, an attempt {Success,
  Address: {IP}, TTL, RTT (nanoseconds)}.
"""
import json
import sys


def atlas(doc):
    results = doc if isinstance(doc, list) else [doc]
    out = []
    for res in results:
        hops = []
        for h in res.get("result", []):
            if "error" in h:
                break
            hop = {"ttl": h["hop"], "sent": 0, "late": 0, "dup": 0, "responders": []}
            seen = {}

            def responder(addr):
                if addr not in seen:
                    seen[addr] = {"addr": addr, "rtts": []}
                    hop["responders"].append(seen[addr])
                return seen[addr]

            for r in h.get("result", []):
                if "late" not in r and not r.get("dup"):
                    hop["sent"] += 1
                if "edst" in r:
                    continue
                if "late" in r:
                    hop["late"] += 1
                    if r.get("from"):
                        responder(r["from"])
                elif r.get("dup"):
                    hop["dup"] += 1
                    if r.get("from"):
                        responder(r["from"])
                elif r.get("x") == "*":
                    pass
                else:
                    p = responder(r["from"])
                    if "rtt" in r:
                        p["rtts"].append(r["rtt"])
            hops.append(hop)
        out.append({"vantage": str(res["prb_id"]), "hops": hops})
    return out


def globalping(doc):
    out = []
    for i, res in enumerate(doc["results"]):
        hs = res["result"]["hops"]
        most = max([len(h["timings"]) for h in hs if h] + [0])
        hops = []
        for n, h in enumerate(hs):
            hop = {"ttl": n + 1, "sent": most, "late": 0, "dup": 0, "responders": []}
            if h and doc["type"] == "mtr":
                hop["sent"] = h["stats"]["total"]
            if h and h.get("resolvedAddress"):
                rtts = [t["rtt"] for t in h["timings"] if t.get("rtt") is not None]
                hop["responders"].append({"addr": h["resolvedAddress"], "rtts": rtts})
            hops.append(hop)
        out.append({"vantage": str(i + 1), "hops": hops})
    return out


def nexttrace(doc):
    hops = []
    for group in doc["Hops"]:
        if not group:
            continue
        hop = {"ttl": group[0]["TTL"], "sent": len(group), "late": 0, "dup": 0, "responders": []}
        seen = {}
        for a in group:
            if a.get("Success") and a.get("Address") and a["Address"].get("IP"):
                ip = a["Address"]["IP"]
                if ip not in seen:
                    seen[ip] = {"addr": ip, "rtts": []}
                    hop["responders"].append(seen[ip])
                seen[ip]["rtts"].append(a["RTT"] / 1e6)
        hops.append(hop)
    return [{"vantage": None, "hops": hops}]


def read(path):
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError:
        # The Atlas API's format=txt: one result per line.
        doc = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(doc, list) or "prb_id" in doc:
        return atlas(doc)
    if "results" in doc and "type" in doc:
        return globalping(doc)
    if "Hops" in doc:
        return nexttrace(doc)
    raise SystemExit(path + ": not a format this oracle reads")


if __name__ == "__main__":
    json.dump(read(sys.argv[1]), sys.stdout)

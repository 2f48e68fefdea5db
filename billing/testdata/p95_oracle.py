#!/usr/bin/env python3
"""Independent oracle for billing's 95th-percentile methods and direction rules.

Written from each tool's own source (LibreNMS LibreNMS/Billing.php get95thIn /
get95thout / get95thagg before and after PR #18481, vnstat src/percentile.c,
rrdtool rrd_graph.c VDEF PERCENT, Cacti lib/graph_variables.php, Prometheus
promql/quantile.go), not from the Go code: indices use exact rationals
(fractions.Fraction) and the rounding the named tool uses (decimal modes), then
clamp into the sample.  Standard library only.

stdin:  JSON {"cases": [{"in": [...], "out": [...]}, ...]}
stdout: JSON [{"<method>": {"in":…, "out":…, "greater":…, "max":…, "sum":…}}, ...]
"""
import json
import math
import sys
from decimal import Decimal, ROUND_HALF_UP, ROUND_HALF_EVEN
from fractions import Fraction

P = Fraction(95, 100)


def rnd(x, mode):
    """Round a Fraction to an int with a decimal rounding mode (exact)."""
    return int((Decimal(x.numerator) / Decimal(x.denominator)).quantize(Decimal(1), rounding=mode)) \
        if x.denominator != 1 else x.numerator


def pick(a, idx0):
    return a[min(max(idx0, 0), len(a) - 1)]


def nearest_rank(a):  # rank ceil(0.95 n)
    return pick(a, math.ceil(P * len(a)) - 1)


def librenms(a):      # since PR #18481: idx0 = max(0, round(n/100*95) - 2) over 5-min buckets
    return a[max(0, rnd(P * len(a), ROUND_HALF_UP) - 2)]


def librenms_legacy(a):  # before PR #18481: idx0 = round(n/100*95) - 1, PHP round = half away from zero
    return pick(a, rnd(P * len(a), ROUND_HALF_UP) - 1)


def vnstat(a):        # idx0 = lrint(n*0.95) - 1, half to even
    return pick(a, rnd(P * len(a), ROUND_HALF_EVEN) - 1)


def rrdtool(a):       # idx0 = round(95*(n-1)/100), C round = half away from zero
    return pick(a, rnd(P * (len(a) - 1), ROUND_HALF_UP))


def cacti(a):         # descending d[ceil(0.05 n)], clamped to the smallest sample
    d = a[::-1]
    k = math.ceil(Fraction(5, 100) * len(d))
    return d[min(k, len(d) - 1)]


def linear(a):        # Prometheus: rank0 = 0.95 (n-1), interpolate a[lo], a[lo+1]
    n = len(a)
    r = P * (n - 1)
    lo = math.floor(r)
    hi = min(n - 1, lo + 1)
    w = float(r - lo)
    return a[lo] * (1 - w) + a[hi] * w


METHODS = {"nearest-rank": nearest_rank, "librenms": librenms, "librenms-legacy": librenms_legacy, "vnstat": vnstat,
           "rrdtool": rrdtool, "cacti": cacti, "linear": linear}


def case(c):
    i, o = c["in"], c["out"]
    per = {"in": sorted(i), "out": sorted(o),
           "max": sorted(max(x, y) for x, y in zip(i, o)),
           "sum": sorted(x + y for x, y in zip(i, o))}
    res = {}
    for name, f in METHODS.items():
        r = {d: f(v) for d, v in per.items()}
        r["greater"] = max(r["in"], r["out"])
        res[name] = r
    return res


if __name__ == "__main__":
    doc = json.load(sys.stdin)
    json.dump([case(c) for c in doc["cases"]], sys.stdout)

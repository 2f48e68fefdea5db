#!/usr/bin/env python3
"""Writes 2026-10.csv: an ILLUSTRATIVE, SYNTHETIC month of 5-minute traffic of one
GPU server's uplink (October 2026, UTC), not a measurement.

Shape: a diurnal day (low at 04:00 UTC, high at 13:00-15:00 UTC = evening in
China), weekly dip on Sundays, 5 % noise, outbound about 7x inbound, four bursts
(dataset and checkpoint syncs, 1-3 h at up to ~750 Mbit/s) and one small gap of
13 slots (65 minutes with no samples, as after a poller restart).
Deterministic: same output on every run.   Run:  python3 gen_sample.py > 2026-10.csv
"""
import math
import random
from datetime import datetime, timezone

rng = random.Random(20261001)
start = int(datetime(2026, 10, 1, tzinfo=timezone.utc).timestamp())
slots = 31 * 288
gap = range(5 * 288 + 100, 5 * 288 + 113)          # 2026-10-06 08:20 .. 09:25 UTC
bursts = [(3 * 288 + 30, 30, 700e6), (11 * 288 + 250, 36, 760e6),
          (19 * 288 + 10, 18, 540e6), (26 * 288 + 200, 24, 690e6)]

# No comment lines in the CSV: other tests read it with encoding/csv; the
# label lives in README.md beside it.
print("timestamp,in_bytes,out_bytes")
for i in range(slots):
    if i in gap:
        continue
    t = start + 300 * i
    h = (t % 86400) / 3600
    day = datetime.fromtimestamp(t, timezone.utc).weekday()
    base = 0.25 + 0.75 * (0.5 - 0.5 * math.cos(2 * math.pi * ((h - 4) % 24) / 24)) ** 1.5
    if day == 6:
        base *= 0.8
    out_bps = 260e6 * base * (0.95 + 0.1 * rng.random())
    for b0, n, peak in bursts:
        if b0 <= i < b0 + n:
            out_bps = max(out_bps, peak * (0.9 + 0.1 * rng.random()))
    in_bps = out_bps / 7 * (0.9 + 0.2 * rng.random())
    ts = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print(f"{ts},{round(in_bps * 300 / 8)},{round(out_bps * 300 / 8)}")

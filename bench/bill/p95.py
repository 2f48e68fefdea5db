#!/usr/bin/env python3
"""The pandas anchor for bench/bill: the per-interface nearest-rank 95th of
inbound and outbound for one calendar month (UTC), from the benchmark CSV
(timestamp,interface,in_bytes,out_bytes; bytes per 5-minute interval,
stamped at the interval start), printed as JSON {name: {in_bps, out_bps}}.

    /usr/bin/python3 bench/bill/p95.py big.csv 2026-06
"""
import json
import sys

import numpy as np
import pandas as pd


def nearest_rank(values):
    a = np.sort(values)
    n = len(a)
    return a[(95 * n + 99) // 100 - 1]  # rank ceil(0.95 n), in integers


def main():
    path, month = sys.argv[1], sys.argv[2]
    df = pd.read_csv(path, dtype={"interface": "category", "in_bytes": "int64", "out_bytes": "int64"})
    ts = pd.to_datetime(df["timestamp"], format="%Y-%m-%dT%H:%M:%SZ", utc=True)
    start = pd.Timestamp(month + "-01", tz="UTC")
    end = start + pd.offsets.MonthBegin(1)
    m = df[(ts >= start) & (ts < end)]
    out = {}
    for name, g in m.groupby("interface", observed=True):
        out[str(name)] = {
            "in_bps": float(nearest_rank(g["in_bytes"].to_numpy())) * 8 / 300,
            "out_bps": float(nearest_rank(g["out_bytes"].to_numpy())) * 8 / 300,
            "samples": int(len(g)),
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

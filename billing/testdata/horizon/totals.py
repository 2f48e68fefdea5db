#!/usr/bin/env python3
"""Hand totals of scenario.yaml over a horizon, with decimal.Decimal, apart
from linecheck's Go code. The offers are typed again below from the issue's
cost table (not read from the YAML), so a misread key shows as a mismatch.
Usage: python3 totals.py [MONTHS] > totals.txt (default 24)."""
import sys
from decimal import Decimal as D, ROUND_HALF_EVEN  # noqa: F401

N = int(sys.argv[1]) if len(sys.argv) > 1 else 24
H = D(730)          # hours in a horizon month
U = D(500)          # used hours a month (usage: {hours: 500})
n = D(N)

def ceil_div(a, b):
    return -(-a // b)

def reserved(cards, price, term, upfront, early_exit=None):
    terms = ceil_div(N, term)
    full = D(cards) * H * D(terms * term) * D(price)
    if early_exit is not None and terms * term > N:
        leave = D(cards) * H * n * D(price) + D(early_exit)
        full = min(full, leave)
    return full + D(upfront) * terms

cloud_extras = (D(10000) * D("0.70") + D(2000) * D("0.30") + 2 * D(25) + D(3000)) * n

totals = {
    # port + (price - resale) + colocation + kW x PUE x h x price
    "buy-colo": D(3000) * n + (D(2400000) - D(900000)) + D(22000) * n + D("10.2") * D("1.4") * H * n * D("0.85"),
    "overseas-monthly": D(8000) * n + D(128000) * n + 4 * D(40) * n,
    "overseas-hourly": D(8000) * n + 8 * U * D(21) * n + D(8000) * D("0.50") * n,
    "cloud-on-demand": D(12000) * n + 8 * U * D(32) * n + cloud_extras,
    "cloud-reserved": D(12000) * n + reserved(8, "20.8", 12, 60000) + cloud_extras,
    # spot rerun share = 0.04/h x (2/2 + 0.75) h
    "cloud-spot": D(12000) * n + 8 * U * (1 + D("0.04") * (D(2) / 2 + D("0.75"))) * D("4.8") * n + cloud_extras,
    "cloud-reserved-3y": D(12000) * n + reserved(8, "18", 36, 90000),
    "cloud-reserved-3y-exit": D(12000) * n + reserved(8, "18", 36, 90000, early_exit=400000),
}
for name, t in sorted(totals.items(), key=lambda kv: (kv[1], kv[0])):
    print(name, t.quantize(D("0.01")))

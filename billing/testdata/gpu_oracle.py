#!/usr/bin/env python3
"""Independent oracle for the GPU usage models of billing (issue 15).

Written from the formulas of the issue, not from the Go code: every amount is
an exact decimal (fractions.Fraction for the one division, upfront /
term_months), the period's hours come from the wall-clock instants of the
period's bounds in its zone (zoneinfo, converted to UTC before subtracting, so
DST months are 743 or 745 h), and money is rounded once, half away from zero,
to cents, at the end.  Standard library only.

stdin:  JSON {"offers": [{"name", "bandwidth": "650", "items": [{...}]}],
              "cases": [{"tz", "year", "month", "used": "300" | null}]}
stdout: JSON [{"hours": "744", "offers": {name: {"total", "idle", "per_gpu_hour",
              "total_early"}}, "break_even": [[a, b, "375"]]}] one per case
"""
import json
import sys
from datetime import datetime, timezone
from decimal import Decimal, ROUND_HALF_UP, getcontext
from fractions import Fraction
from zoneinfo import ZoneInfo

getcontext().prec = 60


def F(s):
    return Fraction(Decimal(s))


def money(x):
    d = Decimal(x.numerator) / Decimal(x.denominator)
    return str(d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def period_hours(tz, year, month):
    z = ZoneInfo(tz)
    start = datetime(year, month, 1, tzinfo=z).astimezone(timezone.utc)
    ny, nm = (year + 1, 1) if month == 12 else (year, month + 1)
    end = datetime(ny, nm, 1, tzinfo=z).astimezone(timezone.utc)
    return Fraction(int((end - start).total_seconds()), 3600)


def item_cost(it, H, U, early=False):
    """One item's exact cost at U used hours in a period of H hours."""
    kind, model = it["kind"], it.get("billing", "")
    if kind == "compute":
        cards = F(it.get("cards", "0"))
        if model == "hourly":
            return cards * U * F(it["price_per_card_hour"])
        if model == "spot":
            return cards * U * (1 + F(it.get("interruption_overhead", "0"))) * F(it["price_per_card_hour"])
        if model == "reserved":
            share = F(it.get("upfront", "0")) / int(it["term_months"])
            if early:  # what rounding the share to cents first would give
                share = F(money(share))
            return cards * H * F(it["price_per_card_hour"]) + share
        if model == "monthly" or "price_per_month" in it:
            return F(it["price_per_month"])
        # No billing key: a price per card-hour is an hourly price (issue 20),
        # billed at the used hours U, unless the item states its own hours.
        hours = F(it["hours"]) if "hours" in it else U
        return cards * hours * F(it["price_per_card_hour"])
    if kind == "storage":
        return F(it["gb"]) * F(it["price_per_gb_month"])
    if kind == "ip":
        return F(it["count"]) * F(it["price_each"])
    return F(it["price_per_month"])  # support


def total(o, H, U, early=False):
    return F(o["bandwidth"]) + sum((item_cost(it, H, U, early) for it in o["items"]), Fraction(0))


def cards(o):
    return sum((F(it["cards"]) for it in o["items"] if it["kind"] == "compute" and "cards" in it), Fraction(0))


def main():
    doc = json.load(sys.stdin)
    out = []
    for c in doc["cases"]:
        H = period_hours(c["tz"], c["year"], c["month"])
        U = F(c["used"]) if c["used"] is not None else H
        res = {"hours": str(Decimal(H.numerator) / Decimal(H.denominator)), "offers": {}, "break_even": []}
        for o in doc["offers"]:
            t = total(o, H, U)
            n = cards(o)
            res["offers"][o["name"]] = {
                "total": money(t),
                "total_early": money(total(o, H, U, early=True)),
                "idle": money(total(o, H, Fraction(0))),
                "per_gpu_hour": money(t / U / n) if U > 0 and n > 0 else None,
            }
        # Totals are a + b·U: the crossing of two offers is where they are equal.
        offs = doc["offers"]
        for i in range(len(offs)):
            for j in range(i + 1, len(offs)):
                a0, aH = total(offs[i], H, Fraction(0)), total(offs[i], H, H)
                b0, bH = total(offs[j], H, Fraction(0)), total(offs[j], H, H)
                sa, sb = (aH - a0) / H, (bH - b0) / H
                if sa == sb:
                    continue
                x = (b0 - a0) / (sa - sb)
                if 0 < x <= H:
                    res["break_even"].append([offs[i]["name"], offs[j]["name"], money(x), money(a0 + sa * x)])
        out.append(res)
    json.dump(out, sys.stdout)


main()

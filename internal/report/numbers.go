package report

import (
	"math"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// The number style every command's tables share. Machine formats (JSON,
// CSV) carry full-precision plain numbers instead; these are for people.

// RateUnit is the one name tables use for a bit rate: megabits per second.
const RateUnit = "Mbit/s"

// MS formats a time in milliseconds with adaptive precision: one decimal
// from 100 ms, two from 10 ms, three from 1 ms, and three significant
// digits below that (a loopback RTT of 0.0213 ms is not "0.0"), never
// finer than a nanosecond.
func MS(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	d := 2 - int(math.Floor(math.Log10(a)))
	if d > 6 {
		d = 6
	}
	return strconv.FormatFloat(v, 'f', d, 64)
}

// MS1 formats a time in milliseconds for a sentence: one decimal ("41.0"),
// and below 1 ms two significant digits ("0.046"), so that a loopback or
// LAN RTT never reads "0.0". The TUI's SLA line and the HTML report's plot
// notes both use it.
func MS1(v float64) string {
	if v > 0 && v < 1 {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Pct formats a fraction (0..1) as a percentage with one decimal: "2.5%".
func Pct(frac float64) string { return strconv.FormatFloat(frac*100, 'f', 1, 64) + "%" }

// PctPrec is Pct with prec decimals (availability figures need more).
func PctPrec(frac float64, prec int) string {
	return strconv.FormatFloat(frac*100, 'f', prec, 64) + "%"
}

// PctFloor is PctPrec rounded down, for shares that are promises
// (availability, a recording's coverage): 99.9996 % of cycles up reads
// "99.999%", not "100.000%", so 100 % is shown only when nothing was
// missed, and 0 % only when nothing was there.
func PctFloor(frac float64, prec int) string {
	if math.IsNaN(frac) || math.IsInf(frac, 0) {
		return "-"
	}
	scale := math.Pow10(prec)
	v := math.Floor(frac*100*scale+1e-9) / scale
	if v == 0 && frac > 0 {
		v = 1 / scale // less than the last digit, but not none
		return "<" + strconv.FormatFloat(v, 'f', prec, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + "%"
}

// Mbit formats a rate in bits per second in RateUnit, with two decimals
// below 100 and thousands separators: "1,234.5 Mbit/s".
func Mbit(bps float64) string {
	v := bps / 1e6
	prec := 1
	if math.Abs(v) < 100 {
		prec = 2
	}
	return GroupThousands(strconv.FormatFloat(v, 'f', prec, 64)) + " " + RateUnit
}

// Money formats an amount rounded (half away from zero) to minor decimal
// places, the currency's minor unit, with every one of them written and
// thousands separated: Money(144691.5, 2) = "144,691.50", Money(16000, 0)
// = "16,000". Tables use it; JSON carries the plain decimal string.
func Money(v decimal.Decimal, minor int32) string {
	return GroupThousands(v.Round(minor).StringFixed(minor))
}

// GroupThousands puts a comma between every three digits of the integer
// part of a plain decimal string (billing.GroupThousands: the one rule, also
// used by sentences the core writes).
func GroupThousands(s string) string { return billing.GroupThousands(s) }

// Float formats v for CSV in full precision, as JSON does: up to 12
// significant digits, without the noise of binary floating point.
func Float(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

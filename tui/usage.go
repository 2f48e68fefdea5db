package tui

import (
	"fmt"
	"math"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/verdict"
)

// usageOptions are the billing options for o's used hours (unset: the offers file's usage).
func usageOptions(o CostOptions) billing.Dec {
	if !o.UsageSet {
		return billing.Dec{}
	}
	return billing.Dec{Decimal: decimal.NewFromFloat(o.UsageHours), Set: true}
}

// usageSteps are the used hours the `u` and `U` keys step through for a
// period of h hours: 0, every 100 hours, and every hour of the period.
func usageSteps(h float64) []float64 {
	var out []float64
	for x := 0.0; x < h; x += 100 {
		out = append(out, x)
	}
	return append(out, h)
}

// stepUsage moves the used hours from cur one step up (d > 0) or down
// within a period of h hours, stopping at 0 and at h; a figure between two
// steps (given with --usage-hours) moves to the neighbour in that direction.
func stepUsage(cur, h float64, d int) float64 {
	steps := usageSteps(h)
	if d > 0 {
		for _, s := range steps {
			if s > cur+1e-9 {
				return s
			}
		}
		return h
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i] < cur-1e-9 {
			return steps[i]
		}
	}
	return 0
}

// periodHours is the length of the traffic month in hours (0 without traffic).
func periodHours(ts *verdict.TrafficSummary) float64 {
	tr := gridOf(ts)
	if tr == nil {
		return 0
	}
	return math.Round(float64(len(tr.InMbps))*tr.Step.Hours()*1e6) / 1e6
}

// usageText names the used hours of a cost: the figure and where it comes from.
func usageText(c Cost, o CostOptions) string {
	switch {
	case o.UsageSet:
		return fmtHours(o.UsageHours) + " h"
	case c.UsedHours != nil:
		return fmtHours(*c.UsedHours) + " h (offers file)"
	}
	return "" // not priced on used hours: nothing to say
}

func fmtHours(h float64) string { return strconv.FormatFloat(h, 'f', -1, 64) }

// usageBrief is the overview's word on the used hours a cost was priced at
// ("" when the offer was not priced on used hours).
func usageBrief(c Cost) string {
	if c.UsedHours == nil {
		return ""
	}
	s := " · at " + fmtHours(*c.UsedHours) + " of " + fmtHours(c.PeriodHours) + " h used"
	if c.PerGPUHour.Valid() {
		s += ", " + moneyText(c.PerGPUHour) + " " + c.PerGPUHour.Currency + " per GPU-hour"
	}
	return s + " (u U)"
}

// usageLines are the cost detail's lines on the GPU usage: the used hours
// with the idle month, and the cost per used GPU-hour.
func usageLines(c Cost) []string {
	if c.UsedHours == nil {
		return nil
	}
	a := fmt.Sprintf(" used %s of %s h", fmtHours(*c.UsedHours), fmtHours(c.PeriodHours))
	if c.Idle.Valid() {
		a += " · idle month " + moneyText(c.Idle) + " " + c.Idle.Currency
	}
	b := " per used GPU-hour -"
	if c.PerGPUHour.Valid() {
		b = " per used GPU-hour " + moneyText(c.PerGPUHour) + " " + c.PerGPUHour.Currency
	}
	return []string{a, b}
}

// fillUsage sets a cost's usage figures from its bill, converted at rate
// into base (rounded once, after the conversion).
func fillUsage(c *Cost, b billing.Bill, rate decimal.Decimal, base string) {
	u := b.Usage
	if u == nil {
		return
	}
	used := u.UsedHours
	c.UsedHours, c.PeriodHours = &used, u.PeriodHours
	idle, usedExact := u.Exact()
	if rate.IsZero() {
		rate, base = decimal.NewFromInt(1), b.Currency
	}
	c.Idle = billing.MoneyOf(idle.Mul(rate), base).Rounded()
	if u.Cards != nil && usedExact.IsPositive() {
		per := b.ExactTotal().Mul(rate).DivRound(usedExact.Mul(decimal.NewFromFloat(*u.Cards)), 24)
		c.PerGPUHour = billing.MoneyOf(per, base).Rounded()
	}
}

package report

import (
	"fmt"
	"strconv"

	"github.com/linecheck/linecheck/billing"
)

// billUsageTable shows each offer at the buyer's used hours: what the period
// costs with the cards idle (storage, IPs, support, monthly and reserved
// compute, the bandwidth as billed) and per used GPU-hour, with the used
// hours at which two offers cost the same as sentences. Nil when no offer
// has a compute item.
func billUsageTable(r *billing.Report, title func(string) string) *Table {
	if !r.HasCompute() || r.Bills[0].Usage == nil {
		return nil
	}
	u0 := r.Bills[0].Usage
	t := Table{
		Title:   title(fmt.Sprintf("Usage: %s of %s hours used (%s)", fmtHours(u0.UsedHours), fmtHours(u0.PeriodHours), usageFrom(u0.From))),
		Headers: []string{"offer", "used h", "cards", "total", "idle (0 h)", "idle share", "per used GPU-h", "currency"},
		Align:   "lrrrrrrl",
	}
	for _, b := range r.Bills {
		u := b.Usage
		cards, share, per := "-", "-", "-"
		if u.Cards != nil {
			cards = strconv.FormatFloat(*u.Cards, 'f', -1, 64)
		}
		if u.IdleShare != nil {
			share = Pct(*u.IdleShare)
		}
		if u.PerGPUHour != nil {
			per = GroupThousands(*u.PerGPUHour)
		}
		t.Rows = append(t.Rows, []string{b.Offer, fmtHours(u.UsedHours), cards, money(b.Amount, b.Currency), money(u.IdleAmount, b.Currency), share, per, b.Currency})
	}
	if c := r.Compare; c != nil {
		for _, be := range c.BreakEvenHours {
			t.Notes = append(t.Notes, "break-even: "+be.Text)
		}
	}
	return &t
}

func fmtHours(h float64) string { return strconv.FormatFloat(h, 'f', -1, 64) }

// usageCSVTable is billUsageTable for machines: full-precision figures,
// empty cells for absent ones, the crossings as a table of their own.
func usageCSVTable(r *billing.Report) []Table {
	if billUsageTable(r, func(s string) string { return s }) == nil {
		return nil
	}
	t := Table{Headers: []string{"offer", "used_hours", "period_hours", "from", "cards", "total", "idle_amount", "idle_share", "per_gpu_hour", "currency"}}
	for _, b := range r.Bills {
		u := b.Usage
		cards, share, per := "", "", ""
		if u.Cards != nil {
			cards = num(*u.Cards)
		}
		if u.IdleShare != nil {
			share = num(*u.IdleShare)
		}
		if u.PerGPUHour != nil {
			per = *u.PerGPUHour
		}
		t.Rows = append(t.Rows, []string{b.Offer, num(u.UsedHours), num(u.PeriodHours), u.From, cards, b.Amount, u.IdleAmount, share, per, b.Currency})
	}
	out := []Table{t}
	if c := r.Compare; c != nil && len(c.BreakEvenHours) > 0 {
		be := Table{Headers: []string{"a", "b", "break_even_hours", "amount", "currency"}}
		for _, x := range c.BreakEvenHours {
			be.Rows = append(be.Rows, []string{x.A, x.B, num(x.Hours), x.Amount, x.Currency})
		}
		out = append(out, be)
	}
	return out
}

// usageFrom says where the used hours come from, for the table title.
func usageFrom(from string) string {
	switch from {
	case "period":
		return "none stated: every hour of the period"
	case "--usage-hours":
		return "--usage-hours"
	}
	return from
}

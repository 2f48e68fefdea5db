package billing

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Projection is the month projected from a partial recording, shown beside
// the bill as recorded: a log of 3 days bills per-GB traffic for 3 days
// while compute, storage and IPs bill the whole month, so the bill as
// recorded is no month's bill. Volume-based bandwidth (per-gb) is scaled by
// the coverage (expected / present slots); rate-based bandwidth (95th,
// peak, average) is taken as measured — a percentile does not scale with
// the days recorded — and says its coverage; a fixed port and every other
// item bill the month either way.
type Projection struct {
	// RecordedDays of PeriodDays have traffic; Coverage is present /
	// expected slots and VolumeFactor its inverse, the per-GB scale.
	RecordedDays int     `json:"recorded_days"`
	PeriodDays   int     `json:"period_days"`
	Coverage     float64 `json:"coverage"`
	VolumeFactor float64 `json:"volume_factor"`
	// Bills is each offer's projected month, in the order of the bills.
	Bills []ProjectedBill `json:"bills"`
	// Note says in words what was projected and how.
	Note string `json:"note"`
}

// ProjectedBill is one offer's projected month.
type ProjectedBill struct {
	Offer    string `json:"offer"`
	Scheme   string `json:"scheme"`
	Amount   string `json:"amount"` // projected total, rounded once
	Currency string `json:"currency"`
	// AmountCompare is Amount in the offers file's compare currency.
	AmountCompare   string `json:"amount_compare,omitempty"`
	CompareCurrency string `json:"compare_currency,omitempty"`
	// Basis says how the bandwidth was projected.
	Basis string `json:"basis"`

	total decimal.Decimal
}

// Total is the projected month as money, exact.
func (b ProjectedBill) Total() Money { return MoneyOf(b.total, b.Currency) }

// project builds the projection of a partial recording (nil when every day
// of the period has traffic, or nothing was present).
func project(r *Report) *Projection {
	sm := r.Samples
	if sm.Present == 0 || sm.Expected == 0 || sm.ValidDays >= r.Period.Days || len(r.measures) == 0 {
		return nil
	}
	k := float64(sm.Expected) / float64(sm.Present)
	p := &Projection{RecordedDays: sm.ValidDays, PeriodDays: r.Period.Days, Coverage: sm.Coverage, VolumeFactor: Sig(k), Bills: []ProjectedBill{}}
	for i, m := range r.measures {
		m.quiet = true
		b := r.Bills[i]
		pb := ProjectedBill{Offer: b.Offer, Scheme: b.Scheme, Currency: b.Currency}
		switch s := m.o.Bandwidth.Scheme; {
		case s == "per-gb":
			pb.total = m.total(k)
			pb.Basis = fmt.Sprintf("volume × %.4g (%d of %d days recorded)", k, sm.ValidDays, r.Period.Days)
		case isRate(s):
			pb.total = m.total(1)
			pb.Basis = fmt.Sprintf("%s as measured over %.1f %% of the period", statName(s), 100*sm.Coverage)
		default:
			pb.total = m.total(1)
			pb.Basis = "flat: the month whatever the traffic"
		}
		pb.Amount = FormatMoney(pb.total, b.Currency)
		if m.o.CompareCurrency != "" && m.o.CompareCurrency != m.o.Currency {
			pb.AmountCompare = FormatMoney(pb.total.Mul(m.o.rate()), m.o.CompareCurrency)
			pb.CompareCurrency = m.o.CompareCurrency
		}
		p.Bills = append(p.Bills, pb)
	}
	p.Note = fmt.Sprintf("projected month from %d of %d days recorded (%.1f %% of the slots): per-GB volume × %.4g, 95th and other rates as measured, ports and other items for the month; the bill as recorded is above",
		sm.ValidDays, r.Period.Days, 100*sm.Coverage, k)
	return p
}

// statName names a rate scheme's statistic for the projection's basis.
func statName(scheme string) string {
	switch scheme {
	case "p95":
		return "95th"
	case "daily-peak-average":
		return "average of daily peaks"
	}
	return scheme
}

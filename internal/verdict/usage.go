package verdict

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
)

// CandidateUsage is a candidate's offer at the buyer's used hours of the GPU
// machine, in the fx base currency: what the month costs with the cards idle
// and per used GPU-hour.
type CandidateUsage struct {
	UsedHours   float64 `json:"used_hours"`
	PeriodHours float64 `json:"period_hours"`
	// Cards is the number of GPU cards the offer's compute items state (null: none does).
	Cards *float64 `json:"cards"`
	// Idle is the month at 0 used hours (storage, IPs, support, monthly and
	// reserved compute, the bandwidth as billed).
	Idle Money `json:"idle"`
	// IdleShare is Idle / the monthly total (null for a total of 0).
	IdleShare *float64 `json:"idle_share"`
	// PerGPUHour is the monthly total / used hours / cards (null without cards or used hours).
	PerGPUHour *Money `json:"per_gpu_hour"`
}

// UsageSummary is every priced offer's monthly total as a line over the used
// hours (0 … the period's hours), in the fx base currency, with the used
// hours at which two of them cost the same.
type UsageSummary struct {
	UsedHours   float64 `json:"used_hours"`
	PeriodHours float64 `json:"period_hours"`
	// From says where UsedHours comes from (billing.UsageDoc.From).
	From   string       `json:"from"`
	Offers []UsageCurve `json:"offers"`
	// BreakEvenHours lists the crossings in (0, PeriodHours], in the base currency.
	BreakEvenHours []billing.BreakEvenHours `json:"break_even_hours"`
	// HorizonBreakEvenHours are the crossings of the offers' totals over the
	// horizon, against the used hours a month in (0, 730] (absent without a
	// horizon): the lines the report shows then.
	HorizonBreakEvenHours []billing.BreakEvenHours `json:"horizon_break_even_hours,omitempty"`
}

// UsageCurve is one offer's monthly total at 0 used hours and at every hour
// of the period; in between it is a straight line.
type UsageCurve struct {
	Offer string `json:"offer"`
	// Candidates names the candidates that price this offer (offer or what_if).
	Candidates []string `json:"candidates"`
	AtZero     Money    `json:"at_zero"`
	AtPeriod   Money    `json:"at_period"`
}

// CandidateUsageOf converts the usage block of the candidate's bill into the base currency.
func (p *Pricing) CandidateUsageOf(c *candidates.Candidate) *CandidateUsage {
	b, ok := p.bills[c.Offer]
	if !ok || b.bill.Usage == nil || !p.hasCompute() {
		return nil
	}
	u := b.bill.Usage
	idle, used := u.Exact()
	base := p.base(b.currency)
	out := &CandidateUsage{UsedHours: u.UsedHours, PeriodHours: u.PeriodHours, Cards: u.Cards}
	im, err := p.fx.Convert(billing.MoneyOf(idle, b.currency))
	if err != nil {
		return nil
	}
	tm, err := p.fx.Convert(billing.MoneyOf(b.total, b.currency))
	if err != nil {
		return nil
	}
	iv, tv := im.Amount, tm.Amount
	out.Idle = billing.MoneyOf(iv, base).Rounded()
	if tv.IsPositive() {
		s, _ := iv.DivRound(tv, 6).Float64()
		out.IdleShare = &s
	}
	if u.Cards != nil && used.IsPositive() {
		per := billing.MoneyOf(tv.DivRound(used.Mul(decimal.NewFromFloat(*u.Cards)), 24), base).Rounded()
		out.PerGPUHour = &per
	}
	return out
}

// hasCompute tells whether an offer priced for the file has a compute item
// (billing.Bill.HasCompute): without one nothing is priced by the GPU hour,
// and there are no usage figures, per candidate or in the summary.
func (p *Pricing) hasCompute() bool {
	for _, b := range p.bills {
		if b.bill.HasCompute() {
			return true
		}
	}
	return false
}

func (p *Pricing) base(currency string) string {
	if p.fx.Base != "" {
		return p.fx.Base
	}
	return currency
}

// UsageSummaryOf draws every priced offer as a line over the used hours in the
// base currency and finds where the lines cross.
func (p *Pricing) UsageSummaryOf(f *candidates.File) (*UsageSummary, error) {
	r, err := p.Rebill(p.opts)
	if err != nil {
		return nil, err
	}
	if len(r.Report.Bills) == 0 || r.Report.Bills[0].Usage == nil || !r.Report.HasCompute() {
		return nil, nil
	}
	u0 := r.Report.Bills[0].Usage
	h := r.Report.PeriodHours()
	s := &UsageSummary{UsedHours: u0.UsedHours, PeriodHours: u0.PeriodHours, From: u0.From, Offers: []UsageCurve{}}
	var lines []billing.UsageLine
	base := ""
	for i, l := range r.Report.UsageLines() {
		b := r.Report.Bills[i]
		rate, _, ok := p.fx.Rate(b.Currency)
		if !ok {
			_, err := p.fx.Convert(billing.MoneyOf(decimal.NewFromInt(1), b.Currency))
			return nil, err
		}
		cur := p.base(b.Currency)
		if base == "" {
			base = cur
		}
		l = l.Scale(rate)
		lines = append(lines, l)
		var names []string
		for _, c := range f.Candidates {
			if c.Offer == l.Offer || slices.Contains(c.WhatIf, l.Offer) {
				names = append(names, c.Name)
			}
		}
		s.Offers = append(s.Offers, UsageCurve{Offer: l.Offer, Candidates: names,
			AtZero: billing.MoneyOf(l.At0, cur).Rounded(), AtPeriod: billing.MoneyOf(l.At(h), cur).Rounded()})
	}
	s.BreakEvenHours = billing.CrossHours(lines, h, base)
	if n := p.opts.HorizonMonths; n > 0 {
		if s.HorizonBreakEvenHours, err = p.horizonCrossings(r.Report, lines, n, base); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// horizonCrossings are the used hours a month at which two offers' totals
// over n months are the same: each total is a line in the used hours (a
// reserved term, a purchase and power do not depend on them), known from
// the totals at 0 and at 730 h; monthly lines says which bend (hybrid).
func (p *Pricing) horizonCrossings(rep *billing.Report, monthly []billing.UsageLine, n int, base string) ([]billing.BreakEvenHours, error) {
	H := decimal.NewFromInt(billing.HoursPerMonth)
	var lines []billing.UsageLine
	for i, b := range rep.Bills {
		o := p.byName[b.Offer]
		at := func(u decimal.Decimal) (decimal.Decimal, error) {
			opt := p.opts
			opt.UsageHours = billing.Dec{Decimal: u, Set: true}
			h, err := billing.PriceHorizon(o, b, n, opt)
			if err != nil {
				return decimal.Decimal{}, err
			}
			rate, _, _ := p.fx.Rate(b.Currency)
			return h.ExactTotal().Mul(rate), nil
		}
		a0, err := at(decimal.Zero)
		if err != nil {
			return nil, err
		}
		aH, err := at(H)
		if err != nil {
			return nil, err
		}
		lines = append(lines, billing.UsageLine{Offer: b.Offer, At0: a0, PerHour: aH.Sub(a0).DivRound(H, 24), Kinked: monthly[i].Kinked})
	}
	out := billing.CrossHours(lines, H, base)
	for i := range out {
		out[i].Text = fmt.Sprintf("over %d months, %s costs the same as %s at %s used h a month (%s %s)", n, out[i].A, out[i].B,
			strconv.FormatFloat(out[i].Hours, 'f', -1, 64), billing.GroupThousands(out[i].Amount), base)
	}
	return out, nil
}

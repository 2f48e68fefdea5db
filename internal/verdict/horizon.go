package verdict

import (
	"fmt"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
)

// MaxHorizonMonths is the longest horizon accepted (billing.MaxHorizonMonths).
const MaxHorizonMonths = billing.MaxHorizonMonths

// HorizonBasis states what a horizon prices: months of 730 hours.
type HorizonBasis struct {
	Months        int    `json:"months"`
	HoursPerMonth int    `json:"hours_per_month"`
	Text          string `json:"text"`
}

// CandidateHorizon is a candidate's offer priced over the horizon (billing's
// PriceHorizon): the total in the offer's currency and converted to the fx
// base (the figure the ranking uses), and every item with its rule.
type CandidateHorizon struct {
	Months            int                   `json:"months"`
	HoursPerMonth     int                   `json:"hours_per_month"`
	UsedHoursPerMonth string                `json:"used_hours_per_month"`
	Total             Money                 `json:"total"`
	Converted         Money                 `json:"converted"`
	Items             []billing.HorizonItem `json:"items"`
}

// HorizonMonths is the horizon the offers are priced over (0: none).
func (p *Pricing) HorizonMonths() int { return p.opts.HorizonMonths }

// HorizonBasis states the pricing's horizon (nil without one).
func (p *Pricing) HorizonBasis() *HorizonBasis {
	n := p.opts.HorizonMonths
	if n == 0 {
		return nil
	}
	return &HorizonBasis{Months: n, HoursPerMonth: billing.HoursPerMonth, Text: billing.HorizonText(n)}
}

// Horizon prices a candidate's offer over the horizon (nil, nil without one).
func (p *Pricing) Horizon(c *candidates.Candidate) (*CandidateHorizon, error) {
	n := p.opts.HorizonMonths
	if n == 0 {
		return nil, nil
	}
	b, ok := p.bills[c.Offer]
	if !ok {
		return nil, fmt.Errorf("candidate %s: offer %q was not priced", c.Name, c.Offer)
	}
	h, err := billing.PriceHorizon(p.byName[c.Offer], b.bill, n, p.opts)
	if err != nil {
		return nil, fmt.Errorf("candidate %s: %w", c.Name, err)
	}
	conv, err := p.fx.Convert(billing.MoneyOf(h.ExactTotal(), b.currency))
	if err != nil {
		return nil, fmt.Errorf("candidate %s: %w", c.Name, err)
	}
	return &CandidateHorizon{Months: h.Months, HoursPerMonth: h.HoursPerMonth, UsedHoursPerMonth: h.UsedHours,
		Total: h.Total, Converted: conv.Rounded(), Items: h.Items}, nil
}

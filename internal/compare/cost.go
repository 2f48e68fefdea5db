package compare

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// Pricing holds the traffic profile billed under every offer the candidates
// name, ready to be looked up per candidate.
type Pricing struct {
	Traffic *TrafficSummary
	fx      FX
	bills   map[string]offerBill
}

// offerBill is one offer's monthly bill for the traffic, in its currency.
type offerBill struct {
	offer, scheme, currency string
	total                   decimal.Decimal
	items                   []CostItem
}

// NewPricing loads the offers file, reads (or synthesises) the traffic month
// and bills it under every offer the candidates name (offer and what_if).
// now picks the month of a synthetic profile without a period.
func NewPricing(f *File, now time.Time) (*Pricing, error) {
	offers, err := billing.LoadOffers(f.Offers)
	if err != nil {
		return nil, fmt.Errorf("offers: %w", err)
	}
	byName := map[string]*billing.Offer{}
	var names []string
	for _, o := range offers {
		byName[o.Name] = o
		names = append(names, o.Name)
	}
	var need []*billing.Offer
	for _, c := range f.Candidates {
		for i, name := range append([]string{c.Offer}, c.WhatIf...) {
			o, ok := byName[name]
			if !ok {
				field := "offer"
				if i > 0 {
					field = "what_if"
				}
				return nil, fmt.Errorf("%s:%d: candidate %s: %s %q is not in %s (offers: %s)", f.Path, c.Line, c.Name, field, name, f.Offers, strings.Join(names, ", "))
			}
			if _, err := f.FX.Convert(decimal.NewFromInt(1), o.Currency); err != nil {
				return nil, fmt.Errorf("%s: candidate %s: offer %s is priced in %s: %w", f.Path, c.Name, name, o.Currency, err)
			}
			if !slices.Contains(need, o) {
				need = append(need, o)
			}
		}
	}
	p := &Pricing{fx: f.FX, bills: map[string]offerBill{}}
	p.Traffic, p.bills, err = billTraffic(f, now, need)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Monthly returns a candidate's monthly cost under its offer, converted to
// the fx base, and its what-if prices.
func (p *Pricing) Monthly(c *Candidate) (*Monthly, []SchemeCost, error) {
	b, ok := p.bills[c.Offer]
	if !ok {
		return nil, nil, fmt.Errorf("candidate %s: offer %q was not priced", c.Name, c.Offer)
	}
	conv, rate, err := p.convert(b)
	if err != nil {
		return nil, nil, err
	}
	m := &Monthly{Offer: b.offer, Scheme: b.scheme, Total: billing.RoundMoney(b.total, b.currency).StringFixed(billing.MinorUnit(b.currency)), Currency: b.currency,
		Items: b.items, Converted: conv, Rate: rate}
	var whatIf []SchemeCost
	for _, name := range c.WhatIf {
		w, ok := p.bills[name]
		if !ok {
			continue
		}
		wc, _, err := p.convert(w)
		if err != nil {
			return nil, nil, err
		}
		whatIf = append(whatIf, SchemeCost{Offer: w.offer, Scheme: w.scheme, Total: billing.RoundMoney(w.total, w.currency).StringFixed(billing.MinorUnit(w.currency)), Currency: w.currency, Converted: wc})
	}
	return m, whatIf, nil
}

// convert turns a bill total into the fx base currency, rounded once to the
// base currency's minor unit.
func (p *Pricing) convert(b offerBill) (Money, string, error) {
	base := p.fx.Base
	if base == "" {
		base = b.currency
	}
	v, err := p.fx.Convert(b.total, b.currency)
	if err != nil {
		return Money{}, "", err
	}
	rate := "1"
	if b.currency != base {
		rate = p.fx.Rates[b.currency].String()
		if t, ok := p.fx.Text[b.currency]; ok {
			rate = t
		}
	}
	return Money{Amount: billing.RoundMoney(v, base).StringFixed(billing.MinorUnit(base)), Currency: base}, rate, nil
}

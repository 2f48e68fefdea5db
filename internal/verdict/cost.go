package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
)

// Pricing holds the traffic month and every offer the candidates name,
// billed with each offer's own rules — and re-billed under other rules on
// demand (Rebill: the TUI's method, direction and scale keys). compare, the
// TUI and serve price and convert through it: one pricing and FX rule.
type Pricing struct {
	Traffic *TrafficSummary
	fx      candidates.FX
	series  *billing.Series
	period  billing.Period
	offers  []*billing.Offer
	byName  map[string]*billing.Offer
	bills   map[string]offerBill
	opts    billing.Options // the rules the bills were made under (UsageHours)
}

// offerBill is one offer's monthly bill for the traffic, in its currency.
type offerBill struct {
	offer, scheme, currency string
	total                   decimal.Decimal
	items                   []CostItem
	bill                    billing.Bill
	projected               *Projected // the month projected from a partial recording (Total exact, Converted unset)
	lint                    []string   // billing.LintOffers' warnings on the offer (with Options.Lint)
}

// Quote is one offer's bill for the traffic under some rules, with its
// total converted to the fx base currency.
type Quote struct {
	Offer *billing.Offer
	Bill  billing.Bill
	// Items are the bill's charges as compare reports them (amounts rounded
	// for display, detail "quantity unit × unit price; note").
	Items []CostItem
	// Converted is the exact total converted and rounded once to the base
	// currency's minor unit; Rate the rate applied (text as written, "1"
	// when the currencies are equal) and RateValue its value.
	Converted Money
	Rate      string
	RateValue decimal.Decimal
	// Err says why the conversion failed (Converted is then empty).
	Err error
	// Projected is the month projected from a partial recording, converted
	// like the bill (nil for a complete month or NoProjection).
	Projected *Projected
}

// Rebilled is the traffic billed under one set of rules.
type Rebilled struct {
	// Report is billing's document: the traffic, its 95th, every bill.
	Report *billing.Report
	quotes map[string]Quote
}

// Quote returns the named offer's quote.
func (r *Rebilled) Quote(offer string) (Quote, bool) {
	q, ok := r.quotes[offer]
	return q, ok
}

// Rebill bills the traffic month under every offer with o's overrides
// (zero fields keep each offer's own method and direction; Scale 0 is 1).
func (p *Pricing) Rebill(o billing.Options) (*Rebilled, error) {
	if o.HorizonMonths == 0 {
		o.HorizonMonths = p.opts.HorizonMonths
	}
	rep, bills, err := billOffers(p.series, p.period, p.offers, o)
	if err != nil {
		return nil, err
	}
	r := &Rebilled{Report: rep, quotes: map[string]Quote{}}
	for name, b := range bills {
		q := Quote{Offer: p.byName[name], Bill: b.bill, Items: b.items}
		q.Converted, q.Rate, q.RateValue, q.Err = p.convertExact(b)
		q.Projected = p.projected(b)
		r.quotes[name] = q
	}
	return r, nil
}

// NewPricing loads the offers file, reads (or synthesises) the traffic month
// and bills it under every offer the candidates name (offer and what_if).
// now picks the month of a synthetic profile without a period.
func NewPricing(f *candidates.File, now time.Time) (*Pricing, error) {
	return NewPricingWith(f, now, billing.Options{})
}

// NewPricingWith is NewPricing with o's rules for every offer (compare's
// --usage-hours is o.UsageHours). A file without fx: is priced in the
// exchange its offers file states (settleFX, Pricing.FX); f is not written.
func NewPricingWith(f *candidates.File, now time.Time, o billing.Options) (*Pricing, error) {
	if o.HorizonMonths == 0 {
		o.HorizonMonths = f.HorizonMonths
	}
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
		if c.Offer == "" {
			continue // optional for the TUI (LoadOptions.TargetsOnly): not priced
		}
		for i, name := range append([]string{c.Offer}, c.WhatIf...) {
			o, ok := byName[name]
			if !ok {
				field := "offer"
				if i > 0 {
					field = "what_if"
				}
				return nil, fmt.Errorf("%s:%d: candidate %s: %s %q is not in %s (offers: %s)", f.Path, c.Line, c.Name, field, name, f.Offers, strings.Join(names, ", "))
			}
			if !slices.Contains(need, o) {
				need = append(need, o)
			}
		}
	}
	fx := f.FX
	if fx.Base == "" {
		if fx, err = settleFX(f, need); err != nil {
			return nil, err
		}
	}
	for _, c := range f.Candidates {
		for _, name := range append([]string{c.Offer}, c.WhatIf...) {
			if o := byName[name]; o != nil {
				if _, _, ok := fx.Rate(o.Currency); !ok {
					_, err := fx.Convert(billing.MoneyOf(decimal.NewFromInt(1), o.Currency))
					return nil, fmt.Errorf("%s: candidate %s: offer %s is priced in %s: %w", f.Path, c.Name, name, o.Currency, err)
				}
			}
		}
	}
	p := &Pricing{fx: fx, bills: map[string]offerBill{}, offers: need, byName: byName, opts: o}
	p.Traffic, p.series, p.period, p.bills, err = billTraffic(f, now, need, o)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// settleFX is the exchange for a candidates file without fx: the offers
// file's compare_currency and exchange_rates when it gives them (the rates
// bill uses), else the one currency every offer the candidates name is
// priced in. Offers in several currencies with no rates at all cannot be
// ranked (a USD total is no CNY total): that is an error, never a silent
// comparison of raw amounts.
func settleFX(f *candidates.File, need []*billing.Offer) (candidates.FX, error) {
	byCur := map[string][]string{}
	var curs []string
	for _, o := range need {
		if _, ok := byCur[o.Currency]; !ok {
			curs = append(curs, o.Currency)
		}
		byCur[o.Currency] = append(byCur[o.Currency], o.Name)
	}
	if fx := billing.OffersFX(need); fx.Base != "" {
		return fx, nil
	}
	fx := candidates.FX{Rates: map[string]decimal.Decimal{}, Text: map[string]string{}}
	switch len(curs) {
	case 0:
		return fx, nil
	case 1:
		fx.Base = curs[0]
		return fx, nil
	}
	var parts []string
	for _, c := range curs {
		parts = append(parts, fmt.Sprintf("%s (%s)", c, strings.Join(byCur[c], ", ")))
	}
	return candidates.FX{}, fmt.Errorf("%s: the offers are priced in %s and there is no fx: to rank them in one currency: "+
		"add `fx: {base: %s, %s: <%s per 1 %s>}` (rates are given, never fetched), or compare_currency and exchange_rates in %s",
		f.Path, strings.Join(parts, " and "), curs[0], curs[1], curs[0], curs[1], f.Offers)
}

// Monthly returns a candidate's monthly cost under its offer, converted to
// the fx base, and its what-if prices.
func (p *Pricing) Monthly(c *candidates.Candidate) (*Monthly, []SchemeCost, error) {
	b, ok := p.bills[c.Offer]
	if !ok {
		return nil, nil, fmt.Errorf("candidate %s: offer %q was not priced", c.Name, c.Offer)
	}
	conv, rate, _, err := p.convertExact(b)
	if err != nil {
		return nil, nil, err
	}
	m := &Monthly{Offer: b.offer, Scheme: b.scheme, Total: billing.RoundMoney(b.total, b.currency).StringFixed(billing.MinorUnit(b.currency)), Currency: b.currency,
		Items: b.items, Converted: conv, Rate: rate, Carry: b.bill.Carry}
	m.Projected = p.projected(b)
	var whatIf []SchemeCost
	for _, name := range c.WhatIf {
		w, ok := p.bills[name]
		if !ok {
			continue
		}
		wc, _, _, err := p.convertExact(w)
		if err != nil {
			return nil, nil, err
		}
		whatIf = append(whatIf, SchemeCost{Offer: w.offer, Scheme: w.scheme, Total: billing.RoundMoney(w.total, w.currency).StringFixed(billing.MinorUnit(w.currency)), Currency: w.currency, Converted: wc, Carry: w.bill.Carry})
	}
	return m, whatIf, nil
}

// projected converts a bill's projected month (nil without one).
func (p *Pricing) projected(b offerBill) *Projected {
	pr := b.projected
	if pr == nil {
		return nil
	}
	pc, err := p.fx.Convert(pr.Total)
	if err != nil {
		return nil
	}
	return &Projected{Total: pr.Total.Rounded(), Converted: pc.Rounded(), RecordedDays: pr.RecordedDays, PeriodDays: pr.PeriodDays, Basis: pr.Basis}
}

// FX is the exchange the candidates are ranked in: the file's fx:, else the
// one its offers file states, else their one currency.
func (p *Pricing) FX() candidates.FX { return p.fx }

// convertExact turns a bill's exact total into the fx base currency,
// rounded once to the base currency's minor unit (never rounded before the
// conversion and again after it).
func (p *Pricing) convertExact(b offerBill) (Money, string, decimal.Decimal, error) {
	v, err := p.fx.Convert(billing.MoneyOf(b.total, b.currency))
	if err != nil {
		return Money{}, "", decimal.Decimal{}, err
	}
	rv, rate, _ := p.fx.Rate(b.currency)
	return v.Rounded(), rate, rv, nil
}

// Bill returns the named offer's bill for the traffic month under its own
// rules (what Monthly reports; serve exports its measured statistic).
func (p *Pricing) Bill(offer string) (billing.Bill, bool) {
	b, ok := p.bills[offer]
	return b.bill, ok
}

// Lint returns the lint warnings on the candidate's offer ("lint: …"; none
// unless the pricing was made with Options.Lint or Market).
func (p *Pricing) Lint(c *candidates.Candidate) []string { return p.bills[c.Offer].lint }

// Offer returns the named offer of the offers file (nil when it has none).
func (p *Pricing) Offer(name string) *billing.Offer { return p.byName[name] }

package billing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Reconciliation is the invoice check: which rules give the 95th an
// invoice billed, at the invoice's precision (issue 33). A buyer who knows
// the billed Mbps learns the provider's method, direction rule, gap policy
// and time zone, or, when none gives it, how far the nearest rules are.
type Reconciliation struct {
	BilledMbps string `json:"billed_mbps,omitempty"` // as the invoice wrote it
	// BilledAmount and Offer: the invoice's amount, checked against the
	// offer's bill under every rule (ReconcileAmount).
	BilledAmount string `json:"billed_amount,omitempty"`
	Offer        string `json:"offer,omitempty"`
	Currency     string `json:"currency,omitempty"`
	Decimals     int    `json:"decimals"` // the invoice's precision: decimals of the figure given
	Tried        int    `json:"tried"`    // rules computed
	// Matches are the rules whose 95th rounds to BilledMbps, nearest first.
	Matches []RuleFigure `json:"matches"`
	// Nearest, when nothing matches, are the closest rules (at most
	// NearestShown), nearest first; empty when some rule matches.
	Nearest []RuleFigure `json:"nearest"`
}

// NearestShown is how many near rules a reconciliation without a match lists.
const NearestShown = 5

// RuleFigure is the 95th one rule gives.
type RuleFigure struct {
	Method     Method    `json:"method"`
	Direction  Direction `json:"direction"`
	Gaps       string    `json:"gaps"`
	TZ         string    `json:"tz"`
	BilledMbps float64   `json:"billed_mbps"` // the 95th by this rule, Mbps, unrounded
	DiffMbps   float64   `json:"diff_mbps"`   // BilledMbps − the invoice's figure
	// Amount is the offer's bill by this rule (ReconcileAmount), and
	// DiffAmount that less the invoice's amount (absent for a rate check).
	Amount     string   `json:"amount,omitempty"`
	DiffAmount *float64 `json:"diff_amount,omitempty"`
	diff       float64  // the distance that orders the figures
}

// ParseBilledMbps reads an invoice's billed rate ("123.45"): a positive
// decimal, its precision being the decimals written.
func ParseBilledMbps(s string) (decimal.Decimal, int, error) {
	return parseInvoiceFigure(s, "the billed Mbps", "123.45")
}

// parseInvoiceFigure reads a positive decimal as an invoice writes it and
// the number of its decimals.
func parseInvoiceFigure(s, what, example string) (decimal.Decimal, int, error) {
	t := strings.TrimSpace(s)
	d, err := decimal.NewFromString(t)
	if err != nil || !d.IsPositive() || strings.ContainsAny(t, "eE") {
		return decimal.Decimal{}, 0, fmt.Errorf("%q: want %s as the invoice writes it, a positive decimal such as %s", s, what, example)
	}
	dec := 0
	if i := strings.IndexByte(t, '.'); i >= 0 {
		dec = len(t) - i - 1
	}
	return d, dec, nil
}

// Reconcile computes the 95th of s in each period (one per time zone the
// invoice may have used: the same month in several zones) by every method,
// direction rule and gap policy, and lists those that round to billed at
// its precision (ParseBilledMbps). Coarse data is refused as BillSeries
// refuses it (ErrCoarse) unless opt.AllowCoarse.
func Reconcile(s *Series, periods []Period, billed string, opt Options) (*Reconciliation, error) {
	want, dec, err := ParseBilledMbps(billed)
	if err != nil {
		return nil, err
	}
	if s == nil || len(periods) == 0 {
		return nil, ErrNoData
	}
	boundary := opt.Boundary
	wantF := want.InexactFloat64()
	rc := &Reconciliation{BilledMbps: strings.TrimSpace(billed), Decimals: dec}
	err = eachRule(s, periods, boundary, opt, func(v *view, p Period, m Method, d Direction, gaps string) error {
		mbps := v.p95(m, d, false).bps / 1e6
		rc.add(RuleFigure{Method: m, Direction: d, Gaps: gaps, TZ: p.TZ, BilledMbps: mbps, DiffMbps: mbps - wantF, diff: mbps - wantF},
			decimal.NewFromFloat(mbps).Round(int32(dec)).Equal(want))
		return nil
	})
	if err != nil {
		return nil, err
	}
	rc.finish()
	return rc, nil
}

// ReconcileAmount is Reconcile for an invoice's amount: offer's bill (its
// total, in its currency) by every method, direction rule, gap policy and
// period, and those that round to billed at its precision.
func ReconcileAmount(s *Series, periods []Period, offer *Offer, billed string, opt Options) (*Reconciliation, error) {
	want, dec, err := parseInvoiceFigure(billed, "the billed amount", "1234.50")
	if err != nil {
		return nil, err
	}
	if s == nil || len(periods) == 0 {
		return nil, ErrNoData
	}
	rc := &Reconciliation{BilledAmount: strings.TrimSpace(billed), Offer: offer.Name, Currency: offer.Currency, Decimals: dec}
	err = eachRule(s, periods, opt.Boundary, opt, func(v *view, p Period, m Method, d Direction, gaps string) error {
		o := opt
		o.Method, o.Direction, o.Gaps, o.NoProjection = m, d, gaps, true
		r, err := BillSeries(s, p, []*Offer{offer}, o)
		if err != nil {
			return err
		}
		b := r.Bills[0]
		diff := b.total.Sub(want).InexactFloat64()
		mbps := v.p95(m, d, false).bps / 1e6
		rc.add(RuleFigure{Method: m, Direction: d, Gaps: gaps, TZ: p.TZ, BilledMbps: mbps, Amount: b.Amount, DiffAmount: &diff, diff: diff},
			b.total.Round(int32(dec)).Equal(want))
		return nil
	})
	if err != nil {
		return nil, err
	}
	rc.finish()
	return rc, nil
}

// eachRule calls f for every period, gap policy, 95th method and direction
// rule, with the view of the period under that gap policy.
func eachRule(s *Series, periods []Period, boundary Boundary, opt Options, f func(v *view, p Period, m Method, d Direction, gaps string) error) error {
	if boundary == "" {
		boundary = BoundaryStart
	}
	for _, p := range periods {
		for _, gaps := range []string{"skip", "zero"} {
			v := newView(s, p, boundary, gaps, 1)
			if len(v.slots) == 0 {
				return fmt.Errorf("%s: %w in period %s (%s)", s.Name, ErrNoData, p.Label(), p.TZ)
			}
			if step := coarseStep(s, v); step > SlotSeconds && !opt.AllowCoarse {
				return fmt.Errorf("%s: step %d s is coarser than the 300 s grid: %w; an invoice's 95th is taken on 5-minute data (--allow-coarse to try anyway)", s.Name, step, ErrCoarse)
			}
			for _, m := range Methods {
				for _, d := range Directions {
					if err := f(v, p, m, d, gaps); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// add records one rule's figure, among the matches when it matches.
func (rc *Reconciliation) add(f RuleFigure, match bool) {
	f.BilledMbps, f.DiffMbps = Sig(f.BilledMbps), Sig(f.DiffMbps)
	if f.DiffAmount != nil {
		d := Sig(*f.DiffAmount)
		f.DiffAmount = &d
	}
	rc.Tried++
	if match {
		rc.Matches = append(rc.Matches, f)
	}
	rc.Nearest = append(rc.Nearest, f) // all, until finish keeps the nearest
}

// finish orders the matches nearest first and keeps the nearest rules
// only when nothing matched.
func (rc *Reconciliation) finish() {
	nearest := func(a, b RuleFigure) int { return cmp.Compare(math.Abs(a.diff), math.Abs(b.diff)) }
	if rc.Matches == nil {
		rc.Matches = []RuleFigure{}
	}
	slices.SortStableFunc(rc.Matches, nearest)
	if len(rc.Matches) > 0 {
		rc.Nearest = []RuleFigure{}
		return
	}
	slices.SortStableFunc(rc.Nearest, nearest)
	rc.Nearest = rc.Nearest[:min(NearestShown, len(rc.Nearest))]
}

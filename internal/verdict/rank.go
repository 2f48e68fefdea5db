package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// Cost returns the candidate's cost in the fx base currency: over the
// horizon when one is set, else the month's.
func (e *Evaluation) Cost() (decimal.Decimal, bool) {
	if e.Monthly != nil && e.Horizon != nil && e.Horizon.Converted.Valid() {
		return e.Horizon.Converted.Amount, true
	}
	if e.Monthly == nil || !e.Monthly.Converted.Valid() {
		return decimal.Decimal{}, false
	}
	return e.Monthly.Converted.Amount, true
}

// RankingRule states the order of Rank, for reports and docs. "Passing" is
// Evaluation.Passes: the SLA and any recorded delivery.
const RankingRule = "passing candidates first; then those whose offer can carry the traffic before those whose port its 95th exceeds; " +
	"then candidates with measurements before those without (no probe answered); " +
	"then by monthly cost in the base currency, unpriced last; ties by name"

// RankKey is what the ranking orders a candidate by.
type RankKey struct {
	Name string
	// Pass: every SLA check passes and no part of the recorded delivery
	// fails (Evaluation.Passes).
	Pass bool
	// HasData: at least one probe was answered. A candidate without data
	// (never measured, or 100 % loss) ranks after every measured one: its
	// failure says nothing about the line, and its cost must not lift it.
	HasData bool
	// Carries: the offer's port is not exceeded by the traffic's 95th (or
	// the offer states no port). One that cannot carry it is never
	// recommended, however cheap.
	Carries bool
	// Cost is the monthly cost in the base currency; Priced says it is known.
	Cost   decimal.Decimal
	Priced bool
}

// RankLess is the ranking order (RankingRule): compare, the TUI and serve
// order candidates with it.
func RankLess(a, b RankKey) bool {
	if a.Pass != b.Pass {
		return a.Pass
	}
	if a.Carries != b.Carries {
		return a.Carries
	}
	if a.HasData != b.HasData {
		return a.HasData
	}
	if a.Priced != b.Priced {
		return a.Priced
	}
	if a.Priced && !a.Cost.Equal(b.Cost) {
		return a.Cost.LessThan(b.Cost)
	}
	return a.Name < b.Name
}

// RankKey returns the evaluation's ranking key.
func (e *Evaluation) RankKey() RankKey {
	c, ok := e.Cost()
	return RankKey{Name: e.Name, Pass: e.Passes(), HasData: e.Route.Recv > 0, Carries: e.Monthly.CanCarry(), Cost: c, Priced: ok}
}

// Ranking is what Rank says of a set of evaluations: the order (names),
// the recommendation, the saving over the next passing candidate, the
// one-line verdict and the notes (cheaper candidates the SLA rejected,
// offers that cannot carry the traffic, failed deliveries).
type Ranking struct {
	Order       []string
	Recommended string
	Savings     *Savings
	Verdict     string
	Notes       []string
}

// Rank orders the evaluations in place (RankLess), sets each Rank, and
// returns the ranking, the recommendation, the saving and the verdict.
func Rank(ev []*Evaluation) (r Ranking) {
	noted := map[string]bool{}
	defer func() { r.Notes = append(r.Notes, append(carryNotes(ev), deliveryNotes(ev, noted)...)...) }()
	sort.SliceStable(ev, func(i, j int) bool { return RankLess(ev[i].RankKey(), ev[j].RankKey()) })
	for i, e := range ev {
		e.Rank = i + 1
		r.Order = append(r.Order, e.Name)
	}
	var passing []*Evaluation
	for _, e := range ev {
		if _, ok := e.Cost(); ok && e.Passes() && e.Monthly.CanCarry() {
			passing = append(passing, e)
		}
	}
	nPass, nDelivery := 0, 0
	for _, e := range ev {
		if e.SLA.Pass {
			nPass++
			if !e.Passes() {
				nDelivery++
			}
		}
	}
	passSLA := fmt.Sprintf("%d of %d candidates pass the SLA", nPass, len(ev))
	if nDelivery > 0 {
		verb := "fail their"
		if nDelivery == 1 {
			verb = "fails its"
		}
		passSLA += fmt.Sprintf(" (%d of them %s recorded delivery)", nDelivery, verb)
	}
	switch {
	case len(passing) == 0 && nPass == 0:
		r.Verdict = fmt.Sprintf("no candidate passes the SLA (%d checked)", len(ev))
	case len(passing) == 0 && nPass == nDelivery:
		r.Verdict = passSLA + ", so none is recommended"
	case len(passing) == 0:
		r.Verdict = passSLA + ", but none could be priced with an offer that can carry the traffic"
	default:
		best := passing[0]
		r.Recommended = best.Name
		c0, _ := best.Cost()
		per, months := "/month", 0
		if h := best.Horizon; h != nil {
			per, months = fmt.Sprintf(" over %d months", h.Months), h.Months
		}
		r.Verdict = fmt.Sprintf("%s; recommended: %s at %s %s%s",
			passSLA, best.Name, billing.GroupThousands(c0.StringFixed(2)), best.Monthly.Converted.Currency, per)
		if len(passing) > 1 {
			next := passing[1]
			c1, _ := next.Cost()
			diff := c1.Sub(c0)
			pct := 0.0
			if c1.IsPositive() {
				pct, _ = diff.Div(c1).Mul(decimal.NewFromInt(100)).Round(1).Float64()
			}
			r.Savings = &Savings{Versus: next.Name, Amount: diff.StringFixed(2), Currency: best.Monthly.Converted.Currency, Percent: pct, Months: months}
			r.Verdict += fmt.Sprintf(", %s %s (%.1f %%) less than %s", billing.GroupThousands(diff.StringFixed(2)), r.Savings.Currency, pct, next.Name)
		} else {
			if nPass > 1 {
				r.Verdict += " (the only passing candidate whose offer can carry the traffic)"
			} else {
				r.Verdict += " (the only passing candidate)"
			}
		}
		// What the SLA costs: cheaper candidates that were rejected, and why.
		for _, e := range ev {
			c, ok := e.Cost()
			if e.Passes() || !ok || !c.LessThan(c0) {
				continue
			}
			failed := Failures(e.SLA.Checks)
			failed = append(failed, e.deliveryFailures()...)
			noted[e.Name] = true
			over := ""
			if months > 0 {
				over = fmt.Sprintf(" over %d months", months)
			}
			r.Notes = append(r.Notes, fmt.Sprintf("%s would cost %s %s%s (%s less than %s) but fails %s",
				e.Name, billing.GroupThousands(c.StringFixed(2)), e.Monthly.Converted.Currency, over, billing.GroupThousands(c0.Sub(c).StringFixed(2)), best.Name, strings.Join(failed, ", ")))
		}
	}
	return r
}

// carryNotes explains every passing candidate that is not recommended
// because its offer cannot carry the traffic.
func carryNotes(ev []*Evaluation) []string {
	var out []string
	for _, e := range ev {
		if e.SLA.Pass && !e.Monthly.CanCarry() {
			out = append(out, fmt.Sprintf("%s passes the SLA but is not recommended: offer %s %s", e.Name, e.Monthly.Offer, e.Monthly.Carry.Reason))
		}
	}
	return out
}

// deliveryFailures names each failed part of the recorded delivery with
// its failed checks: "GPU delivery (count, model)".
func (e *Evaluation) deliveryFailures() []string {
	var out []string
	for _, part := range e.DeliveryFailed {
		switch part {
		case "gpu":
			out = append(out, "GPU delivery ("+strings.Join(e.GPU.Failed(), ", ")+")")
		case "host":
			out = append(out, "host delivery ("+strings.Join(e.Host.Failed(), ", ")+")")
		case "interconnect":
			out = append(out, "interconnect delivery ("+strings.Join(e.Interconnect.Failed(), ", ")+")")
		default:
			out = append(out, part+" delivery")
		}
	}
	return out
}

// deliveryNotes explains every candidate that passes the SLA but is not
// recommended because its recorded delivery fails (unless a cost note
// already said so).
func deliveryNotes(ev []*Evaluation, noted map[string]bool) []string {
	var out []string
	for _, e := range ev {
		if e.SLA.Pass && !e.Passes() && !noted[e.Name] {
			out = append(out, fmt.Sprintf("%s passes the SLA but fails its recorded delivery, never recommended: %s", e.Name, strings.Join(e.deliveryFailures(), ", ")))
		}
	}
	return out
}

package billing

import (
	"fmt"
	"math"

	"github.com/shopspring/decimal"
)

// compareBills marks the cheapest bill, the ratio dearest/cheapest and the
// break-even points. Offers are comparable when they share a currency or the
// offers file gives exchange rates to a compare currency.
func compareBills(r *Report, v *view) {
	if len(r.Bills) == 0 {
		return
	}
	cur := r.Bills[0].Currency
	if cc := r.measures[0].o.CompareCurrency; cc != "" {
		cur = cc
	}
	for _, b := range r.Bills {
		if b.CompareCurrency == "" && b.Currency != cur {
			r.Warnings = append(r.Warnings, fmt.Sprintf("offers are priced in %s and %s without exchange_rates: no cheapest offer is named", cur, b.Currency))
			return
		}
	}
	// An offer whose port the traffic's 95th exceeds cannot carry it: it is
	// never the cheapest, however little it costs (issue 10).
	ci, di := -1, 0
	for i, b := range r.Bills {
		if b.CanCarry() && (ci < 0 || b.rankCost().LessThan(r.Bills[ci].rankCost())) {
			ci = i
		}
		if b.rankCost().GreaterThan(r.Bills[di].rankCost()) {
			di = i
		}
	}
	c := &Compare{Currency: cur, Dearest: r.Bills[di].Offer, BreakEven: []BreakEven{}}
	if ci < 0 {
		r.Warnings = append(r.Warnings, "no offer can carry this traffic (the 95th exceeds every offer's port): no cheapest offer is named")
		r.Compare = c
		return
	}
	r.Bills[ci].Cheapest = true
	r.Cheapest = r.Bills[ci].Offer
	if r.Bills[ci].rankCost().IsPositive() {
		c.Ratio, _ = r.Bills[di].rankCost().DivRound(r.Bills[ci].rankCost(), 6).Float64()
	}
	for _, m := range r.measures {
		m.quiet = true
	}
	greater := 0.0
	if r.P95 != nil {
		greater = r.P95.GreaterBps
	} else {
		greater = v.p95(NearestRank, DirGreater, false).bps
	}
	for _, pr := range breakEvenPairs(r.measures, ci) {
		c.BreakEven = append(c.BreakEven, r.breakEvens(pr, cur, greater)...)
	}
	r.Compare = c
}

// rankCost is what offers are compared by, in the compare currency: the
// horizon's total when there is one, else the month's.
func (b Bill) rankCost() decimal.Decimal {
	if b.Horizon == nil {
		return b.compare
	}
	return b.Horizon.total.Mul(b.Horizon.rate)
}

// offerPair is two offers, by their index in the report's bills.
type offerPair struct{ a, b int }

// breakEvenPairs are the pairs whose break-even is sought: every offer
// against the cheapest (ci), and every per-GB offer against every
// rate-billed one (the volume at which per-GB and 95th cost the same).
func breakEvenPairs(measures []*measure, ci int) []offerPair {
	var pairs []offerPair
	seen := map[offerPair]bool{}
	add := func(a, b int) {
		if a == b || seen[offerPair{a, b}] || seen[offerPair{b, a}] {
			return
		}
		seen[offerPair{a, b}] = true
		pairs = append(pairs, offerPair{a, b})
	}
	for i := range measures {
		add(i, ci)
	}
	for i, m := range measures {
		for j, n := range measures {
			if m.o.Bandwidth.Scheme == "per-gb" && isRate(n.o.Bandwidth.Scheme) {
				add(i, j)
			}
		}
	}
	return pairs
}

// breakEvens are the scales of this traffic at which the pair's offers
// cost the same, in cur; greater is the traffic's 95th (greater
// direction) at scale 1.
func (r *Report) breakEvens(pr offerPair, cur string, greater float64) []BreakEven {
	// The scan goes up to 100× this traffic, but never past a volume a report
	// can hold (a break-even's out_bytes is an int64 byte count).
	hi := 100.0
	if tot := float64(r.Traffic.TotalBytes); tot > 0 {
		hi = min(hi, maxVolume/tot/2)
	}
	if hi <= 0.01 {
		return nil
	}
	// A port carries its 95th up to port/95th × this traffic (the 95th scales
	// with the traffic): a crossing beyond it is no break-even, since that
	// offer could not carry the traffic there (issue 20: "hk-gia-fixed costs
	// the same as la-pergb at 42.3× this traffic" for a 500 Mbps port).
	carries := func(i int) float64 {
		c := r.Bills[i].Carry
		if c == nil || c.P95Mbps <= 0 {
			return math.Inf(1)
		}
		return c.PortMbps / c.P95Mbps
	}
	cost := func(m *measure, k float64) decimal.Decimal { return m.total(k).Mul(m.o.rate()) }
	outBytes := float64(r.Traffic.OutBytes)
	m, n := r.measures[pr.a], r.measures[pr.b]
	limit := min(carries(pr.a), carries(pr.b))
	f := func(k float64) float64 {
		d, _ := cost(m, k).Sub(cost(n, k)).Float64()
		return d
	}
	var out []BreakEven
	for _, k := range crossings(f, 0.01, hi) {
		if k > limit {
			continue
		}
		out = append(out, BreakEven{
			Offer: m.o.Name, Versus: n.o.Name, Scale: round6(k), OutBytes: int64(outBytes * k), P95Bps: greater * k,
			Amount: FormatMoney(cost(n, k), cur), Currency: cur,
			Text: fmt.Sprintf("%s costs the same as %s at %.3g× this traffic (out %s, 95th %.1f Mbps): %s %s",
				m.o.Name, n.o.Name, k, HumanBytes(outBytes*k), greater*k/1e6, GroupThousands(FormatMoney(cost(n, k), cur)), cur),
		})
	}
	return out
}

// crossings finds the scales in [lo, hi] where f changes sign: a log-spaced
// scan then bisection. Costs are piecewise linear in the scale, so the scan
// step only has to separate crossings, not locate them.
func crossings(f func(float64) float64, lo, hi float64) []float64 {
	var out []float64
	const steps = 240 // ≈ 4 % apart
	ratio := math.Pow(hi/lo, 1.0/steps)
	a, fa := lo, f(lo)
	for i := 1; i <= steps; i++ {
		b := lo * math.Pow(ratio, float64(i))
		fb := f(b)
		if fa == 0 && i == 1 {
			out = append(out, a)
		}
		if (fa < 0 && fb >= 0) || (fa > 0 && fb <= 0) {
			x, y, fx := a, b, fa
			for range 60 {
				mid := (x + y) / 2
				fm := f(mid)
				if (fx < 0) == (fm < 0) && fm != 0 {
					x, fx = mid, fm
				} else {
					y = mid
				}
			}
			out = append(out, y)
		}
		a, fa = b, fb
	}
	return out
}

// HumanBytes renders a byte count with decimal units (TB = 10^12 bytes)
// and two decimals: "156.24 TB". Every command renders volumes with it.
func HumanBytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	return fmt.Sprintf("%.2f %s", b, units[i])
}

package billing

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

var (
	zero = decimal.Zero
	one  = decimal.NewFromInt(1)
)

// measure is what an offer's bandwidth charge depends on, measured once; the
// charge at k × the traffic (for break-even points) is price(k).
type measure struct {
	o         *Offer
	bps       float64 // rate schemes: the statistic in bit/s
	bytes     float64 // per-gb: the volume in bytes
	validDays int
	days      int
	other     decimal.Decimal // exact sum of the other monthly items
	otherIt   []LineItem
	quiet     bool // no line items (break-even search)

	p           Period          // the billed period
	hours, used decimal.Decimal // the period's hours and the used hours priced
	usedFrom    string          // where used comes from (UsageDoc.From)
	horizon     int             // Options.HorizonMonths
}

func pick[T ~string](override, own T) T {
	if override != "" {
		return override
	}
	return own
}

// priceOffer measures the view under the offer's rules (or the overrides) and prices it.
func priceOffer(v *view, o *Offer, opt Options) (Bill, *measure) {
	bw := o.Bandwidth
	method := pick(opt.Method, pick(bw.Method, Methods[0]))
	if bw.Direction == "" { // an offer built in code: the file's defaults
		bw.Direction = DirGreater
		if bw.Scheme == "per-gb" {
			bw.Direction = DirOut
		}
	}
	dir := bw.Direction
	if isRate(bw.Scheme) {
		// The override is a what-if on the rate rule; a per-GB offer's direction
		// says which traffic is charged at all (egress only, say) and stays.
		dir = pick(opt.Direction, bw.Direction)
	}
	valid := bw.Prorate == "valid-days"
	m := &measure{o: o, validDays: v.validDays, days: len(v.days)}
	b := Bill{Offer: o.Name, Provider: o.Provider, Line: o.Line, Scheme: bw.Scheme, Currency: o.Currency, Flags: []string{}}
	rule := b.measureRule(v, m, bw, method, dir, valid)
	b.checkCarry(v, bw, method)
	m.p, m.hours = v.p, periodHours(v.p)
	m.used, m.usedFrom, _ = usedHours(o, v.p, opt) // checked by BillSeries
	m.horizon = opt.HorizonMonths
	m.other, m.otherIt = otherItems(o, v.p, m.used, m.horizon)
	bwAmount, items, billable := m.bandwidth(1)
	switch {
	case bw.Scheme == "per-gb":
		rule.BillableGB, rule.Unit = exact(billable), "GB"
		if bw.Base == 1024 {
			rule.Unit = "GiB"
		}
	case isRate(bw.Scheme):
		rule.BillableMbps, rule.Unit = exact(billable), "Mbps"
	}
	rule.Text = ruleText(bw, rule, billable)
	b.Rule = rule
	b.Items = append(items, m.otherIt...)
	b.total = bwAmount.Add(m.other)
	b.Amount = FormatMoney(b.total, o.Currency)
	b.Bandwidth = FormatMoney(bwAmount, o.Currency)
	if o.CompareCurrency != "" && o.CompareCurrency != o.Currency {
		b.compare = b.total.Mul(o.rate())
		b.AmountCompare = FormatMoney(b.compare, o.CompareCurrency)
		b.CompareCurrency = o.CompareCurrency
	} else {
		b.compare = b.total
	}
	return b, m
}

// measureRule measures the view under the offer's bandwidth scheme into m
// and returns the rule the bill states; b takes the scheme's flags (and a
// fixed port's utilisation).
func (b *Bill) measureRule(v *view, m *measure, bw Bandwidth, method Method, dir Direction, valid bool) Rule {
	rule := Rule{Direction: dir, Gaps: v.gaps}
	var st stat
	switch bw.Scheme {
	case "fixed":
		rule = Rule{Statistic: "port", Text: fmt.Sprintf("flat price for a %s Mbps port, whatever the traffic", bw.PortMbps.String())}
		port := bw.PortMbps.InexactFloat64() * 1e6
		avg := v.average(DirGreater, false)
		p95 := v.p95(method, DirGreater, false)
		pk := v.peak(1, DirGreater, false)
		u := &Utilisation{PortMbps: bw.PortMbps.InexactFloat64(), Average: round6(avg.bps / port), P95: round6(p95.bps / port), Peak: round6(pk.bps / port)}
		u.SlotsAbove = v.slotsAbove(port)
		b.Utilisation = u
	case "per-gb":
		m.bytes = v.volume(dir)
		rule.Statistic = "volume"
		rule.Bytes = int64(m.bytes + 0.5)
		rule.Gaps = ""
	case "p95":
		rule.Method = method
		st = v.p95(method, dir, valid)
	case "peak":
		st = v.peak(bw.Nth, dir, valid)
		if bw.Nth > st.n {
			// nthLargest clamps to the smallest sample: say so, it is not the offer's rule.
			b.Flags = append(b.Flags, fmt.Sprintf("nth %d is above the %s of the period: billed the smallest sample instead (the offer's rule needs at least %s)", bw.Nth, Count(st.n, "sample", ""), Count(bw.Nth, "sample", "")))
		}
	case "average":
		st = v.average(dir, valid)
	case "daily-peak-average":
		st = v.dailyPeakAverage(bw.DailyNth, bw.TopDays, dir, valid)
		if short := v.daysShorterThan(bw.DailyNth, valid); short > 0 {
			b.Flags = append(b.Flags, fmt.Sprintf("daily_nth %d is above the sample count of %s: those days billed their smallest sample instead", bw.DailyNth, Count(short, "day", "")))
		}
		if bw.TopDays > st.rank {
			b.Flags = append(b.Flags, fmt.Sprintf("top_days %d is above the %s with samples: averaged over all %d", bw.TopDays, Count(st.rank, "day", ""), st.rank))
		}
	}
	if isRate(bw.Scheme) {
		m.bps = st.bps
		rule.Statistic, rule.N, rule.Rank, rule.Bps = bw.Scheme, st.n, st.rank, st.bps
		if bw.Scheme == "average" {
			rule.Rank = 0
		}
		if dir == DirGreater {
			rule.Decided = st.from
		}
		if valid {
			rule.Prorate, rule.ValidDays, rule.Days = bw.Prorate, v.validDays, len(v.days)
		}
	}
	return rule
}

// checkCarry says whether the offer's port carries the traffic, and flags
// it when it does not or when the peak goes above it.
func (b *Bill) checkCarry(v *view, bw Bandwidth, method Method) {
	if !bw.PortMbps.Set || !bw.PortMbps.IsPositive() {
		return
	}
	b.Carry = v.carry(bw.PortMbps.InexactFloat64(), method)
	switch c := b.Carry; c.Status {
	case CarryCannot:
		b.Flags = append(b.Flags, fmt.Sprintf("%s; never named cheapest (first slot above the port at %s)", c.Reason, c.SlotsAbove.First))
	case CarryPeakAbove:
		b.Flags = append(b.Flags, fmt.Sprintf("%s (first at %s): kept as measured, never clamped; check the counters or the port speed", c.Reason, c.SlotsAbove.First))
	}
}

func isRate(scheme string) bool {
	switch scheme {
	case "p95", "peak", "average", "daily-peak-average":
		return true
	}
	return false
}

func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }

// item appends a line item unless the measure is being priced quietly (break-even search).
func (m *measure) item(items *[]LineItem, f func() LineItem) {
	if !m.quiet {
		*items = append(*items, f())
	}
}

// total is the exact amount of the offer at k × the measured traffic.
func (m *measure) total(k float64) decimal.Decimal {
	a, _, _ := m.bandwidth(k)
	return a.Add(m.other)
}

// bandwidth prices the bandwidth at k × the measured traffic and returns the
// exact amount, its line items and the billable quantity (Mbps or GB).
func (m *measure) bandwidth(k float64) (decimal.Decimal, []LineItem, decimal.Decimal) {
	bw := m.o.Bandwidth
	switch bw.Scheme {
	case "fixed":
		return bw.Price.Decimal, []LineItem{{Name: "port " + bw.PortMbps.String() + " Mbps", Kind: "bandwidth", Quantity: "1", Unit: "month",
			UnitPrice: bw.Price.String(), Amount: exact(bw.Price.Decimal)}}, zero
	case "per-gb":
		return m.perGB(k)
	}
	mbps := mbpsOfBps(m.bps * k)
	effective := mbps
	var notes []string
	if bw.Prorate == "valid-days" && m.days > 0 {
		effective = mbps.Mul(decimal.NewFromInt(int64(m.validDays))).DivRound(decimal.NewFromInt(int64(m.days)), 18)
		notes = append(notes, fmt.Sprintf("%s Mbps × %d/%d valid days", readable(mbps), m.validDays, m.days))
	}
	billable := effective
	if bw.MinShare.Set {
		base := bw.PortMbps.Decimal
		if !bw.PortMbps.Set {
			base = bw.CommitMbps.Decimal
		}
		if floor := bw.MinShare.Mul(base); floor.GreaterThan(billable) {
			billable = floor
			notes = append(notes, fmt.Sprintf("raised to the minimum %s × %s Mbps", bw.MinShare.String(), base.String()))
		}
	}
	note := strings.Join(notes, "; ")
	var items []LineItem
	var amount decimal.Decimal
	if bw.CommitMbps.Set {
		amount = bw.CommitPrice.Decimal
		m.item(&items, func() LineItem {
			return LineItem{Name: "commit " + bw.CommitMbps.String() + " Mbps", Kind: "bandwidth", Quantity: "1", Unit: "month",
				UnitPrice: bw.CommitPrice.String(), Amount: exact(bw.CommitPrice.Decimal)}
		})
		over := billable.Sub(bw.CommitMbps.Decimal)
		if over.IsPositive() {
			a := over.Mul(bw.PricePerMbps.Decimal)
			amount = amount.Add(a)
			m.item(&items, func() LineItem {
				return LineItem{Name: "overage above commit", Kind: "bandwidth", Quantity: exact(over), Unit: "Mbps",
					UnitPrice: bw.PricePerMbps.String(), Amount: exact(a), Note: note}
			})
		} else if note != "" && len(items) > 0 {
			items[0].Note = note
		}
	} else {
		amount = billable.Mul(bw.PricePerMbps.Decimal)
		m.item(&items, func() LineItem {
			return LineItem{Name: schemeNoun(bw.Scheme) + " bandwidth", Kind: "bandwidth", Quantity: exact(billable), Unit: "Mbps",
				UnitPrice: bw.PricePerMbps.String(), Amount: exact(amount), Note: note}
		})
	}
	return amount, items, billable
}

func schemeNoun(s string) string {
	switch s {
	case "p95":
		return "95th percentile"
	case "daily-peak-average":
		return "average daily peak"
	}
	return s
}

// perGB prices the volume by marginal tiers after the free allowance.
func (m *measure) perGB(k float64) (decimal.Decimal, []LineItem, decimal.Decimal) {
	bw := m.o.Bandwidth
	bytes := decimal.NewFromFloat(m.bytes * k).Round(0)
	gb := gbOf(bytes, bw.Base)
	unit := "GB"
	if bw.Base == 1024 {
		unit = "GiB"
	}
	billable := gb.Sub(bw.FreeGB.Decimal)
	var items []LineItem
	if bw.FreeGB.IsPositive() {
		m.item(&items, func() LineItem {
			return LineItem{Name: "free allowance", Kind: "bandwidth", Quantity: exact(decimal.Min(gb, bw.FreeGB.Decimal)), Unit: unit, UnitPrice: "0", Amount: "0"}
		})
	}
	if billable.IsNegative() {
		billable = zero
	}
	if len(bw.Tiers) == 0 {
		a := billable.Mul(bw.PricePerGB.Decimal)
		m.item(&items, func() LineItem {
			return LineItem{Name: "traffic " + m.dirName(), Kind: "bandwidth", Quantity: exact(billable), Unit: unit, UnitPrice: bw.PricePerGB.String(), Amount: exact(a),
				Note: fmt.Sprintf("%s bytes / %d^3", bytes.String(), bw.Base)}
		})
		return a, items, billable
	}
	amount := zero
	lower := zero
	for i, t := range bw.Tiers {
		last := !t.UpToGB.Set
		upper := t.UpToGB.Decimal
		q := billable.Sub(lower)
		if !last && billable.GreaterThan(upper) {
			q = upper.Sub(lower)
		}
		if !q.IsPositive() {
			break
		}
		a := q.Mul(t.PricePerGB.Decimal)
		amount = amount.Add(a)
		name := fmt.Sprintf("tier %d: %s–%s %s", i+1, lower.String(), upper.String(), unit)
		if last {
			name = fmt.Sprintf("tier %d: above %s %s", i+1, lower.String(), unit)
		}
		m.item(&items, func() LineItem {
			return LineItem{Name: name, Kind: "bandwidth", Quantity: exact(q), Unit: unit, UnitPrice: t.PricePerGB.String(), Amount: exact(a)}
		})
		if last {
			break
		}
		lower = upper
	}
	return amount, items, billable
}

func (m *measure) dirName() string {
	return string(m.o.Bandwidth.Direction)
}

func ruleText(bw Bandwidth, r Rule, billable decimal.Decimal) string {
	switch r.Statistic {
	case "port":
		return r.Text
	case "volume":
		base := "GB = 10^9 bytes"
		if bw.Base == 1024 {
			base = "GiB = 2^30 bytes"
		}
		s := fmt.Sprintf("volume %s: %s bytes (%s)", r.Direction, fmt.Sprint(r.Bytes), base)
		if bw.FreeGB.IsPositive() {
			s += fmt.Sprintf(", %s free", bw.FreeGB.String())
		}
		if len(bw.Tiers) > 0 {
			s += fmt.Sprintf(", %d marginal tiers", len(bw.Tiers))
		}
		return s + fmt.Sprintf(" → %s billable", readable(billable))
	}
	var s string
	switch r.Statistic {
	case "p95":
		s = fmt.Sprintf("95th %s: rank %d of %s", r.Method, r.Rank, Count(r.N, "sample", ""))
	case "peak":
		s = fmt.Sprintf("peak: rank %d of %s", r.Rank, Count(r.N, "sample", ""))
	case "average":
		s = fmt.Sprintf("average rate over %s", Count(r.N, "sample", ""))
	case "daily-peak-average":
		s = fmt.Sprintf("average of daily peaks over %s", Count(r.Rank, "day", ""))
	}
	s += ", direction " + string(r.Direction)
	if r.Decided != "" {
		s += " (" + string(r.Decided) + " larger)"
	}
	s += ", gaps " + r.Gaps
	if r.Prorate != "" {
		s += fmt.Sprintf(", valid days %d/%d", r.ValidDays, r.Days)
	}
	return s + fmt.Sprintf(" → %.3f Mbps measured, %s Mbps billable", r.Bps/1e6, billable.Round(3).String())
}

package billing

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// Billing models of a compute item (its billing key). An item without one
// is hourly when priced per card-hour (cards × used hours ×
// price_per_card_hour, or its own hours when it states them) and monthly
// when priced per month.
const (
	// BillHourly is cards × used hours × price_per_card_hour: pay as you go, shut down when idle.
	BillHourly = "hourly"
	// BillMonthly is price_per_month whatever the use.
	BillMonthly = "monthly"
	// BillReserved is cards × every hour of the period × price_per_card_hour + upfront / term_months:
	// a commitment is paid used or not.
	BillReserved = "reserved"
	// BillSpot is cards × used hours × (1 + interruption_overhead) × price_per_card_hour: the
	// overhead is the share of work rerun after interruptions.
	BillSpot = "spot"
)

// BillingModels are the values a compute item's billing key may take.
var BillingModels = []string{BillHourly, BillMonthly, BillReserved, BillSpot}

// Usage is how many hours the GPU machine is used in the billed period: the
// offers file's usage (for every offer) or an offer's own.
type Usage struct {
	Hours Dec `yaml:"hours"`
	// BaselineHours splits the used hours of a hybrid offer: its compute
	// item with baseline: true bills up to this many of them, its other
	// hourly and spot compute items the rest.
	BaselineHours Dec `yaml:"baseline_hours"`
	// Pos is "file:line" of the usage block, for messages (set by ParseOffers).
	Pos string `yaml:"-"`

	line int
}

// UnmarshalYAML reads {hours: N} strictly and records its line.
func (u *Usage) UnmarshalYAML(n *yaml.Node) error {
	type plain Usage
	if err := yamlmsg.DecodeLined(n, (*plain)(u), &u.line); err != nil {
		return err
	}
	if !u.Hours.Set {
		return fmt.Errorf("line %d: usage needs hours (the hours the GPU machine is used in the period), e.g. usage: {hours: 300}", n.Line)
	}
	if u.Hours.IsNegative() {
		return fmt.Errorf("line %d: usage.hours %s is negative", n.Line, u.Hours.String())
	}
	if u.BaselineHours.IsNegative() {
		return fmt.Errorf("line %d: usage.baseline_hours %s is negative", n.Line, u.BaselineHours.String())
	}
	return nil
}

// baseline is the hybrid split of an offer: the baseline hours when the
// offer has a compute item with baseline: true (ok false otherwise).
func baseline(o *Offer) (decimal.Decimal, bool) {
	if o.Usage == nil || !o.Usage.BaselineHours.Set {
		return zero, false
	}
	for _, it := range o.Items {
		if it.Baseline {
			return o.Usage.BaselineHours.Decimal, true
		}
	}
	return zero, false
}

// needBaseline refuses a baseline item without baseline hours to bill.
func needBaseline(o *Offer) error {
	for _, it := range o.Items {
		if it.Baseline {
			if _, ok := baseline(o); !ok {
				return fmt.Errorf("%s: offer %q: compute %q is the baseline of a hybrid offer: give usage: {hours: N, baseline_hours: M} (the offer's or the file's)", o.Pos, o.Name, it.Name)
			}
		}
	}
	return nil
}

// splitHours is the used hours a compute item billed by the hour bills out
// of u: all of them, or in a hybrid offer min(u, M) on its baseline item
// and max(0, u − M) on the others; with the rule in words ("" when whole).
func splitHours(o *Offer, it *Item, u decimal.Decimal) (decimal.Decimal, string) {
	m, ok := baseline(o)
	switch {
	case !ok:
		return u, ""
	case it.Baseline:
		return decimal.Min(u, m), fmt.Sprintf(" (baseline: min(%s, %s) h)", exact(u), exact(m))
	default:
		return decimal.Max(zero, u.Sub(m)), fmt.Sprintf(" (above the baseline: %s − %s h)", exact(u), exact(m))
	}
}

// setUsage gives every offer without a usage of its own the file's, and
// names the file in each usage's position.
func setUsage(f *OffersFile, name string) {
	if f.Usage != nil {
		f.Usage.Pos = fmt.Sprintf("%s:%d", name, f.Usage.line)
	}
	for _, o := range f.Offers {
		if o.Usage == nil {
			o.Usage = f.Usage
		} else {
			o.Usage.Pos = fmt.Sprintf("%s:%d", name, o.Usage.line)
		}
	}
}

// checkBillingKeys refuses the usage-model keys on items that are not compute.
func (it *Item) checkBillingKeys() error {
	if it.Kind == "compute" {
		return nil
	}
	for _, k := range []struct {
		name string
		set  bool
	}{{"billing", it.Billing != ""}, {"term_months", it.TermMonths.Set}, {"upfront", it.Upfront.Set}, {"interruption_overhead", it.InterruptionOverhead.Set},
		{"early_exit", it.EarlyExit.Set}, {"interruptions_per_hour", it.InterruptionsPerHour.Set}, {"checkpoint_hours", it.CheckpointHours.Set}, {"restart_hours", it.RestartHours.Set},
		{"baseline", it.Baseline}} {
		if k.set {
			return fmt.Errorf("%s %q: %s applies to compute items only (storage, IPs and support bill for the whole period)", it.Kind, it.Name, k.name)
		}
	}
	return nil
}

// checkCompute validates a compute item under its billing model.
func (it *Item) checkCompute() error {
	hourKeys := it.Cards.Set && it.PricePerCardHour.Set
	if it.Billing == "" {
		for _, k := range []struct {
			name string
			set  bool
		}{{"term_months", it.TermMonths.Set}, {"upfront", it.Upfront.Set}, {"interruption_overhead", it.InterruptionOverhead.Set},
			{"early_exit", it.EarlyExit.Set}, {"interruptions_per_hour", it.InterruptionsPerHour.Set}, {"checkpoint_hours", it.CheckpointHours.Set}, {"restart_hours", it.RestartHours.Set}} {
			if k.set {
				return fmt.Errorf("compute %q: %s needs billing: reserved or spot (billing: %s)", it.Name, k.name, strings.Join(BillingModels, ", "))
			}
		}
		if it.PricePerMonth.Set == hourKeys {
			return fmt.Errorf("compute %q needs either price_per_month (whole machine) or cards with price_per_card_hour", it.Name)
		}
		return nil
	}
	if !slices.Contains(BillingModels, it.Billing) {
		return fmt.Errorf("compute %q: billing %q: use one of %s", it.Name, it.Billing, strings.Join(BillingModels, ", "))
	}
	not := func(key string, set bool) error {
		if set {
			return fmt.Errorf("compute %q: billing %s takes no %s", it.Name, it.Billing, key)
		}
		return nil
	}
	if it.Hours.Set {
		return fmt.Errorf("compute %q: billing %s takes no hours: state the used hours with usage: {hours: N} (the offer's or the file's) or --usage-hours", it.Name, it.Billing)
	}
	if it.Cards.Set && !it.Cards.IsPositive() {
		return fmt.Errorf("compute %q: cards %s: want at least one card", it.Name, it.Cards.String())
	}
	switch it.Billing {
	case BillMonthly:
		if !it.PricePerMonth.Set {
			return fmt.Errorf("compute %q: billing monthly needs price_per_month (cards is optional, for the cost per GPU-hour)", it.Name)
		}
		return errors.Join(not("price_per_card_hour", it.PricePerCardHour.Set), not("term_months", it.TermMonths.Set),
			not("upfront", it.Upfront.Set), not("interruption_overhead", it.InterruptionOverhead.Set), not("early_exit", it.EarlyExit.Set), it.notSpotModel(not))
	case BillHourly, BillSpot, BillReserved:
		if !hourKeys {
			return fmt.Errorf("compute %q: billing %s needs cards and price_per_card_hour", it.Name, it.Billing)
		}
		if err := not("price_per_month", it.PricePerMonth.Set); err != nil {
			return err
		}
	}
	switch it.Billing {
	case BillHourly:
		return errors.Join(not("term_months", it.TermMonths.Set), not("upfront", it.Upfront.Set), not("interruption_overhead", it.InterruptionOverhead.Set),
			not("early_exit", it.EarlyExit.Set), it.notSpotModel(not))
	case BillSpot:
		if it.InterruptionOverhead.GreaterThan(one) {
			return fmt.Errorf("compute %q: interruption_overhead %s: want the share of work rerun, 0..1 (0.15 = 15 %%)", it.Name, it.InterruptionOverhead.String())
		}
		model := it.InterruptionsPerHour.Set || it.CheckpointHours.Set || it.RestartHours.Set
		switch {
		case model && it.InterruptionOverhead.Set:
			return fmt.Errorf("compute %q: give interruption_overhead (a constant rerun share) or interruptions_per_hour with checkpoint_hours and restart_hours, not both", it.Name)
		case model && (!it.InterruptionsPerHour.Set || !(it.CheckpointHours.Set || it.RestartHours.Set)):
			return fmt.Errorf("compute %q: the spot interruption model needs interruptions_per_hour and checkpoint_hours and/or restart_hours (rerun share = rate × (checkpoint/2 + restart))", it.Name)
		}
		return errors.Join(not("term_months", it.TermMonths.Set), not("upfront", it.Upfront.Set), not("early_exit", it.EarlyExit.Set))
	default: // reserved
		if !it.TermMonths.Set {
			return fmt.Errorf("compute %q: billing reserved needs term_months (the commitment in months, e.g. 12 or 36)", it.Name)
		}
		if !it.TermMonths.IsInteger() || it.TermMonths.LessThan(one) {
			return fmt.Errorf("compute %q: term_months %s: want a whole number of months, at least 1 (e.g. 12 or 36)", it.Name, it.TermMonths.String())
		}
		return errors.Join(not("interruption_overhead", it.InterruptionOverhead.Set), it.notSpotModel(not))
	}
}

// notSpotModel refuses the spot interruption keys on another billing model.
func (it *Item) notSpotModel(not func(string, bool) error) error {
	return errors.Join(not("interruptions_per_hour", it.InterruptionsPerHour.Set), not("checkpoint_hours", it.CheckpointHours.Set),
		not("restart_hours", it.RestartHours.Set))
}

// RerunShare is a spot item's share of work rerun after interruptions: the
// constant interruption_overhead, or rate × (checkpoint/2 + restart) — on
// average half the time since the last checkpoint is lost, plus the restart.
func (it *Item) RerunShare() decimal.Decimal {
	if it.InterruptionsPerHour.Set {
		return it.InterruptionsPerHour.Mul(it.CheckpointHours.Decimal.Div(two).Add(it.RestartHours.Decimal))
	}
	return it.InterruptionOverhead.Decimal
}

// checkOwnedKeys refuses the purchase and power keys on other kinds.
func (it *Item) checkOwnedKeys() error {
	for _, k := range []struct {
		name, kind string
		set        bool
	}{{"price", "purchase", it.Price.Set}, {"resale", "purchase", it.Resale.Set}, {"life_months", "purchase", it.LifeMonths.Set},
		{"kw", "power", it.KW.Set}, {"pue", "power", it.PUE.Set}, {"price_per_kwh", "power", it.PricePerKWh.Set}} {
		if k.set && it.Kind != k.kind {
			return fmt.Errorf("%s %q: %s applies to %s items only", it.Kind, it.Name, k.name, k.kind)
		}
	}
	return nil
}

// checkPurchase validates a purchase: a price, and a resale value at the
// horizon's end or a life in months (not both).
func (it *Item) checkPurchase() error {
	switch {
	case !it.Price.Set:
		return fmt.Errorf("purchase %q needs price (paid once, with everything around the machine)", it.Name)
	case it.Resale.Set == it.LifeMonths.Set:
		return fmt.Errorf("purchase %q needs resale (its value at the horizon's end) or life_months (straight-line depreciation), one of them", it.Name)
	case it.Resale.GreaterThan(it.Price.Decimal):
		return fmt.Errorf("purchase %q: resale %s is above the price %s", it.Name, it.Resale.String(), it.Price.String())
	case it.LifeMonths.Set && (!it.LifeMonths.IsInteger() || it.LifeMonths.LessThan(one)):
		return fmt.Errorf("purchase %q: life_months %s: want a whole number of months, at least 1 (e.g. 36 or 60)", it.Name, it.LifeMonths.String())
	}
	return nil
}

// checkPower validates a power item and defaults its PUE to 1.
func (it *Item) checkPower() error {
	if !it.KW.Set || !it.PricePerKWh.Set {
		return fmt.Errorf("power %q needs kw (the machine's draw) and price_per_kwh (pue optional, default 1)", it.Name)
	}
	if it.PUE.Set && it.PUE.LessThan(one) {
		return fmt.Errorf("power %q: pue %s: want 1 or more (the site's total power / the IT load, e.g. 1.4)", it.Name, it.PUE.String())
	}
	if !it.PUE.Set {
		it.PUE = Dec{Decimal: one, Set: true}
	}
	return nil
}

// ErrUsageHours is wrapped by the error for used hours outside 0 … the period's hours.
var ErrUsageHours = errors.New("used hours out of range")

// periodHours is the length of p in hours, exactly (743 or 745 for a local
// month with a DST change).
func periodHours(p Period) decimal.Decimal {
	return decimal.NewFromInt(p.End.Unix()-p.Start.Unix()).DivRound(decimal.NewFromInt(3600), 12)
}

// usedHours is the used hours an offer is priced at and where the figure
// comes from: --usage-hours (Options.UsageHours) over the offer's usage over
// the file's; without any, every hour of the period.
func usedHours(o *Offer, p Period, opt Options) (decimal.Decimal, string, error) {
	h := periodHours(p)
	var u decimal.Decimal
	var from string
	switch {
	case opt.UsageHours.Set:
		u, from = opt.UsageHours.Decimal, "--usage-hours"
	case o.Usage != nil:
		u, from = o.Usage.Hours.Decimal, "usage.hours"
		if o.Usage.Pos != "" {
			from = o.Usage.Pos + ": " + from
		}
	default:
		return h, "period", nil
	}
	of := ""
	if !opt.UsageHours.Set {
		of = fmt.Sprintf(" (offer %q)", o.Name)
	}
	if u.IsNegative() {
		return u, from, fmt.Errorf("%s %s: %w: want 0 or more hours%s", from, u.String(), ErrUsageHours, of)
	}
	if u.GreaterThan(h) {
		label := p.Label()
		if !strings.HasSuffix(label, p.TZ) {
			label += " (" + p.TZ + ")"
		}
		return u, from, fmt.Errorf("%s %s: more than the %s hours in the period %s%s (%w)", from, u.String(), exact(h), label, of, ErrUsageHours)
	}
	return u, from, nil
}

// otherItems prices the offer's non-bandwidth items for the period at u used
// hours, exactly; each compute item's note states its model and quantity.
//
// horizon is the months the offer is priced over (0: none); a purchase with
// a resale value spreads price − resale over it.
func otherItems(o *Offer, p Period, u decimal.Decimal, horizon int) (decimal.Decimal, []LineItem) {
	hours := periodHours(p)
	total := zero
	var items []LineItem
	add := func(li LineItem, q, price decimal.Decimal) {
		a := q.Mul(price)
		total = total.Add(a)
		li.Quantity, li.UnitPrice, li.Amount = exact(q), price.String(), exact(a)
		items = append(items, li)
	}
	for _, it := range o.Items {
		li := LineItem{Name: it.Name, Kind: it.Kind, Billing: it.Billing}
		cards, price := it.Cards.Decimal, it.PricePerCardHour.Decimal
		switch {
		case it.Kind == "compute" && it.Billing == BillHourly:
			h, split := splitHours(o, &it, u)
			li.Unit, li.Note = "card-hour", fmt.Sprintf("hourly: %s h%s × %s cards × %s", exact(h), split, cards.String(), price.String())
			add(li, cards.Mul(h), price)
		case it.Kind == "compute" && it.Billing == BillSpot:
			u, split := splitHours(o, &it, u)
			ov := it.RerunShare()
			li.Unit, li.Note = "card-hour", fmt.Sprintf("spot: %s h%s × %s cards × (1 + %s rerun) × %s", exact(u), split, cards.String(), ov.String(), price.String())
			if it.InterruptionsPerHour.Set {
				li.Note = fmt.Sprintf("spot: %s h"+split+" × %s cards × (1 + %s × (%s/2 + %s) rerun) × %s; %s interruptions expected", exact(u), cards.String(),
					it.InterruptionsPerHour.String(), it.CheckpointHours.Decimal.String(), it.RestartHours.Decimal.String(), price.String(), readable(it.InterruptionsPerHour.Mul(u)))
			}
			add(li, cards.Mul(u).Mul(one.Add(ov)), price)
		case it.Kind == "compute" && it.Billing == BillReserved:
			li.Unit, li.Note = "card-hour", fmt.Sprintf("reserved: %s h (every hour, used or not) × %s cards × %s", exact(hours), cards.String(), price.String())
			add(li, cards.Mul(hours), price)
			if it.Upfront.Set && !it.Upfront.IsZero() {
				// The share is carried unrounded: money is rounded once, on the total.
				share := it.Upfront.DivRound(it.TermMonths.Decimal, 24)
				up := LineItem{Name: it.Name + " (upfront share)", Kind: it.Kind, Billing: it.Billing, Unit: "month",
					Note: fmt.Sprintf("reserved: upfront %s / %s months", it.Upfront.String(), it.TermMonths.String())}
				add(up, one, share)
			}
		case it.Kind == "compute" && it.Billing == BillMonthly:
			li.Unit, li.Note = "month", fmt.Sprintf("monthly: 1 month × %s, whatever the use", it.PricePerMonth.String())
			add(li, one, it.PricePerMonth.Decimal)
		case it.Kind == "compute" && it.Cards.Set:
			// A price per card-hour is an hourly price: without a billing
			// key it bills the used hours, as billing: hourly does (it
			// billed every hour of the period, whatever the usage said:
			// issue 20). Hours stated on the item are billed as stated.
			h, split := splitHours(o, &it, u)
			li.Unit, li.Note = "card-hour", fmt.Sprintf("%s cards × %s used h%s", cards.String(), exact(h), split)
			if it.Hours.Set {
				h = it.Hours.Decimal
				li.Note = fmt.Sprintf("%s cards × %s h (the item's hours, whatever the use)", cards.String(), exact(h))
			}
			add(li, cards.Mul(h), price)
		case it.Kind == "purchase" && it.LifeMonths.Set:
			li.Unit, li.Note = "month", fmt.Sprintf("purchase: price %s / %s months of life (straight-line)", it.Price.String(), it.LifeMonths.String())
			add(li, one, it.Price.DivRound(it.LifeMonths.Decimal, 24))
		case it.Kind == "purchase":
			n := decimal.NewFromInt(int64(max(horizon, 1)))
			li.Unit, li.Note = "month", fmt.Sprintf("purchase: (price %s − resale %s) / %s months of horizon", it.Price.String(), it.Resale.String(), n.String())
			add(li, one, it.Price.Sub(it.Resale.Decimal).DivRound(n, 24))
		case it.Kind == "power":
			li.Unit, li.Note = "kWh", fmt.Sprintf("power: %s kW × PUE %s × %s h (every hour)", it.KW.String(), it.PUE.String(), exact(hours))
			add(li, it.KW.Mul(it.PUE.Decimal).Mul(hours), it.PricePerKWh.Decimal)
		case it.Kind == "storage":
			li.Unit = "GB-month"
			add(li, it.GB.Decimal, it.PricePerGBMonth.Decimal)
		case it.Kind == "ip":
			li.Unit = "IP"
			add(li, it.Count.Decimal, it.PriceEach.Decimal)
		case it.Kind == "transfer":
			li.Unit = "GB"
			add(li, it.GB.Decimal, it.PricePerGB.Decimal)
		case it.Quantity.Set:
			li.Unit = it.Unit
			add(li, it.Quantity.Decimal, it.UnitPrice.Decimal)
		default:
			li.Unit = "month"
			add(li, one, it.PricePerMonth.Decimal)
		}
	}
	return total, items
}

// offerCards is the number of GPU cards an offer's compute items state (0 when none does).
func offerCards(o *Offer) decimal.Decimal {
	n := zero
	for _, it := range o.Items {
		if it.Kind == "compute" && it.Cards.Set {
			n = n.Add(it.Cards.Decimal)
		}
	}
	return n
}

// UsageDoc is an offer's bill at the buyer's usage: the used hours it was
// priced at, the idle share (the total at 0 used hours: storage, IPs,
// support, monthly and reserved compute and the bandwidth as billed keep
// billing while the cards are idle) and the cost per used GPU-hour.
type UsageDoc struct {
	UsedHours   float64 `json:"used_hours"`
	PeriodHours float64 `json:"period_hours"`
	// From says where UsedHours comes from: "--usage-hours", "file:line:
	// usage.hours", or "period" (none stated: every hour of the period).
	From string `json:"from"`
	// Cards is the number of GPU cards the compute items state (null: none does).
	Cards *float64 `json:"cards"`
	// IdleAmount is the total at 0 used hours, in the bill's currency.
	IdleAmount string `json:"idle_amount"`
	// IdleShare is IdleAmount / the total (null when the total is 0).
	IdleShare *float64 `json:"idle_share"`
	// PerGPUHour is total / used hours / cards (null without cards or used hours).
	PerGPUHour *string `json:"per_gpu_hour"`

	used, idle decimal.Decimal
}

// HasCompute tells whether the bill has a compute item: the only items
// priced by the GPU hour (or per GPU by the month). A bill without one is
// its idle amount at every used hour, so usage figures say nothing of it.
func (b Bill) HasCompute() bool {
	for _, it := range b.Items {
		if it.Kind == "compute" {
			return true
		}
	}
	return false
}

// HasCompute tells whether any bill of the report has a compute item; the
// usage table (bill, and compare's GPU usage) is left out when none has
// (issue 35: "720 of 720 hours used … idle share 100.0 %" was printed for
// offers without one).
func (r *Report) HasCompute() bool {
	for _, b := range r.Bills {
		if b.HasCompute() {
			return true
		}
	}
	return false
}

// addUsage fills each bill's usage block from its measure.
func addUsage(r *Report) {
	for i := range r.Bills {
		b, m := &r.Bills[i], r.measures[i]
		h, _ := m.hours.Float64()
		u, _ := m.used.Float64()
		doc := &UsageDoc{UsedHours: u, PeriodHours: h, From: m.usedFrom, used: m.used}
		doc.idle = m.totalAt(zero)
		doc.IdleAmount = FormatMoney(doc.idle, b.Currency)
		if b.total.IsPositive() {
			s, _ := doc.idle.DivRound(b.total, 6).Float64()
			doc.IdleShare = &s
		}
		if c := offerCards(m.o); c.IsPositive() {
			cf, _ := c.Float64()
			doc.Cards = &cf
			if m.used.IsPositive() {
				s := FormatMoney(b.total.DivRound(m.used.Mul(c), 24), b.Currency)
				doc.PerGPUHour = &s
			}
		}
		b.Usage = doc
	}
}

// totalAt is the offer's exact total at u used hours (the bandwidth as measured).
func (m *measure) totalAt(u decimal.Decimal) decimal.Decimal {
	bw, _, _ := m.bandwidth(1)
	other, _ := otherItems(m.o, m.p, u, m.horizon)
	return bw.Add(other)
}

// BreakEvenHours is a usage at which two offers cost the same.
type BreakEvenHours struct {
	A      string  `json:"a"`
	B      string  `json:"b"`
	Hours  float64 `json:"hours"`  // used hours in the period, rounded to 0.01 h
	Amount string  `json:"amount"` // what each costs there, in Currency
	// Currency is the comparison's currency.
	Currency string `json:"currency"`
	Text     string `json:"text"`
}

// UsageLine is an offer's total as a function of the buyer's used hours U:
// At0 + PerHour × U, exact. Every model is linear in U (a fixed part plus a
// price per used hour), so the line is known from the totals at 0 and at the
// period's hours.
type UsageLine struct {
	Offer   string
	At0     decimal.Decimal
	PerHour decimal.Decimal
	// Kinked marks a hybrid offer (usage.baseline_hours): its total bends at
	// the baseline, so it is no line and CrossHours leaves it out.
	Kinked bool
}

// At is the line's total at u used hours.
func (l UsageLine) At(u decimal.Decimal) decimal.Decimal { return l.At0.Add(l.PerHour.Mul(u)) }

// Scale multiplies the line by k (an exchange rate): still a line.
func (l UsageLine) Scale(k decimal.Decimal) UsageLine {
	return UsageLine{Offer: l.Offer, At0: l.At0.Mul(k), PerHour: l.PerHour.Mul(k), Kinked: l.Kinked}
}

// PeriodHours is the length of the report's period in hours (743, 744, 745 …), exactly.
func (r *Report) PeriodHours() decimal.Decimal {
	if len(r.measures) == 0 {
		return zero
	}
	return r.measures[0].hours
}

// UsageLines returns each bill's total as a line over the used hours, in the
// bill's own currency (bandwidth as billed), in the order of the bills.
func (r *Report) UsageLines() []UsageLine {
	out := make([]UsageLine, len(r.measures))
	for i, m := range r.measures {
		a0, aH := m.totalAt(zero), m.totalAt(m.hours)
		_, kinked := baseline(m.o)
		l := UsageLine{Offer: m.o.Name, At0: a0, PerHour: zero, Kinked: kinked}
		if m.hours.IsPositive() {
			l.PerHour = aH.Sub(a0).DivRound(m.hours, 24)
		}
		out[i] = l
	}
	return out
}

// breakEvenHours lists the crossings of every pair of bills, in the
// comparison currency.
func breakEvenHours(r *Report) []BreakEvenHours {
	if r.Compare == nil || len(r.measures) < 2 {
		return []BreakEvenHours{}
	}
	lines := r.UsageLines()
	for i, m := range r.measures {
		lines[i] = lines[i].Scale(m.o.rate())
	}
	return CrossHours(lines, r.PeriodHours(), r.Compare.Currency)
}

// CrossHours finds, for every pair of lines (in order, all in currency), the
// used hours in (0, h] at which they cost the same, solved exactly; pairs
// whose lines are parallel (never cross, or are the same line) or meet only
// at 0 h are not listed.
func CrossHours(lines []UsageLine, h decimal.Decimal, currency string) []BreakEvenHours {
	out := []BreakEvenHours{}
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			a, b := lines[i], lines[j]
			if a.Kinked || b.Kinked {
				continue
			}
			ds := a.PerHour.Sub(b.PerHour)
			if ds.IsZero() {
				continue
			}
			x := b.At0.Sub(a.At0).DivRound(ds, 24)
			if !x.IsPositive() || x.GreaterThan(h.Add(decimal.New(1, -9))) {
				continue
			}
			x = decimal.Min(x, h)
			amount := FormatMoney(a.At(x), currency)
			hrs, _ := x.Round(2).Float64()
			out = append(out, BreakEvenHours{A: a.Offer, B: b.Offer, Hours: hrs, Amount: amount, Currency: currency,
				Text: fmt.Sprintf("%s costs the same as %s at %s h (%s %s)", a.Offer, b.Offer, x.Round(2).String(), GroupThousands(amount), currency)})
		}
	}
	return out
}

// ParseUsageHours reads a --usage-hours value: a decimal number of hours, 0 or more.
func ParseUsageHours(s string) (Dec, error) {
	v, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return Dec{}, fmt.Errorf("%q is not a number of hours (e.g. 300 or 412.5)", s)
	}
	if v.IsNegative() {
		return Dec{}, fmt.Errorf("%s: want 0 or more hours", v.String())
	}
	return Dec{Decimal: v, Set: true}, nil
}

// HasCompute reports whether any offer has a compute item: then a report
// shows the usage figures.
func HasCompute(offers []*Offer) bool {
	for _, o := range offers {
		for _, it := range o.Items {
			if it.Kind == "compute" {
				return true
			}
		}
	}
	return false
}

// Exact returns the idle amount and the used hours unrounded, for callers
// that convert them into another currency (money is rounded once, after).
func (u *UsageDoc) Exact() (idle, used decimal.Decimal) { return u.idle, u.used }

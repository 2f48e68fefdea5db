package billing

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// HoursPerMonth is the month a horizon prices: 730 hours (8760 / 12), the
// same for every month, so that offers are priced over equal months.
const HoursPerMonth = 730

// MaxHorizonMonths is the longest horizon accepted (20 years).
const MaxHorizonMonths = 240

var two = decimal.NewFromInt(2)

// Horizon is an offer priced over a number of months (the contract's life):
// every item by its own rule (docs/billing.md, "Horizon"): a purchase costs
// price − resale once, a reserved term started within the horizon is paid to
// its end, the bandwidth is the billed month repeated.
type Horizon struct {
	Months        int           `json:"months"`
	HoursPerMonth int           `json:"hours_per_month"`
	UsedHours     string        `json:"used_hours_per_month"` // the used hours priced each month
	Total         Money         `json:"total"`                // exact sum, rounded once
	Items         []HorizonItem `json:"items"`

	total decimal.Decimal
	rate  decimal.Decimal // into the offers file's compare currency (1 without one)
}

// HorizonItem is one item's cost over the horizon, with the rule applied.
type HorizonItem struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Billing string `json:"billing,omitempty"`
	Amount  string `json:"amount"` // exact, in the offer's currency
	Rule    string `json:"rule"`
}

// ExactTotal is the horizon's total, unrounded (in the offer's currency).
func (h *Horizon) ExactTotal() decimal.Decimal { return h.total }

// needHorizon refuses a purchase priced by its resale value without a
// horizon: its monthly share is price − resale over the horizon's months.
func needHorizon(o *Offer, months int) error {
	if months > 0 {
		return nil
	}
	for _, it := range o.Items {
		if it.Kind == "purchase" && it.Resale.Set {
			return fmt.Errorf("%s: offer %q: purchase %q states resale (its value at the horizon's end): give horizon_months (--horizon N) to spread price − resale over, or life_months instead", o.Pos, o.Name, it.Name)
		}
	}
	return nil
}

// PriceHorizon prices offer o over months months of HoursPerMonth hours,
// from b, its bill for the traffic month under opt (the bandwidth is that
// month's, repeated). The used hours a month are opt's or the offer's usage
// (at most 730), else every hour.
func PriceHorizon(o *Offer, b Bill, months int, opt Options) (*Horizon, error) {
	if months < 1 {
		return nil, fmt.Errorf("horizon %d months: want 1 or more", months)
	}
	H := decimal.NewFromInt(HoursPerMonth)
	N := decimal.NewFromInt(int64(months))
	u := H
	capped := ""
	switch {
	case opt.UsageHours.Set:
		u = opt.UsageHours.Decimal
	case o.Usage != nil:
		u = o.Usage.Hours.Decimal
	}
	if u.GreaterThan(H) {
		u, capped = H, " (the usage stated is more than a 730-hour month: every hour)"
	}
	h := &Horizon{Months: months, HoursPerMonth: HoursPerMonth, UsedHours: exact(u)}
	total := zero
	add := func(it *Item, name, kind string, a decimal.Decimal, rule string, args ...any) {
		hi := HorizonItem{Name: name, Kind: kind, Amount: exact(a), Rule: fmt.Sprintf(rule, args...)}
		if it != nil {
			hi.Billing = it.Billing
		}
		h.Items = append(h.Items, hi)
		total = total.Add(a)
	}
	// The bandwidth: the bill's total less its other items, every month.
	bw := b.total
	for _, li := range b.Items {
		if li.Kind != "bandwidth" {
			a, err := decimal.NewFromString(li.Amount)
			if err != nil {
				return nil, fmt.Errorf("offer %q: item %q: amount %q: %v", o.Name, li.Name, li.Amount, err)
			}
			bw = bw.Sub(a)
		}
	}
	if b.projectedBW != nil {
		add(nil, "bandwidth", "bandwidth", b.projectedBW.Mul(N), "%s a month%s × %d months", exact(*b.projectedBW), b.projectedNote, months)
	} else {
		add(nil, "bandwidth", "bandwidth", bw.Mul(N), "%s a month (the traffic month's bill) × %d months", exact(bw), months)
	}
	for i := range o.Items {
		it := &o.Items[i]
		cards, price := it.Cards.Decimal, it.PricePerCardHour.Decimal
		switch {
		case it.Kind == "compute" && it.Billing == BillReserved:
			t := it.TermMonths.IntPart()
			terms := (int64(months) + t - 1) / t
			paid := terms * t
			full := cards.Mul(H).Mul(decimal.NewFromInt(paid)).Mul(price)
			rule := fmt.Sprintf("reserved: %d term(s) of %d months started, each paid to its end: %d months × %d h × %s cards × %s",
				terms, t, paid, HoursPerMonth, cards.String(), price.String())
			if it.EarlyExit.Set && paid > int64(months) {
				left := cards.Mul(H).Mul(N).Mul(price).Add(it.EarlyExit.Decimal)
				if left.LessThan(full) {
					full = left
					rule = fmt.Sprintf("reserved: %d term(s) of %d months started; the last left at the horizon for early_exit %s: %d months × %d h × %s cards × %s + %s",
						terms, t, it.EarlyExit.String(), months, HoursPerMonth, cards.String(), price.String(), it.EarlyExit.String())
				} else {
					rule += fmt.Sprintf(" (cheaper than leaving early for %s)", it.EarlyExit.String())
				}
			}
			add(it, it.Name, it.Kind, full, "%s", rule)
			if it.Upfront.Set && !it.Upfront.IsZero() {
				add(it, it.Name+" (upfront)", it.Kind, it.Upfront.Mul(decimal.NewFromInt(terms)), "reserved: upfront %s × %d term(s) started", it.Upfront.String(), terms)
			}
		case it.Kind == "compute" && it.Billing == BillSpot:
			u, split := splitHours(o, it, u)
			capped := capped + split
			share := it.RerunShare()
			rule := fmt.Sprintf("spot: %s h%s × %d months × %s cards × (1 + %s rerun) × %s", exact(u), capped, months, cards.String(), share.String(), price.String())
			if it.InterruptionsPerHour.Set {
				rule += fmt.Sprintf("; rerun = %s/h × (%s/2 + %s) h; %s interruptions expected a month",
					it.InterruptionsPerHour.String(), it.CheckpointHours.Decimal.String(), it.RestartHours.Decimal.String(), readable(it.InterruptionsPerHour.Mul(u)))
			}
			add(it, it.Name, it.Kind, cards.Mul(u).Mul(N).Mul(one.Add(share)).Mul(price), "%s", rule)
		case it.Kind == "compute" && (it.Billing == BillMonthly || (it.Billing == "" && it.PricePerMonth.Set)):
			add(it, it.Name, it.Kind, it.PricePerMonth.Mul(N), "%s a month × %d months", it.PricePerMonth.String(), months)
		case it.Kind == "compute" && it.Billing == "" && it.Hours.Set:
			add(it, it.Name, it.Kind, cards.Mul(it.Hours.Decimal).Mul(N).Mul(price), "%s h (the item's) × %d months × %s cards × %s", it.Hours.String(), months, cards.String(), price.String())
		case it.Kind == "compute": // hourly, or a card-hour price without billing
			u, split := splitHours(o, it, u)
			capped := capped + split
			add(it, it.Name, it.Kind, cards.Mul(u).Mul(N).Mul(price), "%s used h%s × %d months × %s cards × %s", exact(u), capped, months, cards.String(), price.String())
		case it.Kind == "purchase" && it.Resale.Set:
			add(it, it.Name, it.Kind, it.Price.Sub(it.Resale.Decimal), "purchase: price %s − resale %s at the horizon's end", it.Price.String(), it.Resale.String())
		case it.Kind == "purchase":
			l := it.LifeMonths.IntPart()
			used := min(int64(months), l)
			rule := fmt.Sprintf("purchase: price %s × %d / %d months of life (straight-line; worth %s at the horizon's end)", it.Price.String(), used, l,
				exact(it.Price.Mul(decimal.NewFromInt(l-used)).DivRound(decimal.NewFromInt(l), 24)))
			add(it, it.Name, it.Kind, it.Price.Mul(decimal.NewFromInt(used)).DivRound(decimal.NewFromInt(l), 24), "%s", rule)
		case it.Kind == "power":
			add(it, it.Name, it.Kind, it.KW.Mul(it.PUE.Decimal).Mul(H).Mul(N).Mul(it.PricePerKWh.Decimal),
				"power: %s kW × PUE %s × %d h × %d months × %s a kWh", it.KW.String(), it.PUE.String(), HoursPerMonth, months, it.PricePerKWh.String())
		case it.Kind == "storage":
			add(it, it.Name, it.Kind, it.GB.Mul(it.PricePerGBMonth.Decimal).Mul(N), "%s GB × %s a GB-month × %d months", it.GB.String(), it.PricePerGBMonth.String(), months)
		case it.Kind == "ip":
			add(it, it.Name, it.Kind, it.Count.Mul(it.PriceEach.Decimal).Mul(N), "%s × %s a month × %d months", it.Count.String(), it.PriceEach.String(), months)
		case it.Kind == "transfer":
			add(it, it.Name, it.Kind, it.GB.Mul(it.PricePerGB.Decimal).Mul(N), "%s GB × %s a GB, every month × %d months", it.GB.String(), it.PricePerGB.String(), months)
		case it.Quantity.Set:
			add(it, it.Name, it.Kind, it.Quantity.Mul(it.UnitPrice.Decimal).Mul(N), "%s %s × %s a month × %d months", it.Quantity.String(), it.Unit, it.UnitPrice.String(), months)
		default:
			add(it, it.Name, it.Kind, it.PricePerMonth.Mul(N), "%s a month × %d months", it.PricePerMonth.String(), months)
		}
	}
	h.total, h.rate = total, o.rate()
	h.Total = MoneyOf(total, o.Currency).Rounded()
	return h, nil
}

// HorizonText states the horizon's basis in one line, for every report.
func HorizonText(months int) string {
	return fmt.Sprintf("priced over a horizon of %d months at %d hours a month (%s h)", months, HoursPerMonth,
		strings.TrimSuffix(decimal.NewFromInt(int64(months*HoursPerMonth)).String(), ".0"))
}

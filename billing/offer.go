package billing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/linecheck/linecheck/yamlmsg"
	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"
)

// Schemes are the bandwidth billing schemes an offer can name.
var Schemes = []string{"fixed", "per-gb", "p95", "peak", "average", "daily-peak-average"}

// ItemKinds are the kinds of the other monthly items of an offer.
var ItemKinds = []string{"compute", "storage", "ip", "transfer", "support", "other", "purchase", "power"}

// OffersFile is the YAML document LoadOffers reads (docs/billing.md has a full example).
type OffersFile struct {
	// Currency is the default currency of offers that do not state one.
	Currency string `yaml:"currency"`
	// CompareCurrency is the currency offers are ranked in when they are priced
	// in several; ExchangeRates gives units of CompareCurrency per 1 unit of
	// each other currency (e.g. USD: "7.10" with compare_currency CNY).
	CompareCurrency string         `yaml:"compare_currency"`
	ExchangeRates   map[string]Dec `yaml:"exchange_rates"`
	// Usage is the buyer's used hours, for every offer without its own.
	Usage  *Usage   `yaml:"usage"`
	Offers []*Offer `yaml:"offers"`
	// FX is the exchange CompareCurrency and ExchangeRates state (the zero
	// FX without compare_currency), set by ParseOffers.
	FX FX `yaml:"-"`
}

// Offer is one provider's price sheet for one server: a bandwidth scheme with
// its rules plus the other monthly items, all in one currency.
type Offer struct {
	Name      string    `yaml:"name"`
	Provider  string    `yaml:"provider"`
	Region    string    `yaml:"region"`
	Line      string    `yaml:"line"` // the carrier line sold, e.g. cn2-gia (informational)
	Currency  string    `yaml:"currency"`
	Bandwidth Bandwidth `yaml:"bandwidth"`
	Items     []Item    `yaml:"items"`
	Notes     string    `yaml:"notes"`
	// Usage is the used hours this offer is priced at (nil: the file's, else
	// every hour of the period); --usage-hours overrides both.
	Usage *Usage `yaml:"usage"`

	// CompareCurrency is the file's compare currency ("" = the offer's own);
	// the rate into it is the file's FX (OffersFX).
	CompareCurrency string `yaml:"-"`
	fx              *FX
	// Pos is "file:line" of the offer, for messages.
	Pos string `yaml:"-"`

	line int
}

// Bandwidth is the bandwidth scheme of an offer. Which keys apply depends on
// Scheme; see the package doc for the formulas.
type Bandwidth struct {
	Scheme    string    `yaml:"scheme"`
	Method    Method    `yaml:"method"`    // 95th method (p95); default nearest-rank
	Direction Direction `yaml:"direction"` // greater|max|sum|in|out; default greater (per-gb: out)
	PortMbps  Dec       `yaml:"port_mbps"` // port speed: fixed price basis; flags rates above it for every scheme

	Price Dec `yaml:"price"` // fixed: monthly price of the port

	Base       int    `yaml:"base"`         // per-gb: 1000 (default) or 1024
	PricePerGB Dec    `yaml:"price_per_gb"` // per-gb: single price (or use tiers)
	FreeGB     Dec    `yaml:"free_gb"`      // per-gb: free allowance per period
	Tiers      []Tier `yaml:"tiers"`        // per-gb: marginal tiers, ascending

	CommitMbps   Dec `yaml:"commit_mbps"`    // rate schemes: committed Mbps
	CommitPrice  Dec `yaml:"commit_price"`   // rate schemes: monthly price of the commit
	PricePerMbps Dec `yaml:"price_per_mbps"` // rate schemes: per Mbps above commit (or per billable Mbps without commit)
	// OveragePerMbps is another name for PricePerMbps, natural with a commit.
	OveragePerMbps Dec    `yaml:"overage_per_mbps"`
	MinShare       Dec    `yaml:"min_share"` // rate schemes: minimum billable = share × (port or commit) Mbps
	Prorate        string `yaml:"prorate"`   // rate schemes: "" or valid-days
	Nth            int    `yaml:"nth"`       // peak: bill the nth highest sample (default 1)
	DailyNth       int    `yaml:"daily_nth"` // daily-peak-average: nth highest sample of each day (default 1)
	TopDays        int    `yaml:"top_days"`  // daily-peak-average: average the top N days only (default all)

	line int
}

// Tier is one marginal per-GB tier: GB above the previous tier's UpToGB and up
// to this one cost PricePerGB; the last tier may omit UpToGB (no upper bound).
type Tier struct {
	UpToGB     Dec `yaml:"up_to_gb"`
	PricePerGB Dec `yaml:"price_per_gb"`
}

// Item is one other monthly charge of an offer.
//
//	compute   with billing (see BillingModels; U = used hours, H = the period's hours):
//	            hourly    cards × U × price_per_card_hour
//	            monthly   price_per_month (cards optional, for the cost per GPU-hour)
//	            reserved  cards × H × price_per_card_hour + upfront / term_months
//	            spot      cards × U × (1 + interruption_overhead) × price_per_card_hour
//	          without billing: cards × price_per_card_hour × hours (default U: the used hours), or price_per_month
//	storage   gb × price_per_gb_month
//	ip        count × price_each
//	transfer  gb × price_per_gb (cross-region traffic, stated, not measured)
//	support   price_per_month
//	other     price_per_month, or quantity × unit_price (a colocation fee is one, by the month)
//	purchase  a machine bought: over a horizon price − resale (the value at its end), or
//	          price × min(N, life_months) / life_months (straight-line); a month: that / N, or price / life_months
//	power     kw × pue × hours × price_per_kwh (every hour: a machine one owns is powered whatever the use)
type Item struct {
	Name             string `yaml:"name"`
	Kind             string `yaml:"kind"`
	Cards            Dec    `yaml:"cards"`
	PricePerCardHour Dec    `yaml:"price_per_card_hour"`
	Hours            Dec    `yaml:"hours"`
	PricePerMonth    Dec    `yaml:"price_per_month"`
	GB               Dec    `yaml:"gb"`
	PricePerGBMonth  Dec    `yaml:"price_per_gb_month"`
	Count            Dec    `yaml:"count"`
	PriceEach        Dec    `yaml:"price_each"`
	PricePerGB       Dec    `yaml:"price_per_gb"`
	Quantity         Dec    `yaml:"quantity"`
	Unit             string `yaml:"unit"`
	UnitPrice        Dec    `yaml:"unit_price"`
	// Billing is the compute item's pricing model (BillingModels; "" = the older rule).
	Billing              string `yaml:"billing"`
	TermMonths           Dec    `yaml:"term_months"`           // reserved: the commitment's length in whole months
	Upfront              Dec    `yaml:"upfront"`               // reserved: paid once for the term
	InterruptionOverhead Dec    `yaml:"interruption_overhead"` // spot: share of work rerun (0.15 = 15 %)
	// EarlyExit is a reserved term's fee for leaving it before its end (a
	// term outliving the horizon is then paid to the horizon plus the fee
	// when that is cheaper than paying it to its end).
	EarlyExit Dec `yaml:"early_exit"`
	// InterruptionsPerHour, CheckpointHours and RestartHours model spot
	// interruptions: each used hour reruns rate × (checkpoint/2 + restart)
	// hours, in place of a constant interruption_overhead.
	InterruptionsPerHour Dec `yaml:"interruptions_per_hour"`
	CheckpointHours      Dec `yaml:"checkpoint_hours"`
	RestartHours         Dec `yaml:"restart_hours"`
	// Purchase: the price paid once, the resale value at the horizon's end,
	// or the life in months for straight-line depreciation.
	Price      Dec `yaml:"price"`
	Resale     Dec `yaml:"resale"`
	LifeMonths Dec `yaml:"life_months"`
	// Baseline marks the compute item that bills a hybrid offer's baseline
	// hours (usage.baseline_hours); its other hourly and spot items bill the rest.
	Baseline bool `yaml:"baseline"`
	// Power: the machine's draw in kW, the site's PUE (default 1) and the price of a kWh.
	KW          Dec `yaml:"kw"`
	PUE         Dec `yaml:"pue"`
	PricePerKWh Dec `yaml:"price_per_kwh"`

	line int
}

// UnmarshalYAML records the line of the bandwidth block for messages.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	type plain Bandwidth
	return yamlmsg.DecodeLined(n, (*plain)(b), &b.line)
}

// UnmarshalYAML records the line of the item for messages.
func (it *Item) UnmarshalYAML(n *yaml.Node) error {
	type plain Item
	return yamlmsg.DecodeLined(n, (*plain)(it), &it.line)
}

// LoadOffers reads an offers YAML file; errors name file:line.
func LoadOffers(path string) ([]*Offer, error) {
	data, err := yamlmsg.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseOffers(data, path)
	if err != nil {
		return nil, err
	}
	return f.Offers, nil
}

// ParseOffers parses and checks an offers document; name prefixes messages.
func ParseOffers(data []byte, name string) (*OffersFile, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: empty file: want a mapping with an \"offers:\" list", name)
		}
		return nil, fmt.Errorf("%s:%w", name, yamlErr(err))
	}
	if err := yamlmsg.OneDocument(dec, name, "an offers file"); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: want a mapping with an \"offers:\" list", name)
	}
	var f OffersFile
	if err := yamlmsg.DecodeStrict(root.Content[0], &f); err != nil {
		return nil, offersErr(name, root.Content[0], err)
	}
	offersNode := mapValue(root.Content[0], "offers")
	if offersNode == nil || len(f.Offers) == 0 {
		return nil, fmt.Errorf("%s:%d: no offers (want an \"offers:\" list)", name, root.Content[0].Line)
	}
	// Offers are decoded again one by one so that each knows its line.
	seen := map[string]string{}
	if offersNode.Kind != yaml.SequenceNode || len(offersNode.Content) != len(f.Offers) {
		return nil, fmt.Errorf("%s:%d: offers: want a list of offers", name, offersNode.Line)
	}
	for i, on := range offersNode.Content {
		o := f.Offers[i]
		if o == nil || on.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: offers: item %d is not an offer (want name, currency, bandwidth, items)", name, on.Line, i+1)
		}
		if err := yamlmsg.DecodeStrict(on, o); err != nil {
			return nil, offersErr(name, root.Content[0], err)
		}
		o.Pos = fmt.Sprintf("%s:%d", name, on.Line)
		o.line = on.Line
		if o.Currency == "" {
			o.Currency = f.Currency
		}
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		if prev, dup := seen[o.Name]; dup {
			return nil, fmt.Errorf("%s:%d: offer %q is defined twice (first at %s)", name, on.Line, o.Name, prev)
		}
		seen[o.Name] = o.Pos
	}
	setUsage(&f, name)
	cc := strings.ToUpper(f.CompareCurrency)
	fx := &FX{Base: cc, Rates: map[string]decimal.Decimal{}, Text: map[string]string{}}
	for _, o := range f.Offers {
		o.CompareCurrency = cc
		o.fx = fx
		if cc == "" || o.Currency == cc {
			continue
		}
		r, ok := f.ExchangeRates[o.Currency]
		if !ok {
			return nil, fmt.Errorf("%s: offer %q is in %s but exchange_rates has no %s (units of %s per 1 %s)", o.Pos, o.Name, o.Currency, o.Currency, cc, o.Currency)
		}
		if !r.IsPositive() {
			return nil, fmt.Errorf("%s: offer %q: exchange_rates: %s %q is not a positive rate (units of %s per 1 %s)", o.Pos, o.Name, o.Currency, r.String(), cc, o.Currency)
		}
		fx.Rates[o.Currency] = r.Decimal
		// As written: "7.10" keeps its exponent (String would say 7.1).
		fx.Text[o.Currency] = r.StringFixed(max(0, -r.Exponent()))
	}
	f.FX = *fx
	return &f, nil
}

// offersErr is a decoding error as "file:line: …"; a number out of bounds
// names the key it is the value of ("offers[2].bandwidth.price").
func offersErr(name string, doc *yaml.Node, err error) error {
	var ae *AmountError
	if errors.As(err, &ae) && ae.Line > 0 {
		key := keyPath(doc, ae.Line, ae.Column, "")
		if key == "" {
			key = "value"
		}
		return fmt.Errorf("%s:%d: %s: %w", name, ae.Line, key, ae)
	}
	return fmt.Errorf("%s:%w", name, yamlErr(err))
}

// keyPath is the dotted path of the mapping key whose value is the node at
// line:col under n ("" when none is).
func keyPath(n *yaml.Node, line, col int, prefix string) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if prefix != "" {
				p = prefix + "." + k.Value
			}
			if v.Line == line && v.Column == col && v.Kind == yaml.ScalarNode {
				return p
			}
			if found := keyPath(v, line, col, p); found != "" {
				return found
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if c.Line == line && c.Column == col && c.Kind == yaml.ScalarNode {
				return fmt.Sprintf("%s[%d]", prefix, i+1)
			}
			if found := keyPath(c, line, col, fmt.Sprintf("%s[%d]", prefix, i+1)); found != "" {
				return found
			}
		}
	}
	return ""
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// yamlErr turns yaml.v3's "yaml: line 3: …" into "3: …" so that it reads as file:line.
func yamlErr(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return errors.New(yamlmsg.Humanize(strings.TrimPrefix(te.Errors[0], "line ")))
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		return errors.New(yamlmsg.Humanize(rest))
	}
	// No line in the message (an empty document, a read error): the callers
	// join "file:" and this without a space, so the message brings its own.
	return errors.New(" " + yamlmsg.Humanize(s))
}

// check validates an offer and fills defaults; errors start with "line: ".
func (o *Offer) check() error {
	ln := o.line
	if o.Name == "" {
		return fmt.Errorf("%d: offer without a name", ln)
	}
	o.Currency = strings.ToUpper(o.Currency)
	if len(o.Currency) != 3 {
		return fmt.Errorf("%d: offer %q: currency %q: want an ISO 4217 code such as USD or CNY", ln, o.Name, o.Currency)
	}
	b := &o.Bandwidth
	if b.line == 0 {
		return fmt.Errorf("%d: offer %q has no bandwidth block (scheme: fixed, per-gb, p95, …)", ln, o.Name)
	}
	if err := b.check(); err != nil {
		return fmt.Errorf("%d: offer %q: bandwidth: %v", b.line, o.Name, err)
	}
	nBase := 0
	for i := range o.Items {
		it := &o.Items[i]
		if err := it.check(); err != nil {
			return fmt.Errorf("%d: offer %q: item %d: %v", it.line, o.Name, i+1, err)
		}
		if it.Baseline {
			if nBase++; nBase > 1 {
				return fmt.Errorf("%d: offer %q: item %d: a second compute item with baseline: true; a hybrid offer has one baseline item", it.line, o.Name, i+1)
			}
		}
	}
	return nil
}

// check validates a bandwidth block and fills its defaults.
func (b *Bandwidth) check() error {
	if !slices.Contains(Schemes, b.Scheme) {
		return fmt.Errorf("scheme %q: use one of %s", b.Scheme, strings.Join(Schemes, ", "))
	}
	if b.Method == "" {
		b.Method = NearestRank
	} else if _, err := ParseMethod(string(b.Method)); err != nil {
		return err
	}
	if b.Direction == "" {
		b.Direction = DirGreater
		if b.Scheme == "per-gb" {
			b.Direction = DirOut
		}
	} else if _, err := ParseDirection(string(b.Direction)); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    Dec
	}{{"port_mbps", b.PortMbps}, {"price", b.Price}, {"price_per_gb", b.PricePerGB}, {"free_gb", b.FreeGB},
		{"commit_mbps", b.CommitMbps}, {"commit_price", b.CommitPrice}, {"price_per_mbps", b.PricePerMbps}, {"min_share", b.MinShare}} {
		if d.v.IsNegative() {
			return fmt.Errorf("%s %s is negative", d.name, d.v.String())
		}
	}
	switch b.Scheme {
	case "fixed":
		if !b.PortMbps.Set || b.PortMbps.IsZero() || !b.Price.Set {
			return errors.New("fixed needs port_mbps (> 0) and price (the monthly price of the port)")
		}
		return nil
	case "per-gb":
		return b.checkPerGB()
	}
	return b.checkRate()
}

// checkPerGB validates a per-GB block: one price or ascending tiers.
func (b *Bandwidth) checkPerGB() error {
	if b.Base == 0 {
		b.Base = 1000
	}
	if b.Base != 1000 && b.Base != 1024 {
		return fmt.Errorf("base %d: use 1000 (GB) or 1024 (GiB)", b.Base)
	}
	if b.PricePerGB.Set == (len(b.Tiers) > 0) {
		return errors.New("per-gb needs either price_per_gb or tiers (not both)")
	}
	prev := zero
	for i, t := range b.Tiers {
		if !t.PricePerGB.Set || t.PricePerGB.IsNegative() {
			return fmt.Errorf("tier %d: price_per_gb missing or negative", i+1)
		}
		last := i == len(b.Tiers)-1
		if !t.UpToGB.Set {
			if !last {
				return fmt.Errorf("tier %d: only the last tier may omit up_to_gb", i+1)
			}
			continue
		}
		if t.UpToGB.LessThanOrEqual(prev) {
			return fmt.Errorf("tier %d: up_to_gb %s is not above the previous tier's %s", i+1, t.UpToGB.String(), prev.String())
		}
		if last {
			// A capped last tier would bill nothing above its cap, silently.
			return fmt.Errorf("tier %d: the last tier must omit up_to_gb (it prices every GB above %s); for free traffic above it add {price_per_gb: \"0\"}", i+1, t.UpToGB.String())
		}
		prev = t.UpToGB.Decimal
	}
	return nil
}

// checkRate validates a rate-billed block (p95, peak, average, …).
func (b *Bandwidth) checkRate() error {
	if b.OveragePerMbps.Set {
		if b.PricePerMbps.Set {
			return errors.New("price_per_mbps and overage_per_mbps are the same price: give one")
		}
		b.PricePerMbps = b.OveragePerMbps
	}
	switch {
	case !b.PricePerMbps.Set && !b.CommitPrice.Set:
		return fmt.Errorf("%s needs price_per_mbps (and optionally commit_mbps with commit_price)", b.Scheme)
	case b.CommitMbps.Set != b.CommitPrice.Set:
		return errors.New("commit_mbps and commit_price go together")
	case b.MinShare.GreaterThan(one):
		return fmt.Errorf("min_share %s: want a fraction 0..1 (0.2 = 20 %%)", b.MinShare.String())
	case b.MinShare.Set && !b.PortMbps.Set && !b.CommitMbps.Set:
		return errors.New("min_share needs port_mbps or commit_mbps to take the share of")
	case b.Prorate != "" && b.Prorate != "valid-days":
		return fmt.Errorf("prorate %q: use valid-days or leave it out", b.Prorate)
	case b.Nth < 0 || b.DailyNth < 0 || b.TopDays < 0:
		return errors.New("nth, daily_nth and top_days must not be negative")
	}
	return nil
}

func (it *Item) check() error {
	if !slices.Contains(ItemKinds, it.Kind) {
		return fmt.Errorf("kind %q: use one of %s", it.Kind, strings.Join(ItemKinds, ", "))
	}
	if it.Name == "" {
		it.Name = it.Kind
	}
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s %q needs %s", it.Kind, it.Name, what)
		}
		return nil
	}
	for _, d := range []Dec{it.Cards, it.PricePerCardHour, it.Hours, it.PricePerMonth, it.GB, it.PricePerGBMonth, it.Count, it.PriceEach, it.PricePerGB, it.Quantity, it.UnitPrice, it.Upfront, it.InterruptionOverhead,
		it.EarlyExit, it.InterruptionsPerHour, it.CheckpointHours, it.RestartHours, it.Price, it.Resale, it.LifeMonths, it.KW, it.PUE, it.PricePerKWh} {
		if d.IsNegative() {
			return fmt.Errorf("%s %q: negative value %s", it.Kind, it.Name, d.String())
		}
	}
	if err := it.checkBillingKeys(); err != nil {
		return err
	}
	if err := it.checkOwnedKeys(); err != nil {
		return err
	}
	switch it.Kind {
	case "compute":
		return it.checkCompute()
	case "storage":
		return need(it.GB.Set && it.PricePerGBMonth.Set, "gb and price_per_gb_month")
	case "ip":
		return need(it.Count.Set && it.PriceEach.Set, "count and price_each")
	case "transfer":
		return need(it.GB.Set && it.PricePerGB.Set, "gb and price_per_gb")
	case "support":
		return need(it.PricePerMonth.Set, "price_per_month")
	case "purchase":
		return it.checkPurchase()
	case "power":
		return it.checkPower()
	default:
		return need(it.PricePerMonth.Set || (it.Quantity.Set && it.UnitPrice.Set), "price_per_month or quantity with unit_price")
	}
}

// rate converts the offer's currency into its compare currency through
// the file's FX: 1 for the same currency or an offer built in code.
func (o *Offer) rate() decimal.Decimal {
	if o.fx == nil {
		return one
	}
	if r, _, ok := o.fx.Rate(o.Currency); ok {
		return r
	}
	return one
}

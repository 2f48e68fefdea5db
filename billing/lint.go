package billing

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// HiddenItems are the items a rented GPU machine's quote is checked for
// (LintOffers): the charges that are easy to leave out of a quote and
// later appear on the invoice. Egress is not among them: every offer
// prices its traffic in its required bandwidth block.
var HiddenItems = []string{"storage", "public IPs", "snapshots or backups", "support"}

// LintWarning is one thing a quote may be missing or get wrong.
type LintWarning struct {
	Offer string `json:"offer"`
	// Check is lacks-item, idle-storage or card-hour-band.
	Check string `json:"check"`
	Text  string `json:"text"`
}

// MarketFile is a dated reference of the card-hour prices the market
// quoted, with its sources (LoadMarket reads it; LintOffers checks each
// compute item's price_per_card_hour against the band of its billing model
// and currency).
type MarketFile struct {
	// Date is when the prices were quoted (YYYY-MM-DD).
	Date    string       `yaml:"date"`
	Sources []string     `yaml:"sources"`
	Bands   []MarketBand `yaml:"card_hour"`
	// Pos is the file, for messages.
	Pos string `yaml:"-"`
}

// MarketBand is the range of card-hour prices quoted for one billing model
// (hourly, reserved or spot) in one currency.
type MarketBand struct {
	Billing  string `yaml:"billing"`
	Currency string `yaml:"currency"`
	Low      Dec    `yaml:"low"`
	High     Dec    `yaml:"high"`
	What     string `yaml:"what"`
}

// LoadMarket reads a market reference file; errors name file:line.
func LoadMarket(path string) (*MarketFile, error) {
	data, err := yamlmsg.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s:%w", path, yamlErr(err))
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: want a mapping with date:, sources: and card_hour: [{billing, currency, low, high}]", path)
	}
	var m MarketFile
	if err := yamlmsg.DecodeStrict(root.Content[0], &m); err != nil {
		return nil, fmt.Errorf("%s:%w", path, yamlErr(err))
	}
	m.Pos = path
	line := func(key string) int {
		if n := mapValue(root.Content[0], key); n != nil {
			return n.Line
		}
		return root.Content[0].Line
	}
	if _, err := time.Parse(time.DateOnly, m.Date); err != nil {
		return nil, fmt.Errorf("%s:%d: date %q: want the day the prices were quoted, YYYY-MM-DD", path, line("date"), m.Date)
	}
	if len(m.Sources) == 0 {
		return nil, fmt.Errorf("%s:%d: sources: want at least one source of the prices (a quote, a price page, a report)", path, line("sources"))
	}
	if len(m.Bands) == 0 {
		return nil, fmt.Errorf("%s:%d: card_hour: want at least one band {billing, currency, low, high}", path, line("card_hour"))
	}
	for i := range m.Bands {
		b := &m.Bands[i]
		b.Currency = strings.ToUpper(b.Currency)
		var err error
		switch {
		case !slices.Contains([]string{BillHourly, BillReserved, BillSpot}, b.Billing):
			err = fmt.Errorf("billing %q: use hourly, reserved or spot", b.Billing)
		case len(b.Currency) != 3:
			err = fmt.Errorf("currency %q: want an ISO 4217 code such as CNY", b.Currency)
		case !b.Low.Set || !b.High.Set || b.Low.IsNegative() || b.High.LessThan(b.Low.Decimal):
			err = errors.New("want low and high, 0 <= low <= high (a card-hour price)")
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: card_hour[%d]: %v", path, line("card_hour"), i+1, err)
		}
	}
	return &m, nil
}

// LintOffers checks each offer's quote (docs/billing.md, Lint): a rented
// GPU machine (an offer with a compute item) that lacks one of the
// HiddenItems; storage that costs more than the compute in its bill (bills[i]
// is offers[i]'s, at the stated used hours); and, with market, a card-hour
// price outside the band quoted for its billing model and currency.
func LintOffers(offers []*Offer, bills []Bill, market *MarketFile) []LintWarning {
	var out []LintWarning
	for i, o := range offers {
		if !slices.ContainsFunc(o.Items, func(it Item) bool { return it.Kind == "compute" }) {
			continue
		}
		warn := func(check, format string, a ...any) {
			out = append(out, LintWarning{Offer: o.Name, Check: check, Text: o.Name + ": " + fmt.Sprintf(format, a...)})
		}
		has := map[string]bool{}
		for _, it := range o.Items {
			switch n := strings.ToLower(it.Name); {
			case strings.Contains(n, "snapshot") || strings.Contains(n, "backup"):
				has["snapshots or backups"] = true
			case it.Kind == "storage":
				has["storage"] = true
			case it.Kind == "ip":
				has["public IPs"] = true
			case it.Kind == "support":
				has["support"] = true
			}
		}
		for _, h := range HiddenItems {
			if !has[h] {
				warn("lacks-item", "the quote has no %s item: ask whether it is included or billed apart (quotes often leave it out)", h)
			}
		}
		storage, compute := zero, zero
		var items []LineItem
		used := "the stated"
		if i < len(bills) && bills[i].Offer == o.Name {
			items = bills[i].Items
			if u := bills[i].Usage; u != nil {
				used = exact(u.used)
			}
		}
		for _, li := range items {
			a, err := decimal.NewFromString(li.Amount)
			if err != nil {
				continue
			}
			switch li.Kind {
			case "storage":
				storage = storage.Add(a)
			case "compute":
				compute = compute.Add(a)
			}
		}
		if storage.GreaterThan(compute) {
			warn("idle-storage", "storage costs %s %s a month, more than the compute's %s at %s used h: the disks bill while the cards idle",
				FormatMoney(storage, o.Currency), o.Currency, FormatMoney(compute, o.Currency), used)
		}
		if market == nil {
			continue
		}
		for _, it := range o.Items {
			if it.Kind != "compute" || !it.PricePerCardHour.Set {
				continue
			}
			model := it.Billing
			if model == "" {
				model = BillHourly
			}
			for _, b := range market.Bands {
				if b.Billing != model || b.Currency != o.Currency {
					continue
				}
				p := it.PricePerCardHour.Decimal
				if p.LessThan(b.Low.Decimal) || p.GreaterThan(b.High.Decimal) {
					side := "below"
					if p.GreaterThan(b.High.Decimal) {
						side = "above"
					}
					what := ""
					if b.What != "" {
						what = " (" + b.What + ")"
					}
					warn("card-hour-band", "%s: %s %s a card-hour is %s the %s band %s–%s%s quoted on %s (%s: %s)", it.Name, p.String(), o.Currency, side, model,
						b.Low.String(), b.High.String(), what, market.Date, market.Pos, strings.Join(market.Sources, "; "))
				}
			}
		}
	}
	return out
}

package billing

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/yamlmsg"
)

func TestOffersErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, yml, want string
	}{
		{"unknown scheme", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: p96\n", `offers.yaml:5: offer "x": bandwidth: scheme "p96"`},
		{"unknown key", "offers:\n  - name: x\n    currency: USD\n    bandwidth: {scheme: p95, price_per_mbps: \"1\"}\n    colour: red\n", `offers.yaml:5: unknown key "colour"`},
		{"typo in bandwidth", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: p95\n      price_per_mbs: 3\n", `offers.yaml:6: unknown key "price_per_mbs"`},
		{"not a number", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: fixed\n      port_mbps: 1000\n      price: 12,5\n", `offers.yaml:7: "12,5" is not a decimal number`},
		{"tiers out of order", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: per-gb\n      tiers:\n        - {up_to_gb: 100, price_per_gb: \"1\"}\n        - {up_to_gb: 50, price_per_gb: \"1\"}\n", "tier 2: up_to_gb 50 is not above"},
		{"last tier capped", "offers:\n  - name: x\n    currency: USD\n    bandwidth:\n      scheme: per-gb\n      tiers:\n        - {up_to_gb: 100, price_per_gb: \"1\"}\n", `offers.yaml:5: offer "x": bandwidth: tier 1: the last tier must omit up_to_gb`},
		{"zero exchange rate", "compare_currency: CNY\nexchange_rates: {USD: \"0\"}\noffers:\n  - name: x\n    currency: USD\n    bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}\n", `offers.yaml:4: offer "x": exchange_rates: USD "0" is not a positive rate`},
		{"a mapping where the list goes", "offers: {x: 1}\n", "offers.yaml:1: want a list, got a mapping"},
		{"missing rate", "compare_currency: CNY\noffers:\n  - name: x\n    currency: USD\n    bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}\n", "exchange_rates has no USD"},
		{"item without price", "offers:\n  - name: x\n    currency: USD\n    bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}\n    items:\n      - {kind: storage, gb: 100}\n", `offers.yaml:6: offer "x": item 1: storage "storage" needs gb and price_per_gb_month`},
		{"duplicate", "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}}\n  - {name: x, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}}\n", `offers.yaml:3: offer "x" is defined twice`},
		{"no offers", "compare_currency: USD\n", "no offers"},
		{"bad yaml", "offers:\n  - name: [x\n", "offers.yaml:"},
		{"negative", "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: p95, price_per_mbps: \"-1\"}}\n", "negative"},
		{"min share above one", "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: p95, port_mbps: 100, min_share: 20, price_per_mbps: \"1\"}}\n", "min_share 20"},
		{"second document", "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}}\n---\noffers:\n  - {name: y, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}}\n", "offers.yaml:4: a second YAML document (after a --- line): an offers file is one document"},
		{"bad currency", "offers:\n  - {name: x, currency: dollars, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}}\n", `currency "DOLLARS"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseOffers([]byte(c.yml), "offers.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestOffersDefaultsAndAliases(t *testing.T) {
	f, err := ParseOffers([]byte(`currency: usd
offers:
  - name: a
    bandwidth: {scheme: p95, commit_mbps: 300, commit_price: "900", overage_per_mbps: "2.5"}
  - name: b
    bandwidth: {scheme: per-gb, price_per_gb: "0.01"}
`), "o.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Offers[0], f.Offers[1]
	if a.Currency != "USD" || a.Bandwidth.Method != "nearest-rank" || a.Bandwidth.Direction != "greater" || a.Bandwidth.PricePerMbps.String() != "2.5" {
		t.Errorf("a: %+v", a.Bandwidth)
	}
	if b.Bandwidth.Direction != "out" || b.Bandwidth.Base != 1000 {
		t.Errorf("per-gb defaults: %+v", b.Bandwidth)
	}
	if a.Pos != "o.yaml:3" {
		t.Errorf("pos %q", a.Pos)
	}
}

func TestSampleOffersLoad(t *testing.T) {
	offers, err := LoadOffers("../samples/offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	currencies := map[string]int{}
	schemes := map[string]bool{}
	for _, o := range offers {
		currencies[o.Currency]++
		schemes[o.Bandwidth.Scheme] = true
		if r := o.rate(); !r.IsPositive() || o.CompareCurrency != "CNY" {
			t.Errorf("%s: rate %v to %s", o.Name, r, o.CompareCurrency)
		}
	}
	if len(offers) != 15 || currencies["CNY"] == 0 || currencies["USD"] == 0 || !schemes["p95"] || !schemes["per-gb"] || !schemes["fixed"] {
		t.Errorf("sample offers: %d, currencies %v, schemes %v", len(offers), currencies, schemes)
	}
}

// Offers files come from users: nothing in them may panic the parser or the pricing.
func FuzzParseOffers(f *testing.F) {
	// Small seeds, one or two features each, for what the bundled offers use
	// (file currency and rates, usage, p95 with commit, per-GB tiers, a fixed
	// port, every item kind and compute model): the fuzzer minimizes each new
	// input it finds, in time that grows with its length, and grown from the
	// whole 10 KB sample it spent its minute doing so (11 executions in 60 s,
	// issue 20). TestSampleOffersLoad checks the sample itself.
	f.Add([]byte("compare_currency: CNY\nexchange_rates: {USD: \"7.10\"}\nusage: {hours: 30}\noffers: [{name: a, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1000, price: \"650\"}}]\n"))
	f.Add([]byte("offers: [{name: a, currency: CNY, bandwidth: {scheme: p95, method: librenms, direction: sum, commit_mbps: 200, commit_price: \"16000\", price_per_mbps: \"95\"}}]\n"))
	f.Add([]byte("offers: [{name: a, currency: CNY, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}, items: [{kind: compute, cards: 8, price_per_card_hour: \"19.50\"}, {kind: storage, gb: 4000, price_per_gb_month: \"0.80\"}]}]\n"))
	f.Add([]byte("offers: [{name: a, currency: CNY, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}, items: [{kind: compute, cards: 8, price_per_card_hour: \"13\", billing: reserved, term_months: 12, upfront: \"24000\"}]}]\n"))
	f.Add([]byte("offers: [{name: a, currency: CNY, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}, items: [{kind: compute, cards: 8, price_per_card_hour: \"5\", billing: spot, interruption_overhead: 0.15}]}]\n"))
	f.Add([]byte("offers: [{name: a, currency: CNY, bandwidth: {scheme: fixed, port_mbps: 1, price: \"1\"}, items: [{kind: ip, count: 8, price_each: \"30\"}, {kind: other, quantity: 2, unit: u, unit_price: \"40\"}]}]\n"))
	f.Add([]byte("offers:\n  - {name: x, currency: USD, bandwidth: {scheme: p95, commit_mbps: 1, commit_price: \"1\", price_per_mbps: \"1\", min_share: 0.5, port_mbps: 3, prorate: valid-days}}\n"))
	f.Add([]byte("offers:\n  - {name: y, currency: JPY, bandwidth: {scheme: per-gb, free_gb: 5, tiers: [{up_to_gb: 1, price_per_gb: \"2\"}, {price_per_gb: \"1\"}]}}\n"))
	f.Add([]byte("offers: [{name: z, bandwidth: {scheme: daily-peak-average, daily_nth: 3, top_days: 2, price_per_mbps: \"1\"}}]"))
	// Issue 10: nth above the sample count, ports and prices at the edge of float range.
	f.Add([]byte("offers: [{name: n, currency: USD, bandwidth: {scheme: peak, nth: 9000, price_per_mbps: \"1\"}}]"))
	f.Add([]byte("offers: [{name: p, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1e308, price: \"1e308\"}}]"))
	f.Add([]byte("offers: [{name: q, currency: USD, bandwidth: {scheme: p95, port_mbps: 1e400, min_share: 1, price_per_mbps: \"1e300\"}}]"))
	f.Add([]byte("offers: [{name: r, currency: USD, bandwidth: {scheme: fixed, port_mbps: 0.000001, price: \"1\"}}]"))
	m := MonthPeriod(2026, 10, nil)
	p, _ := RangePeriod(m.Start, m.Start.AddDate(0, 0, 2), nil)
	s := constSeries(p, 1, 2, map[int]bool{3: true, 4: true})
	f.Fuzz(func(t *testing.T, data []byte) {
		of, err := ParseOffers(data, "fuzz.yaml")
		if err != nil {
			return
		}
		if _, err := BillSeries(s, p, of.Offers, Options{}); err != nil && !errors.Is(err, ErrCoarse) && !errors.Is(err, ErrUsageHours) {
			t.Fatalf("valid offers, billing failed: %v", err)
		}
	})
}

// Traffic figures at the edges (1e308 bytes a slot, scales up to 1e300, NaN)
// never panic the pricing, never give a negative or wrapped volume, and are
// either billed or refused with ErrTooLarge.
func FuzzBillSeriesFigures(f *testing.F) {
	f.Add(1e308, 1e308, 1.0, 30)
	f.Add(2.5e10, 1e9, 1e300, 1)
	f.Add(2e18, 0.0, 1.0, 9000)
	f.Add(1e10, 1e10, 1e6, 2)
	f.Add(math.NaN(), 1.0, 1.0, 1)
	f.Add(99.0, 7557.0, 1.0, 1)
	offers := mustOffers(f, `
offers:
  - {name: gb, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: "0.01"}}
  - {name: p95, currency: USD, bandwidth: {scheme: p95, port_mbps: 1000, commit_mbps: 100, commit_price: "10", price_per_mbps: "1"}}
  - {name: fix, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1000, price: "1"}}
`)
	start := MonthPeriod(2026, 10, nil).Start
	p, _ := RangePeriod(start, start.Add(24*time.Hour), time.UTC)
	f.Fuzz(func(t *testing.T, in, out, scale float64, nth int) {
		if !(scale > 0) || math.IsInf(scale, 0) {
			return
		}
		s := &Series{Name: "fuzz", Step: 300}
		for i := 0; i < 288; i++ {
			k := float64(i%7 + 1)
			s.Slots = append(s.Slots, Slot{Start: start.Unix() + int64(i)*300, In: in * k / 7, Out: out * k / 7})
		}
		o := append([]*Offer{}, offers...)
		pk := &Offer{Name: "peak", Currency: "USD", Bandwidth: Bandwidth{Scheme: "peak", Nth: nth % 100000, PricePerMbps: Dec{Decimal: one, Set: true}}}
		if pk.Bandwidth.Nth >= 0 {
			o = append(o, pk)
		}
		r, err := BillSeries(s, p, o, Options{Scale: scale})
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		if r.Traffic.InBytes < 0 || r.Traffic.OutBytes < 0 || r.Traffic.TotalBytes < 0 {
			t.Fatalf("negative volume %+v", r.Traffic)
		}
	})
}

// Amounts beyond the bounds are refused naming the key; before, "1e400" was
// accepted and printed with 400 digits.
func TestOffersRefuseAmountsBeyondTheBound(t *testing.T) {
	head := "offers:\n  - name: x\n    currency: USD\n"
	for _, tc := range []struct{ yml, want string }{
		{head + "    bandwidth: {scheme: fixed, port_mbps: 100, price: \"1e400\"}\n", `offers.yaml:4: offers[1].bandwidth.price: "1e400" is beyond the bound of 10^15`},
		{head + "    bandwidth: {scheme: fixed, port_mbps: 100, price: 1e15}\n", `offers.yaml:4: offers[1].bandwidth.price: "1e15" is beyond the bound`},
		{head + "    bandwidth: {scheme: fixed, port_mbps: 100, price: \"1\"}\n    items:\n      - {kind: storage, gb: 100, price_per_gb_month: \"1e-400\"}\n",
			`offers.yaml:6: offers[1].items[1].price_per_gb_month: "1e-400" has more than 12 decimal places`},
		{"compare_currency: CNY\nexchange_rates: {USD: 7.1234567890123}\n" + head + "    bandwidth: {scheme: fixed, port_mbps: 100, price: \"1\"}\n",
			`offers.yaml:2: exchange_rates.USD: "7.1234567890123" has more than 12 decimal places`},
		{"usage: {hours: 1e20}\n" + head + "    bandwidth: {scheme: fixed, port_mbps: 100, price: \"1\"}\n", `offers.yaml:1: usage.hours: "1e20" is beyond the bound`},
	} {
		_, err := ParseOffers([]byte(tc.yml), "offers.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s…", tc.yml, err, tc.want)
		}
	}
	// At the bounds: 15 integer digits and 12 places are read exactly,
	// quoted or not (the node's text, never a float64: 19.50 unquoted is 19.50).
	f, err := ParseOffers([]byte(head+"    bandwidth: {scheme: fixed, port_mbps: 0.000000000001, price: 999999999999999.999999999999}\n    items:\n      - {kind: support, price_per_month: 19.50}\n"), "offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := f.Offers[0].Bandwidth
	if got := b.Price.String(); got != "999999999999999.999999999999" {
		t.Errorf("price read as %s", got)
	}
	if got := b.PortMbps.String(); got != "0.000000000001" {
		t.Errorf("port_mbps read as %s", got)
	}
	if p := f.Offers[0].Items[0].PricePerMonth; p.Exponent() != -2 || p.Coefficient().Int64() != 1950 {
		t.Errorf("unquoted 19.50 read as %s (exponent %d): want the text as written", p.String(), p.Exponent())
	}
}

// An endless offers file is refused at the configuration size limit (it grew
// to gigabytes before).
func TestLoadOffersStopsAtTheSizeLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := LoadOffers("/dev/zero"); !errors.Is(err, yamlmsg.ErrTooLarge) {
		t.Errorf("LoadOffers(/dev/zero): %v, want the size limit", err)
	}
}

package billing

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// horizonScenario bills testdata/horizon/scenario.yaml on a constant month
// (every offer's port is fixed, so the bandwidth is the port's price) and
// prices each offer over months.
func horizonScenario(t *testing.T, months int) map[string]*Horizon {
	t.Helper()
	data, err := os.ReadFile("testdata/horizon/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseOffers(data, "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := MonthPeriod(2026, time.November, time.UTC)
	opt := Options{HorizonMonths: months}
	r, err := BillSeries(constSeries(p, 10, 200, nil), p, f.Offers, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Horizon{}
	for i, o := range f.Offers {
		h, err := PriceHorizon(o, r.Bills[i], months, opt)
		if err != nil {
			t.Fatal(err)
		}
		out[o.Name] = h
	}
	return out
}

// The documents' cost table over 24 months: every total equals the one
// totals.py computes with Python's decimal (its output is totals.txt), and
// ordering the offers by their horizon totals gives the script's order.
func TestHorizonScenarioMatchesHandTotals(t *testing.T) {
	want, err := os.ReadFile("testdata/horizon/totals.txt")
	if err != nil {
		t.Fatal(err)
	}
	if py, err := exec.LookPath("python3"); err == nil {
		cmd := exec.Command(py, "totals.py", "24")
		cmd.Dir = "testdata/horizon"
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("totals.py: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("totals.txt is not totals.py's output:\n%s\nwant\n%s", want, got)
		}
	}
	hs := horizonScenario(t, 24)
	var order []string
	for name := range hs {
		order = append(order, name)
	}
	slices.SortFunc(order, func(a, b string) int {
		if c := hs[a].ExactTotal().Cmp(hs[b].ExactTotal()); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var got strings.Builder
	for _, name := range order {
		h := hs[name]
		if h.Months != 24 || h.HoursPerMonth != 730 || h.Total.Currency != "CNY" {
			t.Errorf("%s: horizon %d months at %d h in %s", name, h.Months, h.HoursPerMonth, h.Total.Currency)
		}
		got.WriteString(name + " " + h.Total.Text() + "\n")
	}
	if got.String() != string(want) {
		t.Errorf("horizon totals, cheapest first:\n%s\nwant (totals.py):\n%s", got.String(), want)
	}
}

// A horizon shorter than a reserved term pays the whole term: 24 months of a
// 36-month reservation cost 36 months of hours (by hand: 8 × 730 × 36 × 18 =
// 3,784,320, + upfront 90,000 once); with an early-exit fee of 400,000 the
// term is left at month 24 (8 × 730 × 24 × 18 + 400,000 + 90,000 = 3,012,880).
// A horizon of 37 months starts a second term: 72 months and two upfronts.
func TestHorizonReservedTermOutlivesHorizon(t *testing.T) {
	item := func(h *Horizon, name string) HorizonItem {
		for _, it := range h.Items {
			if it.Name == name {
				return it
			}
		}
		t.Fatalf("no item %q in %+v", name, h.Items)
		return HorizonItem{}
	}
	hs := horizonScenario(t, 24)
	for _, c := range []struct{ offer, item, amount string }{
		{"cloud-reserved-3y", "8x H100 reserved 3y", "3784320"},
		{"cloud-reserved-3y", "8x H100 reserved 3y (upfront)", "90000"},
		{"cloud-reserved-3y-exit", "8x H100 reserved 3y", "2922880"},
		{"cloud-reserved", "8x H100 reserved 1y", "2915328"},          // 8 × 730 × 24 × 20.8
		{"cloud-reserved", "8x H100 reserved 1y (upfront)", "120000"}, // two terms started
	} {
		if got := item(hs[c.offer], c.item).Amount; !decEq(got, c.amount) {
			t.Errorf("%s / %s = %s, want %s (%s)", c.offer, c.item, got, c.amount, item(hs[c.offer], c.item).Rule)
		}
	}
	if r := item(hs["cloud-reserved-3y"], "8x H100 reserved 3y").Rule; !strings.Contains(r, "1 term(s) of 36 months started, each paid to its end: 36 months") {
		t.Errorf("rule %q does not say the term is paid to its end", r)
	}
	h37 := horizonScenario(t, 37)
	if got := item(h37["cloud-reserved-3y"], "8x H100 reserved 3y").Amount; !decEq(got, "7568640") { // 8 × 730 × 72 × 18
		t.Errorf("37 months of a 3-year term: %s, want 7568640", got)
	}
	if got := item(h37["cloud-reserved-3y"], "8x H100 reserved 3y (upfront)").Amount; !decEq(got, "180000") {
		t.Errorf("37 months: upfront %s, want 180000 (two terms)", got)
	}
	// Spot: 0.04 interruptions an hour × 500 h = 20 a month, stated.
	if r := item(hs["cloud-spot"], "8x H100 spot").Rule; !strings.Contains(r, "20 interruptions expected a month") || !strings.Contains(r, "(1 + 0.07 rerun)") {
		t.Errorf("spot rule %q", r)
	}
}

func decEq(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// The monthly bill of what buying costs: a purchase's share is stated with
// its rule (price / life_months, or (price − resale) / the horizon's
// months) and power is kW × PUE × the period's hours × price. By hand, a
// 30-day month (720 h): 10.2 × 1.4 × 720 × 0.85 = 8739.36; 1,500,000 / 24 =
// 62,500; 2,400,000 / 60 = 40,000.
func TestMonthlyPurchaseAndPower(t *testing.T) {
	p := MonthPeriod(2026, time.November, time.UTC)
	offers := mustOffers(t, `offers:
  - name: buy
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "3000"}
    items:
      - {kind: purchase, name: server, price: "2400000", resale: "900000"}
      - {kind: power, name: power, kw: "10.2", pue: "1.4", price_per_kwh: "0.85"}
  - name: buy-life
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "3000"}
    items:
      - {kind: purchase, name: server, price: "2400000", life_months: 60}
`)
	r, err := BillSeries(constSeries(p, 10, 200, nil), p, offers, Options{HorizonMonths: 24})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"buy/server": "62500", "buy/power": "8739.36", "buy-life/server": "40000"}
	for _, b := range r.Bills {
		for _, li := range b.Items {
			if w, ok := want[b.Offer+"/"+li.Name]; ok {
				if !decEq(li.Amount, w) {
					t.Errorf("%s/%s = %s, want %s (%s)", b.Offer, li.Name, li.Amount, w, li.Note)
				}
				if li.Note == "" {
					t.Errorf("%s/%s states no rule", b.Offer, li.Name)
				}
				delete(want, b.Offer+"/"+li.Name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("items not billed: %v", want)
	}
	// Without a horizon, a resale value has nothing to spread over.
	if _, err := BillSeries(constSeries(p, 10, 200, nil), p, offers, Options{}); err == nil || !strings.Contains(err.Error(), "horizon_months") {
		t.Errorf("resale without a horizon: %v", err)
	}
	// Straight-line over a horizon shorter than the life: 24 of 60 months.
	h, err := PriceHorizon(offers[1], r.Bills[1], 24, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !decEq(h.Items[1].Amount, "960000") || !strings.Contains(h.Items[1].Rule, "worth 1440000") {
		t.Errorf("straight-line 24 of 60 months: %+v", h.Items[1])
	}
}

// Bad purchase, power and spot-model keys are refused with what to give.
func TestOwnedItemKeysRefused(t *testing.T) {
	for _, c := range []struct{ item, want string }{
		{`{kind: purchase, price: "100"}`, "needs resale"},
		{`{kind: purchase, price: "100", resale: "10", life_months: 12}`, "one of them"},
		{`{kind: purchase, price: "100", resale: "200"}`, "above the price"},
		{`{kind: power, kw: "1"}`, "price_per_kwh"},
		{`{kind: power, kw: "1", price_per_kwh: "1", pue: "0.9"}`, "want 1 or more"},
		{`{kind: storage, gb: 1, price_per_gb_month: "1", kw: "2"}`, "kw applies to power items only"},
		{`{kind: compute, cards: 8, price_per_card_hour: "5", billing: spot, interruption_overhead: "0.1", interruptions_per_hour: "0.1", restart_hours: "1"}`, "not both"},
		{`{kind: compute, cards: 8, price_per_card_hour: "5", billing: spot, interruptions_per_hour: "0.1"}`, "checkpoint_hours"},
		{`{kind: compute, cards: 8, price_per_card_hour: "5", billing: hourly, early_exit: "10"}`, "takes no early_exit"},
	} {
		yml := "offers:\n  - name: x\n    currency: CNY\n    bandwidth: {scheme: fixed, port_mbps: 1000, price: \"1\"}\n    items:\n      - " + c.item + "\n"
		_, err := ParseOffers([]byte(yml), "offers.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "offers.yaml:6:") {
			t.Errorf("%s: %v, want offers.yaml:6: … %s", c.item, err, c.want)
		}
	}
}

// A horizon repeats a full month: from a partial recording (3 of 31 days)
// the per-GB bandwidth is the projected month's. By hand: 100 Mbps out for
// 864 slots = 3240 GB (162 USD at 0.05 as recorded); × 8928 / 864 = 33,480
// GB = 1674 USD a month, 20,088 over 12 months.
func TestHorizonProjectsAPartialRecording(t *testing.T) {
	p := MonthPeriod(2026, time.October, time.UTC)
	gaps := map[int]bool{}
	for i := 864; i < 8928; i++ {
		gaps[i] = true
	}
	offers := mustOffers(t, `offers:
  - name: metered
    currency: USD
    bandwidth: {scheme: per-gb, price_per_gb: "0.05"}
`)
	r, err := BillSeries(constSeries(p, 0, 100, gaps), p, offers, Options{HorizonMonths: 12})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bills[0].Amount != "162.00" {
		t.Fatalf("as recorded %s, want 162.00", r.Bills[0].Amount)
	}
	h := r.Bills[0].Horizon
	if h == nil || h.Total.Text() != "20088.00" || !strings.Contains(h.Items[0].Rule, "projected from 3 of 31 days") {
		t.Errorf("horizon %+v", h)
	}
}

package billing

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func decEqD(s string) decimal.Decimal { return decimal.RequireFromString(s) }

const hybridOffers = `usage: {hours: 500, baseline_hours: 300}
offers:
  - name: reserved-plus-on-demand
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "1000"}
    items:
      - {kind: compute, name: reserved baseline, cards: 8, price_per_card_hour: "13", billing: reserved, term_months: 12, baseline: true}
      - {kind: compute, name: on demand burst, cards: 8, price_per_card_hour: "30", billing: hourly}
  - name: hourly-plus-spot
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "1000"}
    items:
      - {kind: compute, name: contract baseline, cards: 8, price_per_card_hour: "20", billing: hourly, baseline: true}
      - {kind: compute, name: spot burst, cards: 8, price_per_card_hour: "5", billing: spot, interruption_overhead: "0.1"}
  - name: plain-hourly
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "1000"}
    items:
      - {kind: compute, name: on demand, cards: 8, price_per_card_hour: "16", billing: hourly}
`

// A hybrid offer bills its baseline hours on its baseline item and the rest
// on the others. By hand, October (744 h), 500 used h, baseline 300 h:
// reserved 8 × 744 × 13 = 77,376 (every hour, as reserved does) and on
// demand (500 − 300) × 8 × 30 = 48,000; the hourly contract min(500, 300) ×
// 8 × 20 = 48,000 and spot 200 × 8 × 1.1 × 5 = 8,800. Over 24 months of
// 730 h the second is 24 × (1000 + 48,000 + 8,800) = 1,387,200. Hybrid
// totals bend at the baseline, so no used-hour break-even names them.
func TestHybridBaselineSplitsTheUsedHours(t *testing.T) {
	offers := mustOffers(t, hybridOffers)
	p := MonthPeriod(2026, time.October, time.UTC)
	r, err := BillSeries(constSeries(p, 10, 200, nil), p, offers, Options{HorizonMonths: 24})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"reserved-plus-on-demand/reserved baseline": "77376", "reserved-plus-on-demand/on demand burst": "48000",
		"hourly-plus-spot/contract baseline": "48000", "hourly-plus-spot/spot burst": "8800",
	}
	for _, b := range r.Bills {
		for _, li := range b.Items {
			if w, ok := want[b.Offer+"/"+li.Name]; ok {
				if !decEq(li.Amount, w) {
					t.Errorf("%s/%s = %s, want %s (%s)", b.Offer, li.Name, li.Amount, w, li.Note)
				}
				delete(want, b.Offer+"/"+li.Name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("not billed: %v", want)
	}
	if h := r.Bills[1].Horizon; h == nil || h.Total.Text() != "1387200.00" {
		t.Errorf("hourly-plus-spot over 24 months: %+v", h)
	}
	for _, be := range r.Compare.BreakEvenHours {
		t.Errorf("break-even names a hybrid offer: %s", be.Text)
	}
	// CrossHours leaves a kinked line out: these two lines cross at 10 h.
	lines := []UsageLine{{Offer: "a", At0: decEqD("0"), PerHour: decEqD("2")}, {Offer: "b", At0: decEqD("10"), PerHour: decEqD("1")}}
	if got := CrossHours(lines, decEqD("744"), "CNY"); len(got) != 1 || got[0].Hours != 10 {
		t.Errorf("straight lines: %+v", got)
	}
	lines[1].Kinked = true
	if got := CrossHours(lines, decEqD("744"), "CNY"); len(got) != 0 {
		t.Errorf("a kinked line crossed: %+v", got)
	}
	// A baseline item needs baseline hours; an offer has one baseline item.
	noBase := strings.Replace(hybridOffers, ", baseline_hours: 300", "", 1)
	if _, err := BillSeries(constSeries(p, 10, 200, nil), p, mustOffers(t, noBase), Options{}); err == nil || !strings.Contains(err.Error(), "baseline_hours: M") {
		t.Errorf("baseline without baseline_hours: %v", err)
	}
	two := strings.Replace(hybridOffers, `billing: spot, interruption_overhead: "0.1"}`, `billing: spot, interruption_overhead: "0.1", baseline: true}`, 1)
	if _, err := ParseOffers([]byte(two), "offers.yaml"); err == nil || !strings.Contains(err.Error(), "a second compute item with baseline: true") {
		t.Errorf("two baselines: %v", err)
	}
}

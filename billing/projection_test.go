package billing

import (
	"testing"
	"time"
)

// Three days of a month: the bill as recorded prices per-GB traffic for 3
// days and storage for the month; the projection scales the volume to the
// month and keeps the 95th as measured. By hand (October, 8928 slots, 864
// recorded): 100 Mbit/s out is 100e6/8 × 300 × 864 = 3.24e12 bytes = 3240 GB,
// 162.00 at 0.05, 1674.00 for the month (× 8928/864 = 10.333…); with 100 of
// storage 262.00 recorded, 1774.00 projected. The 95th, 100 Mbit/s × 2 =
// 200, + 100 = 300 both ways; the fixed port 500 + 100 = 600 both ways.
func TestProjectionOfThreeRecordedDays(t *testing.T) {
	offers := mustOffers(t, `offers:
  - {name: gb, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: "0.05"}, items: [{kind: storage, gb: 100, price_per_gb_month: "1"}]}
  - {name: p95, currency: USD, bandwidth: {scheme: p95, price_per_mbps: "2"}, items: [{kind: storage, gb: 100, price_per_gb_month: "1"}]}
  - {name: port, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1000, price: "500"}, items: [{kind: storage, gb: 100, price_per_gb_month: "1"}]}
`)
	p := MonthPeriod(2026, time.October, time.UTC)
	gaps := map[int]bool{}
	for i := 864; i < 8928; i++ {
		gaps[i] = true
	}
	r, err := BillSeries(constSeries(p, 10, 100, gaps), p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr := r.Projection
	if pr == nil {
		t.Fatal("no projection for 3 of 31 days")
	}
	if pr.RecordedDays != 3 || pr.PeriodDays != 31 {
		t.Errorf("days %d of %d, want 3 of 31", pr.RecordedDays, pr.PeriodDays)
	}
	want := map[string][2]string{"gb": {"262.00", "1774.00"}, "p95": {"300.00", "300.00"}, "port": {"600.00", "600.00"}}
	for i, b := range r.Bills {
		w := want[b.Offer]
		if b.Amount != w[0] || pr.Bills[i].Offer != b.Offer || pr.Bills[i].Amount != w[1] {
			t.Errorf("%s: recorded %s projected %s, want %s and %s", b.Offer, b.Amount, pr.Bills[i].Amount, w[0], w[1])
		}
	}
	if got := pr.Bills[0].Basis; got != "volume × 10.33 (3 of 31 days recorded)" {
		t.Errorf("per-GB basis %q", got)
	}
	// A complete month has none, and --no-projection leaves it out.
	r, _ = BillSeries(constSeries(p, 10, 100, nil), p, offers, Options{})
	if r.Projection != nil {
		t.Errorf("a complete month projected: %+v", r.Projection)
	}
	r, _ = BillSeries(constSeries(p, 10, 100, gaps), p, offers, Options{NoProjection: true})
	if r.Projection != nil {
		t.Error("--no-projection kept the projection")
	}
}

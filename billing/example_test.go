package billing_test

import (
	"fmt"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// A month at a steady 250 Mbit/s out and 20 in, billed under a 95th offer
// with a 200 Mbps commit and under a per-GB offer.
func ExampleBillSeries() {
	p := billing.MonthPeriod(2026, time.October, time.UTC)
	s := &billing.Series{Name: "eth0", Step: billing.SlotSeconds}
	for t := p.Start.Unix(); t < p.End.Unix(); t += billing.SlotSeconds {
		s.Slots = append(s.Slots, billing.Slot{Start: t, In: 20e6 * 300 / 8, Out: 250e6 * 300 / 8})
	}
	f, err := billing.ParseOffers([]byte(`
offers:
  - name: burstable
    currency: USD
    bandwidth: {scheme: p95, commit_mbps: 200, commit_price: "900", price_per_mbps: "2.5"}
  - name: egress
    currency: USD
    bandwidth: {scheme: per-gb, price_per_gb: "0.01"}
`), "offers.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := billing.BillSeries(s, p, f.Offers, billing.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("samples %d of %d, 95th greater %.0f Mbps\n", r.Samples.Present, r.Samples.Expected, r.P95.GreaterBps/1e6)
	for _, b := range r.Bills {
		fmt.Printf("%-9s %-6s %8s %s cheapest=%v\n", b.Offer, b.Scheme, b.Amount, b.Currency, b.Cheapest)
	}
	// Output:
	// samples 8928 of 8928, 95th greater 250 Mbps
	// burstable p95     1025.00 USD cheapest=false
	// egress    per-gb   837.00 USD cheapest=true
}

package compare

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/internal/candidates"
)

// Every cost item of the bundled scenario carries the bill's own figures,
// and they agree with each other by hand: quantity × unit_price equals
// amount_exact, which rounds (half away from zero, 2 places) to amount, and
// the exact amounts add up to the rounded total.
func TestCostItemsCarryQuantityUnitAndUnitPrice(t *testing.T) {
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	items := 0
	for _, e := range r.Candidates {
		if e.Monthly == nil {
			continue
		}
		sum := decimal.Zero
		for _, it := range e.Monthly.Items {
			items++
			if it.Quantity == "" || it.Unit == "" || it.UnitPrice == "" || it.AmountExact == "" {
				t.Errorf("%s %q: quantity %q unit %q unit_price %q amount_exact %q, want all four", e.Name, it.Name, it.Quantity, it.Unit, it.UnitPrice, it.AmountExact)
				continue
			}
			q, _ := decimal.NewFromString(it.Quantity)
			p, _ := decimal.NewFromString(it.UnitPrice)
			exact, _ := decimal.NewFromString(it.AmountExact)
			if !q.Mul(p).Equal(exact) {
				t.Errorf("%s %q: %s × %s = %s, amount_exact says %s", e.Name, it.Name, q, p, q.Mul(p), exact)
			}
			rounded, _ := decimal.NewFromString(it.Amount)
			if !exact.Round(2).Equal(rounded) {
				t.Errorf("%s %q: amount %s, want amount_exact %s rounded to %s", e.Name, it.Name, it.Amount, exact, exact.Round(2))
			}
			sum = sum.Add(exact)
		}
		total, _ := decimal.NewFromString(e.Monthly.Total)
		if !sum.Round(2).Equal(total) {
			t.Errorf("%s: items add up to %s, total says %s", e.Name, sum.Round(2), total)
		}
	}
	if items == 0 {
		t.Fatal("no cost items in the bundled scenario")
	}
}

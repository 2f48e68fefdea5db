package report

import (
	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
)

// billHorizonTable is every offer priced over the horizon, item by item
// with its rule, and its total (nil without a horizon). Amounts are rounded
// for reading; exact marks the csv form (exact amounts).
func billHorizonTable(r *billing.Report, title func(string) string, exact bool) *Table {
	if r.Horizon == "" {
		return nil
	}
	t := Table{
		Title:   title("Horizon: " + r.Horizon),
		Headers: []string{"offer", "item", "kind", "amount", "currency", "rule"},
		Align:   "lllrll",
		Movable: []string{"rule"},
	}
	for _, b := range r.Bills {
		h := b.Horizon
		if h == nil {
			continue
		}
		for _, it := range h.Items {
			a := it.Amount
			if !exact {
				if v, err := decimal.NewFromString(a); err == nil {
					a = money(billing.FormatMoney(v, b.Currency), b.Currency)
				}
			}
			t.Rows = append(t.Rows, []string{b.Offer, it.Name, it.Kind, a, b.Currency, it.Rule})
		}
		total := h.Total.Text()
		if !exact {
			total = money(total, b.Currency)
		}
		note := h.UsedHours + " used h a month"
		if b.Cheapest {
			note += "; ◀ cheapest over the horizon"
		}
		t.Rows = append(t.Rows, []string{b.Offer, "total", "", total, b.Currency, note})
	}
	if !exact {
		t.Notes = append(t.Notes, "the cheapest offer and dearest/cheapest are over the horizon; the break-even lines are per month")
	}
	return &t
}

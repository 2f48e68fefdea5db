package report

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/compare"
)

// compareHorizonTable is each candidate's offer priced over the horizon,
// item by item with its rule, and its total (nil without a horizon).
func compareHorizonTable(r *compare.Result, c compareCells) *Table {
	if r.Horizon == nil {
		return nil
	}
	t := Table{
		Title:   fmt.Sprintf("Horizon cost: %s", r.Horizon.Text),
		Headers: []string{"candidate", "offer", "item", "amount", "currency", "rule"},
		Align:   "lllrll",
		Movable: []string{"rule"},
	}
	for _, e := range r.Candidates {
		h, m := e.Horizon, e.Monthly
		if h == nil || m == nil {
			continue
		}
		for _, it := range h.Items {
			t.Rows = append(t.Rows, []string{e.Name, m.Offer, it.Name, horizonAmount(it.Amount, h.Total.Currency, c), h.Total.Currency, it.Rule})
		}
		detail := fmt.Sprintf("%s used h a month", h.UsedHoursPerMonth)
		if h.Total.Currency != h.Converted.Currency {
			detail += fmt.Sprintf("; = %s %s", c.money(h.Converted.Text()), h.Converted.Currency)
		}
		t.Rows = append(t.Rows, []string{e.Name, m.Offer, "total", c.money(h.Total.Text()), h.Total.Currency, detail})
	}
	return &t
}

// addHorizonColumn adds the horizon's total in the base currency to the
// ranking (only with a horizon: the ranking follows it).
func addHorizonColumn(t *Table, r *compare.Result, c compareCells) {
	if r.Horizon == nil {
		return
	}
	t.Headers = append(t.Headers, fmt.Sprintf("%d months %s", r.Horizon.Months, r.FXBase))
	t.Align += "r"
	for i, e := range r.Candidates {
		v := "-"
		if e.Horizon != nil && e.Monthly != nil {
			v = c.money(e.Horizon.Converted.Text())
		}
		t.Rows[i] = append(t.Rows[i], v)
	}
	t.Title = fmt.Sprintf("Ranking (passing first, able to carry the traffic, measured, then by the cost over %d months in %s)", r.Horizon.Months, r.FXBase)
}

// horizonAmount is an item's exact amount rounded for a table (exact in csv).
func horizonAmount(exact, currency string, c compareCells) string {
	if !c.notes {
		return exact
	}
	v, err := decimal.NewFromString(exact)
	if err != nil {
		return "-"
	}
	return c.money(billing.FormatMoney(v, currency))
}

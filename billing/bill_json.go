package billing

import (
	"bytes"
	"encoding/json"

	"github.com/shopspring/decimal"
)

// MarshalJSON writes the bill with every line item's amount rounded to the
// currency's minor unit, as compare's items are ("5751.54"), and the exact
// amount beside it (amount_exact, "5751.5366868"): the same item fields in
// bill and compare JSON, and the figure the single rounding starts from.
func (b Bill) MarshalJSON() ([]byte, error) {
	type plain Bill
	type item struct {
		LineItem
		Exact string `json:"amount_exact"`
	}
	items := make([]item, len(b.Items))
	for i, it := range b.Items {
		items[i] = item{LineItem: it, Exact: it.Amount}
		if v, err := decimal.NewFromString(it.Amount); err == nil {
			items[i].Amount = FormatMoney(v, b.Currency)
		}
	}
	// Swap the items in place, so that the fields keep their order.
	out, err := json.Marshal(plain(b))
	if err != nil {
		return nil, err
	}
	was, err := json.Marshal(b.Items)
	if err != nil {
		return nil, err
	}
	now, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(out, append([]byte(`"items":`), was...), append([]byte(`"items":`), now...), 1), nil
}

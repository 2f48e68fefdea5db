package billing

import (
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"
)

// Money is an exact amount in a currency: the one money type of billing,
// compare, the TUI and serve. Amounts stay exact decimals across packages;
// they become strings only where they are rendered (String, MarshalJSON,
// the tables). The zero Money is "no amount" (no currency).
type Money struct {
	Amount   decimal.Decimal
	Currency string
}

// MoneyOf is amount in currency.
func MoneyOf(amount decimal.Decimal, currency string) Money {
	return Money{Amount: amount, Currency: currency}
}

// Valid reports whether m holds an amount (a currency is set).
func (m Money) Valid() bool { return m.Currency != "" }

// Rounded is m rounded once, half away from zero, to its currency's minor unit.
func (m Money) Rounded() Money { return Money{RoundMoney(m.Amount, m.Currency), m.Currency} }

// Text renders the amount rounded to the currency's minor unit with all its
// digits ("1234.50"); "" for no amount.
func (m Money) Text() string {
	if !m.Valid() {
		return ""
	}
	return FormatMoney(m.Amount, m.Currency)
}

// String renders "1234.50 CNY" ("-" for no amount).
func (m Money) String() string {
	if !m.Valid() {
		return "-"
	}
	return m.Text() + " " + m.Currency
}

// moneyJSON is Money's JSON: the amount as a decimal string rounded to
// the minor unit, with its currency (docs: money as decimal strings).
type moneyJSON struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// MarshalJSON writes {"amount": "1234.50", "currency": "CNY"}.
func (m Money) MarshalJSON() ([]byte, error) {
	return json.Marshal(moneyJSON{m.Text(), m.Currency})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Money) UnmarshalJSON(b []byte) error {
	var j moneyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Money{Currency: j.Currency}
	if j.Amount == "" {
		return nil
	}
	v, err := decimal.NewFromString(j.Amount)
	if err != nil {
		return fmt.Errorf("money: amount %q: %w", j.Amount, err)
	}
	m.Amount = v
	return nil
}

// FX is the one exchange model: rates given by the user (never fetched),
// 1 unit of a currency = Rates[currency] units of Base. The offers file's
// compare_currency and exchange_rates and a candidates file's fx: are both
// read into it; billing ranks offers, and compare candidates, through it.
type FX struct {
	Base  string
	Rates map[string]decimal.Decimal
	// Text holds each rate as written (7.10, not 7.1), for reports.
	Text map[string]string
}

// Convert converts m into the base currency, exactly (rounding is the
// caller's, once, where the amount is final). Without a base or rates the
// amount is its own.
func (fx FX) Convert(m Money) (Money, error) {
	if m.Currency == fx.Base || fx.Base == "" && len(fx.Rates) == 0 {
		return m, nil
	}
	r, ok := fx.Rates[m.Currency]
	if !ok {
		return Money{}, fmt.Errorf("fx: no rate for %s (add `%s: <%s per %s>` under fx)", m.Currency, m.Currency, fx.Base, m.Currency)
	}
	return Money{m.Amount.Mul(r), fx.Base}, nil
}

// Rate is the rate from cur into the base: its value and its text as
// written ("1" when cur is the base); ok is false when there is none.
func (fx FX) Rate(cur string) (decimal.Decimal, string, bool) {
	if cur == fx.Base || fx.Base == "" && len(fx.Rates) == 0 {
		return one, "1", true
	}
	r, ok := fx.Rates[cur]
	if !ok {
		return decimal.Decimal{}, "", false
	}
	if t, ok := fx.Text[cur]; ok {
		return r, t, true
	}
	return r, r.String(), true
}

// OffersFX is the exchange an offers file states (compare_currency and
// exchange_rates), shared by every offer it loaded; the zero FX when the
// offers were built in code or the file states none.
func OffersFX(offers []*Offer) FX {
	for _, o := range offers {
		if o.fx != nil {
			return *o.fx
		}
	}
	return FX{}
}

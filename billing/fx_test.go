package billing

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
)

// The offers file's compare_currency and exchange_rates are one FX, shared
// by every offer it loaded: 1234.56 USD at 7.10 = 8765.376 CNY exactly, and
// rounded once, 8765.38.
func TestOffersFileIsOneFX(t *testing.T) {
	f, err := ParseOffers([]byte(`compare_currency: CNY
exchange_rates: {USD: 7.10}
offers:
  - {name: a, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1, price: "1"}}
  - {name: b, currency: CNY, bandwidth: {scheme: fixed, port_mbps: 1, price: "1"}}
`), "offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fx := OffersFX(f.Offers)
	if fx.Base != "CNY" || f.FX.Base != "CNY" {
		t.Fatalf("base %q (file %q), want CNY", fx.Base, f.FX.Base)
	}
	if r, text, ok := fx.Rate("USD"); !ok || text != "7.10" || !r.Equal(decimal.RequireFromString("7.1")) {
		t.Errorf("USD rate %s %q %v, want 7.10 as written", r, text, ok)
	}
	if r, text, ok := fx.Rate("CNY"); !ok || text != "1" || !r.Equal(one) {
		t.Errorf("CNY rate %s %q %v, want 1", r, text, ok)
	}
	m, err := fx.Convert(MoneyOf(decimal.RequireFromString("1234.56"), "USD"))
	if err != nil || m.Currency != "CNY" || !m.Amount.Equal(decimal.RequireFromString("8765.376")) || m.Text() != "8765.38" {
		t.Errorf("1234.56 USD = %v (%s), %v; want 8765.376 CNY exactly, 8765.38 rounded", m.Amount, m.Text(), err)
	}
	if _, err := fx.Convert(MoneyOf(one, "EUR")); err == nil {
		t.Error("EUR converted without a rate")
	}
	if r := f.Offers[0].rate(); !r.Equal(decimal.RequireFromString("7.1")) {
		t.Errorf("offer a ranks at rate %s, want the file's 7.10", r)
	}
}

// Money is rendered only at the edge: JSON carries the amount rounded to
// the minor unit as a decimal string with its currency, and reads back.
func TestMoneyJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		m    Money
		want string
	}{
		{MoneyOf(decimal.RequireFromString("8765.376"), "CNY"), `{"amount":"8765.38","currency":"CNY"}`},
		{MoneyOf(decimal.RequireFromString("1500"), "JPY"), `{"amount":"1500","currency":"JPY"}`},
		{Money{}, `{"amount":"","currency":""}`},
	} {
		b, err := json.Marshal(tc.m)
		if err != nil || string(b) != tc.want {
			t.Errorf("%v: %s %v, want %s", tc.m, b, err, tc.want)
		}
		var back Money
		if err := json.Unmarshal(b, &back); err != nil || back.Text() != tc.m.Text() || back.Currency != tc.m.Currency {
			t.Errorf("%s read back as %v, %v", b, back, err)
		}
	}
	if s := MoneyOf(decimal.RequireFromString("0.125"), "KWD").String(); s != "0.125 KWD" {
		t.Errorf("KWD: %s", s)
	}
}

package billing

import (
	"encoding/json"
	"strings"
	"testing"
)

// JSON items carry amount to the minor unit (JPY has none, USD two) and the
// exact amount beside it; the rest of the bill is written as before.
func TestBillJSONItemAmountToTheMinorUnit(t *testing.T) {
	for _, c := range []struct {
		cur, exact, want string
	}{{"USD", "5751.5366868", "5751.54"}, {"JPY", "16000.5", "16001"}, {"USD", "16000", "16000.00"}} {
		b := Bill{Offer: "o", Scheme: "p95", Amount: "1.00", Currency: c.cur, Items: []LineItem{{Name: "x", Kind: "bandwidth", Amount: c.exact}}}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if !strings.Contains(s, `"amount":"`+c.want+`"`) || !strings.Contains(s, `"amount_exact":"`+c.exact+`"`) || !strings.Contains(s, `"offer":"o"`) ||
			strings.Count(s, `"items"`) != 1 || !strings.Contains(s, `"amount":"1.00"`) {
			t.Errorf("%s %s: %s", c.cur, c.exact, s)
		}
	}
}

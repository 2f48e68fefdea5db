package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// compare --horizon 24 prices every offer over 24 months in every format.
// hk-cn2-gia's offer (hk-cn2) has only monthly items (a 95th commit and
// overage, a whole machine by the month, storage, IPs), so by hand its
// horizon is 24 × the month's exact 144,691.5366868 = 3,472,596.8804832
// → 3,472,596.88 CNY; the bundled sample is otherwise unchanged.
func TestCompareHorizonInEveryFormat(t *testing.T) {
	args := []string{"compare", "--offline", "--horizon", "24", "../../samples/candidates.yaml"}
	for _, c := range []struct {
		format []string
		want   []string
	}{
		// The used-hour break-evens are over the horizon: hk-bgp is 24 × (9000
		// + 2800 + 200 + 8 × 19.5 × U) and gpu-reserved 24 × (15,000 + 3000)
		// + two 12-month terms of 8 × 730 × 12 × 13 + 2 × 24,000 upfront =
		// 2,302,080, equal at U = (95,920 − 12,000) / 156 = 537.95 h a month.
		{nil, []string{"Horizon cost: priced over a horizon of 24 months at 730 hours a month", "3,472,596.88", "by the cost over 24 months",
			"recommended: hk-cn2-gia at 3,472,596.88 CNY over 24 months",
			"break-even: over 24 months, hk-bgp costs the same as gpu-reserved at 537.95 used h a month (2,302,080.00 CNY)",
			// hk-bgp fails the SLA: 24 × (9000 + 2800 + 200 + 8 × 300 × 19.5) = 1,411,200.
			"hk-bgp would cost 1,411,200.00 CNY over 24 months (2,061,396.88 less than hk-cn2-gia)"}},
		{[]string{"--format", "markdown"}, []string{"Horizon cost: priced over a horizon of 24 months", "3,472,596.88"}},
		{[]string{"--format", "html"}, []string{"<h2>Horizon cost: priced over a horizon of 24 months", "<td class=\"num\">3,472,596.88</td>",
			"<th>24 months CNY</th>", "Costs are compared over the horizon"}},
		{[]string{"--format", "csv", "--table", "horizon"}, []string{"candidate,offer,item,amount,currency,rule", "hk-cn2-gia,hk-cn2,total,3472596.88,CNY"}},
	} {
		out, stderr, code := lcRun(t, append(args, c.format...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.format, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", c.format, w, out)
			}
		}
	}
	out, stderr, code := lcRun(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, stderr)
	}
	var doc struct {
		Horizon    struct{ Months, HoursPerMonth int } `json:"horizon"`
		Candidates []struct {
			Name    string `json:"name"`
			Horizon *struct {
				Months        int `json:"months"`
				HoursPerMonth int `json:"hours_per_month"`
				Total         struct{ Amount, Currency string }
				Items         []struct{ Name, Amount, Rule string }
			} `json:"horizon"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Candidates {
		h := c.Horizon
		if h == nil || h.Months != 24 || h.HoursPerMonth != 730 || len(h.Items) == 0 {
			t.Fatalf("%s: horizon %+v", c.Name, h)
		}
		if c.Name == "hk-cn2-gia" && (h.Total.Amount != "3472596.88" || h.Total.Currency != "CNY") {
			t.Errorf("hk-cn2-gia over 24 months: %+v", h.Total)
		}
	}
	// A horizon out of range is bad input.
	for _, cmd := range []string{"compare", "tui"} {
		if _, stderr, code := lcRun(t, cmd, "--offline", "--horizon", "0", "../../samples/candidates.yaml"); code != 2 || !strings.Contains(stderr, "--horizon 0: want") {
			t.Errorf("%s --horizon 0: exit %d, %s", cmd, code, stderr)
		}
	}
}

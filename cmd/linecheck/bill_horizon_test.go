package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// bill --horizon 24 on the documents' cost table (billing/testdata/horizon:
// fixed ports, so the bandwidth does not depend on the traffic) gives every
// offer the total that totals.py computes with Python's decimal, names the
// cheapest over the horizon, and writes the horizon as a table and a CSV
// table. Without a horizon, a purchase stated by its resale exits 2.
func TestBillHorizonMatchesHandTotals(t *testing.T) {
	const offers = "../../billing/testdata/horizon/scenario.yaml"
	want, err := os.ReadFile("../../billing/testdata/horizon/totals.txt")
	if err != nil {
		t.Fatal(err)
	}
	wantTotal := map[string]string{}
	var cheapest string
	for i, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		name, total, _ := strings.Cut(l, " ")
		wantTotal[name] = total
		if i == 0 {
			cheapest = name
		}
	}
	args := []string{"bill", "../../samples/traffic/2026-10.csv", "--offers", offers, "--horizon", "24"}
	out, stderr, code := lcRun(t, append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Cheapest string `json:"cheapest"`
		Horizon  string `json:"horizon"`
		Bills    []struct {
			Offer   string `json:"offer"`
			Horizon struct {
				Months int `json:"months"`
				Total  struct{ Amount, Currency string }
			} `json:"horizon"`
		} `json:"bills"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Bills) != len(wantTotal) || doc.Cheapest != cheapest || !strings.Contains(doc.Horizon, "24 months at 730 hours a month") {
		t.Fatalf("%d bills, cheapest %q (want %q), horizon %q", len(doc.Bills), doc.Cheapest, cheapest, doc.Horizon)
	}
	for _, b := range doc.Bills {
		if b.Horizon.Months != 24 || b.Horizon.Total.Amount != wantTotal[b.Offer] || b.Horizon.Total.Currency != "CNY" {
			t.Errorf("%s: horizon %+v, want %s CNY (totals.py)", b.Offer, b.Horizon, wantTotal[b.Offer])
		}
	}
	out, stderr, code = lcRun(t, args...)
	if code != 0 || !strings.Contains(out, "Horizon: priced over a horizon of 24 months") || !strings.Contains(out, "2,312,657.76") {
		t.Errorf("table: exit %d %s\n%s", code, stderr, out)
	}
	out, _, code = lcRun(t, append(args, "--format", "csv", "--table", "horizon")...)
	if code != 0 || !strings.Contains(out, "buy-colo,total,,2312657.76,CNY,") || !strings.Contains(out, "buy-colo,8x H100 server with network and storage,purchase,1500000,CNY,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
	if _, stderr, code := lcRun(t, "bill", "../../samples/traffic/2026-10.csv", "--offers", offers); code != 2 || !strings.Contains(stderr, "horizon_months (--horizon N)") {
		t.Errorf("without --horizon: exit %d, %s", code, stderr)
	}
}

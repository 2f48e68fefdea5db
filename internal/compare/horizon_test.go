package compare

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

const horizonOffers = `usage: {hours: 500}
offers:
  - name: reserved-3y
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "1000"}
    items:
      - {kind: compute, name: 8 cards reserved 3y, cards: 8, price_per_card_hour: "10", billing: reserved, term_months: 36}
  - name: hourly
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "1000"}
    items:
      - {kind: compute, name: 8 cards by the hour, cards: 8, price_per_card_hour: "16", billing: hourly}
`

func horizonCandidates(horizon string) string {
	return `vantage: {city: Shanghai}
candidates:
  - name: r
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: reserved-3y
  - name: h
    region: {city: Tokyo}
    targets: [{addr: 127.0.0.1}]
    offer: hourly
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
` + horizon
}

// horizonRank prices both candidates under the file's horizon (or months,
// as --horizon) and ranks them as if both passed.
func horizonRank(t *testing.T, file string, months int) *Result {
	t.Helper()
	dir := writeFiles(t, map[string]string{"c.yaml": file, "offers.yaml": horizonOffers})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := verdict.NewPricingWith(f, time.Time{}, billing.Options{HorizonMonths: months})
	if err != nil {
		t.Fatal(err)
	}
	r := &Result{FXBase: "CNY", Horizon: p.HorizonBasis()}
	for i := range f.Candidates {
		c := &f.Candidates[i]
		e := &verdict.Evaluation{Name: c.Name, SLA: verdict.Verdict{Pass: true}, Route: verdict.RouteQuality{Recv: 1}}
		if e.Monthly, _, err = p.Monthly(c); err != nil {
			t.Fatal(err)
		}
		if e.Horizon, err = p.Horizon(c); err != nil {
			t.Fatal(err)
		}
		r.Candidates = append(r.Candidates, e)
	}
	Rank(r)
	return r
}

// A month says the 3-year reservation is cheaper (by hand, October's 744 h:
// 1000 + 8 × 744 × 10 = 60,520 against 1000 + 8 × 500 × 16 = 65,000); over
// 12 months the reservation is paid to its 36th month (12 × 1000 + 36 × 8 ×
// 730 × 10 = 2,114,400 against 12 × 65,000 = 780,000) and the hourly offer
// ranks first; over 36 months the reservation wins again (36,000 +
// 2,102,400 = 2,138,400 against 2,340,000).
func TestHorizonRanksByTheContractsLife(t *testing.T) {
	month := horizonRank(t, horizonCandidates(""), 0)
	if !reflect.DeepEqual(month.Ranking, []string{"r", "h"}) || month.Horizon != nil || month.Candidates[0].Horizon != nil {
		t.Fatalf("one month: ranking %v, horizon %+v", month.Ranking, month.Horizon)
	}
	if month.Candidates[0].Monthly.Total != "60520.00" || month.Candidates[1].Monthly.Total != "65000.00" {
		t.Errorf("monthly totals %s, %s", month.Candidates[0].Monthly.Total, month.Candidates[1].Monthly.Total)
	}
	for _, c := range []struct {
		file   string
		months int
		rank   []string
		totals map[string]string
		saving string
	}{
		{horizonCandidates("horizon_months: 12\n"), 0, []string{"h", "r"}, map[string]string{"h": "780000.00", "r": "2114400.00"}, "1334400.00"},
		{horizonCandidates("horizon_months: 12\n"), 36, []string{"r", "h"}, map[string]string{"h": "2340000.00", "r": "2138400.00"}, "201600.00"}, // --horizon overrides the file
		{horizonCandidates(""), 36, []string{"r", "h"}, map[string]string{"h": "2340000.00", "r": "2138400.00"}, "201600.00"},
	} {
		r := horizonRank(t, c.file, c.months)
		if !reflect.DeepEqual(r.Ranking, c.rank) {
			t.Errorf("%d months: ranking %v, want %v", c.months, r.Ranking, c.rank)
		}
		for _, e := range r.Candidates {
			if got := e.Horizon.Converted.Text(); got != c.totals[e.Name] {
				t.Errorf("%s over %d months = %s, want %s", e.Name, e.Horizon.Months, got, c.totals[e.Name])
			}
		}
		n := r.Horizon.Months
		if r.Savings == nil || r.Savings.Amount != c.saving || r.Savings.Months != n ||
			!strings.Contains(r.Verdict, "over "+itoa(n)+" months") || !strings.Contains(r.Horizon.Text, "730 hours a month") {
			t.Errorf("%d months: verdict %q, savings %+v, basis %+v", n, r.Verdict, r.Savings, r.Horizon)
		}
	}
	// JSON: candidates[].horizon with months, hours_per_month, total {amount, currency}, items[].
	r := horizonRank(t, horizonCandidates("horizon_months: 12\n"), 0)
	b, err := json.Marshal(r.Candidates[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Horizon struct {
			Months        int `json:"months"`
			HoursPerMonth int `json:"hours_per_month"`
			Total         struct{ Amount, Currency string }
			Items         []struct{ Name, Amount, Rule string }
		} `json:"horizon"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	h := doc.Horizon
	if h.Months != 12 || h.HoursPerMonth != 730 || h.Total.Amount != "780000.00" || h.Total.Currency != "CNY" || len(h.Items) != 2 || h.Items[1].Rule == "" {
		t.Errorf("horizon JSON %s", b)
	}
	// Without a horizon the key is absent (documents stay as they were).
	b, _ = json.Marshal(month.Candidates[0])
	if strings.Contains(string(b), `"horizon"`) {
		t.Errorf("horizon key without a horizon: %s", b)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// horizon_months out of range names its line.
func TestHorizonMonthsRefused(t *testing.T) {
	for _, v := range []string{"0", "-3", "241"} {
		dir := writeFiles(t, map[string]string{"c.yaml": horizonCandidates("horizon_months: " + v + "\n"), "offers.yaml": horizonOffers})
		_, err := candidates.Load(filepath.Join(dir, "c.yaml"))
		if err == nil || !strings.Contains(err.Error(), "c.yaml:13: horizon_months "+v) {
			t.Errorf("horizon_months %s: %v", v, err)
		}
	}
}

package compare

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
)

const usageOffers = `usage: {hours: 100}
offers:
  - name: by-hour
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "100"}
    items:
      - {kind: compute, name: 8x H100, cards: 8, price_per_card_hour: "3", billing: hourly}
      - {kind: storage, name: disk, gb: 1000, price_per_gb_month: "0.10"}
  - name: by-month
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "710"}
    items:
      - {kind: compute, name: 8x H100, price_per_month: "71000", billing: monthly}
`

// Two candidates on the same recordings (so the same SLA verdict), one paying
// by the hour in USD, one by the month in CNY, ranked at the stated usage:
// by-hour = 100 + 100 + 24 U USD = (200 + 24 U) × 7.10 CNY; by-month =
// 71710 CNY. They cost the same at (71710 / 7.10 − 200) / 24 = 412.5 h.
func TestCompareRanksAtTheStatedUsage(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	cand := `recorded_only: true
vantage: {city: Shanghai}
candidates:
`
	for _, c := range []struct{ name, offer string }{{"hourly-box", "by-hour"}, {"monthly-box", "by-month"}} {
		cand += "  - name: " + c.name + "\n    region: {city: Hong Kong}\n    targets: [{addr: 203.0.113.10, protocol: icmp}]\n" +
			"    recorded: {forward: " + rec + "/hk-cn2-gia-forward.json, return: " + rec + "/hk-cn2-gia-return.mtr.json, probes: " + rec + "/hk-cn2-gia-ping.ndjson}\n" +
			"    offer: " + c.offer + "\n"
	}
	cand += "offers: offers.yaml\ntraffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}\nfx: {base: CNY, USD: 7.10}\n" +
		"sla: {rtt_p95_ms: 60}\n"
	dir := writeFiles(t, map[string]string{"c.yaml": cand, "offers.yaml": usageOffers})
	f, err := candidates.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag     string
		first    string
		hourly   string // by-hour's month in CNY
		perGPU   string // by-hour per used GPU-hour, CNY
		usedFrom string
	}{
		{"", "hourly-box", "18460.00", "23.08", "offers.yaml:1: usage.hours"}, // (200 + 2400) × 7.10 = 18460; / 100 / 8
		{"412.5", "hourly-box", "71710.00", "21.73", "--usage-hours"},         // the crossing: equal, tie broken by name
		{"600", "monthly-box", "103660.00", "21.60", "--usage-hours"},         // (200 + 14400) × 7.10
	} {
		opt := Options{Offline: true, Now: time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)}
		if c.flag != "" {
			opt.UsageHours = billing.Dec{Decimal: decimal.RequireFromString(c.flag), Set: true}
		}
		r, err := Run(context.Background(), f, opt)
		if err != nil {
			t.Fatalf("%q: %v", c.flag, err)
		}
		if r.Ranking[0] != c.first {
			t.Errorf("at %q h: ranking %v, want %s first", c.flag, r.Ranking, c.first)
		}
		for _, e := range r.Candidates {
			if e.Name != "hourly-box" {
				if e.Usage == nil || e.Usage.PerGPUHour != nil || e.Usage.Cards != nil {
					t.Errorf("by-month states no cards: per GPU-hour must be null, got %+v", e.Usage)
				}
				continue
			}
			if e.Monthly.Converted.Text() != c.hourly {
				t.Errorf("at %q h: by-hour %s CNY, want %s", c.flag, e.Monthly.Converted.Amount, c.hourly)
			}
			if e.Usage == nil || e.Usage.PerGPUHour == nil || e.Usage.PerGPUHour.Text() != c.perGPU || e.Usage.PerGPUHour.Currency != "CNY" {
				t.Errorf("at %q h: per GPU-hour %+v, want %s CNY", c.flag, e.Usage, c.perGPU)
			}
			// Idle: 200 USD = 1420 CNY.
			if e.Usage.Idle.Text() != "1420.00" {
				t.Errorf("idle %+v, want 1420.00 CNY", e.Usage.Idle)
			}
		}
		u := r.Usage
		if u == nil || u.From != c.usedFrom && !strings.HasSuffix(u.From, c.usedFrom) || len(u.Offers) != 2 || len(u.BreakEvenHours) != 1 {
			t.Fatalf("usage summary %+v", u)
		}
		if be := u.BreakEvenHours[0]; be.A != "by-hour" || be.B != "by-month" || be.Hours != 412.5 || be.Amount != "71710.00" || be.Currency != "CNY" {
			t.Errorf("break-even %+v, want by-hour/by-month at 412.5 h, 71710.00 CNY", be)
		}
		if o := u.Offers[0]; o.AtZero.Text() != "1420.00" || o.AtPeriod.Text() != "128197.60" { // (200 + 24 × 744) × 7.10 = 18056 × 7.10
			t.Errorf("by-hour curve %+v", o)
		}
	}
	// More than the month's hours: refused, naming the flag.
	_, err = Run(context.Background(), f, Options{Offline: true, UsageHours: billing.Dec{Decimal: decimal.NewFromInt(745), Set: true}})
	if err == nil || !strings.HasPrefix(err.Error(), "--usage-hours 745: more than the 744 hours in the period 2026-10") {
		t.Errorf("745 h: %v", err)
	}
}

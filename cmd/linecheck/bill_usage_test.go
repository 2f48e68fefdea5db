package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The bundled GPU offers at the file's 300 h and at --usage-hours, by hand:
// hourly = 15000 port + 2800 storage + 200 IPs + 8 × 30 × U; monthly =
// 18000 + 90000; they cost the same at 90000 / 240 = 375 h.
func TestBillUsageHoursTableAndJSON(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Usage: 300 of 744 hours used (" + sampleOffers + ":",
		"hourly: 300 h × 8 cards × 30",
		"reserved: upfront 24000 / 12 months",
		"spot: 300 h × 8 cards × (1 + 0.15 rerun) × 5",
		"break-even: gpu-hourly costs the same as gpu-monthly at 375 h (108,000.00 CNY)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	// gpu-hourly's usage row: total 90000 at 300 h, idle 18000 (20 %), 90000 / 300 / 8 = 37.50 per GPU-hour.
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "gpu-hourly ") && strings.Contains(l, "%") {
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	if row != "gpu-hourly 300 8 90,000.00 18,000.00 20.0% 37.50 CNY" {
		t.Errorf("usage row %q", row)
	}

	out, errs, code = billRun(t, sampleCSV, "--offers", sampleOffers, "--usage-hours", "500", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Bills []struct {
			Offer  string `json:"offer"`
			Amount string `json:"amount"`
			Usage  struct {
				UsedHours  float64 `json:"used_hours"`
				From       string  `json:"from"`
				PerGPUHour *string `json:"per_gpu_hour"`
			} `json:"usage"`
		} `json:"bills"`
		Comparison struct {
			BreakEvenHours []struct {
				A, B  string
				Hours float64
			} `json:"break_even_hours"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, b := range doc.Bills {
		if b.Usage.UsedHours != 500 || b.Usage.From != "--usage-hours" {
			t.Errorf("%s: usage %+v, want 500 h from --usage-hours", b.Offer, b.Usage)
		}
		// 18000 + 500 × 240 = 138000.
		if b.Offer == "gpu-hourly" && b.Amount != "138000.00" {
			t.Errorf("gpu-hourly at 500 h = %s, want 138000.00", b.Amount)
		}
		if b.Offer == "la" && b.Usage.PerGPUHour != nil {
			t.Errorf("la states no cards: per GPU-hour must be null, got %v", *b.Usage.PerGPUHour)
		}
	}
	found := false
	for _, be := range doc.Comparison.BreakEvenHours {
		if be.A == "gpu-hourly" && be.B == "gpu-monthly" && be.Hours == 375 {
			found = true
		}
	}
	if !found {
		t.Errorf("break_even_hours lacks gpu-hourly/gpu-monthly at 375: %+v", doc.Comparison.BreakEvenHours)
	}
}

func TestBillUsageHoursBadInput(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"not a number", "lots", `--usage-hours: "lots" is not a number of hours`},
		{"negative", "-1", "--usage-hours: -1: want 0 or more hours"},
		{"above the month", "745", "--usage-hours 745: more than the 744 hours in the period 2026-10 (UTC)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--usage-hours", c.value)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing written", code, out)
			}
			if !strings.Contains(errs, c.want) {
				t.Errorf("stderr %q lacks %q", errs, c.want)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

type reconcileJSON struct {
	Schema    string `json:"schema"`
	Reconcile struct {
		Decimals int `json:"decimals"`
		Tried    int `json:"tried"`
		Matches  []struct {
			Method, Direction, Gaps, TZ string
			BilledMbps                  float64 `json:"billed_mbps"`
			Amount                      string  `json:"amount"`
		} `json:"matches"`
		Nearest []struct {
			Method    string  `json:"method"`
			DiffMbps  float64 `json:"diff_mbps"`
			DiffMoney float64 `json:"diff_amount"`
		} `json:"nearest"`
	} `json:"reconcile"`
}

// Issue 33, the invoice check on the bundled October (13 slots missing):
// the sample's hk-cn2 bill says 260.54 Mbit/s (95th nearest-rank greater);
// --billed-mbps 260.54 lists that rule among the matches in both zones
// given; a figure no rule gives exits 1 with the nearest rules; the sg-bwp
// invoice of 7191.25 USD (95th nearest-rank, per-slot max) is recovered by
// amount.
func TestBillInvoiceCheck(t *testing.T) {
	decode := func(out string) reconcileJSON {
		t.Helper()
		var doc reconcileJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return doc
	}
	has := func(doc reconcileJSON, method, dir, gaps, tz string) bool {
		for _, m := range doc.Reconcile.Matches {
			if m.Method == method && m.Direction == dir && m.Gaps == gaps && m.TZ == tz {
				return true
			}
		}
		return false
	}
	out, errs, code := billRun(t, sampleCSV, "--billed-mbps", "260.54", "--tz", "UTC,Asia/Shanghai", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	doc := decode(out)
	if doc.Schema != "linecheck.reconcile/v1" || doc.Reconcile.Tried != 140 || doc.Reconcile.Decimals != 2 ||
		!has(doc, "nearest-rank", "greater", "skip", "UTC") || !has(doc, "nearest-rank", "greater", "skip", "Asia/Shanghai") {
		t.Errorf("260.54: %+v", doc)
	}
	for _, m := range doc.Reconcile.Matches {
		if m.BilledMbps < 260.535 || m.BilledMbps >= 260.545 {
			t.Errorf("match %+v does not round to 260.54", m)
		}
	}
	out, errs, code = billRun(t, sampleCSV, "--billed-mbps", "700.0")
	if code != 1 || !strings.Contains(out, "no rule of 70 gives 700.0 Mbps (at 1 decimal); the nearest") || !strings.Contains(errs, "no rule gives the invoice's figure") {
		t.Errorf("700.0: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = billRun(t, sampleCSV, "--offers", sampleOffers, "--offer", "sg-bwp", "--billed-amount", "7191.25", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if doc = decode(out); !has(doc, "nearest-rank", "max", "skip", "UTC") || doc.Reconcile.Matches[0].Amount != "7191.25" {
		t.Errorf("7191.25 USD: %+v", doc)
	}
	for _, bad := range [][]string{
		{"--billed-mbps", "1", "--p95-method", "vnstat"},
		{"--billed-amount", "1"},
		{"--offers", sampleOffers, "--offer", "nope", "--billed-amount", "1"},
		{"--billed-mbps", "1", "--billed-amount", "1"},
		{"--billed-mbps", "-1"},
		{"--billed-mbps", "1", "--prometheus", "http://127.0.0.1:1"}, // refused before any query
	} {
		if _, errs, code := billRun(t, append([]string{sampleCSV}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, %s", bad, code, errs)
		}
	}
}

package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

// A hand-made report: one offer that cannot carry the traffic, one whose port
// only the peak exceeds, one without a port (no carry verdict).
func handReport() *billing.Report {
	return &billing.Report{
		Schema: billing.Schema, Name: "香港-port",
		Period:  billing.PeriodDoc{Label: "2026-10", TZ: "UTC", Days: 31, Boundary: billing.BoundaryStart},
		Samples: billing.Samples{Expected: 8928, Present: 8928, Coverage: 1, Gaps: "skip", ValidDays: 31},
		Traffic: billing.Traffic{InBytes: 1000, OutBytes: 2000, TotalBytes: 3000, InAvgBps: 1.32, OutAvgBps: 0.0020152, InPeakBps: 2, OutPeakBps: 3},
		P95:     &billing.P95Block{Method: billing.NearestRank, InBps: 1.5, OutBps: 2.5, GreaterBps: 2.5, MaxBps: 2.5, SumBps: 4, N: 8928, Rank: 8482, Gaps: "skip"},
		Bills: []billing.Bill{
			{Offer: "small", Scheme: "fixed", Amount: "10.00", Bandwidth: "10.00", Currency: "USD", Utilisation: &billing.Utilisation{PortMbps: 1, P95: 2.5},
				Carry: &billing.Carry{Status: billing.CarryCannot, PortMbps: 1, P95Mbps: 2.5, SlotsAbove: billing.SlotsAbove{Out: 4000, Sum: 5000}}},
			{Offer: "big", Scheme: "fixed", Amount: "20.00", Bandwidth: "20.00", Currency: "USD", Cheapest: true, Utilisation: &billing.Utilisation{PortMbps: 2.9, P95: 0.86},
				Carry: &billing.Carry{Status: billing.CarryPeakAbove, CanCarry: true, PortMbps: 2.9, P95Mbps: 2.5, SlotsAbove: billing.SlotsAbove{Out: 3, Sum: 40}}},
			{Offer: "gb", Scheme: "per-gb", Amount: "30.00", Bandwidth: "30.00", Currency: "USD",
				Rule: billing.Rule{Statistic: "volume", Direction: billing.DirOut, Bytes: 2000, BillableGB: "0.000002", Unit: "GB"}},
		},
		Cheapest: "big",
		Compare:  &billing.Compare{Currency: "USD", Dearest: "gb", Ratio: 1.5},
	}
}

func TestBillTablesMarkWhatCannotCarry(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "table", BillTables(handReport(), false)...); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"✗ cannot carry: 95th 2.5 Mbit/s > 1 Mbit/s port",
		"◀ cheapest ⚠ peak above the port: slots in 0, out 3, in+out 40",
		"dearest/cheapest = 1.50× (gb vs big)",
		"average Mbit/s          0.00     0.00", // tables round for reading
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestBillCSVCarriesFullPrecisionAndNamesTheSeries(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, FormatCSV, append(BillCSVTables(handReport(), true), BillCSVTables(handReport(), true)...)...); err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(b.String()), "\n\n")
	parse := func(s string) [][]string {
		recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	traffic := parse(blocks[0])
	if got := traffic[2]; got[0] != "香港-port" || got[1] != "average_bps" || got[2] != "1.32" || got[3] != "0.0020152" {
		t.Errorf("average row %q, want the series, 1.32 and 0.0020152 bit/s", got)
	}
	bills := parse(blocks[2])
	col := map[string]int{}
	for i, h := range bills[0] {
		col[h] = i
	}
	small, big, gb := bills[1], bills[2], bills[3]
	if small[col["carry"]] != "cannot-carry" || small[col["slots_above_port_out"]] != "4000" || small[col["cheapest"]] != "false" {
		t.Errorf("small: %q", small)
	}
	if big[col["carry"]] != "peak-above-port" || big[col["slots_above_port_sum"]] != "40" || big[col["cheapest"]] != "true" {
		t.Errorf("big: %q", big)
	}
	if gb[col["carry"]] != "" || gb[col["billable"]] != "0.000002" || gb[col["value_bytes"]] != "2000" {
		t.Errorf("gb: %q (no port: no carry verdict)", gb)
	}
}

// Tables write money to the currency's minor unit with thousands separated
// (USD 2 decimals, JPY none) and rates in Mbit/s; CSV keeps the plain strings.
func TestBillTablesMoneyStyle(t *testing.T) {
	r := handReport()
	r.Bills = []billing.Bill{
		{Offer: "usd", Scheme: "p95", Amount: "144691.5", Bandwidth: "16000", Currency: "USD",
			Rule:  billing.Rule{Statistic: "p95", Method: billing.NearestRank, Direction: billing.DirGreater, BillableMbps: "1234.5678"},
			Items: []billing.LineItem{{Name: "bandwidth", Quantity: "1234.5678", Unit: "Mbps", UnitPrice: "117.2", Amount: "144691.49"}}},
		{Offer: "jpy", Scheme: "fixed", Amount: "16000", Bandwidth: "16000", Currency: "JPY"},
	}
	r.Compare = nil
	var b bytes.Buffer
	if err := Write(&b, "table", BillTables(r, false)...); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"16,000.00  144,691.50  USD", "16,000      16,000  JPY", "1,234.57 Mbit/s (95th nearest-rank greater)", "144,691.49"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Mbps ") {
		t.Errorf("table names the rate Mbps:\n%s", out)
	}
	b.Reset()
	if err := Write(&b, "csv", BillCSVTables(r, false)...); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ",144691.5,USD") {
		t.Errorf("csv lost the plain amount:\n%s", b.String())
	}
}

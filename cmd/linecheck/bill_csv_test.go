package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// csvTables splits bill's CSV output (tables separated by an empty line)
// into parsed tables.
func csvTables(t *testing.T, out string) [][][]string {
	t.Helper()
	var tables [][][]string
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		recs, err := csv.NewReader(strings.NewReader(block)).ReadAll()
		if err != nil {
			t.Fatalf("not CSV: %v\n%s", err, block)
		}
		tables = append(tables, recs)
	}
	return tables
}

// csvOne parses bill's CSV output, which is one table, into records keyed by
// column name (the header row first).
func csvOne(t *testing.T, out string) (rows []map[string]string, header []string) {
	t.Helper()
	tables := csvTables(t, out)
	if len(tables) != 1 {
		t.Fatalf("%d CSV tables, want one:\n%s", len(tables), out)
	}
	header = tables[0][0]
	for _, rec := range tables[0][1:] {
		m := map[string]string{}
		for i, h := range header {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows, header
}

func TestBillCSVIsMachineReadable(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "csv", "--table", "traffic")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	js, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var doc struct {
		Traffic struct {
			InBytes  int64 `json:"in_bytes"`
			OutBytes int64 `json:"out_bytes"`
		} `json:"traffic"`
		Samples struct {
			Present int `json:"present"`
		} `json:"samples"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	traffic, _ := csvOne(t, out)
	if len(traffic) != 1 {
		t.Fatalf("traffic rows %v, want one for the one series", traffic)
	}
	tr := traffic[0]
	if tr["in_bytes"] != strconv.FormatInt(doc.Traffic.InBytes, 10) || tr["out_bytes"] != strconv.FormatInt(doc.Traffic.OutBytes, 10) || tr["samples_present"] != strconv.Itoa(doc.Samples.Present) {
		t.Errorf("traffic row %v, want the JSON's bytes %d, %d and %d samples", tr, doc.Traffic.InBytes, doc.Traffic.OutBytes, doc.Samples.Present)
	}
	for _, k := range []string{"in_avg_bps", "out_avg_bps", "in_peak_bps", "out_peak_bps", "coverage"} {
		if _, err := strconv.ParseFloat(tr[k], 64); err != nil {
			t.Errorf("traffic %s = %q is not a plain number", k, tr[k])
		}
	}
	out, _, _ = billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "csv", "--table", "items")
	charges, header := csvOne(t, out)
	for _, h := range header {
		if h == "" {
			t.Errorf("items table with an unnamed column: %q", header)
		}
	}
	if len(charges) < 3 {
		t.Fatalf("no charges in\n%s", out)
	}
	for _, row := range charges {
		if row["offer"] == "" || row["amount"] == "" {
			t.Errorf("charge row without its offer or amount: %v", row)
		}
	}
}

func TestBillCSVSeveralSeriesNameEachRow(t *testing.T) {
	a := writeFile(t, "a.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,100,200\n2026-10-01T00:05:00Z,100,200\n")
	b := writeFile(t, "b.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,300,400\n2026-10-01T00:05:00Z,300,400\n")
	for _, table := range []string{"traffic", "p95"} {
		out, errs, code := billRun(t, a, b, "--format", "csv", "--table", table)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		rows, header := csvOne(t, out)
		if header[0] != "series" {
			t.Fatalf("table header %q, want a leading series column", header)
		}
		names := map[string]bool{}
		for _, row := range rows {
			names[row["series"]] = true
		}
		if len(names) != 2 {
			t.Errorf("%s: series named in rows: %v, want the two logs", table, names)
		}
	}
}

// Machine formats carry full precision: 99 bytes a slot is 2.64 bit/s (99·8/300),
// which CSV printed as 3 (average) and the 95th table as 0.00 Mbps; JSON has
// the same figures without float noise.
func TestBillCSVAndJSONCarryFullPrecision(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,in_bytes,out_bytes\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "2026-10-01T00:%02d:00Z,99,%d\n", 5*i, 7557*(i+1))
	}
	log := writeFile(t, "slow.csv", b.String())
	out, errs, code := billRun(t, log, "--format", "csv", "--table", "traffic")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if tr, _ := csvOne(t, out); tr[0]["in_avg_bps"] != "2.64" || tr[0]["out_avg_bps"] != "1309.88" {
		t.Errorf("traffic row %v, want in_avg_bps 2.64, out_avg_bps 1309.88", tr[0])
	}
	// out: 7557·k bytes, k = 1..12, rate 201.52·k bit/s; nearest-rank 95th of 12 is rank 12.
	out, _, _ = billRun(t, log, "--format", "csv", "--table", "p95")
	p95, _ := csvOne(t, out)
	if len(p95) != 5 || p95[3]["rule"] != "in" || p95[3]["p95_bps"] != "2.64" || p95[4]["rule"] != "out" || p95[4]["p95_bps"] != "2418.24" {
		t.Errorf("95th table %v, want in 2.64 and out 2418.24 bit/s", p95)
	}
	js, _, _ := billRun(t, log, "--format", "json")
	var doc struct {
		Traffic struct {
			InAvg  json.Number `json:"in_avg_bps"`
			OutAvg json.Number `json:"out_avg_bps"`
		} `json:"traffic"`
		P95 struct {
			Out json.Number `json:"out_bps"`
		} `json:"p95"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	// Mean of 201.52·k over k = 1..12 is 201.52·6.5 = 1309.88.
	if doc.Traffic.InAvg != "2.64" || doc.Traffic.OutAvg != "1309.88" || doc.P95.Out != "2418.24" {
		t.Errorf("JSON figures %+v %+v, want 2.64, 1309.88 and 2418.24 exactly", doc.Traffic, doc.P95)
	}
}

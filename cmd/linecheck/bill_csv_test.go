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

func TestBillCSVIsMachineReadable(t *testing.T) {
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "csv")
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
	tables := csvTables(t, out)
	traffic := tables[0]
	if got := traffic[1]; got[0] != "volume_bytes" || got[1] != strconv.FormatInt(doc.Traffic.InBytes, 10) || got[2] != strconv.FormatInt(doc.Traffic.OutBytes, 10) {
		t.Errorf("volume row %q, want volume_bytes,%d,%d (the JSON's bytes)", got, doc.Traffic.InBytes, doc.Traffic.OutBytes)
	}
	for _, row := range traffic[1:4] {
		for _, v := range row[1:3] {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				t.Errorf("traffic row %q: %q is not a plain number", row, v)
			}
		}
	}
	if got := traffic[4]; got[0] != "samples" || got[1] != strconv.Itoa(doc.Samples.Present) {
		t.Errorf("samples row %q, want %d present", got, doc.Samples.Present)
	}
	var charges [][]string
	for _, tb := range tables {
		for _, h := range tb[0] {
			if h == "" {
				t.Errorf("table with an unnamed column: %q", tb[0])
			}
		}
		if tb[0][0] == "offer" && tb[0][1] == "item" {
			charges = tb
		}
	}
	if len(charges) < 3 {
		t.Fatalf("no charges table in\n%s", out)
	}
	for _, row := range charges[1:] {
		if row[0] == "" {
			t.Errorf("charge row without its offer: %q", row)
		}
	}
}

func TestBillCSVSeveralSeriesNameEachRow(t *testing.T) {
	a := writeFile(t, "a.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,100,200\n2026-10-01T00:05:00Z,100,200\n")
	b := writeFile(t, "b.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,300,400\n2026-10-01T00:05:00Z,300,400\n")
	out, errs, code := billRun(t, a, b, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	names := map[string]bool{}
	for _, tb := range csvTables(t, out) {
		if tb[0][0] != "series" {
			t.Fatalf("table header %q, want a leading series column", tb[0])
		}
		for _, row := range tb[1:] {
			names[row[0]] = true
		}
	}
	if len(names) != 2 {
		t.Errorf("series named in rows: %v, want the two logs", names)
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
	out, errs, code := billRun(t, log, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	tables := csvTables(t, out)
	if got := tables[0][2]; got[0] != "average_bps" || got[1] != "2.64" {
		t.Errorf("average row %q, want average_bps,2.64", got)
	}
	// out: 7557·k bytes, k = 1..12, rate 201.52·k bit/s; nearest-rank 95th of 12 is rank 12.
	p95 := tables[1]
	if p95[0][1] != "bps" || p95[4][0] != "in" || p95[4][1] != "2.64" || p95[5][0] != "out" || p95[5][1] != "2418.24" {
		t.Errorf("95th table %q, want in 2.64 and out 2418.24 bit/s", p95)
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

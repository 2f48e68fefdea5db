package main

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// pandasTable loads csv with pandas.read_csv, as a user would, and returns
// its column names and row count; the test skips where python3 has no pandas.
func pandasTable(t *testing.T, csv string) (cols []string, rows int) {
	t.Helper()
	py := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} { // Debian's python3-pandas is for the system python3
		if exec.Command(p, "-c", "import pandas").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("python3-pandas is not installed (scripts/test installs it as root)")
	}
	cmd := exec.Command(py, "-c", "import sys, pandas\nd = pandas.read_csv(sys.stdin)\nprint(len(d))\nprint(\"\\t\".join(d.columns))")
	cmd.Stdin = strings.NewReader(csv)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pandas.read_csv: %v\n%s\n%s", err, out, csv)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if rows, err = strconv.Atoi(lines[0]); err != nil || len(lines) != 2 {
		t.Fatalf("pandas said %q", out)
	}
	return strings.Split(lines[1], "\t"), rows
}

// Every CSV table of bill loads in pandas as is, with the columns it names
// and one row per entity, counted from the JSON report of the same run.
func TestBillCSVTablesLoadInPandas(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	js, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers, "--format", "json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var doc struct {
		Bills []struct {
			Items []json.RawMessage `json:"items"`
		} `json:"bills"`
		Compare struct {
			BreakEven      []json.RawMessage `json:"break_even"`
			BreakEvenHours []json.RawMessage `json:"break_even_hours"`
		} `json:"comparison"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	items := 0
	for _, b := range doc.Bills {
		items += len(b.Items)
	}
	for _, c := range []struct {
		table string
		rows  int
		cols  []string
	}{
		{"", len(doc.Bills), []string{"series", "offer", "scheme", "total", "amount", "currency", "value_bps", "carry"}},
		{"bills", len(doc.Bills), []string{"series", "offer", "amount"}},
		{"p95", 5, []string{"series", "rule", "p95_bps", "method", "rank", "n"}},
		{"items", items, []string{"series", "offer", "item", "quantity", "unit", "unit_price", "amount", "currency"}},
		{"traffic", 1, []string{"series", "in_bytes", "out_bytes", "in_avg_bps", "out_peak_bps", "coverage"}},
		{"usage", len(doc.Bills), []string{"series", "offer", "used_hours", "idle_amount", "per_gpu_hour"}},
		{"break_even", len(doc.Compare.BreakEven) + len(doc.Compare.BreakEvenHours), []string{"series", "kind", "offer", "versus", "amount"}},
	} {
		args := []string{sampleCSV, "--offers", sampleOffers, "--format", "csv"}
		if c.table != "" {
			args = append(args, "--table", c.table)
		}
		out, errs, code := billRun(t, args...)
		if code != 0 {
			t.Fatalf("--table %q: exit %d: %s", c.table, code, errs)
		}
		cols, rows := pandasTable(t, out)
		if rows != c.rows || rows == 0 {
			t.Errorf("--table %q: pandas reads %d rows, want %d", c.table, rows, c.rows)
		}
		for _, want := range c.cols {
			if !strings.Contains("\t"+strings.Join(cols, "\t")+"\t", "\t"+want+"\t") {
				t.Errorf("--table %q: columns %q lack %q", c.table, cols, want)
			}
		}
	}
}

// Every CSV table of compare loads in pandas as is, one row per entity,
// counted from the JSON result of the same offline run.
func TestCompareCSVTablesLoadInPandas(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	type doc struct {
		Candidates []struct {
			Targets []json.RawMessage `json:"targets"`
			SLA     struct {
				Checks []json.RawMessage `json:"checks"`
			} `json:"sla"`
			Monthly *struct {
				Items []json.RawMessage `json:"items"`
			} `json:"monthly"`
			WhatIf []json.RawMessage `json:"what_if"`
			Usage  json.RawMessage   `json:"usage"`
			Route  struct {
				Carriers []json.RawMessage `json:"carriers"`
			} `json:"route"`
		} `json:"candidates"`
	}
	for _, file := range []string{"../../samples/candidates.yaml", "../../samples/three-networks.yaml"} {
		js, _ := prRun(t, "compare", "--offline", file, "--format", "json")
		var d doc
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want := map[string]int{"ranking": len(d.Candidates), "routes": len(d.Candidates)}
		for _, c := range d.Candidates {
			want["targets"] += len(c.Targets)
			want["checks"] += len(c.SLA.Checks)
			want["carriers"] += len(c.Route.Carriers)
			if c.Monthly != nil {
				want["items"] += len(c.Monthly.Items) + 1 + len(c.WhatIf) // the items, the total, the what-ifs
				if len(c.Usage) > 0 && string(c.Usage) != "null" {
					want["usage"]++
				}
			}
		}
		cols := map[string][]string{
			"ranking":  {"rank", "candidate", "p50_ms", "p95_ms", "loss_fraction", "jitter_ms", "monthly", "currency"},
			"checks":   {"candidate", "check", "required", "measured", "unit", "result"},
			"items":    {"candidate", "offer", "item", "amount", "currency"},
			"targets":  {"candidate", "target", "sent", "recv", "loss_fraction", "min_ms", "p95_ms"},
			"routes":   {"candidate", "forward", "return", "combined", "validated", "rule", "confidence", "floor_ms"},
			"usage":    {"candidate", "offer", "used_hours", "idle_amount", "per_used_gpu_hour"},
			"carriers": {"candidate", "carrier", "users", "forward", "return", "allowed", "SLA"},
		}
		for table, n := range want {
			if n == 0 {
				continue
			}
			args := []string{"compare", "--offline", file, "--format", "csv"}
			if table != "ranking" {
				args = append(args, "--table", table)
			}
			out, _ := prRun(t, args...)
			got, rows := pandasTable(t, out)
			if rows != n {
				t.Errorf("%s --table %s: pandas reads %d rows, want %d", file, table, rows, n)
			}
			for _, c := range cols[table] {
				if !strings.Contains("\t"+strings.Join(got, "\t")+"\t", "\t"+c+"\t") {
					t.Errorf("%s --table %s: columns %q lack %q", file, table, got, c)
				}
			}
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The issue-10 counter file, end to end: a month of 64-bit SNMP counters
// under the names docs/readers.md lists, rising by 37,500,000 bytes per
// 300 s (1 Mbit/s inbound, hand: 37.5e6·8/300), 0.5 Mbit/s outbound.
// bill without --units averaged 36.67 Mbit/s (the readings taken as bytes).
func TestBillReadsSNMPCounterCSVAsCounters(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "snmp.csv")
	var b strings.Builder
	b.WriteString("timestamp,ifHCInOctets,ifHCOutOctets\n")
	in, out := uint64(7_000_000_000_000), uint64(900_000_000_000)
	const start = 1790812800 // 2026-10-01T00:00:00Z
	for i := range 8929 {
		fmt.Fprintf(&b, "%d,%d,%d\n", start+i*300, in, out)
		in += 37_500_000
		out += 18_750_000
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runLinecheckOut(t, "bill", p, "--period", "2026-10", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Samples  struct{ Present int }
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var tr struct {
		Traffic struct {
			In  float64 `json:"in_avg_bps"`
			Out float64 `json:"out_avg_bps"`
		} `json:"traffic"`
	}
	if err := json.Unmarshal([]byte(stdout), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Traffic.In != 1e6 || tr.Traffic.Out != 0.5e6 || r.Samples.Present != 8928 {
		t.Errorf("avg in %v out %v bit/s over %d slots; want 1e6, 5e5 over 8928", tr.Traffic.In, tr.Traffic.Out, r.Samples.Present)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "read as --units counter64") {
		t.Errorf("warnings %q", r.Warnings)
	}
	// --units that contradicts the header exits 2 and names the flag.
	code, _, stderr = runLinecheckOut(t, "bill", p, "--units", "bps")
	if code != 2 || !strings.Contains(stderr, "--units bps contradicts the header") {
		t.Errorf("--units bps: exit %d, %q", code, stderr)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// bill --prometheus: a limit hit and an impossible value are the user's
// input to change (exit 2), each said in words; within the limit it bills.
func TestBillPrometheusLimitsExit2(t *testing.T) {
	var value atomic.Value // the handler runs on the server's goroutines
	value.Store("8")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		start, _ := strconv.ParseInt(q.Get("start"), 10, 64)
		end, _ := strconv.ParseInt(q.Get("end"), 10, 64)
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"x"},"values":[`)
		for ts := start; ts <= end; ts += 300 {
			if ts > start {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%d,"%s"]`, ts, value.Load())
		}
		b.WriteString(`]}]}}`)
		fmt.Fprint(w, b.String())
	}))
	defer srv.Close()
	args := []string{"bill", "--prometheus", srv.URL, "--query-in", "in", "--query-out", "out",
		"--from", "2026-10-01T00:00:00Z", "--to", "2026-10-01T01:00:00Z", "--retries", "0"}
	if code, _, stderr := runLinecheckOut(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr := runLinecheckOut(t, append(args, "--max-samples", "20")...)
	if code != 2 || !strings.Contains(stderr, "more than --max-samples 20 points") {
		t.Errorf("--max-samples 20: exit %d, %q", code, stderr)
	}
	value.Store("1e308")
	code, _, stderr = runLinecheckOut(t, args...)
	if code != 2 || !strings.Contains(stderr, `value "1e308" bit/s is beyond any link`) {
		t.Errorf("1e308: exit %d, %q", code, stderr)
	}
}

// -i NAME keeps only the series of that name, as vnstat -i does; with
// --aggregate the sum of just those. Hand figures: 3,750,000 B per 5 min is
// 100,000 bit/s (eth0), 1,875,000 B is 50,000 (eth1); eth2 carries 1 B.
func TestBillInterfaceSelectsSeries(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	for i := range 24 {
		ts := 1780272000 + i*300
		fmt.Fprintf(&b, "%d,eth0,3750000,1000\n%d,eth1,1875000,1000\n%d,eth2,1,1\n", ts, ts, ts)
	}
	path := filepath.Join(t.TempDir(), "ports.csv")
	os.WriteFile(path, []byte(b.String()), 0o644)
	type doc struct {
		Name string `json:"name"`
		P95  struct {
			In float64 `json:"in_bps"`
		} `json:"p95"`
	}
	one := func(args ...string) doc {
		var d doc
		out := runLinecheck(t, append([]string{"bill", path, "--format", "json"}, args...)...)
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return d
	}
	if d := one("-i", "eth1"); d.Name != "eth1" || d.P95.In != 50000 {
		t.Errorf("-i eth1: %+v, want eth1 at 50000 bit/s", d)
	}
	if d := one("-i", "eth0,eth1", "--aggregate"); d.Name != "aggregate" || d.P95.In != 150000 {
		t.Errorf("-i eth0,eth1 --aggregate: %+v, want 150000 bit/s (eth2 left out)", d)
	}
	if d := one("--interface", "eth0", "--interface", "eth1", "--aggregate"); d.P95.In != 150000 {
		t.Errorf("--interface twice: %+v", d)
	}
	code, stderr := runLinecheckCode(t, "bill", path, "-i", "eth9,eth0")
	if code != 2 || !strings.Contains(stderr, "--interface eth9: no series of that name; the logs hold eth0, eth1, eth2") {
		t.Errorf("-i eth9: exit %d, %q", code, stderr)
	}
}

// vnstat's -m and -d: -m is --period all (one row per month), -d is
// --daily; -m beside --period is refused.
func TestBillTakesVnstatSpellings(t *testing.T) {
	sample := "../../samples/traffic/2026-10.csv"
	for _, tc := range []struct{ short, long []string }{
		{[]string{"-m"}, []string{"--period", "all"}},
		{[]string{"-d"}, []string{"--daily"}},
	} {
		a := runLinecheck(t, append([]string{"bill", sample, "--format", "csv"}, tc.short...)...)
		b := runLinecheck(t, append([]string{"bill", sample, "--format", "csv"}, tc.long...)...)
		if string(a) != string(b) || len(a) == 0 {
			t.Errorf("%v differs from %v:\n%s\n--\n%s", tc.short, tc.long, a, b)
		}
	}
	if !strings.HasPrefix(string(runLinecheck(t, "bill", sample, "-m")), "2026-10 traffic, monthly") {
		t.Error("-m is not the monthly history")
	}
	if code, stderr := runLinecheckCode(t, "bill", sample, "-m", "--period", "2026-10"); code != 2 || !strings.Contains(stderr, "-m is --period all") {
		t.Errorf("-m --period: exit %d %q", code, stderr)
	}
}

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

const multipathSample = "../../samples/rec/hk-multipath-forward.json"

// The multipath document in every format, from the hand-made recording
// of two paths that split at TTL 5 (4 flows over CN2, 2 over ChinaNet
// 202.97) with 4 cycles per path; figures checked by hand below.
func TestGoldenTraceMultipathReplay(t *testing.T) {
	t.Parallel() // child processes on files of its own: see main_test.go
	args := []string{"trace", "--replay", multipathSample}
	out := runGoldenCases(t, "", formatCases("trace-multipath", args, textFormats, "hops", "route", "paths"))

	var doc route.Trace
	if err := json.Unmarshal([]byte(out["trace-multipath.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paths) != 2 || doc.Multipath == nil {
		t.Fatalf("paths %+v", doc.Paths)
	}
	// Shares: 4 and 2 of the 6 flows.
	if p := doc.Paths; math.Abs(p[0].Share-4.0/6) > 1e-9 || math.Abs(p[1].Share-2.0/6) > 1e-9 {
		t.Errorf("shares %v and %v, by hand 4/6 and 2/6", p[0].Share, p[1].Share)
	}
	// The classes from the carrier table (route.ClassifyPaths on each
	// path's own hops): 4 hops of 59.43 (CN2) on path 1,
	// 4 of 202.97 (ChinaNet backbone) from TTL 5 on path 2.
	if doc.Paths[0].LineClass != "cn2-gia" || doc.Paths[1].LineClass != "chinanet-163" {
		t.Errorf("classes %s, %s; want cn2-gia and chinanet-163", doc.Paths[0].LineClass, doc.Paths[1].LineClass)
	}
	want := "path 2 of 2 (flows 33435, 33438) enters the ChinaNet backbone at TTL 5 (202.97.34.17): chinanet-163, not cn2-gia as path 1"
	if doc.Multipath.Summary != want {
		t.Errorf("summary %q\nwant    %q", doc.Multipath.Summary, want)
	}
	// Path 2, TTL 7: 3 of 4 cycles answered, 25 % loss.
	h := doc.Paths[1].Hops[6]
	if h.TTL != 7 || *h.Sent != 4 || *h.Recv != 3 || *h.LossPct != 25 {
		t.Errorf("path 2 TTL 7: %+v, want 3 of 4, 25%% loss", h)
	}
	rows := readCSV(t, out["trace-multipath-paths.csv"])
	if len(rows) != 1+20 || strings.Join(rows[0], ",") != "path,flows,share,ttl,address,asn,as_name,sent,recv,loss_pct,rtt_p50_ms,rtt_p95_ms,jitter_ms,line_class" {
		t.Fatalf("paths CSV: %d rows, header %v", len(rows), rows[0])
	}
	if r := rows[1+10+6]; r[0] != "2" || r[1] != "33435 33438" || r[3] != "7" || r[4] != "202.97.52.162" || r[8] != "3" || r[9] != "25" || r[13] != "chinanet-163" {
		t.Errorf("paths CSV, path 2 TTL 7: %v", r)
	}
	txt := out["trace-multipath.txt"]
	for _, s := range []string{"1→2 split", "2→1 meet", "66.7%", "33.3%", "TTL 5 202.97.34.17", want[:60]} {
		if !strings.Contains(txt, s) {
			t.Errorf("table lacks %q", s)
		}
	}
	for i, l := range strings.Split(txt, "\n") {
		if len([]rune(l)) > 120 {
			t.Errorf("table line %d is %d columns wide: %q", i+1, len([]rune(l)), l)
		}
	}
}

// --replay reads its own multipath JSON back: the document written again
// holds the same multipath object, links and paths.
func TestTraceMultipathReplayRoundTrip(t *testing.T) {
	first := goldenRun(t, "", 0, "trace", "--replay", multipathSample, "--format", "json")
	file := filepath.Join(t.TempDir(), "mp.json")
	if err := os.WriteFile(file, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	second := goldenRun(t, "", 0, "trace", "--replay", file, "--format", "json")
	var a, b route.Trace
	if err := json.Unmarshal([]byte(first), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(second), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Multipath, b.Multipath) || !reflect.DeepEqual(a.Links, b.Links) || !reflect.DeepEqual(a.Paths, b.Paths) {
		t.Errorf("the replayed document differs:\n%s\n%s", first, second)
	}
}

// A replayed document whose paths name a flow it never sent is refused
// with the field and what is wrong, exit 2.
func TestTraceMultipathReplayRefusesUnknownFlows(t *testing.T) {
	b, err := os.ReadFile(multipathSample)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), `"flows": [
        33435,`, `"flows": [
        12345,`, 1)
	if bad == string(b) {
		t.Fatal("the sample changed: no path flows 33435 to replace")
	}
	file := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	goldenRun(t, "", 2, "trace", "--replay", file)
	_, err = route.ReadTraceFile(file)
	if err == nil || !strings.HasPrefix(err.Error(), file+": links[4].flows: flow 12345 is not in multipath.flows") {
		t.Errorf("error %v does not name the field and the flow", err)
	}
}

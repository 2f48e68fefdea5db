package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/probe/bw"
)

func bwDoc(rates ...float64) *bw.Result {
	r := &bw.Result{Schema: bw.Schema, Server: "127.0.0.1", Port: 5201, Protocol: "tcp", Direction: bw.Download, Intervals: []bw.Interval{}}
	sum := 0.0
	for i, v := range rates {
		r.Intervals = append(r.Intervals, bw.Interval{StartS: float64(i), EndS: float64(i + 1), Bps: v})
		sum += v
	}
	m := sum / float64(len(rates))
	p5, p50 := rates[0], rates[len(rates)/2]
	r.Throughput = bw.Throughput{Mean: &m, P5: &p5, P50: &p50}
	return r
}

func TestReplayThroughputReadsAResultAndAJournal(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	b, _ := json.Marshal(bwDoc(100e6, 110e6, 120e6))
	os.WriteFile(one, b, 0o644)
	tp, err := ReplayThroughput(one)
	if err != nil || tp.Tests != 1 || *tp.P5 != 100e6 || *tp.Mean != 110e6 || tp.Oversell != nil {
		t.Fatalf("%+v %v", tp, err)
	}
	jpath := filepath.Join(dir, "watch.ndjson")
	w, _, err := journal.Open(jpath, journal.KindBW)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	// 10:00 at 200 Mbit/s, 21:00 at 50: oversell = 1 − 50/200 = 0.75.
	w.Append(journal.Entry{Time: day.Add(10 * time.Hour), BW: bwDoc(200e6, 200e6)})
	w.Append(journal.Entry{Time: day.Add(21 * time.Hour), BW: bwDoc(50e6, 50e6)})
	w.Close()
	tp, err = ReplayThroughput(jpath)
	if err != nil || tp.Tests != 2 || tp.Oversell == nil || *tp.Oversell != 0.75 || *tp.WorstHour != 21 || *tp.P5 != 50e6 {
		t.Fatalf("%+v %v", tp, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"linecheck.trace/v1"}`), 0o644)
	if _, err := ReplayThroughput(bad); err == nil || !strings.Contains(err.Error(), "linecheck.bw/v1") {
		t.Errorf("a trace given as recorded.bw: %v", err)
	}
}

func TestCheckThroughputOnP5AndOversell(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tp := ThroughputFromResult(bwDoc(180e6, 200e6, 210e6), "x")
	cs := CheckThroughput(f(150), f(0.2), tp)
	if len(cs) != 2 || !cs[0].Pass || cs[0].Measured != 180.0 || cs[1].Pass || cs[1].Note == "" {
		t.Errorf("%+v", cs)
	}
	cs = CheckThroughput(f(190), nil, tp)
	if cs[0].Pass {
		t.Errorf("p5 180 < 190 must fail: %+v", cs)
	}
	cs = CheckThroughput(f(1), nil, nil)
	if cs[0].Pass || !strings.Contains(cs[0].Note, "bandwidth_test") {
		t.Errorf("no test must fail with a note: %+v", cs)
	}
	tp.SetPort(1000, 150e6)
	if *tp.PortBps != 1e9 || *tp.Achieved != 0.1967 || *tp.P95OfCarried != round(150.0/180, 4) {
		t.Errorf("port %v achieved %v p95 %v", *tp.PortBps, *tp.Achieved, *tp.P95OfCarried)
	}
}

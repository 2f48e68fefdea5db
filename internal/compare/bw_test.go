package compare

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/internal/verdict"
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
	tp, err := verdict.ReplayThroughput(one)
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
	tp, err = verdict.ReplayThroughput(jpath)
	if err != nil || tp.Tests != 2 || tp.Oversell == nil || *tp.Oversell != 0.75 || *tp.WorstHour != 21 || *tp.P5 != 50e6 {
		t.Fatalf("%+v %v", tp, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"linecheck.trace/v1"}`), 0o644)
	if _, err := verdict.ReplayThroughput(bad); err == nil || !strings.Contains(err.Error(), "linecheck.bw/v1") {
		t.Errorf("a trace given as recorded.bw: %v", err)
	}
}

func TestCheckThroughputOnP5AndOversell(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tp := verdict.ThroughputFromResult(bwDoc(180e6, 200e6, 210e6), "x")
	cs := verdict.CheckThroughput(f(150), f(0.2), tp)
	if len(cs) != 2 || !cs[0].Pass || cs[0].Measured != 180.0 || cs[1].Pass || cs[1].Note == "" {
		t.Errorf("%+v", cs)
	}
	cs = verdict.CheckThroughput(f(190), nil, tp)
	if cs[0].Pass {
		t.Errorf("p5 180 < 190 must fail: %+v", cs)
	}
	cs = verdict.CheckThroughput(f(1), nil, nil)
	if cs[0].Pass || !strings.Contains(cs[0].Note, "bandwidth_test") {
		t.Errorf("no test must fail with a note: %+v", cs)
	}
	tp.SetPort(1000, 150e6)
	if *tp.PortBps != 1e9 || *tp.Achieved != 0.1967 || *tp.P95OfCarried != 0.8333 /* 150/180 to 4 places */ {
		t.Errorf("port %v achieved %v p95 %v", *tp.PortBps, *tp.Achieved, *tp.P95OfCarried)
	}
}

func TestCandidatesDeclareABandwidthTestAndThroughputSLA(t *testing.T) {
	dir := writeFiles(t, map[string]string{"c.yaml": `sla: {min_throughput_mbps: 150, max_oversell: 0.3}
candidates:
  - name: a
    targets: [{addr: 127.0.0.1}]
    bandwidth_test: {addr: 127.0.0.1}
  - name: b
    targets: [{addr: 127.0.0.2}]
    bandwidth_test: {addr: 127.0.0.2, port: 5301}
`})
	f, err := candidates.LoadWith(filepath.Join(dir, "c.yaml"), candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if bt := f.Candidates[0].BandwidthTest; bt == nil || bt.Addr != "127.0.0.1" || bt.Port != 5201 {
		t.Errorf("a: %+v", bt)
	}
	if bt := f.Candidates[1].BandwidthTest; bt == nil || bt.Port != 5301 {
		t.Errorf("b: %+v", bt)
	}
	if *f.SLA.MinThroughputMbps != 150 || *f.SLA.MaxOversell != 0.3 || *SLASpec(f.SLA).MinThroughputMbps != 150 {
		t.Errorf("sla %+v", f.SLA)
	}
	for yml, want := range map[string]string{
		"    bandwidth_test: {addr: 127.0.0.1, port: 70000}\n": "bandwidth_test.port",
		"    bandwidth_test: {adr: 127.0.0.1}\n":               "adr",
		"    bandwidth_test: {port: 5201}\n":                   "bandwidth_test.addr: required",
	} {
		dir := writeFiles(t, map[string]string{"c.yaml": "candidates:\n  - name: a\n    targets: [{addr: 127.0.0.1}]\n" + yml})
		if _, err := candidates.LoadWith(filepath.Join(dir, "c.yaml"), candidates.LoadOptions{TargetsOnly: true}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yml, err, want)
		}
	}
	dir = writeFiles(t, map[string]string{"c.yaml": "sla: {max_oversell: 1.5}\ncandidates:\n  - name: a\n    targets: [{addr: 127.0.0.1}]\n"})
	if _, err := candidates.LoadWith(filepath.Join(dir, "c.yaml"), candidates.LoadOptions{TargetsOnly: true}); err == nil || !strings.Contains(err.Error(), "sla.max_oversell") {
		t.Errorf("max_oversell 1.5: %v", err)
	}
}

// Live, a candidate's bandwidth_test is run against the iperf3-protocol
// server it names (ours, on loopback, pacing 40 Mbit/s); the SLA checks
// the p5 and says oversell needs a journal.
func TestLiveThroughputTestAndItsChecks(t *testing.T) {
	port := bwtest.Server(t)
	c := &candidates.Candidate{Name: "lo", BandwidthTest: &candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}}
	ms := []*verdict.Measurement{{}}
	measureThroughputs(context.Background(), []*candidates.Candidate{c}, ms, Options{BWTime: 2 * time.Second})
	tp := ms[0].Throughput
	if tp == nil || tp.Error != "" || tp.P5 == nil || tp.Direction != bw.Download {
		t.Fatalf("%+v", tp)
	}
	// No pacing asked: loopback carries gigabits; p5 must pass 100 Mbit/s.
	f := func(v float64) *float64 { return &v }
	file := &candidates.File{SLA: candidates.SLA{MinThroughputMbps: f(100), MaxOversell: f(0.2)}}
	e := verdict.Evaluate(file, c, ms[0], nil)
	var names []string
	for _, ch := range e.SLA.Checks {
		names = append(names, ch.Name)
	}
	if len(e.SLA.Checks) != 2 || !e.SLA.Checks[0].Pass || e.SLA.Checks[1].Pass || e.SLA.Pass || e.Throughput != tp {
		t.Errorf("checks %v %+v", names, e.SLA.Checks)
	}
	// Nothing listens: the test fails with a warning and the check with no data.
	c.BandwidthTest.Port = 1
	ms = []*verdict.Measurement{{}}
	measureThroughputs(context.Background(), []*candidates.Candidate{c}, ms, Options{BWTime: time.Second})
	e = verdict.Evaluate(file, c, ms[0], nil)
	if e.SLA.Checks[0].Pass || !strings.HasPrefix(e.SLA.Checks[0].Note, verdict.NoData) || len(ms[0].Warnings) != 1 {
		t.Errorf("refused: %+v, warnings %v", e.SLA.Checks[0], ms[0].Warnings)
	}
}

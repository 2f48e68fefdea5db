package exporter

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe/bw"
)

// gaugeOf is the value of the one series of name with labels want; false
// when absent.
func gaugeOf(t *testing.T, e *Exporter, name string, want map[string]string) (float64, bool) {
	t.Helper()
	m := metric(t, e, name, want)
	switch {
	case m == nil:
		return 0, false
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	}
	return m.GetGauge().GetValue(), true
}

// traceOf is a trace whose TTL i was answered by addrs[i] ("" silent),
// each answer with RTT 10·TTL ms.
func traceOf(addrs ...string) *route.Trace {
	tr := &route.Trace{Reached: true}
	for i, a := range addrs {
		h := route.Hop{TTL: i + 1, Sent: 1, Loss: 1}
		if a != "" {
			h.Loss = 0
			ms := 10 * float64(i+1)
			h.Responders = []route.Responder{{Addr: a, Recv: 1, RTT: statsOf(ms)}}
		}
		tr.Hops = append(tr.Hops, h)
	}
	return tr
}

func fnvOf(s string) float64 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return float64(h.Sum32())
}

// The path identity is the hash of the hop addresses; a change is counted
// when a TTL is answered by another address in both traces or the hop
// count changes, never for a TTL that merely stayed silent once.
func TestPathChangesBetweenTraces(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo}, time.Now())
	l := map[string]string{"candidate": "local", "target": "127.0.0.1"}
	steps := []struct {
		addrs   []string
		changes float64
		id      string // the addresses hashed, by hand
	}{
		{[]string{"10.0.0.1", "10.0.1.1", "127.0.0.1"}, 0, "10.0.0.1,10.0.1.1,127.0.0.1"},
		{[]string{"10.0.0.1", "", "127.0.0.1"}, 0, "10.0.0.1,10.0.1.1,127.0.0.1"},         // silent TTL 2: no change, same path
		{[]string{"10.0.0.1", "10.0.2.1", "127.0.0.1"}, 1, "10.0.0.1,10.0.2.1,127.0.0.1"}, // TTL 2 by another router
		{[]string{"10.0.0.1", "10.0.2.1", "10.0.3.1", "127.0.0.1"}, 2, "10.0.0.1,10.0.2.1,10.0.3.1,127.0.0.1"},
		{[]string{"10.0.0.1", "10.0.2.1", "10.0.3.1", "127.0.0.1"}, 2, "10.0.0.1,10.0.2.1,10.0.3.1,127.0.0.1"},
	}
	for i, s := range steps {
		e.ObserveTrace(lo, traceOf(s.addrs...), nil)
		if v, _ := gaugeOf(t, e, "linecheck_path_changes_total", l); v != s.changes {
			t.Errorf("trace %d: %v path changes, want %v", i+1, v, s.changes)
		}
		if v, _ := gaugeOf(t, e, "linecheck_path_id", l); v != fnvOf(s.id) {
			t.Errorf("trace %d: path id %v, want FNV-1a of %q = %v", i+1, v, s.id, fnvOf(s.id))
		}
	}
	// Per-hop RTT: 10·TTL ms; a silent TTL has none.
	e.ObserveTrace(lo, traceOf("10.0.0.1", "", "10.0.3.1", "127.0.0.1"), nil)
	for ttl, want := range map[string]float64{"1": 0.01, "3": 0.03, "4": 0.04} {
		if v, ok := gaugeOf(t, e, "linecheck_hop_rtt_seconds", map[string]string{"candidate": "local", "ttl": ttl}); !ok || math.Abs(v-want) > 1e-12 {
			t.Errorf("hop %s RTT %v (present %v), want %v", ttl, v, ok, want)
		}
	}
	if v, ok := gaugeOf(t, e, "linecheck_hop_rtt_seconds", map[string]string{"candidate": "local", "ttl": "2"}); ok {
		t.Errorf("silent hop 2 has RTT %v", v)
	}
	// A shorter route drops the deeper hops' RTT.
	e.ObserveTrace(lo, traceOf("10.0.0.1", "127.0.0.1"), nil)
	if _, ok := gaugeOf(t, e, "linecheck_hop_rtt_seconds", map[string]string{"candidate": "local", "ttl": "3"}); ok {
		t.Error("hop 3's RTT outlived a 2-hop route")
	}
}

// --window keeps each target's probes of the last span only: loss, RTT,
// target_up and the SLA forget a bad minute once it is older than that.
func TestWindowForgetsOldCycles(t *testing.T) {
	loss := 0.01
	now := time.Unix(1700000000, 0)
	e := New(nil)
	e.SetWindow(time.Minute, 1000, func() time.Time { return now })
	e.SetTargets([]Target{lo}, now)
	e.SetSLA(candidates.SLA{Loss: &loss}, nil)
	l := map[string]string{"candidate": "local", "target": "127.0.0.1"}
	e.ObservePing(lo, PingOutcome{Sent: 10, Recv: 5, RTTms: []float64{1, 2, 3, 4, 5}})
	now = now.Add(30 * time.Second)
	e.ObservePing(lo, PingOutcome{Sent: 10, Recv: 10, RTTms: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 50}})
	// 5 lost of 20; p95 nearest rank 15 of 15 answers → 50 ms.
	if v, _ := gaugeOf(t, e, "linecheck_window_loss_ratio", l); v != 0.25 {
		t.Errorf("loss %v, want 5/20", v)
	}
	if v, _ := gaugeOf(t, e, "linecheck_window_rtt_seconds", map[string]string{"candidate": "local", "stat": "p95"}); v != 0.05 {
		t.Errorf("p95 %v, want 0.05", v)
	}
	if v, _ := slaGauge(t, e, "local", verdict.CheckLoss); v != 0 {
		t.Errorf("loss check %v with 25 %% lost, want 0", v)
	}
	// 61 s after the first cycle it is out: 0 of 10 lost, p95 of 10
	// answers is rank 10 → 50 ms, p50 rank 5 → 1 ms.
	now = now.Add(31 * time.Second)
	if v, _ := gaugeOf(t, e, "linecheck_window_loss_ratio", l); v != 0 {
		t.Errorf("loss %v after the lossy cycle left the window, want 0", v)
	}
	if v, _ := gaugeOf(t, e, "linecheck_window_rtt_seconds", map[string]string{"candidate": "local", "stat": "p50"}); v != 0.001 {
		t.Errorf("p50 %v, want 0.001", v)
	}
	if v, _ := slaGauge(t, e, "local", verdict.CheckLoss); v != 1 {
		t.Errorf("loss check %v once the loss left the window, want 1", v)
	}
	// Nothing in the window: the target is down, the figures absent, the
	// checks have no data.
	now = now.Add(time.Minute)
	if v, _ := gaugeOf(t, e, "linecheck_target_up", l); v != 0 {
		t.Errorf("target_up %v with an empty window, want 0", v)
	}
	if _, ok := gaugeOf(t, e, "linecheck_window_loss_ratio", l); ok {
		t.Error("a loss with an empty window")
	}
	if !noData(t, e, "local", verdict.CheckLoss) {
		t.Error("the loss check of an empty window is not no data")
	}
}

// min_throughput_mbps without a test is no data, not a fail; a download
// test decides it on its p5, as compare does.
func TestThroughputCheckWaitsForATest(t *testing.T) {
	floor := 100.0
	e := New(nil)
	e.SetTargets([]Target{lo}, time.Now())
	e.SetSLA(candidates.SLA{MinThroughputMbps: &floor}, nil)
	if _, ok := slaGauge(t, e, "local", verdict.CheckMinThroughput); ok {
		t.Error("min_throughput_mbps reads as measured before any test")
	}
	if !noData(t, e, "local", verdict.CheckMinThroughput) {
		t.Error("min_throughput_mbps without a test: no linecheck_sla_check_nodata")
	}
	if v, ok := gaugeOf(t, e, "linecheck_throughput_floor_bits_per_second", map[string]string{"candidate": "local"}); !ok || v != 100e6 {
		t.Errorf("floor %v (present %v), want 1e8", v, ok)
	}
	p5, mean := 80e6, 150e6
	e.ObserveThroughput("local", &bw.Result{Throughput: bw.Throughput{P5: &p5, Mean: &mean}}, nil)
	if v, ok := slaGauge(t, e, "local", verdict.CheckMinThroughput); !ok || v != 0 {
		t.Errorf("p5 80 Mbit/s against 100: %v (present %v), want 0", v, ok)
	}
	if v, _ := gaugeOf(t, e, "linecheck_candidate_throughput_bits_per_second", map[string]string{"stat": "p5"}); v != p5 {
		t.Errorf("p5 gauge %v, want %v", v, p5)
	}
	if v, ok := gaugeOf(t, e, "linecheck_sla_pass", map[string]string{"candidate": "local"}); !ok || v != 0 {
		t.Errorf("overall %v (present %v), want 0", v, ok)
	}
}

func statsOf(ms float64) stats.RTTStats {
	return stats.RTTStats{Min: ms, Avg: ms, P50: ms, P95: ms, P99: ms, Max: ms}
}

// A multipath discovery (the bundled hand-made recording: 6 flows split at
// TTL 5, 4 over CN2 and 2 over ChinaNet's 202.97 backbone) exports its
// paths and each path's class; the same paths again are no change, a path
// gone is one; sla.line_classes holds only if it holds on every path.
func TestMultipathPathsAndTheirClasses(t *testing.T) {
	read := func() *route.Trace {
		tr, err := route.ReadTraceFile("../../samples/rec/hk-multipath-forward.json")
		if err != nil {
			t.Fatal(err)
		}
		route.Annotate(tr, nil) // as serve's prober annotates its traces
		return tr
	}
	tr := read()
	e := New(nil)
	mp := Target{Candidate: "hk", Addr: "127.0.0.1", Protocol: "icmp", Multipath: true}
	e.SetTargets([]Target{mp}, time.Now())
	e.SetSLA(candidates.SLA{LineClasses: []string{route.LineCN2GIA}}, nil)
	e.ObserveTrace(mp, tr, nil)
	l := map[string]string{"candidate": "hk"}
	if v, ok := gaugeOf(t, e, "linecheck_paths", l); !ok || v != 2 {
		t.Errorf("linecheck_paths %v (present %v), want 2", v, ok)
	}
	for path, class := range map[string]string{"1": "cn2-gia", "2": "chinanet-163"} {
		if _, ok := gaugeOf(t, e, "linecheck_path_line_class_info", map[string]string{"path": path, "line_class": class}); !ok {
			t.Errorf("path %s: no %s series", path, class)
		}
	}
	if v, ok := slaGauge(t, e, "hk", verdict.CheckLineClass); !ok || v != 0 {
		t.Errorf("line_class with path 2 on chinanet-163: %v (present %v), want 0", v, ok)
	}
	e.ObserveTrace(mp, read(), nil)
	if v, _ := gaugeOf(t, e, "linecheck_path_changes_total", l); v != 0 {
		t.Errorf("the same paths again: %v changes, want 0", v)
	}
	one := read()
	one.Paths = one.Paths[:1]
	e.ObserveTrace(mp, one, nil)
	if v, _ := gaugeOf(t, e, "linecheck_path_changes_total", l); v != 1 {
		t.Errorf("a path gone: %v changes, want 1", v)
	}
	if v, _ := gaugeOf(t, e, "linecheck_paths", l); v != 1 {
		t.Errorf("linecheck_paths %v after a path went, want 1", v)
	}
	if n := count(t, e, "linecheck_path_line_class_info"); n != 1 {
		t.Errorf("%d path class series after a path went, want 1", n)
	}
}

// The status page and the compare report read the snapshot while the loop
// records: run under -race, nothing is read while it is written.
func TestSnapshotReadWhileRecording(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, far}, time.Unix(0, 0))
	p95 := 10.0
	e.SetSLA(candidates.SLA{RTTP95ms: &p95}, nil)
	e.SetReportRenderer(func(w io.Writer, r *compare.Result, _ string) (string, error) {
		return "text/plain", json.NewEncoder(w).Encode(r)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			e.ObservePing(lo, PingOutcome{Sent: 3, Recv: 3, RTTms: []float64{float64(i % 7), 0.2, 3}})
			e.ObserveTrace(lo, traceOf("10.0.0.1", "127.0.0.1"), nil)
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		for _, path := range []string{"/", "/compare"} {
			rec := httptest.NewRecorder()
			e.Mux().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
	}
}

// Issue 35: a candidate that has a bandwidth_test was told to "give the
// candidate bandwidth_test" while serve's --bw-every was what was missing.
// The note of a min_throughput_mbps check without a test names the flag.
func TestThroughputCheckNoteNamesWhatIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(`sla:
  min_throughput_mbps: 100
candidates:
  - name: withbw
    targets: [{addr: 127.0.0.1}]
    bandwidth_test: {addr: 127.0.0.1, port: 5201}
  - name: nobw
    targets: [{addr: 127.0.0.2}]
`), 0o644)
	conf, err := LoadConfig(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	note := func(e *Exporter, cand string) string {
		for _, ev := range e.Snapshot() {
			for _, c := range ev.SLA.Checks {
				if ev.Name == cand && c.Name == verdict.CheckMinThroughput {
					return c.Note
				}
			}
		}
		t.Fatalf("%s has no %s check", cand, verdict.CheckMinThroughput)
		return ""
	}
	for _, tc := range []struct {
		every      time.Duration
		cand       string
		want, miss string
	}{
		{0, "withbw", "only with --bw-every D, which is not given", "give the candidate bandwidth_test"},
		{time.Hour, "withbw", "no throughput figures yet: serve tests the candidate's bandwidth_test every 1h0m0s", "give the candidate"},
		{0, "nobw", "give the candidate bandwidth_test: {addr, port} and serve --bw-every D", "which is not given"},
		{time.Hour, "nobw", "give the candidate bandwidth_test", "--bw-every"},
	} {
		e := New(nil)
		e.SetConfig(conf, time.Now())
		e.SetThroughputTests(tc.every)
		got := note(e, tc.cand)
		if !strings.HasPrefix(got, verdict.NoData+": ") || !strings.Contains(got, tc.want) || strings.Contains(got, tc.miss) {
			t.Errorf("--bw-every %v, %s: %q, want %q and not %q", tc.every, tc.cand, got, tc.want, tc.miss)
		}
	}
}

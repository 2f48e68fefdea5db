package exporter

import (
	"io"
	"math"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

func slaGauge(t *testing.T, e *Exporter, cand, check string) (float64, bool) {
	t.Helper()
	m := metric(t, e, "linecheck_sla_check_pass", map[string]string{"candidate": cand, "check": check})
	if m == nil {
		return 0, false
	}
	return m.GetGauge().GetValue(), true
}

// serve judges the SLA with compare's rule over each target's latest
// probes: absent before any probe ended, the worst target decides, a check
// without data fails, the line class comes from the last trace.
func TestSLAGaugesFollowComparesChecks(t *testing.T) {
	p95, loss := 20.0, 0.05
	sla := candidates.SLA{RTTP95ms: &p95, Loss: &loss, LineClasses: []string{route.LineCN2GIA}}
	e := New(nil)
	a1, a2 := tgt("a", "127.0.0.1"), tgt("a", "127.0.0.2")
	b := tgt("b", "127.0.0.3")
	e.SetTargets([]Target{a1, a2, b}, time.Now())
	e.SetSLA(sla, nil)
	if _, ok := slaGauge(t, e, "a", verdict.CheckRTTP95); ok {
		t.Fatal("an SLA gauge before any probe ended")
	}
	// a: target 1 answers in 5..14 ms, target 2 in 10..19 ms with 1 of 25
	// lost: the worst p95 is target 2's (nearest rank 23 of 24 → 19 ms),
	// the worst loss 0.04: both pass. No trace yet: the class fails.
	var r1, r2 []float64
	for i := range 10 {
		r1 = append(r1, 5+float64(i))
	}
	for i := range 24 {
		r2 = append(r2, 10+float64(i%10))
	}
	e.ObservePing(a1, PingOutcome{Sent: 10, Recv: 10, RTTms: r1})
	e.ObservePing(a2, PingOutcome{Sent: 25, Recv: 24, RTTms: r2})
	for check, want := range map[string]float64{verdict.CheckRTTP95: 1, verdict.CheckLoss: 1} {
		if v, ok := slaGauge(t, e, "a", check); !ok || v != want {
			t.Errorf("a %s: %v (present %v), want %v", check, v, ok, want)
		}
	}
	// No trace yet: the class has no data, neither pass nor fail, and the
	// overall verdict waits for it.
	if v, ok := slaGauge(t, e, "a", verdict.CheckLineClass); ok {
		t.Errorf("a line_class before any trace: %v, want absent", v)
	}
	if !noData(t, e, "a", verdict.CheckLineClass) {
		t.Error("a line_class before any trace: no linecheck_sla_check_nodata")
	}
	if m := metric(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a"}); m != nil {
		t.Errorf("linecheck_sla_pass %v with the line class unmeasured and the rest passing, want absent", m.GetGauge().GetValue())
	}
	e.ObserveTrace(a1, cn2Trace(t), nil)
	if v, _ := slaGauge(t, e, "a", verdict.CheckLineClass); v != 1 {
		t.Errorf("a line_class after a cn2-gia trace: %v, want 1", v)
	}
	if noData(t, e, "a", verdict.CheckLineClass) {
		t.Error("a line_class still no data after a trace")
	}
	if m := metric(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a"}); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("linecheck_sla_pass %v with every check passing, want 1", m)
	}
	// 4 more of 25 lost on target 2: 5 of 50 = 0.1 > 0.05 fails.
	e.ObservePing(a2, PingOutcome{Sent: 25, Recv: 21, RTTms: r2[:21]})
	if v, _ := slaGauge(t, e, "a", verdict.CheckLoss); v != 0 {
		t.Errorf("a loss 5/50: %v, want 0", v)
	}
	if m := metric(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Errorf("linecheck_sla_pass %v with loss failing, want 0", m)
	}
	// b: every probe lost: the RTT check has no data (compare fails it; serve
	// says no data, not a measured fail), loss is measured and fails.
	e.ObservePing(b, PingOutcome{Sent: 10})
	if v, ok := slaGauge(t, e, "b", verdict.CheckRTTP95); ok {
		t.Errorf("b rtt_p95 without replies: %v, want absent", v)
	}
	if !noData(t, e, "b", verdict.CheckRTTP95) {
		t.Error("b rtt_p95 without replies: no linecheck_sla_check_nodata")
	}
	if v, ok := slaGauge(t, e, "b", verdict.CheckLoss); !ok || v != 0 {
		t.Errorf("b loss 10/10: %v (present %v), want 0", v, ok)
	}
	// The status page lists the verdicts.
	rec := httptest.NewRecorder()
	e.Mux().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{"<h2>SLA", verdict.CheckRTTP95, verdict.NoData, "FAIL", "pass"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/ lacks %q", want)
		}
	}
	// A reload without b: its gauges go.
	e.SetTargets([]Target{a1, a2}, time.Now())
	if _, ok := slaGauge(t, e, "b", verdict.CheckRTTP95); ok {
		t.Error("b's SLA gauge outlived its removal")
	}
	// A file without an sla block exports none.
	e.SetSLA(candidates.SLA{}, nil)
	if n := count(t, e, "linecheck_sla_check_pass"); n != 0 {
		t.Errorf("%d SLA gauges without an sla block", n)
	}
}

func noData(t *testing.T, e *Exporter, cand, check string) bool {
	t.Helper()
	m := metric(t, e, "linecheck_sla_check_nodata", map[string]string{"candidate": cand, "check": check})
	return m != nil && m.GetGauge().GetValue() == 1
}

// cn2Trace is a return route that stays on CN2 (59.43.0.0/16, AS4809) into
// the provincial network, which the bundled carrier table classifies cn2-gia.
func cn2Trace(t *testing.T) *route.Trace {
	t.Helper()
	tr := &route.Trace{Reached: true, Target: "101.85.1.1"}
	for i, a := range []string{"10.0.0.1", "59.43.246.1", "59.43.187.9", "59.43.130.22", "59.43.80.1", "61.152.24.1", "101.85.1.1"} {
		tr.Hops = append(tr.Hops, route.Hop{TTL: i + 1, Sent: 1, Responders: []route.Responder{{Addr: a, Recv: 1}}})
	}
	route.Annotate(tr, nil)
	if tr.LineClass != route.LineCN2GIA {
		t.Fatalf("the test route classifies %q, want %s", tr.LineClass, route.LineCN2GIA)
	}
	return tr
}

// The window keeps the latest SLAWindow probes: old cycles drop out.
func TestSLAWindowForgetsOldProbes(t *testing.T) {
	loss := 0.0
	e := New(nil)
	a := tgt("a", "127.0.0.1")
	e.SetTargets([]Target{a}, time.Now())
	e.SetSLA(candidates.SLA{Loss: &loss}, nil)
	e.ObservePing(a, PingOutcome{Sent: 10, Recv: 0})
	for range SLAWindow / 10 {
		e.ObservePing(a, PingOutcome{Sent: 10, Recv: 10, RTTms: make([]float64, 10)})
	}
	if v, _ := slaGauge(t, e, "a", verdict.CheckLoss); v != 1 {
		t.Errorf("loss after the lossy cycle left the window: %v, want 1 (pass)", v)
	}
}

// linecheck_jitter_seconds is the window's mean |D| (the SLA's jitter),
// not RFC 3550's running value: absent before two answers, and gone with
// its target.
func TestJitterGaugeIsTheWindowMeanAbsD(t *testing.T) {
	jit := 5.0
	e := New(nil)
	a := tgt("a", "127.0.0.1")
	e.SetTargets([]Target{a}, time.Now())
	e.SetSLA(candidates.SLA{JitterMs: &jit}, nil)
	gauge := func() (float64, bool) {
		m := metric(t, e, "linecheck_jitter_seconds", map[string]string{"candidate": "a"})
		if m == nil {
			return 0, false
		}
		return m.GetGauge().GetValue(), true
	}
	e.ObservePing(a, PingOutcome{Sent: 2, Recv: 1, RTTms: []float64{10}})
	if v, ok := gauge(); ok {
		t.Fatalf("jitter %v after one answer, want absent", v)
	}
	// By hand: 20 answers alternating 10/22 ms (|D| = 12 × 19), then 16
	// answers at 30 ms (|D| = 8 once, then 0): window mean |D| over the
	// 36 answers = (228 + 8) / 35 = 6.742857 ms; the running RFC 3550
	// value after the calm tail is 3.21 ms and would pass.
	var rtts []float64
	for i := range 19 {
		rtts = append(rtts, 10+12*float64((i+1)%2))
	}
	for range 16 {
		rtts = append(rtts, 30)
	}
	e.ObservePing(a, PingOutcome{Sent: 35, Recv: 35, RTTms: rtts})
	v, ok := gauge()
	want := (12*19 + 8) / 35.0 / 1000
	if !ok || math.Abs(v-want) > 1e-12 {
		t.Errorf("jitter %v s (present %v), want %v", v, ok, want)
	}
	if p, _ := slaGauge(t, e, "a", verdict.CheckJitter); p != 0 {
		t.Errorf("jitter check passes on a calm tail of a jittery window")
	}
	e.SetTargets(nil, time.Now())
	if _, ok := gauge(); ok {
		t.Error("jitter gauge outlived its target")
	}
}

// Issue 35: the status page said "no data" where /compare said FAIL for
// the same check. Each check's result on / (and each candidate's verdict)
// now begins with what compare's report says of it, pass or FAIL.
func TestStatusPageSaysWhatCompareSays(t *testing.T) {
	p95, loss := 20.0, 1.0 // b's loss of 1 passes: only its RTT, without data, fails
	e := New(nil)
	a, b := tgt("a", "127.0.0.1"), tgt("b", "127.0.0.2")
	e.SetTargets([]Target{a, b}, time.Now())
	e.SetSLA(candidates.SLA{RTTP95ms: &p95, Loss: &loss}, nil)
	e.ObservePing(a, PingOutcome{Sent: 4, Recv: 4, RTTms: []float64{5, 6, 7, 8}})
	e.ObservePing(b, PingOutcome{Sent: 10}) // every probe lost: rtt_p95 has no data
	rec := httptest.NewRecorder()
	e.Mux().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	page := rec.Body.String()
	// The rows of the SLA table: candidate, check, window, required,
	// measured, result.
	row := regexp.MustCompile(`<tr><td>([a-z]+)</td><td>([a-z_0-9]+)</td><td>all</td><td>[^<]*</td><td>[^<]*</td>\s*<td>([^<]*)</td>`)
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(page, -1) {
		rows[m[1]+" "+m[2]] = m[3]
	}
	res := e.Report(time.Now())
	n := 0
	for _, ev := range res.Candidates {
		for _, c := range ev.SLA.Checks {
			n++
			want := "FAIL"
			if c.Pass {
				want = "pass"
			}
			got, ok := rows[ev.Name+" "+c.Name]
			if !ok || !strings.HasPrefix(got, want) {
				t.Errorf("%s %s: / says %q (present %v), compare says %s", ev.Name, c.Name, got, ok, want)
			}
		}
	}
	if n != 4 {
		t.Fatalf("%d checks in compare's report, want 4 (2 candidates × rtt_p95, loss)", n)
	}
	if got := rows["b "+verdict.CheckRTTP95]; got != "FAIL (no data)" {
		t.Errorf("b rtt_p95 without replies: %q, want FAIL (no data)", got)
	}
	// The candidates table's verdict column: b fails in compare's ranking.
	if !regexp.MustCompile(`<td>b</td><td>10</td>.*?<td>FAIL \(no data\)</td></tr>`).MatchString(strings.ReplaceAll(page, "\n", "")) {
		t.Errorf("b's verdict on / is not FAIL (no data):\n%s", page)
	}
}

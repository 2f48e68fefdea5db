package exporter

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// linecheck_target_up is "answered at least once in the window": probed
// without a single answer (every TCP connection refused, every echo lost)
// is down, one answer among the window's probes is up, and a window whose
// answers have all been pushed out by losses is down again.
func TestTargetUpIsAnsweredInTheWindow(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{lo, loT, far}, time.Unix(1700000000, 0))
	up := func(tg Target) float64 {
		t.Helper()
		m := metric(t, e, "linecheck_target_up", map[string]string{"candidate": tg.Candidate, "protocol": string(tg.Protocol)})
		if m == nil {
			t.Fatalf("no linecheck_target_up for %v", tg)
		}
		return m.GetGauge().GetValue()
	}
	for _, tg := range []Target{lo, loT, far} {
		if v := up(tg); v != 0 {
			t.Errorf("%v before any probe: up %v, want 0 (nothing answered yet)", tg, v)
		}
	}
	e.ObservePing(lo, PingOutcome{Sent: 10, Recv: 1, RTTms: []float64{0.05}})
	e.ObservePing(loT, PingOutcome{Sent: 10, Recv: 0, Refused: 10}) // refused: lost, no error
	if v := up(lo); v != 1 {
		t.Errorf("1 answer of 10: up %v, want 1", v)
	}
	if v := up(loT); v != 0 {
		t.Errorf("10 refused connections: up %v, want 0", v)
	}
	// The status page says what the metric says (it said "up" for every
	// target not backing off, refused connections or not).
	rec := httptest.NewRecorder()
	e.Mux().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	page := rec.Body.String()
	for _, want := range []string{
		"<td>" + lo.Label() + "</td><td>-</td>\n<td>up</td>",
		"<td>" + loT.Label() + "</td><td>-</td>\n<td>down: no answer to the 10 probe(s) of its window</td>\n<td>connection refused 10 time(s) in the last cycle: the port is closed</td>",
		"<td>" + far.Label() + "</td><td>-</td>\n<td>waiting for its first cycle</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("status page: no %q in\n%s", want, page)
		}
	}
	// 299 more lost probes keep the one answer in the 300-probe window; the
	// next loss pushes it out.
	e.ObservePing(lo, PingOutcome{Sent: SLAWindow - 10, Recv: 0})
	if v := up(lo); v != 1 {
		t.Errorf("answer still in the window: up %v, want 1", v)
	}
	e.ObservePing(lo, PingOutcome{Sent: 1, Recv: 0})
	if v := up(lo); v != 0 {
		t.Errorf("the window's only answer pushed out: up %v, want 0", v)
	}
}

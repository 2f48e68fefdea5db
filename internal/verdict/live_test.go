package verdict

import (
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/stats"
)

// EvaluateLive: the recording stands until a live probe was sent; then
// the windows' figures by the aggregation rule — the worst p95 and loss
// over the targets, the best minimum over the floor: targets of p95 30 ms
// loss 0.1 min 15 and p95 40 loss 0 min 12, floor 10 ms, give p95 40,
// loss 0.1, stretch 12/10 = 1.2, and with rtt_p95_ms 35 the RTT check
// fails on 40.
func TestEvaluateLiveRendersTheWindows(t *testing.T) {
	s := candidates.SLA{RTTP95ms: ptr(35), MaxStretch: ptr(2)}
	rec := RouteQuality{LineClass: "cn2-gia", Direction: "both", Sent: 50, Recv: 50, RTT: RTTSummary{Min: 20, P95: 25}, FloorMs: 10, Stretch: 2}
	e := EvaluateLive(s, LiveRoute{Recorded: rec, FloorMs: 10, Targets: []TargetResult{{}}})
	if e.Route.Sent != 50 || e.Route.RTT.P95 != 25 || !e.SLA.Pass || e.Route.LineClass != "unknown" || e.Route.Direction != "none" {
		t.Errorf("before a live probe: %+v, verdict %v; want the recording's figures, class unknown, direction none", e.Route, e.SLA.Pass)
	}
	targets := []TargetResult{
		{Sent: 10, Recv: 9, Loss: 0.1, RTT: stats.RTTStats{Min: 15, P50: 20, P95: 30, Max: 31}},
		{Sent: 10, Recv: 10, RTT: stats.RTTStats{Min: 12, P50: 22, P95: 40, Max: 41}},
	}
	e = EvaluateLive(s, LiveRoute{Recorded: rec, FloorMs: 10, Targets: targets, LineClass: "cn2-gia", Direction: "forward"})
	q := e.Route
	if q.Sent != 20 || q.Recv != 19 || q.RTT.P95 != 40 || q.Loss != 0.1 || q.RTT.Min != 12 || q.Stretch != 1.2 || q.LineClass != "cn2-gia" || q.Direction != "forward" {
		t.Errorf("live: %+v", q)
	}
	ck, ok := checkByName(e.SLA, CheckRTTP95)
	if !ok || ck.Pass || ck.Measured != 40.0 || e.SLA.Pass {
		t.Errorf("rtt check %+v, verdict %v: want a fail on 40", ck, e.SLA.Pass)
	}
}

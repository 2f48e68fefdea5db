package compare

import (
	"encoding/json"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
)

// TestNoDataIsNullInJSON: a target that never answered has no RTT, jitter
// or stretch — null in the document, not 0 — while its loss (1) and counts
// are figures; a measured candidate keeps its numbers.
func TestNoDataIsNullInJSON(t *testing.T) {
	f := &candidates.File{Vantage: candidates.Place{City: "Shanghai"}, SLA: candidates.SLA{RTTP95ms: ptr(60.0), MaxStretch: ptr(2.5)}}
	dead := &candidates.Candidate{Name: "dead", Region: candidates.Place{City: "Hong Kong"}, Targets: []candidates.Target{{Addr: "127.0.0.9", Protocol: "icmp"}}}
	e := verdict.Evaluate(f, dead, &verdict.Measurement{Targets: []verdict.TargetResult{{Target: dead.Targets[0], Sent: 20, Loss: 1}}}, nil)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Route struct {
			RTT     map[string]any `json:"rtt_ms"`
			Jitter  map[string]any `json:"jitter_ms"`
			Loss    any            `json:"loss"`
			Stretch any            `json:"stretch"`
			FloorMs any            `json:"floor_ms"`
			Sent    any            `json:"sent"`
		} `json:"route"`
		Targets []struct {
			Addr string         `json:"addr"`
			RTT  map[string]any `json:"rtt_ms"`
			Loss any            `json:"loss"`
		} `json:"targets"`
		SLA struct {
			Checks []struct {
				Name     string `json:"name"`
				Measured any    `json:"measured"`
				Pass     bool   `json:"pass"`
			} `json:"checks"`
		} `json:"sla"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"min", "p50", "p95", "p99", "max"} {
		if v, ok := doc.Route.RTT[k]; !ok || v != nil {
			t.Errorf("route.rtt_ms.%s = %v (present %v), want null", k, v, ok)
		}
		if v, ok := doc.Targets[0].RTT[k]; !ok || v != nil {
			t.Errorf("targets[0].rtt_ms.%s = %v, want null", k, v)
		}
	}
	if v := doc.Route.Jitter["rfc3550"]; v != nil {
		t.Errorf("jitter %v, want null", v)
	}
	if doc.Route.Stretch != nil {
		t.Errorf("stretch %v, want null", doc.Route.Stretch)
	}
	// The floor is known (Shanghai–Hong Kong), the loss is measured: numbers.
	if fl, ok := doc.Route.FloorMs.(float64); !ok || fl < 12 || fl > 13 {
		t.Errorf("floor_ms %v, want about 12.3", doc.Route.FloorMs)
	}
	if doc.Route.Loss != 1.0 || doc.Targets[0].Loss != 1.0 || doc.Targets[0].Addr != "127.0.0.9" || doc.Route.Sent != 20.0 {
		t.Errorf("loss %v / %v, addr %q, sent %v", doc.Route.Loss, doc.Targets[0].Loss, doc.Targets[0].Addr, doc.Route.Sent)
	}
	for _, c := range doc.SLA.Checks {
		if c.Pass || c.Measured != nil {
			t.Errorf("check %s: pass %v measured %v, want a failure without a value", c.Name, c.Pass, c.Measured)
		}
	}

	// A measured candidate: numbers.
	live := &candidates.Candidate{Name: "ok", Region: candidates.Place{City: "Hong Kong"}, Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}
	ms := answered(live.Targets[0], []float64{30, 31, 32})
	e = verdict.Evaluate(f, live, &verdict.Measurement{Targets: []verdict.TargetResult{ms}}, nil)
	b, _ = json.Marshal(e)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc.Route.RTT["p95"].(float64); !ok || v != 32 {
		t.Errorf("measured p95 %v, want 32", doc.Route.RTT["p95"])
	}
	if _, ok := doc.Route.Stretch.(float64); !ok {
		t.Errorf("measured stretch %v, want a number", doc.Route.Stretch)
	}
}

// answered is a target that answered every probe with rtts.
func answered(t candidates.Target, rtts []float64) verdict.TargetResult {
	r := verdict.TargetResult{Target: t, Sent: len(rtts), Recv: len(rtts), Samples: rtts}
	r.RTT, r.Jitter = stats.Summarize(rtts)
	return r
}

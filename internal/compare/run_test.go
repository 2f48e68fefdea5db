package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

func rec(addr string, proto probe.Protocol, port, seq int, status probe.Status, rtt float64) probe.Record {
	r := probe.Record{Time: time.Unix(int64(seq), 0), Target: addr, Addr: addr, Protocol: proto, Port: port, Seq: seq, Status: status}
	if status != probe.StatusLost {
		r.RTTms = &rtt
	}
	return r
}

func TestTargetsFromRecordsCountsByHand(t *testing.T) {
	targets := []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "127.0.0.1", Protocol: "tcp", Port: 443}}
	recs := []probe.Record{
		// Out of order on purpose: statistics follow send order (time, then seq).
		rec("127.0.0.1", "icmp", 0, 3, probe.StatusOK, 14),
		rec("127.0.0.1", "icmp", 0, 1, probe.StatusOK, 10),
		rec("127.0.0.1", "icmp", 0, 2, probe.StatusLost, 0),
		rec("127.0.0.1", "icmp", 0, 4, probe.StatusLate, 1500),
		rec("127.0.0.1", "icmp", 0, 3, probe.StatusDup, 14.5),
		rec("127.0.0.1", "icmp", 0, 5, probe.StatusOK, 12),
		rec("127.0.0.1", "tcp", 443, 1, probe.StatusOK, 20),
		rec("127.0.0.1", "tcp", 80, 1, probe.StatusOK, 20),
		rec("10.0.0.9", "icmp", 0, 1, probe.StatusOK, 1),
	}
	got, extra := verdict.TargetsFromRecords(targets, recs)
	icmp := got[0]
	// Sent = ok + lost + late = 3 + 1 + 1 = 5; loss = 1 − 3/5 = 0.4.
	if icmp.Sent != 5 || icmp.Recv != 3 || icmp.Late != 1 || icmp.Duplicates != 1 || icmp.Loss != 0.4 {
		t.Errorf("icmp = sent %d recv %d late %d dup %d loss %v", icmp.Sent, icmp.Recv, icmp.Late, icmp.Duplicates, icmp.Loss)
	}
	// Send order 10, 14, 12: |Δ| = 4, 2; RFC 3550: J = 4/16 = 0.25, then 0.25 + (2 − 0.25)/16 = 0.359375.
	if icmp.Jitter.RFC3550 != 0.359375 || icmp.RTT.Min != 10 || icmp.RTT.Max != 14 || icmp.RTT.P50 != 12 {
		t.Errorf("icmp stats = %+v %+v", icmp.RTT, icmp.Jitter)
	}
	if got[1].Sent != 1 || got[1].Recv != 1 {
		t.Errorf("tcp/443 = %+v", got[1])
	}
	if len(extra) != 2 || !strings.Contains(strings.Join(extra, ";"), "tcp/80") || !strings.Contains(strings.Join(extra, ";"), "10.0.0.9") {
		t.Errorf("extra = %v, want tcp/80 and 10.0.0.9 reported", extra)
	}
}

func TestEvaluateTakesTheWorstTargetAndTheBestMin(t *testing.T) {
	f := &candidates.File{Vantage: candidates.Place{City: "Shanghai"}, SLA: testSLA}
	c := &candidates.Candidate{Name: "hk", Region: candidates.Place{City: "Hong Kong"}}
	m := &verdict.Measurement{Targets: []verdict.TargetResult{
		{Target: candidates.Target{Addr: "a", Protocol: "icmp"}, Sent: 100, Recv: 100, Samples: []float64{30},
			RTT: stats.RTTStats{Min: 24, P50: 30, P95: 35, Max: 40}, Jitter: stats.Jitter{RFC3550: 1}},
		{Target: candidates.Target{Addr: "a", Protocol: "tcp", Port: 443}, Sent: 100, Recv: 99, Loss: 0.01, Samples: []float64{31},
			RTT: stats.RTTStats{Min: 25, P50: 29, P95: 62, Max: 70}, Jitter: stats.Jitter{RFC3550: 0.5}},
		{Target: candidates.Target{Addr: "a", Protocol: "tcp", Port: 22}},
	}}
	e := verdict.Evaluate(f, c, m, nil)
	q := e.Route
	if q.RTT.P50 != 30 || q.RTT.P95 != 62 || q.RTT.Max != 70 || q.RTT.Min != 24 || q.Loss != 0.01 || q.Jitter.RFC3550 != 1 {
		t.Errorf("route = %+v", q)
	}
	if q.Sent != 200 || q.Recv != 199 {
		t.Errorf("sent %d recv %d", q.Sent, q.Recv)
	}
	// Shanghai–Hong Kong floor ≈ 12.27 ms: stretch 24 / 12.27 ≈ 1.96 from the best min.
	if q.FloorMs < 12.2 || q.FloorMs > 12.35 || q.Stretch < 1.94 || q.Stretch > 1.97 {
		t.Errorf("floor %.3f stretch %.3f", q.FloorMs, q.Stretch)
	}
	if len(q.Samples) != 1 || q.Samples[0] != 30 {
		t.Errorf("samples of the first target expected, got %v", q.Samples)
	}
	if q.Direction != "none" || q.LineClass != "unknown" {
		t.Errorf("no traces: class %q direction %q", q.LineClass, q.Direction)
	}
	var failed []string
	for _, ch := range e.SLA.Checks {
		if !ch.Pass {
			failed = append(failed, ch.Name)
		}
	}
	// p95 62 > 60 and loss 1 % > 0.5 % from the TCP target; no class without traces.
	if strings.Join(failed, ",") != "rtt_p95_ms,loss,line_class" {
		t.Errorf("failed checks %v", failed)
	}
	if len(e.Warnings) != 1 || !strings.Contains(e.Warnings[0], "a tcp/22: no probe results") {
		t.Errorf("warnings %q", e.Warnings)
	}
}

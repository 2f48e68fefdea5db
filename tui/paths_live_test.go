package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// diamondProber answers a multipath discovery with the two paths of a
// diamond (10.77.1.1, then 10.77.2.2 or 10.77.3.2, then the target), each
// hop probed cfg.PathCycles times; it sends nothing.
type diamondProber struct{}

func (diamondProber) Sweep(context.Context, []probe.SweepTarget, probe.PingConfig, func(probe.Record)) ([]probe.SweepResult, error) {
	return nil, nil
}

func (diamondProber) Trace(context.Context, string, probe.TraceConfig, func(*route.Trace)) error {
	panic("a multipath candidate must not be traced on one flow")
}

func (diamondProber) Multipath(_ context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error) {
	path := func(n int, mid string, flows []int, ms float64) route.Path {
		p := route.Path{Path: n, Flows: flows, Share: 0.5, Reached: true}
		for i, a := range []string{"10.77.1.1", mid, addr} {
			sent, recv := cfg.PathCycles, cfg.PathCycles
			rtt := stats.RTTStats{Min: ms, Avg: ms, P50: ms, P95: ms, P99: ms, Max: ms}
			p.Hops = append(p.Hops, route.PathHop{TTL: i + 1, Address: a, Sent: &sent, Recv: &recv, RTT: &rtt})
		}
		return p
	}
	return &route.Trace{Schema: route.TraceSchema, Addr: addr, Protocol: cfg.Proto, Reached: true, Source: "live",
		Hops: []route.Hop{
			{TTL: 1, Responders: []route.Responder{{Addr: "10.77.1.1"}}},
			{TTL: 2, Responders: []route.Responder{{Addr: "10.77.2.2"}, {Addr: "10.77.3.2"}}},
			{TTL: 3, Responders: []route.Responder{{Addr: addr}}}},
		Multipath: &route.Multipath{Confidence: cfg.Confidence, ProbesUsed: 40, Stopped: probe.StoppedRule, Cycles: cfg.PathCycles},
		Paths:     []route.Path{path(1, "10.77.2.2", []int{33434, 33436}, 20), path(2, "10.77.3.2", []int{33435, 33437}, 40)},
	}, nil
}

// The live loop of a multipath candidate (engine.MultipathTraceLoop, as
// MonitorLoops runs it) feeds the route screen every path: the header
// counts them, f shows path 1 (only its own middle hop, its flow's 20 ms),
// then path 2 (40 ms), then every path's hops again.
func TestLiveMultipathRouteScreenSwitchesPaths(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	loop := engine.MultipathTraceLoop("hk-cn2-gia", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"},
		engine.Options{Prober: diamondProber{}, TraceInterval: time.Millisecond})
	var got *TraceMsg
	_ = LoopFeeder(loop)(ctx, func(msg tea.Msg) {
		if tm, ok := msg.(TraceMsg); ok && got == nil {
			got = &tm
			cancel()
		}
	})
	if got == nil || len(got.Trace.Paths) != 2 {
		t.Fatalf("the loop fed %+v; want a trace with two paths", got)
	}
	m := fixtureModel(t, 140, 40)
	m = step(t, m, *got)
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	v := plain(m)
	// Every path's hops: TTL 2's first responder and "+1" for the other.
	if !strings.Contains(v, "f: paths (2)") || !strings.Contains(v, "10.77.2.2") || !strings.Contains(v, "+1") {
		t.Fatalf("every path's hops:\n%s", v)
	}
	m = press(t, m, "f")
	v = plain(m)
	if !strings.Contains(v, "path 1 of 2 (flows 33434, 33436, 50% of flows) · f: next path") ||
		!strings.Contains(v, "10.77.2.2") || strings.Contains(v, "10.77.3.2") || !strings.Contains(v, "20.0  20.0") {
		t.Fatalf("path 1:\n%s", v)
	}
	m = press(t, m, "f")
	v = plain(m)
	if !strings.Contains(v, "path 2 of 2 (flows 33435, 33437, 50% of flows) · f: next path") ||
		!strings.Contains(v, "10.77.3.2") || strings.Contains(v, "10.77.2.2") || !strings.Contains(v, "40.0  40.0") {
		t.Fatalf("path 2:\n%s", v)
	}
	if v = plain(press(t, m, "f")); !strings.Contains(v, "f: paths (2)") {
		t.Fatalf("round again:\n%s", v)
	}
}

package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// fakeMultipath is a fakeProber that also runs multipath discoveries: each
// finds the two paths of a diamond (10.77.1.1, then 10.77.2.2 or
// 10.77.3.2, then the target) in 200 probes and probes each path's hops
// cfg.PathCycles times.
type fakeMultipath struct {
	fakeProber
	cfgs []probe.MultipathConfig
}

func (p *fakeMultipath) Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error) {
	p.mu.Lock()
	p.cfgs = append(p.cfgs, cfg)
	p.mu.Unlock()
	path := func(n int, mid string, flows []int) route.Path {
		p := route.Path{Path: n, Flows: flows, Share: 0.5, Reached: true}
		for i, a := range []string{"10.77.1.1", mid, addr} {
			sent, recv := cfg.PathCycles, cfg.PathCycles
			p.Hops = append(p.Hops, route.PathHop{TTL: i + 1, Address: a, Sent: &sent, Recv: &recv})
		}
		return p
	}
	return &route.Trace{Addr: addr, Protocol: cfg.Proto, Reached: true, Source: "live",
		Hops: []route.Hop{
			{TTL: 1, Responders: []route.Responder{{Addr: "10.77.1.1"}}},
			{TTL: 2, Responders: []route.Responder{{Addr: "10.77.2.2"}, {Addr: "10.77.3.2"}}},
			{TTL: 3, Responders: []route.Responder{{Addr: addr}}}},
		Multipath: &route.Multipath{Confidence: cfg.Confidence, ProbesUsed: 200, Stopped: probe.StoppedRule, Cycles: cfg.PathCycles},
		Paths:     []route.Path{path(1, "10.77.2.2", []int{33434, 33436}), path(2, "10.77.3.2", []int{33435, 33437})},
	}, nil
}

// A candidate with multipath on gets MultipathTraceLoop from MonitorLoops:
// every event carries the discovery's document with both paths (never a
// one-flow trace), annotated and named after the listed target; the first
// run probes each path once, the later ones LiveMultipathCycles times
// (fewer when a run is shorter); the discovery toward an ICMP target uses
// UDP flows by destination port, at the budget's rate; and the budget is
// charged every probe sent: 3 runs of 200 discovery probes plus 2 paths × 3
// hops × (1, 4, 4) cycles = 654 packets, 6.54 s at 100 per second.
func TestMonitorLoopsTraceAMultipathCandidateOnEveryPath(t *testing.T) {
	fp := &fakeMultipath{}
	budget := pacing.NewBudget(100)
	f := &candidates.File{Candidates: []candidates.Candidate{{Name: "mp", Multipath: true, Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}}}
	loops, err := MonitorLoops(f, Options{Prober: fp, Budget: budget, TraceRunCycles: 4, TraceInterval: time.Millisecond})
	if err != nil || len(loops) != 2 {
		t.Fatalf("%d loops, %v; want the sweep and the trace loop", len(loops), err)
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	traces := 0
	loops[1](ctx, func(ev Event) {
		if ev.Err != nil {
			t.Errorf("error %v", ev.Err)
			return
		}
		tr := ev.Trace
		if ev.Candidate != "mp" || ev.Direction != "forward" || tr == nil || tr.Target != "127.0.0.1" || tr.LineClass == "" {
			t.Fatalf("event %+v: want mp's forward trace, the listed target, annotated", ev)
		}
		if len(tr.Paths) != 2 || tr.Multipath == nil || tr.Paths[1].Hops[1].Address != "10.77.3.2" {
			t.Fatalf("trace %+v: want the discovery's two paths", tr)
		}
		if traces++; traces == 3 {
			cancel()
		}
	})
	if traces != 3 || fp.runs != 0 {
		t.Fatalf("%d multipath traces and %d one-flow trace runs; want 3 and 0", traces, fp.runs)
	}
	for i, c := range fp.cfgs {
		want := 4
		if i == 0 {
			want = 1
		}
		if c.PathCycles != want || c.Proto != probe.UDP || !c.FlowDstPort || c.Rate != 100 || c.Interval != time.Millisecond {
			t.Errorf("run %d: %+v; want %d cycles per path, UDP flows by destination port at 100/s every 1ms", i+1, c, want)
		}
	}
	if ready := budget.Ready().Sub(t0); ready < 6540*time.Millisecond || ready > 7*time.Second {
		t.Errorf("budget ready %v after the start; want the 654 packets sent charged: 6.54 s at 100/s", ready)
	}
}

// A prober that cannot run a discovery: the loop says so once and traces
// one path.
func TestMultipathTraceLoopFallsBackToOnePath(t *testing.T) {
	fp := &fakeProber{}
	loop := MultipathTraceLoop("mp", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, Options{Prober: fp, TraceRunCycles: 2, TraceInterval: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs, traces int
	loop(ctx, func(ev Event) {
		switch {
		case ev.Err != nil:
			errs++
			if !strings.Contains(ev.Err.Error(), "cannot run a multipath discovery") {
				t.Errorf("error %v", ev.Err)
			}
		case ev.Trace != nil:
			if traces++; traces == 3 {
				cancel()
			}
		}
	})
	if errs != 1 || traces != 3 || fp.runs < 2 {
		t.Errorf("%d warnings, %d traces over %d runs; want 1 warning, then one-path traces", errs, traces, fp.runs)
	}
}

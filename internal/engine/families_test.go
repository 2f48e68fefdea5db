package engine

import (
	"context"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// A dual-stack candidate gets one trace loop per address family
// (candidates.Candidate.RouteTargets): each traces its own family's first
// target, so the IPv6 route is seen beside the IPv4 one; a single-family
// candidate keeps its one trace loop.
func TestMonitorLoopsTraceEachFamily(t *testing.T) {
	fp := &fakeProber{}
	f := &candidates.File{Candidates: []candidates.Candidate{
		{Name: "dual", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "127.0.0.1", Protocol: "tcp", Port: 443}, {Addr: "::1", Protocol: "icmp"}}},
		{Name: "v4", Targets: []candidates.Target{{Addr: "127.0.0.2", Protocol: "icmp"}}},
	}}
	loops, err := MonitorLoops(f, Options{Prober: fp, TraceRunCycles: 1, TraceInterval: time.Millisecond})
	if err != nil || len(loops) != 4 {
		t.Fatalf("%d loops, %v; want the sweep and three trace loops (dual: ipv4 and ipv6, v4: one)", len(loops), err)
	}
	var got []string
	for _, loop := range loops[1:] {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		loop(ctx, func(ev Event) {
			if ev.Trace != nil {
				got = append(got, ev.Candidate+" "+ev.Trace.Addr)
				cancel()
			}
		})
		cancel()
	}
	if len(got) != 3 || got[0] != "dual 127.0.0.1" || got[1] != "dual ::1" || got[2] != "v4 127.0.0.2" {
		t.Errorf("traced %q, want dual 127.0.0.1, dual ::1, v4 127.0.0.2", got)
	}
}

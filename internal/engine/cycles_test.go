package engine

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// A sweep's refused TCP connections reach the outcome serve observes.
func TestPingOutcomesKeepTheRefusedConnections(t *testing.T) {
	res := []probe.SweepResult{{PingResult: probe.PingResult{Sent: 3, Refused: 3}}, {PingResult: probe.PingResult{Sent: 3, Recv: 3}}}
	out := PingOutcomes(res, nil, 2)
	if out[0].Refused != 3 || out[0].Sent != 3 || out[1].Refused != 0 {
		t.Errorf("outcomes %+v, want 3 refused of 3 for the first, none for the second", out)
	}
}

// fakeCycleState is a CycleState of named targets: each due at its next
// time; what the cycles told it, in order.
type fakeCycleState struct {
	targets []string
	addr    map[string]string
	next    map[string]time.Time
	fails   []cycleFail
	pings   map[string]int
	traces  map[string]int
	cycles  int
}

type cycleFail struct {
	target           string
	base, maxBackoff time.Duration
	count            bool
}

func newFakeCycleState(addr map[string]string, order ...string) *fakeCycleState {
	return &fakeCycleState{targets: order, addr: addr, next: map[string]time.Time{}, pings: map[string]int{}, traces: map[string]int{}}
}

func (s *fakeCycleState) Probed(t string) CycleTarget {
	return CycleTarget{Addr: s.addr[t], Protocol: ICMP, Key: t}
}

func (s *fakeCycleState) NextDue() (time.Time, bool) {
	var at time.Time
	for i, t := range s.targets {
		if n := s.next[t]; i == 0 || n.Before(at) {
			at = n
		}
	}
	return at, len(s.targets) > 0
}

func (s *fakeCycleState) DueTargets(now time.Time) []string {
	var out []string
	for _, t := range s.targets {
		if !s.next[t].After(now) {
			out = append(out, t)
		}
	}
	return out
}

func (s *fakeCycleState) Wake() <-chan struct{} { return nil }

func (s *fakeCycleState) Fail(t string, _ error, now time.Time, base, maxBackoff time.Duration, count bool) {
	s.fails = append(s.fails, cycleFail{t, base, maxBackoff, count})
	s.next[t] = now.Add(time.Hour) // out of the way: the test counts one failure each
}

func (s *fakeCycleState) Succeed(t string, _ netip.Addr, next time.Time) { s.next[t] = next }
func (s *fakeCycleState) Postpone(t string, at time.Time)                { s.next[t] = at }
func (s *fakeCycleState) TraceDue(string, time.Time) bool                { return true }
func (s *fakeCycleState) TraceResult(string, error, time.Time, time.Duration, time.Duration) {
}
func (s *fakeCycleState) ObservePing(t string, _ PingOutcome) { s.pings[t]++ }
func (s *fakeCycleState) ObserveTrace(t string, tr *route.Trace, err error) {
	if err == nil && tr != nil {
		s.traces[t]++
	}
}
func (s *fakeCycleState) CycleDone() { s.cycles++ }

// tracingClockProber is clockProber whose traces answer with one hop.
type tracingClockProber struct{ clockProber }

func (p *tracingClockProber) Trace(_ context.Context, addr string, _ probe.TraceConfig, on func(*route.Trace)) error {
	on(&route.Trace{Addr: addr, Reached: true, Hops: []route.Hop{{TTL: 1, Sent: 1}}})
	return nil
}

// serve's cycles over a surface's state, on an injected clock: the targets
// due are swept together each cycle; a sweep that fails for a target (no
// privilege) fails it uncounted (ObservePing counted it), a name that does
// not resolve fails counted, both with the loop's backoff cap; the traces
// run in cycles 1, 3, 5 (TraceEvery 2) for the measured target only; every
// sweep is a cycle; and a target is swept again one interval after the
// last probe of its previous cycle was due (docs/scaleout.md, Pacing): at
// Count 2, Interval 1 s and a rate that never binds, the first cycle's two
// targets interleave (the second's last probe due at 1.5 s), so the next
// cycle starts at 2.5 s; alone, ok's last probe is due at 1 s: 2 s apart.
func TestRunCyclesSweepsTracesAndFails(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &jumpClock{now: t0, end: t0.Add(time.Hour), cancel: cancel}
	s := newFakeCycleState(map[string]string{"ok": "127.0.0.1", "priv": "127.0.0.9", "nx": "nx.test"}, "ok", "priv", "nx")
	p := &tracingClockProber{clockProber{clk: clk}}
	RunCycles(ctx, s, CycleConfig{Prober: p, Count: 2, Interval: time.Second, Rate: 1e6, TraceEvery: 2, MaxBackoff: 7 * time.Minute,
		Clock: clk, Resolver: pacing.NewResolver(&countingLookup{n: map[string]int{}}, clk, 0),
		OnCycle: func(n int) {
			if n == 6 {
				cancel()
			}
		}})
	if s.cycles != 6 || s.pings["ok"] != 6 || s.pings["priv"] != 1 || s.pings["nx"] != 0 {
		t.Errorf("cycles %d, pings %v: want 6 cycles, ok 6, priv 1 (then backing off), nx none", s.cycles, s.pings)
	}
	if s.traces["ok"] != 3 || len(s.traces) != 1 {
		t.Errorf("traces %v, want ok 3 (cycles 1, 3, 5) and no other", s.traces)
	}
	want := map[string]bool{"priv": false, "nx": true} // counted as an error?
	if len(s.fails) != 2 {
		t.Fatalf("failures %+v, want one for priv and one for nx", s.fails)
	}
	for _, f := range s.fails {
		if c, ok := want[f.target]; !ok || c != f.count || f.maxBackoff != 7*time.Minute || f.base <= 0 {
			t.Errorf("failure %+v: want count %v, max backoff 7m, a positive base", f, c)
		}
	}
	if len(p.calls) != 6 {
		t.Fatalf("%d sweeps, want 6", len(p.calls))
	}
	for i := 1; i < len(p.calls); i++ {
		want := 2 * time.Second
		if i == 1 {
			want = 2500 * time.Millisecond
		}
		if gap := p.calls[i].at.Sub(p.calls[i-1].at); gap != want {
			t.Errorf("sweeps %d and %d %v apart, want %v", i, i+1, gap, want)
		}
	}
}

package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// fakeProber answers without sending anything: Ping emits one ok record per
// probe; Trace emits cfg.Cycles one-hop documents, or fails while fail > 0.
type fakeProber struct {
	mu     sync.Mutex
	runs   int
	cycles []int
	fail   int
}

func (p *fakeProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, on func(probe.Record)) ([]probe.SweepResult, error) {
	out := make([]probe.SweepResult, len(ts))
	for i := 0; i < cfg.Count && ctx.Err() == nil; i++ {
		for k, t := range ts {
			rtt := 1.5 + float64(k)
			out[k].Sent++
			out[k].Recv++
			out[k].RTTs = append(out[k].RTTs, rtt)
			if on != nil {
				on(probe.Record{Target: t.Name, Addr: t.Addr.String(), Protocol: "icmp", Seq: i, Status: probe.StatusOK, RTTms: &rtt})
			}
		}
	}
	return out, ctx.Err()
}

func (p *fakeProber) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, on func(*route.Trace)) error {
	p.mu.Lock()
	p.runs++
	p.cycles = append(p.cycles, cfg.Cycles)
	failing := p.fail > 0
	p.fail--
	p.mu.Unlock()
	if failing {
		return errors.New("no privilege")
	}
	for c := 0; c < cfg.Cycles; c++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		on(&route.Trace{Addr: addr, Protocol: cfg.Proto, Reached: true,
			Hops: []route.Hop{{TTL: 1, Sent: c + 1, Responders: []route.Responder{{Addr: addr, Recv: c + 1}}}}})
	}
	return nil
}

func TestTraceLoopGoesOnPastARunAndRetriesFailures(t *testing.T) {
	fp := &fakeProber{fail: 1}
	loop := TraceLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"},
		Options{Prober: fp, TraceRunCycles: 3, Backoff: time.Millisecond, TraceInterval: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var traces, errs int
	loop(ctx, func(ev Event) {
		switch {
		case ev.Err != nil:
			errs++
			if !strings.Contains(ev.Err.Error(), "trace 127.0.0.1 icmp: no privilege") {
				t.Errorf("error %v", ev.Err)
			}
			if ev.Direction != "forward" {
				t.Errorf("trace error event %+v: want direction forward (the TUI shows it on that route)", ev)
			}
		case ev.Trace != nil:
			traces++
			if ev.Direction != "forward" || ev.Trace.Target != "127.0.0.1" || ev.Trace.LineClass == "" {
				t.Errorf("trace event %+v: want forward, the listed target, annotated", ev)
			}
		}
		if traces == 7 {
			cancel()
		}
	})
	// One failed run, then runs of 3 cycles: the seventh snapshot is in the third good run.
	if errs != 1 || traces != 7 {
		t.Errorf("%d errors and %d traces, want 1 and 7", errs, traces)
	}
	for _, c := range fp.cycles {
		if c != 3 {
			t.Errorf("a run of %d cycles, want 3", c)
		}
	}
}

func TestMonitorLoopsRefuseWhatCompareRefuses(t *testing.T) {
	if _, err := MonitorLoops(&candidates.File{RecordedOnly: true}, Options{}); !errors.Is(err, candidates.ErrRecordedOnly) {
		t.Errorf("recorded_only: %v", err)
	}
	f := &candidates.File{Path: "x.yaml", Candidates: []candidates.Candidate{{Name: "doc", Line: 3, Targets: []candidates.Target{{Addr: "192.0.2.1", Protocol: "icmp"}}}}}
	if _, err := MonitorLoops(f, Options{}); err == nil || !strings.Contains(err.Error(), "x.yaml:3") {
		t.Errorf("documentation address: %v", err)
	}
	f = &candidates.File{Candidates: []candidates.Candidate{
		{Name: "a", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "127.0.0.1", Protocol: "tcp", Port: 1}}},
		{Name: "b", Targets: []candidates.Target{{Addr: "127.0.0.2", Protocol: "icmp"}}}}}
	loops, err := MonitorLoops(f, Options{Prober: &fakeProber{}})
	if err != nil || len(loops) != 3 { // one sweep loop over every target, a trace loop per candidate
		t.Errorf("%d loops, %v; want 3", len(loops), err)
	}
}

func TestPingLoopEmitsRecordsRoundAfterRound(t *testing.T) {
	loop := PingLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, Options{Prober: &fakeProber{}, Count: 2, Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	loop(ctx, func(ev Event) {
		if ev.Record == nil || ev.Candidate != "c" {
			t.Errorf("event %+v", ev)
		}
		if n++; n == 5 {
			cancel()
		}
	})
	if n != 5 {
		t.Errorf("%d records, want 5 (three rounds of 2)", n)
	}
}

// TestSweepLoopRoutesRecordsToTheirCandidates: one sweep a round over every
// target; a target two candidates list is probed once and its records go to
// both; a target that cannot be probed (a documentation address, refused
// before anything is sent) is reported for its candidate while the others
// go on.
func TestSweepLoopRoutesRecordsToTheirCandidates(t *testing.T) {
	fp := &fakeProber{}
	loop := SweepLoop([]OwnedTarget{
		{Candidate: "a", Target: candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}},
		{Candidate: "b", Target: candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}},
		{Candidate: "b", Target: candidates.Target{Addr: "127.0.0.2", Protocol: "icmp"}},
		{Candidate: "c", Target: candidates.Target{Addr: "192.0.2.7", Protocol: "icmp"}},
	}, Options{Prober: fp, Count: 2, Interval: time.Millisecond, Backoff: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	recs := map[string]map[string]int{}
	var errs []string
	loop(ctx, func(ev Event) {
		switch {
		case ev.Err != nil:
			errs = append(errs, ev.Candidate+": "+ev.Err.Error())
		case ev.Record != nil:
			if recs[ev.Candidate] == nil {
				recs[ev.Candidate] = map[string]int{}
			}
			recs[ev.Candidate][ev.Record.Addr]++
		}
		if recs["b"]["127.0.0.2"] == 4 { // the last record of round 2
			cancel()
		}
	})
	// The failing target is reported once and then backs off (an hour)
	// while the others go on.
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "c: ping 192.0.2.7 icmp: ") || !strings.Contains(errs[0], "documentation address") {
		t.Errorf("errors %q: want the documentation target reported for c, once", errs)
	}
	// Two rounds of 2 probes per target.
	if recs["a"]["127.0.0.1"] != 4 || recs["b"]["127.0.0.1"] != 4 || recs["b"]["127.0.0.2"] != 4 || len(recs["c"]) != 0 {
		t.Errorf("records per candidate and address %v", recs)
	}
}

// TestLoopsKeepTheirPaceWhenARoundEndsAtOnce: a prober that returns at once
// (no packet, no wait) must not make a loop spin: a sweep round lasts at
// least the probe interval, a trace run at least the cycle interval.
func TestLoopsKeepTheirPaceWhenARoundEndsAtOnce(t *testing.T) {
	fp := &fakeProber{}
	o := Options{Prober: fp, Count: 1, Interval: 50 * time.Millisecond, TraceInterval: 50 * time.Millisecond, TraceRunCycles: 1}
	for name, loop := range map[string]Loop{
		"sweep": PingLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, o),
		"trace": TraceLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, o),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 275*time.Millisecond)
		n := 0
		loop(ctx, func(Event) { n++ })
		cancel()
		// 275 ms at one round per 50 ms: at most 6 rounds, one event each.
		if n < 1 || n > 6 {
			t.Errorf("%s: %d events in 275 ms at one round per 50 ms", name, n)
		}
	}
}

// With a Quiet (live compare and the TUI when a candidate has a throughput
// test) and no test running, a round is not "cut": done() cancels the
// round's context, so a cut read after it saw every round as cut. The trace
// loop then skipped its TraceInterval sleep (traces back to back, a probe
// flood) and both loops skipped their error handling and back-off.
func TestLoopsWithAnIdleQuietKeepTheirPaceAndReportErrors(t *testing.T) {
	fp := &fakeProber{}
	o := Options{Prober: fp, Count: 1, Interval: 50 * time.Millisecond, TraceInterval: 50 * time.Millisecond, TraceRunCycles: 1, Quiet: NewQuiet()}
	for name, loop := range map[string]Loop{
		"sweep": PingLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, o),
		"trace": TraceLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, o),
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 275*time.Millisecond)
		n := 0
		loop(ctx, func(Event) { n++ })
		cancel()
		// 275 ms at one round per 50 ms: at most 6 rounds, one event each.
		if n < 1 || n > 6 {
			t.Errorf("%s with a Quiet: %d events in 275 ms at one round per 50 ms", name, n)
		}
	}
	// A failing trace is reported (and backs off) with a Quiet as without.
	fp = &fakeProber{fail: 100}
	o.Prober, o.Backoff, o.MaxBackoff = fp, 100*time.Millisecond, 100*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	errs := 0
	TraceLoop("c", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, o)(ctx, func(ev Event) {
		if ev.Err != nil {
			errs++
		}
	})
	cancel()
	if fp.runs > 4 || errs == 0 {
		t.Errorf("failing trace with a Quiet: %d runs and %d error events in 250 ms with a 100 ms back-off; want a few runs, each reported", fp.runs, errs)
	}
}

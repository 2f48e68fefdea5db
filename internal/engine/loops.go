package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// This file is the continuous side of live measurement: the loops the TUI
// (and any other long-running frontend) runs to keep every candidate's
// figures and routes current. compare's one-shot run (compare/live.go) and
// these loops share the target checks and the probe configuration.

// Event is one live update of a candidate: a probe record, a trace snapshot
// (after each completed cycle), the start or the outcome of a throughput
// test, or an error. Exactly one of Record, Trace, BWStart, Throughput and
// Err is set.
type Event struct {
	Candidate string
	Record    *probe.Record
	// Trace is annotated (carriers, line class) and belongs to the receiver.
	Trace *route.Trace
	// Direction of Trace, or of the trace that failed with Err: "forward"
	// (live traces are always forward); "" for an Err of probes.
	Direction string
	// BWStart: a throughput test of the candidate begins; Throughput is its
	// outcome (with Error when it gave no figures).
	BWStart    *BWStart
	Throughput *verdict.Throughput
	Err        error
}

// Options configure the live loops.
type Options struct {
	// Interval between two probes to one target (default 1 s); Count probes
	// make one ping round (default 10).
	Interval time.Duration
	Count    int
	// Timeout for a reply (default 1 s).
	Timeout time.Duration
	// TraceInterval is the time between two trace cycles (default 1 s).
	TraceInterval time.Duration
	// TraceRunCycles is how many cycles one trace run holds before a fresh
	// run starts (default 600: ten minutes at one cycle a second). Hop
	// statistics are over the current run, so a route change shows within
	// one run and memory stays bounded.
	TraceRunCycles int
	// ASNDB annotates live traces (may be nil).
	ASNDB route.ASNDB
	// Prober sends the probes; nil means Sender over Budget.
	Prober Prober
	// Backoff is the first wait before a failing target (or trace) is tried
	// again (default 5 s); it doubles with every further failure in a row,
	// up to MaxBackoff (default pacing.DefaultMaxBackoff).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Rate is the packets-per-second cap of all the loops together
	// (default probe.DefaultPingRate); Budget, when set, is that cap shared
	// with other probers (MonitorLoops makes one for its loops).
	Rate   float64
	Budget *pacing.Budget
	// Clock is the loops' time (the real clock when nil); tests inject a fake.
	Clock probe.Clock
	// Resolver looks target names up at a bounded rate with a cache
	// (pacing.NewResolver over the system's when nil; MonitorLoops shares
	// one among its loops).
	Resolver *pacing.Resolver
	// Quiet, when set, pauses the ping and trace loops while a throughput
	// test runs (ThroughputLoop holds it); MonitorLoops makes one for its
	// loops when a candidate has a bandwidth_test.
	Quiet *Quiet
	// BWTime is the measured time of each throughput test (DefaultBWTime
	// when 0: compare's --bw-time). BWEvery repeats the tests that often
	// (0: only the first round and the rounds BWNow asks for).
	BWTime, BWEvery time.Duration
	// BWNow asks for a round of throughput tests now (the TUI's b key).
	BWNow <-chan struct{}
	// NoBW leaves the throughput tests out of MonitorLoops.
	NoBW bool
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Count <= 0 {
		o.Count = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.TraceInterval <= 0 {
		o.TraceInterval = time.Second
	}
	if o.TraceRunCycles <= 0 {
		o.TraceRunCycles = 600
	}
	o.TraceRunCycles = min(o.TraceRunCycles, probe.MaxCycles)
	if o.Backoff <= 0 {
		o.Backoff = 5 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = pacing.DefaultMaxBackoff
	}
	if o.Clock == nil {
		o.Clock = pacing.RealClock{}
	}
	if o.Budget == nil {
		o.Budget = pacing.NewBudget(o.Rate)
	}
	if o.Resolver == nil {
		o.Resolver = pacing.NewResolver(nil, o.Clock, 0)
	}
	if o.Prober == nil {
		o.Prober = Sender{Budget: o.Budget, Clock: o.Clock}
	}
}

// Loop is one live loop: it runs until ctx ends, calling emit for every
// event. emit must not block.
type Loop func(ctx context.Context, emit func(Event))

// MonitorLoops returns the live loops of every candidate of f: one ping
// loop over every target of every candidate (one mixed-protocol sweep a
// round, so the probes of all targets share one pace) and one trace loop
// (forward, with the target's protocol and port) per route target of each
// candidate (candidates.Candidate.RouteTargets: one per address family):
// MultipathTraceLoop for the first of a candidate with multipath on.
// All of them share one packets-per-second cap (o.Rate), one name resolver
// and one clock. Unless o.NoBW, the candidates that name a bandwidth_test
// get one ThroughputLoop over all of them, and the other loops pause while
// it tests (one Quiet). It refuses what a live run of compare refuses: a
// recorded_only file, documentation addresses.
func MonitorLoops(f *candidates.File, o Options) ([]Loop, error) {
	if f.RecordedOnly {
		return nil, candidates.ErrRecordedOnly
	}
	if err := CheckLiveTargets(f); err != nil {
		return nil, err
	}
	var tests []OwnedBWTest
	for _, c := range f.Candidates {
		if c.BandwidthTest != nil && !o.NoBW {
			tests = append(tests, OwnedBWTest{Candidate: c.Name, Test: *c.BandwidthTest})
		}
	}
	if len(tests) > 0 && o.Quiet == nil {
		o.Quiet = NewQuiet()
	}
	o.defaults()
	var owned []OwnedTarget
	var loops []Loop
	for i := range f.Candidates {
		c := &f.Candidates[i]
		for _, t := range c.Targets {
			owned = append(owned, OwnedTarget{Candidate: c.Name, Target: t})
		}
		// One trace loop per address family (issue 32): a dual-stack
		// server's IPv6 route may ride another line than its IPv4 one.
		for k, t := range c.RouteTargets() {
			if k == 0 && c.Multipath {
				loops = append(loops, MultipathTraceLoop(c.Name, t, o))
			} else {
				loops = append(loops, TraceLoop(c.Name, t, o))
			}
		}
	}
	if len(owned) > 0 {
		loops = append([]Loop{SweepLoop(owned, o)}, loops...)
	}
	if len(tests) > 0 {
		loops = append(loops, ThroughputLoop(tests, o))
	}
	return loops, nil
}

// OwnedTarget is a probe target of a candidate.
type OwnedTarget struct {
	Candidate string
	Target    candidates.Target
}

// PingLoop probes one target of a candidate round after round (SweepLoop
// of one target).
func PingLoop(candidate string, t candidates.Target, o Options) Loop {
	return SweepLoop([]OwnedTarget{{Candidate: candidate, Target: t}}, o)
}

// SweepLoop probes the targets round after round, o.Count probes each per
// round, in one mixed-protocol sweep (ICMP echo and TCP connect side by
// side), emitting every record to the candidate that owns its target.
// Pacing (as serve's loop, package pacing): a target is probed again no
// sooner than one o.Interval after the last probe of its previous round was
// due, whenever the replies came; a round starts no sooner than the shared
// budget allows its packets; names are resolved through o.Resolver (bounded
// rate, cached). A target that does not resolve, or whose protocol's sweep
// fails (no privilege), is reported as an Event with Err and backs off
// exponentially (o.Backoff doubled per failure in a row, up to
// o.MaxBackoff) while the others go on.
func SweepLoop(targets []OwnedTarget, o Options) Loop {
	o.defaults()
	cfg := probe.PingConfig{Count: o.Count, Interval: o.Interval, Timeout: o.Timeout, Rate: o.Budget.Rate()}
	return func(ctx context.Context, emit func(Event)) {
		l := &sweepLoop{targets: targets, o: o, cfg: cfg, emit: emit,
			next: make([]time.Time, len(targets)), fails: make([]int, len(targets))}
		Scheduler{Clock: o.Clock, Budget: o.Budget, Quiet: o.Quiet}.Run(ctx, l, nil)
	}
}

// sweepLoop is SweepLoop's state: per target, when it may be probed again
// and its failures in a row. Its rounds are the Scheduler's.
type sweepLoop struct {
	targets []OwnedTarget
	o       Options
	cfg     probe.PingConfig
	emit    func(Event)
	next    []time.Time
	fails   []int
}

// Round is one round of the targets due: resolved, then swept (none
// resolved: no sweep, the failures backed off).
func (l *sweepLoop) Round(ctx context.Context, s Scheduler) bool {
	r, ok := l.resolve(ctx)
	if !ok {
		return false
	}
	if len(r.sts) == 0 {
		return true
	}
	return l.sweep(ctx, s, r)
}

// sweepKey names one probed address: targets of several candidates that
// resolve to it are swept once.
type sweepKey struct {
	addr  string
	proto probe.Protocol
	port  int
}

func sweepKeyOf(addr string, proto probe.Protocol, port int) sweepKey {
	if proto == "" || proto == probe.ICMP {
		return sweepKey{addr, probe.ICMP, 0}
	}
	return sweepKey{addr, proto, port}
}

// sweepRound is one round's targets: the sweep targets, and per sweep
// target the loop's targets (indexes) that listed it.
type sweepRound struct {
	sts    []probe.SweepTarget
	owners [][]int
	index  map[sweepKey]int
}

// Due is the earliest time a target may be probed (Rounds' Due).
func (l *sweepLoop) Due() (time.Time, bool) {
	if len(l.next) == 0 {
		return time.Time{}, false
	}
	at := l.next[0]
	for _, n := range l.next[1:] {
		if n.Before(at) {
			at = n
		}
	}
	return at, true
}

// fail reports a failed attempt at target i and backs it off.
func (l *sweepLoop) fail(i int, err error) {
	l.fails[i]++
	l.next[i] = l.o.Clock.Now().Add(pacing.Backoff(l.o.Backoff, l.o.MaxBackoff, l.fails[i]))
	l.emit(Event{Candidate: l.targets[i].Candidate, Err: err})
}

// resolve makes the round of the targets due: each name resolved (a
// failure backs its target off), one sweep target per address. false when
// ctx ended.
func (l *sweepLoop) resolve(ctx context.Context) (sweepRound, bool) {
	start := l.o.Clock.Now()
	r := sweepRound{index: map[sweepKey]int{}}
	for i, ot := range l.targets {
		if l.next[i].After(start) {
			continue
		}
		t := ot.Target
		a, err := l.o.Resolver.Resolve(ctx, t.Addr)
		if ctx.Err() != nil {
			return r, false
		}
		if err != nil {
			l.fail(i, fmt.Errorf("ping %s: %w", t, err))
			continue
		}
		k := sweepKeyOf(a.String(), t.Protocol, t.Port)
		if j, ok := r.index[k]; ok {
			r.owners[j] = append(r.owners[j], i)
			continue
		}
		r.index[k] = len(r.sts)
		r.sts = append(r.sts, probe.SweepTarget{Target: probe.Target{Name: t.Addr, Addr: a}, Protocol: t.Protocol, Port: t.Port})
		r.owners = append(r.owners, []int{i})
	}
	return r, true
}

// sweep runs one round, emitting every record to the candidates that own
// its target, and schedules each target's next round; false when ctx
// ended. A throughput test holds the round back (and cuts one under way:
// its traffic would inflate the RTTs); a cut round's probes still in
// flight were left out, and its targets are probed again once it is over.
func (l *sweepLoop) sweep(ctx context.Context, sched Scheduler, r sweepRound) bool {
	period := pacing.Period(r.sts, l.cfg)
	var res []probe.SweepResult
	var serr error
	start, cut, err := sched.Round(ctx, func(rctx context.Context) {
		res, serr = l.o.Prober.Sweep(rctx, r.sts, l.cfg, func(rec probe.Record) {
			j, ok := r.index[sweepKeyOf(rec.Addr, rec.Protocol, rec.Port)]
			if !ok {
				return
			}
			for _, i := range r.owners[j] {
				rec := rec
				l.emit(Event{Candidate: l.targets[i].Candidate, Record: &rec})
			}
		})
	})
	if err != nil {
		return false
	}
	l.o.Budget.Spend(start, l.cfg.Count*len(r.sts))
	if cut {
		return true
	}
	for j, st := range r.sts {
		e := serr
		if e == nil {
			if j < len(res) {
				e = res[j].Err
			} else {
				e = errors.New("the prober returned no outcome")
			}
		}
		for _, i := range r.owners[j] {
			if e != nil {
				l.fail(i, fmt.Errorf("ping %s: %w", candidates.Target{Addr: st.Name, Protocol: st.Protocol, Port: st.Port}, e))
				continue
			}
			l.fails[i], l.next[i] = 0, start.Add(period)
		}
	}
	return true
}

// TraceLoop traces a candidate's target continuously, mtr style: one
// cycle every o.TraceInterval, a snapshot (annotated with carriers and the
// line class) emitted after each cycle, runs of o.TraceRunCycles cycles one
// after another, the name resolved through o.Resolver. A run that ends at
// once never makes the loop spin (the next starts one o.TraceInterval after
// it began at the soonest); a failed run is reported and retried after an
// exponential backoff (o.Backoff doubled per failure in a row, up to
// o.MaxBackoff).
func TraceLoop(candidate string, t candidates.Target, o Options) Loop {
	o.defaults()
	cfg := TraceConfig(t, o.TraceRunCycles, o.TraceInterval, o.Timeout)
	cfg.Clock = o.Clock
	return traceLoop(candidate, t, o, func(rctx context.Context, addr string, _ int, each func(*route.Trace)) (int, error) {
		return 0, o.Prober.Trace(rctx, addr, cfg, each)
	})
}

// traceRun is one run of a trace loop toward addr (round: the runs that
// completed before it): it calls each with every snapshot and returns the
// packets it sent that the prober did not take from the budget itself.
type traceRun func(rctx context.Context, addr string, round int, each func(*route.Trace)) (int, error)

// traceLoop is the loop of TraceLoop and MultipathTraceLoop: run after run
// through the shared Scheduler, each snapshot annotated and emitted.
func traceLoop(candidate string, t candidates.Target, o Options, run traceRun) Loop {
	return func(ctx context.Context, emit func(Event)) {
		// The trace probes take their slots from the budget in the prober
		// (Sender), so the scheduler only holds them back for a test.
		l := &traceRounds{candidate: candidate, t: t, o: o, run: run, emit: emit}
		Scheduler{Clock: o.Clock, Quiet: o.Quiet}.Run(ctx, l, nil)
	}
}

// traceRounds is a trace loop's state: its runs (rounds) so far, its
// failures in a row, and when the next run is due (zero: at once).
type traceRounds struct {
	candidate string
	t         candidates.Target
	o         Options
	run       traceRun
	emit      func(Event)
	fails     int
	round     int
	next      time.Time
}

func (l *traceRounds) Due() (time.Time, bool) { return l.next, true }

// Round is one trace run: the name resolved, the run made, every snapshot
// annotated and emitted. The next is due one TraceInterval after this one
// began (a run that ends at once never makes the loop spin), after a
// backoff when it failed, at once when a throughput test cut it.
func (l *traceRounds) Round(ctx context.Context, sched Scheduler) bool {
	o, t, clk := l.o, l.t, l.o.Clock
	a, err := o.Resolver.Resolve(ctx, t.Addr)
	// A throughput test holds the run back; one under way ends (its last
	// complete cycle was emitted) and a fresh run starts after the test,
	// so no hop counts a sample of the loaded line.
	start, cut, qerr := sched.Round(ctx, func(rctx context.Context) {
		if err != nil {
			return
		}
		began := clk.Now()
		var spent int
		spent, err = l.run(rctx, a.String(), l.round, func(tr *route.Trace) {
			if rctx.Err() != nil {
				return // cut: a snapshot taken while the run ends is not a cycle
			}
			tr.Target = t.Addr
			route.Annotate(tr, o.ASNDB)
			l.emit(Event{Candidate: l.candidate, Trace: tr, Direction: "forward"})
		})
		if spent > 0 {
			o.Budget.Spend(began, spent)
		}
	})
	switch {
	case qerr != nil:
		return false
	case cut:
		l.next = time.Time{}
	case err != nil:
		l.fails++
		l.emit(Event{Candidate: l.candidate, Direction: "forward", Err: fmt.Errorf("trace %s: %w", t, err)})
		l.next = clk.Now().Add(pacing.Backoff(o.Backoff, o.MaxBackoff, l.fails))
	default:
		l.fails = 0
		l.round++
		l.next = start.Add(o.TraceInterval)
	}
	return true
}

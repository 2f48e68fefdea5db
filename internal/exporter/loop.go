package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Resolved is a target with the address it is probed at.
type Resolved struct {
	Target
	IP netip.Addr
}

// Prober runs the probes of one cycle; serve wires it to the probe engine,
// tests to a fake.
type Prober interface {
	// Ping probes the targets (icmp and tcp) for one cycle and returns one
	// outcome per target, in order.
	Ping(ctx context.Context, ts []Resolved) []PingOutcome
	// Trace traces one target once.
	Trace(ctx context.Context, t Resolved) (*route.Trace, error)
}

// Clock is the loop's time: the real one in serve, a fake in tests.
type Clock = probe.Clock

// ServeHint is what serve advises when a target's address is one it never probes.
const ServeHint = "serve never probes one: list a unicast address"

// DefaultMaxBackoff caps the wait before a failing target is tried again.
const DefaultMaxBackoff = pacing.DefaultMaxBackoff

// LoopConfig paces the probing loop. Count, Interval and Rate must be what
// the prober sends with: the loop derives from them how soon a target may be
// probed again and how many packets a cycle sent.
type LoopConfig struct {
	// Count probes per target per cycle, Interval between two of them, Rate
	// the global cap in packets per second (probe.PingConfig's fields).
	Count    int
	Interval time.Duration
	Rate     float64
	// TraceProbes is the most packets one trace sends (its max TTL).
	TraceProbes int
	// Pause is the wait between the end of one cycle and the start of the next.
	Pause time.Duration
	// TraceEvery runs a trace of every target each n-th cycle (first cycle
	// included); 0 never traces.
	TraceEvery int
	// MaxBackoff caps the exponential backoff of a failing target
	// (DefaultMaxBackoff when 0).
	MaxBackoff time.Duration
	// Clock is the loop's time (the real clock when nil).
	Clock Clock
	// Resolver looks names up (a Resolver over the system's when nil).
	Resolver *pacing.Resolver
	// OnCycle, when set, is called after each cycle (one sweep of the
	// targets due) with its number (from 1).
	OnCycle func(n int)
	// Quiet, when set, pauses the pings and traces while a throughput test
	// runs (serve --bw-every holds it, BWLoop.Quiet): a sweep or trace in
	// progress when the hold begins is cut, and none starts until the test
	// is over.
	Quiet *engine.Quiet
}

func (c LoopConfig) withDefaults() LoopConfig {
	if c.Count <= 0 {
		c.Count = probe.DefaultCount
	}
	if c.Interval <= 0 {
		c.Interval = probe.DefaultInterval
	}
	if c.Rate <= 0 {
		c.Rate = probe.DefaultPingRate
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Clock == nil {
		c.Clock = pacing.RealClock{}
	}
	if c.Resolver == nil {
		c.Resolver = pacing.NewResolver(nil, c.Clock, 0).WithHint(ServeHint)
	}
	return c
}

// Run probes until ctx ends. The first cycle starts at once. Pacing
// (docs/scaleout.md, Pacing): a target is probed again no sooner than one
// Interval after the last probe of its previous cycle was due (the prober
// must send on probe.Sweep's schedule, as serve's does); a cycle
// starts no sooner than its predecessor's packets allow under Rate (traces
// included), whether its probes were answered, lost or failed at once; a
// target whose probing fails (resolution, socket, privilege) waits an
// exponential backoff, capped at MaxBackoff, and is reported down meanwhile.
//
// While cfg.Quiet is held (a throughput test fills the line) no probe is
// sent. A sweep cut by the hold counts what was decided before it (the
// prober leaves probes still in flight out of Sent: they are not lost) and
// is no failure; its targets are probed again once the test is over, one
// Interval after the cut at the soonest. A trace cut by the hold is no
// result: the target is traced again in the next cycle.
func (e *Exporter) Run(ctx context.Context, p Prober, cfg LoopConfig) {
	cfg = cfg.withDefaults()
	l := &serveLoop{e: e, p: p, cfg: cfg, owed: map[string]bool{},
		// serve's one packets-per-second cap, and compare's scheduler: the
		// rules of when a round starts and when a test cut it are the live
		// loops' (engine.Scheduler).
		sched: engine.Scheduler{Clock: cfg.Clock, Budget: pacing.NewBudget(cfg.Rate), Quiet: cfg.Quiet}}
	// Each cycle starts once a target is due and the rate budget allows
	// it; a reload wakes the wait (its new targets are due at once).
	l.sched.Run(ctx, l, e.wake)
}

// Due is engine.Rounds' Due: the earliest time a current target may be
// probed.
func (l *serveLoop) Due() (time.Time, bool) { return l.e.nextDue() }

// Round is one cycle (engine.Rounds' Round).
func (l *serveLoop) Round(ctx context.Context, _ engine.Scheduler) bool { return l.cycle(ctx) }

// serveLoop is Run's state across cycles.
type serveLoop struct {
	e     *Exporter
	p     Prober
	cfg   LoopConfig
	sched engine.Scheduler
	n     int             // cycles: sweeps run (retries that fail before one are not cycles)
	owed  map[string]bool // targets whose trace a throughput test cut: traced next cycle
}

// cycle runs one cycle of the targets due: resolve them, sweep them, trace
// those due a trace, charge the packets to the budget. false when ctx ended.
func (l *serveLoop) cycle(ctx context.Context) bool {
	clk := l.cfg.Clock
	start := clk.Now()
	ready, ok := l.resolve(ctx, start)
	if !ok {
		return false
	}
	period := cyclePeriod(ready, l.cfg)
	traceCycle := l.cfg.TraceEvery > 0 && l.n%l.cfg.TraceEvery == 0 // the cycle about to run is number n+1
	packets := 0
	var traced []Resolved
	swept := len(ready) > 0
	if swept {
		l.n++
		start, traced, ok = l.sweep(ctx, ready, period, traceCycle)
		if !ok {
			return false
		}
		packets += l.cfg.Count * len(ready)
	}
	n, ok := l.trace(ctx, traced, traceCycle, period)
	if !ok {
		return false
	}
	l.sched.Budget.Spend(start, packets+n)
	if swept {
		l.e.CycleDone()
		if l.cfg.OnCycle != nil {
			l.cfg.OnCycle(l.n)
		}
	}
	return true
}

// resolve looks the names of the targets due at start up; a target that
// does not resolve fails (and backs off). false when ctx ended.
func (l *serveLoop) resolve(ctx context.Context, start time.Time) ([]Resolved, bool) {
	period := cyclePeriod(nil, l.cfg) // the backoff base for what fails before the sweep
	var ready []Resolved
	for _, t := range l.e.dueTargets(start) {
		ip, err := l.cfg.Resolver.Resolve(ctx, t.Addr)
		if ctx.Err() != nil {
			return nil, false
		}
		if err != nil {
			l.e.fail(t, err, l.cfg.Clock.Now(), l.cfg, period, true)
			continue
		}
		ready = append(ready, Resolved{Target: t, IP: ip})
	}
	return ready, true
}

// sweep probes ready in one round and records each target's outcome; it
// returns when the sweep's schedule started (the next cycle is due one
// period after it) and the targets measured, which may be traced. A
// throughput test holds the sweep back (and cuts one under way: its
// traffic would inflate the RTTs and the loss); what was decided before
// the cut counts, the probes in flight are left out (not lost), and the
// targets are probed again one Interval after the cut at the soonest.
// false when ctx ended (a cycle cut short by shutdown is not a measurement).
func (l *serveLoop) sweep(ctx context.Context, ready []Resolved, period time.Duration, traceCycle bool) (time.Time, []Resolved, bool) {
	e, clk := l.e, l.cfg.Clock
	var outs []PingOutcome
	start, cut, err := l.sched.Round(ctx, func(rctx context.Context) { outs = l.p.Ping(rctx, ready) })
	if err != nil {
		return start, nil, false
	}
	if cut {
		at := clk.Now().Add(l.cfg.Interval)
		for i, r := range ready {
			if i < len(outs) && outs[i].Err == nil {
				e.ObservePing(r.Target, outs[i])
			}
			e.postpone(r.Target, at)
			if traceCycle {
				l.owed[r.key()] = true
			}
		}
		return start, nil, true
	}
	var traced []Resolved
	for i, r := range ready {
		if i >= len(outs) {
			// Not measured: a failure, so that it cannot be retried at once.
			e.fail(r.Target, errors.New("the prober returned no outcome"), clk.Now(), l.cfg, period, true)
			continue
		}
		e.ObservePing(r.Target, outs[i])
		if outs[i].Err != nil {
			e.fail(r.Target, outs[i].Err, clk.Now(), l.cfg, period, false) // ObservePing counted it
			continue
		}
		e.succeed(r.Target, r.IP, start.Add(period+l.cfg.Pause))
		traced = append(traced, r)
	}
	return start, traced, true
}

// trace traces the measured targets due a trace (every TraceEvery cycles,
// or owed one a test cut), each in a round of its own, and returns the
// packets they sent. A trace cut by a throughput test is no result: the
// target is traced again in the next cycle. false when ctx ended.
func (l *serveLoop) trace(ctx context.Context, traced []Resolved, traceCycle bool, period time.Duration) (int, bool) {
	e, clk := l.e, l.cfg.Clock
	packets := 0
	for _, r := range traced {
		if !traceCycle && !l.owed[r.key()] || !e.traceDue(r.Target, clk.Now()) {
			continue
		}
		var tr *route.Trace
		var terr error
		_, cut, err := l.sched.Round(ctx, func(rctx context.Context) { tr, terr = l.p.Trace(rctx, r) })
		if err != nil {
			return packets, false
		}
		packets += l.cfg.TraceProbes
		if tr != nil && tr.Multipath != nil {
			// A multipath discovery sends as many probes as it needed.
			packets += max(0, tr.Multipath.ProbesUsed-l.cfg.TraceProbes)
		}
		if cut {
			l.owed[r.key()] = true
			continue
		}
		delete(l.owed, r.key())
		e.ObserveTrace(r.Target, tr, terr)
		e.traceResult(r.Target, terr, clk.Now(), l.cfg, period)
	}
	return packets, true
}

// cyclePeriod is how long after its start a cycle of ts lets them be probed
// again (pacing.Period: their interval kept whatever the next cycle's grouping).
func cyclePeriod(ts []Resolved, cfg LoopConfig) time.Duration {
	sts := make([]probe.SweepTarget, len(ts))
	for i, t := range ts {
		sts[i] = probe.SweepTarget{Target: probe.Target{Name: t.Addr, Addr: t.IP}, Protocol: t.Protocol, Port: t.Port}
	}
	return pacing.Period(sts, probe.PingConfig{Count: cfg.Count, Interval: cfg.Interval, Rate: cfg.Rate})
}

// targetState is the loop's view of one target, shown on / and /-/healthy.
type targetState struct {
	next     time.Time // not probed before then
	fails    int       // failures in a row
	lastErr  string
	probed   bool // at least one cycle measured it
	trNext   time.Time
	trFails  int
	trErr    string
	resolved netip.Addr
	// winSent and winRecv are its window's probes and answers, as last
	// computed (windowSeries): what linecheck_target_up follows.
	winSent, winRecv int
	refused          int // TCP connections its last cycle had refused
}

// nextDue is the earliest time a current target may be probed; false when
// there is no target.
func (e *Exporter) nextDue() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var at time.Time
	for i, t := range e.targets {
		n := e.state[t.key()].next
		if i == 0 || n.Before(at) {
			at = n
		}
	}
	return at, len(e.targets) > 0
}

// dueTargets returns the targets whose wait has ended by now, in file order.
func (e *Exporter) dueTargets(now time.Time) []Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Target
	for _, t := range e.targets {
		if !e.state[t.key()].next.After(now) {
			out = append(out, t)
		}
	}
	return out
}

// fail records a failed attempt at t (counted as an error when count): the
// target is down until its backoff ends.
func (e *Exporter) fail(t Target, err error, now time.Time, cfg LoopConfig, period time.Duration, count bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.listed(t) {
		return
	}
	s := e.state[t.key()]
	if s == nil {
		return
	}
	s.fails++
	changed := s.lastErr != err.Error()
	s.lastErr = err.Error()
	s.next = now.Add(pacing.Backoff(period, cfg.MaxBackoff, s.fails))
	l := labelsOf(t)
	if count {
		e.errs.With(l).Inc()
	}
	e.up.With(l).Set(0)
	// Said when it starts or changes, not at every retry: / shows the rest.
	if s.fails == 1 || changed {
		e.logf("%s %s %s: %v (failure %d in a row: backing off, next try in %v, at most %v apart)",
			t.Candidate, t.Protocol, t.Label(), err, s.fails, s.next.Sub(now).Round(time.Millisecond), cfg.MaxBackoff)
	}
}

// succeed records a measured cycle of t at ip; next is when it may be probed again.
func (e *Exporter) succeed(t Target, ip netip.Addr, next time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state[t.key()]
	if s == nil {
		return
	}
	if s.fails > 0 {
		e.logf("%s %s %s: probing again after %d failure(s)", t.Candidate, t.Protocol, t.Label(), s.fails)
	}
	// linecheck_target_up follows the window's answers (ObservePing).
	s.fails, s.lastErr, s.probed, s.next, s.resolved = 0, "", true, next, ip
}

func (e *Exporter) traceDue(t Target, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state[t.key()]
	return s != nil && !s.trNext.After(now)
}

// traceResult backs off the traces of t while they fail (no raw-socket
// privilege, say); its echo or connect probing goes on.
func (e *Exporter) traceResult(t Target, err error, now time.Time, cfg LoopConfig, period time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state[t.key()]
	if s == nil {
		return
	}
	if err == nil {
		s.trFails, s.trErr, s.trNext = 0, "", time.Time{}
		return
	}
	s.trFails++
	s.trErr = err.Error()
	s.trNext = now.Add(pacing.Backoff(period, cfg.MaxBackoff, s.trFails))
	if s.trFails == 1 {
		e.logf("%s %s %s: trace: %v (traces back off, up to %v apart)", t.Candidate, t.Protocol, t.Label(), err, cfg.MaxBackoff)
	}
}

// logf writes one line to the exporter's log (serve's stderr); e.mu is held.
func (e *Exporter) logf(format string, a ...any) {
	if e.log != nil {
		fmt.Fprintf(e.log, "linecheck serve: "+format+"\n", a...)
	}
}

// postpone makes t due no sooner than at (a sweep cut for a throughput
// test: neither a success nor a failure).
func (e *Exporter) postpone(t Target, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.state[t.key()]; s != nil && s.next.Before(at) {
		s.next = at
	}
}

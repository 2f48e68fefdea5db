package exporter

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
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
	Quiet *compare.Quiet
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
	clk := cfg.Clock
	budget := pacing.NewBudget(cfg.Rate) // serve's one packets-per-second cap
	n := 0                               // cycles: sweeps run (retries that fail before one are not cycles)
	owed := map[string]bool{}            // targets whose trace a throughput test cut: traced next cycle
	for ctx.Err() == nil {
		// Wait until a target is due and the rate budget allows a cycle; a
		// reload wakes the wait (its new targets are due at once).
		for {
			now := clk.Now()
			at, ok := e.nextDue()
			if b := budget.Ready(); at.Before(b) {
				at = b
			}
			if ok && !at.After(now) {
				break
			}
			var timer <-chan time.Time
			if ok {
				timer = clk.After(at.Sub(now))
			}
			select {
			case <-ctx.Done():
				return
			case <-e.wake:
			case <-timer:
			}
		}
		start := clk.Now()
		due := e.dueTargets(start)
		period := cyclePeriod(nil, cfg) // the backoff base for what fails before the sweep
		var ready []Resolved
		for _, t := range due {
			ip, err := cfg.Resolver.Resolve(ctx, t.Addr)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				e.fail(t, err, clk.Now(), cfg, period, true)
				continue
			}
			ready = append(ready, Resolved{Target: t, IP: ip})
		}
		period = cyclePeriod(ready, cfg)
		packets := 0
		var traced []Resolved
		traceCycle := cfg.TraceEvery > 0 && n%cfg.TraceEvery == 0 // the cycle about to run is number n+1
		swept := len(ready) > 0
		if swept {
			// A throughput test holds the sweep back (and cuts one under
			// way): its traffic would inflate the RTTs and the loss.
			rctx, done, err := cfg.Quiet.Round(ctx)
			if err != nil {
				return
			}
			n++
			// The sweep's schedule starts now, after any wait for a lookup
			// or a test: the next cycle is due one period after this.
			start = clk.Now()
			outs := p.Ping(rctx, ready)
			// Read before done(): done cancels rctx, so afterwards every
			// sweep would look cut by a test.
			cutByTest := rctx.Err() != nil
			done()
			if ctx.Err() != nil {
				return // a cycle cut short by shutdown is not a measurement
			}
			packets += cfg.Count * len(ready)
			if cutByTest {
				// Cut for a throughput test: what was decided before counts,
				// the probes in flight are left out (not lost).
				cut := clk.Now()
				for i, r := range ready {
					if i < len(outs) && outs[i].Err == nil {
						e.ObservePing(r.Target, outs[i])
					}
					e.postpone(r.Target, cut.Add(cfg.Interval))
					if traceCycle {
						owed[r.key()] = true
					}
				}
				ready = nil
			}
			for i, r := range ready {
				if i >= len(outs) {
					// Not measured: a failure, so that it cannot be retried at once.
					e.fail(r.Target, errors.New("the prober returned no outcome"), clk.Now(), cfg, period, true)
					continue
				}
				e.ObservePing(r.Target, outs[i])
				if outs[i].Err != nil {
					e.fail(r.Target, outs[i].Err, clk.Now(), cfg, period, false) // ObservePing counted it
					continue
				}
				e.succeed(r.Target, r.IP, start.Add(period+cfg.Pause))
				traced = append(traced, r)
			}
		}
		for _, r := range traced {
			if !traceCycle && !owed[r.key()] || !e.traceDue(r.Target, clk.Now()) {
				continue
			}
			rctx, done, err := cfg.Quiet.Round(ctx)
			if err != nil {
				return
			}
			tr, err := p.Trace(rctx, r)
			cutByTest := rctx.Err() != nil // before done(), which cancels rctx
			done()
			if ctx.Err() != nil {
				return
			}
			packets += cfg.TraceProbes
			if cutByTest {
				owed[r.key()] = true // cut for a throughput test: not a result
				continue
			}
			delete(owed, r.key())
			e.ObserveTrace(r.Target, tr, err)
			e.traceResult(r.Target, err, clk.Now(), cfg, period)
		}
		budget.Spend(start, packets)
		if swept {
			e.CycleDone()
			if cfg.OnCycle != nil {
				cfg.OnCycle(n)
			}
		}
	}
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

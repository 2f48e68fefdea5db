package engine

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// This file is serve's probing loop: cycles over every target of the
// configuration, whose state (when each target is due, its failures, its
// metrics) the surface keeps and hands to the loop as a CycleState.

// ServeHint is what serve advises when a target's address is one it never probes.
const ServeHint = "serve never probes one: list a unicast address"

// CycleTarget is what the cycles probe of one target.
type CycleTarget struct {
	Addr     string // an IP address or a host name, as the file writes it
	Protocol probe.Protocol
	Port     int
	// Multipath traces the target with multipath discovery (the first
	// target of a candidate with multipath: true, as compare traces it).
	Multipath bool
	// Key names the target across reloads (a trace a test cut is owed to it).
	Key string
}

// CycleState is the surface's state of its targets (serve's exporter):
// which are due, and what each cycle found. The loop calls it from one
// goroutine; a reload may change the targets meanwhile (then Wake says so).
type CycleState[T any] interface {
	// Probed is how target t is probed.
	Probed(t T) CycleTarget
	// NextDue is the earliest time a current target may be probed; false
	// when there is no target.
	NextDue() (time.Time, bool)
	// DueTargets are the targets whose wait has ended by now, in order.
	DueTargets(now time.Time) []T
	// Wake delivers when the targets changed (a reload's are due at once).
	Wake() <-chan struct{}
	// Fail records a failed attempt at t (counted as an error when count):
	// t waits pacing.Backoff(base, maxBackoff, its failures in a row).
	Fail(t T, err error, now time.Time, base, maxBackoff time.Duration, count bool)
	// Succeed records a measured cycle of t at ip; next is when it may be
	// probed again.
	Succeed(t T, ip netip.Addr, next time.Time)
	// Postpone makes t due no sooner than at (a sweep cut for a throughput
	// test: neither a success nor a failure).
	Postpone(t T, at time.Time)
	// TraceDue tells whether t's traces are not backing off.
	TraceDue(t T, now time.Time) bool
	// TraceResult backs t's traces off while they fail (base and
	// maxBackoff as Fail's).
	TraceResult(t T, err error, now time.Time, base, maxBackoff time.Duration)
	// ObservePing adds one cycle's outcome of t; ObserveTrace one trace.
	ObservePing(t T, o PingOutcome)
	ObserveTrace(t T, tr *route.Trace, err error)
	// CycleDone counts one cycle (one sweep of the targets due).
	CycleDone()
}

// PingOutcome is one target's outcome of one cycle's sweep.
type PingOutcome struct {
	Sent, Recv, Late, Dup int
	// Refused counts TCP probes whose connection was refused (lost: the
	// port is closed); the status page says so.
	Refused int
	RTTms   []float64 // RTTs of received replies, in ms
	Err     error     // the cycle failed for this target
}

// PingOutcomes turns one probe.Sweep over some targets (res in their order,
// err the sweep's own error) into each target's outcome: a sweep that failed
// as a whole fails every target, else each keeps its own error or counts.
func PingOutcomes(res []probe.SweepResult, err error, n int) []PingOutcome {
	out := make([]PingOutcome, n)
	for i := range out {
		switch {
		case err != nil:
			out[i].Err = err
		case res[i].Err != nil:
			out[i].Err = res[i].Err
		default:
			r := res[i]
			out[i] = PingOutcome{Sent: r.Sent, Recv: r.Recv, Late: r.Late, Dup: r.Dup, Refused: r.Refused, RTTms: r.RTTs}
		}
	}
	return out
}

// CycleConfig paces the cycles and says how they probe. Count, Interval
// and Rate are what the sweeps send with: the loop derives from them how
// soon a target may be probed again and how many packets a cycle sent.
type CycleConfig struct {
	// Prober sends (Sender when nil).
	Prober Prober
	// Count probes per target per cycle, Interval between two of them, Rate
	// the global cap in packets per second (probe.PingConfig's fields);
	// Timeout the wait for a reply (probe's default when 0).
	Count    int
	Interval time.Duration
	Rate     float64
	Timeout  time.Duration
	// TraceProbes is the most packets one trace sends: its max TTL.
	TraceProbes int
	// ASNDB annotates the traces' line class offline (may be nil).
	ASNDB route.ASNDB
	// Pause is the wait between the end of one cycle and the start of the next.
	Pause time.Duration
	// TraceEvery runs a trace of every target each n-th cycle (first cycle
	// included); 0 never traces.
	TraceEvery int
	// MaxBackoff caps the exponential backoff of a failing target
	// (pacing.DefaultMaxBackoff when 0).
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
	Quiet *Quiet
}

// WithDefaults is c with its zero fields at their defaults (probe's count,
// interval and rate, Sender, the real clock, a resolver with ServeHint).
func (c CycleConfig) WithDefaults() CycleConfig {
	if c.Prober == nil {
		c.Prober = Sender{}
	}
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
		c.MaxBackoff = pacing.DefaultMaxBackoff
	}
	if c.Clock == nil {
		c.Clock = pacing.RealClock{}
	}
	if c.Resolver == nil {
		c.Resolver = pacing.NewResolver(nil, c.Clock, 0).WithHint(ServeHint)
	}
	return c
}

// RunCycles probes the targets of s until ctx ends. The first cycle starts
// at once. Pacing (docs/scaleout.md, Pacing): a target is probed again no
// sooner than one Interval after the last probe of its previous cycle was
// due (the prober must send on probe.Sweep's schedule, as Sender does); a
// cycle starts no sooner than its predecessor's packets allow under Rate
// (traces included), whether its probes were answered, lost or failed at
// once; a target whose probing fails (resolution, socket, privilege) waits
// an exponential backoff, capped at MaxBackoff, and is reported down
// meanwhile.
//
// While cfg.Quiet is held (a throughput test fills the line) no probe is
// sent. A sweep cut by the hold counts what was decided before it (the
// prober leaves probes still in flight out of Sent: they are not lost) and
// is no failure; its targets are probed again once the test is over, one
// Interval after the cut at the soonest. A trace cut by the hold is no
// result: the target is traced again in the next cycle.
func RunCycles[T any](ctx context.Context, s CycleState[T], cfg CycleConfig) {
	cfg = cfg.WithDefaults()
	l := &cycles[T]{s: s, cfg: cfg, owed: map[string]bool{},
		// serve's one packets-per-second cap, and the one scheduler: the
		// rules of when a round starts and when a test cut it are every
		// live loop's.
		sched: Scheduler{Clock: cfg.Clock, Budget: pacing.NewBudget(cfg.Rate), Quiet: cfg.Quiet}}
	// Each cycle starts once a target is due and the rate budget allows
	// it; a reload wakes the wait (its new targets are due at once).
	l.sched.Run(ctx, l, s.Wake())
}

// cycles is RunCycles' state across cycles.
type cycles[T any] struct {
	s     CycleState[T]
	cfg   CycleConfig
	sched Scheduler
	n     int             // cycles: sweeps run (retries that fail before one are not cycles)
	owed  map[string]bool // targets whose trace a throughput test cut: traced next cycle
}

// resolved is a target with the address it is probed at.
type resolved[T any] struct {
	t  T
	ct CycleTarget
	ip netip.Addr
}

// Due is Rounds' Due: the earliest time a current target may be probed.
func (l *cycles[T]) Due() (time.Time, bool) { return l.s.NextDue() }

// Round is one cycle (Rounds' Round).
func (l *cycles[T]) Round(ctx context.Context, _ Scheduler) bool { return l.cycle(ctx) }

// cycle runs one cycle of the targets due: resolve them, sweep them, trace
// those due a trace, charge the packets to the budget. false when ctx ended.
func (l *cycles[T]) cycle(ctx context.Context) bool {
	clk := l.cfg.Clock
	start := clk.Now()
	ready, ok := l.resolve(ctx, start)
	if !ok {
		return false
	}
	period := cyclePeriod(ready, l.cfg)
	traceCycle := l.cfg.TraceEvery > 0 && l.n%l.cfg.TraceEvery == 0 // the cycle about to run is number n+1
	packets := 0
	var traced []resolved[T]
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
		l.s.CycleDone()
		if l.cfg.OnCycle != nil {
			l.cfg.OnCycle(l.n)
		}
	}
	return true
}

// resolve looks the names of the targets due at start up; a target that
// does not resolve fails (and backs off). false when ctx ended.
func (l *cycles[T]) resolve(ctx context.Context, start time.Time) ([]resolved[T], bool) {
	period := cyclePeriod[T](nil, l.cfg) // the backoff base for what fails before the sweep
	var ready []resolved[T]
	for _, t := range l.s.DueTargets(start) {
		ct := l.s.Probed(t)
		ip, err := l.cfg.Resolver.Resolve(ctx, ct.Addr)
		if ctx.Err() != nil {
			return nil, false
		}
		if err != nil {
			l.s.Fail(t, err, l.cfg.Clock.Now(), period, l.cfg.MaxBackoff, true)
			continue
		}
		ready = append(ready, resolved[T]{t: t, ct: ct, ip: ip})
	}
	return ready, true
}

// ping probes ready in one mixed-protocol sweep (probe.Sweep: icmp in one,
// tcp in one per port, side by side under the Rate cap). A target the
// prober returned no outcome for has none (sweep fails it).
func (l *cycles[T]) ping(ctx context.Context, ready []resolved[T]) []PingOutcome {
	sts := sweepTargets(ready)
	res, err := l.cfg.Prober.Sweep(ctx, sts, probe.PingConfig{Count: l.cfg.Count, Interval: l.cfg.Interval, Timeout: l.cfg.Timeout, Rate: l.cfg.Rate}, nil)
	n := len(ready)
	if err == nil {
		n = min(n, len(res))
	}
	return PingOutcomes(res, err, n)
}

// sweep probes ready in one round and records each target's outcome; it
// returns when the sweep's schedule started (the next cycle is due one
// period after it) and the targets measured, which may be traced. A
// throughput test holds the sweep back (and cuts one under way: its
// traffic would inflate the RTTs and the loss); what was decided before
// the cut counts, the probes in flight are left out (not lost), and the
// targets are probed again one Interval after the cut at the soonest.
// false when ctx ended (a cycle cut short by shutdown is not a measurement).
func (l *cycles[T]) sweep(ctx context.Context, ready []resolved[T], period time.Duration, traceCycle bool) (time.Time, []resolved[T], bool) {
	s, clk := l.s, l.cfg.Clock
	var outs []PingOutcome
	start, cut, err := l.sched.Round(ctx, func(rctx context.Context) { outs = l.ping(rctx, ready) })
	if err != nil {
		return start, nil, false
	}
	if cut {
		at := clk.Now().Add(l.cfg.Interval)
		for i, r := range ready {
			if i < len(outs) && outs[i].Err == nil {
				s.ObservePing(r.t, outs[i])
			}
			s.Postpone(r.t, at)
			if traceCycle {
				l.owed[r.ct.Key] = true
			}
		}
		return start, nil, true
	}
	var traced []resolved[T]
	for i, r := range ready {
		if i >= len(outs) {
			// Not measured: a failure, so that it cannot be retried at once.
			s.Fail(r.t, errors.New("the prober returned no outcome"), clk.Now(), period, l.cfg.MaxBackoff, true)
			continue
		}
		s.ObservePing(r.t, outs[i])
		if outs[i].Err != nil {
			s.Fail(r.t, outs[i].Err, clk.Now(), period, l.cfg.MaxBackoff, false) // ObservePing counted it
			continue
		}
		s.Succeed(r.t, r.ip, start.Add(period+l.cfg.Pause))
		traced = append(traced, r)
	}
	return start, traced, true
}

// trace traces the measured targets due a trace (every TraceEvery cycles,
// or owed one a test cut), each in a round of its own, and returns the
// packets they sent. A trace cut by a throughput test is no result: the
// target is traced again in the next cycle. false when ctx ended.
func (l *cycles[T]) trace(ctx context.Context, traced []resolved[T], traceCycle bool, period time.Duration) (int, bool) {
	s, clk := l.s, l.cfg.Clock
	packets := 0
	for _, r := range traced {
		if !traceCycle && !l.owed[r.ct.Key] || !s.TraceDue(r.t, clk.Now()) {
			continue
		}
		var tr *route.Trace
		var terr error
		_, cut, err := l.sched.Round(ctx, func(rctx context.Context) { tr, terr = l.traceOnce(rctx, r.ct, r.ip) })
		if err != nil {
			return packets, false
		}
		packets += l.cfg.TraceProbes
		if tr != nil && tr.Multipath != nil {
			// A multipath discovery sends as many probes as it needed.
			packets += max(0, tr.Multipath.ProbesUsed-l.cfg.TraceProbes)
		}
		if cut {
			l.owed[r.ct.Key] = true
			continue
		}
		delete(l.owed, r.ct.Key)
		s.ObserveTrace(r.t, tr, terr)
		s.TraceResult(r.t, terr, clk.Now(), period, l.cfg.MaxBackoff)
	}
	return packets, true
}

// traceOnce is the trace of a cycle (CycleConfig.Trace).
func (l *cycles[T]) traceOnce(ctx context.Context, t CycleTarget, ip netip.Addr) (*route.Trace, error) {
	return l.cfg.trace(ctx, t, ip)
}

// Trace traces t at ip once, as a cycle does: one round over all TTLs
// (TraceProbes), with the target's protocol and port, paced by Rate, for
// the hop metrics, its line class annotated offline (ASNDB). A multipath
// target gets the discovery compare runs toward a multipath candidate's
// first target (MultipathTraceConfig, one cycle per path); a
// prober that cannot run one traces one path.
func (c CycleConfig) Trace(ctx context.Context, t CycleTarget, ip netip.Addr) (*route.Trace, error) {
	return c.WithDefaults().trace(ctx, t, ip)
}

func (c CycleConfig) trace(ctx context.Context, t CycleTarget, ip netip.Addr) (*route.Trace, error) {
	if mp, ok := c.Prober.(MultipathProber); ok && t.Multipath {
		cfg := MultipathTraceConfig(candidates.Target{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port}, 1, c.Timeout)
		cfg.MaxTTL, cfg.Rate, cfg.Burst = c.TraceProbes, c.Rate, 1
		tr, err := mp.Multipath(ctx, ip.String(), cfg)
		if err != nil {
			return nil, err
		}
		route.Annotate(tr, c.ASNDB)
		return tr, nil
	}
	var tr *route.Trace
	err := c.Prober.Trace(ctx, ip.String(), probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: c.TraceProbes,
		Cycles: 1, Timeout: c.Timeout, Rate: c.Rate, Burst: 1}, func(t *route.Trace) { tr = t })
	if err != nil {
		return nil, err
	}
	if tr == nil {
		return nil, errors.New("no trace cycle completed")
	}
	route.Annotate(tr, c.ASNDB)
	return tr, nil
}

// sweepTargets are the probe targets of ready, in its order.
func sweepTargets[T any](ready []resolved[T]) []probe.SweepTarget {
	sts := make([]probe.SweepTarget, len(ready))
	for i, r := range ready {
		sts[i] = probe.SweepTarget{Target: probe.Target{Name: r.ct.Addr, Addr: r.ip}, Protocol: r.ct.Protocol, Port: r.ct.Port}
	}
	return sts
}

// cyclePeriod is how long after its start a cycle of ready lets them be
// probed again (pacing.Period: their interval kept whatever the next
// cycle's grouping).
func cyclePeriod[T any](ready []resolved[T], cfg CycleConfig) time.Duration {
	return pacing.Period(sweepTargets(ready), probe.PingConfig{Count: cfg.Count, Interval: cfg.Interval, Rate: cfg.Rate})
}

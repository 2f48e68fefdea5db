package exporter

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/pacing"
)

// The exporter's side of serve's probing loop: the state of every target
// (when it is due, its failures, its traces' backoff), which the engine's
// cycles read and update (engine.RunCycles over the Exporter, an
// engine.CycleState), and which / and /-/healthy show.

// DefaultMaxBackoff caps the wait before a failing target is tried again.
const DefaultMaxBackoff = pacing.DefaultMaxBackoff

// Clock is the loop's time: the real one in serve, a fake in tests.
type Clock = engine.Clock

// Probed is how the cycles probe t (engine.CycleState).
func (e *Exporter) Probed(t Target) engine.CycleTarget {
	return engine.CycleTarget{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port, Multipath: t.Multipath, Key: t.key()}
}

// Wake delivers when a reload changed the targets (engine.CycleState).
func (e *Exporter) Wake() <-chan struct{} { return e.wake }

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

// NextDue is the earliest time a current target may be probed; false when
// there is no target.
func (e *Exporter) NextDue() (time.Time, bool) {
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

// DueTargets returns the targets whose wait has ended by now, in file order.
func (e *Exporter) DueTargets(now time.Time) []Target {
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

// Fail records a failed attempt at t (counted as an error when count): the
// target is down until its backoff ends (pacing.Backoff of base, capped at
// maxBackoff).
func (e *Exporter) Fail(t Target, err error, now time.Time, base, maxBackoff time.Duration, count bool) {
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
	s.next = now.Add(pacing.Backoff(base, maxBackoff, s.fails))
	l := labelsOf(t)
	if count {
		e.errs.With(l).Inc()
	}
	e.up.With(l).Set(0)
	// Said when it starts or changes, not at every retry: / shows the rest.
	if s.fails == 1 || changed {
		e.logf("%s %s %s: %v (failure %d in a row: backing off, next try in %v, at most %v apart)",
			t.Candidate, t.Protocol, t.Label(), err, s.fails, s.next.Sub(now).Round(time.Millisecond), maxBackoff)
	}
}

// Succeed records a measured cycle of t at ip; next is when it may be probed again.
func (e *Exporter) Succeed(t Target, ip netip.Addr, next time.Time) {
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

// TraceDue tells whether t's traces are not backing off.
func (e *Exporter) TraceDue(t Target, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state[t.key()]
	return s != nil && !s.trNext.After(now)
}

// TraceResult backs off the traces of t while they fail (no raw-socket
// privilege, say); its echo or connect probing goes on.
func (e *Exporter) TraceResult(t Target, err error, now time.Time, base, maxBackoff time.Duration) {
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
	s.trNext = now.Add(pacing.Backoff(base, maxBackoff, s.trFails))
	if s.trFails == 1 {
		e.logf("%s %s %s: trace: %v (traces back off, up to %v apart)", t.Candidate, t.Protocol, t.Label(), err, maxBackoff)
	}
}

// logf writes one line to the exporter's log (serve's stderr); e.mu is held.
func (e *Exporter) logf(format string, a ...any) {
	if e.log != nil {
		fmt.Fprintf(e.log, "linecheck serve: "+format+"\n", a...)
	}
}

// Postpone makes t due no sooner than at (a sweep cut for a throughput
// test: neither a success nor a failure).
func (e *Exporter) Postpone(t Target, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s := e.state[t.key()]; s != nil && s.next.Before(at) {
		s.next = at
	}
}

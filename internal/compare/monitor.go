package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// This file is the continuous side of live measurement: the loops the TUI
// (and any other long-running frontend) run to keep every candidate's
// figures and routes current. compare's one-shot run (live.go) and these
// loops share the target checks and the probe configuration.

// Prober sends live probes. The real one (ProbeSender) uses package probe;
// tests inject their own so no packet leaves.
type Prober interface {
	// Sweep probes the targets (each with its protocol and port) Count
	// times each, calling onRecord (when not nil) for every outcome as it
	// is decided, and returns each target's summary.
	Sweep(ctx context.Context, targets []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error)
	// Trace runs cfg.Cycles trace cycles to addr, calling onCycle with a
	// new document after each cycle; the caller owns that document.
	Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error
}

// ProbeSender is the Prober that really sends (package probe).
type ProbeSender struct{}

// Sweep calls probe.Sweep (one entry point for mixed-protocol targets).
func (ProbeSender) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error) {
	return probe.Sweep(ctx, ts, cfg, onRecord)
}

// Trace calls probe.Trace. Every onCycle call gets a document built afresh
// (route.BuildTrace) from a snapshot of the results so far, which the
// tracer never touches again: no copy is needed.
func (ProbeSender) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error {
	var each func(*probe.TraceRun)
	if onCycle != nil {
		each = func(r *probe.TraceRun) { onCycle(route.BuildTrace(r)) }
	}
	_, err := probe.Trace(ctx, addr, cfg, each)
	return err
}

// Event is one live update of a candidate: a probe record, a trace snapshot
// (after each completed cycle) or an error. Exactly one of Record, Trace and
// Err is set.
type Event struct {
	Candidate string
	Record    *probe.Record
	// Trace is annotated (carriers, line class) and belongs to the receiver.
	Trace *route.Trace
	// Direction of Trace: "forward" (live traces are always forward).
	Direction string
	Err       error
}

// MonitorOptions configure the live loops.
type MonitorOptions struct {
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
	// Prober sends the probes; nil means ProbeSender.
	Prober Prober
	// Backoff is the wait after a failed round before the next (default 5 s).
	Backoff time.Duration
}

func (o *MonitorOptions) defaults() {
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
	if o.Prober == nil {
		o.Prober = ProbeSender{}
	}
	if o.Backoff <= 0 {
		o.Backoff = 5 * time.Second
	}
}

// Loop is one live loop: it runs until ctx ends, calling emit for every
// event. emit must not block.
type Loop func(ctx context.Context, emit func(Event))

// MonitorLoops returns the live loops of every candidate of f: one ping
// loop over every target of every candidate (one mixed-protocol sweep a
// round, so the probes of all targets share one pace) and one trace loop
// (forward, to the first target with its protocol and port) per candidate.
// It refuses what a live run of compare refuses: a recorded_only file,
// documentation addresses.
func MonitorLoops(f *File, o MonitorOptions) ([]Loop, error) {
	if f.RecordedOnly {
		return nil, ErrRecordedOnly
	}
	if err := CheckLiveTargets(f); err != nil {
		return nil, err
	}
	o.defaults()
	var owned []OwnedTarget
	var loops []Loop
	for i := range f.Candidates {
		c := &f.Candidates[i]
		for _, t := range c.Targets {
			owned = append(owned, OwnedTarget{Candidate: c.Name, Target: t})
		}
		if len(c.Targets) > 0 {
			loops = append(loops, TraceLoop(c.Name, c.Targets[0], o))
		}
	}
	if len(owned) > 0 {
		loops = append([]Loop{SweepLoop(owned, o)}, loops...)
	}
	return loops, nil
}

// OwnedTarget is a probe target of a candidate.
type OwnedTarget struct {
	Candidate string
	Target    Target
}

// PingLoop probes one target of a candidate round after round (SweepLoop
// of one target).
func PingLoop(candidate string, t Target, o MonitorOptions) Loop {
	return SweepLoop([]OwnedTarget{{Candidate: candidate, Target: t}}, o)
}

// SweepLoop probes the targets round after round, o.Count probes each per
// round, in one mixed-protocol sweep (ICMP echo and TCP connect side by
// side), emitting every record to the candidate that owns its target. A
// target that does not resolve, or whose protocol's sweep fails (no
// privilege), is reported as an Event with Err and left out of that round;
// when no target could be probed the loop waits o.Backoff before the next.
func SweepLoop(targets []OwnedTarget, o MonitorOptions) Loop {
	o.defaults()
	cfg := probe.PingConfig{Count: o.Count, Interval: o.Interval, Timeout: o.Timeout}
	type key struct {
		addr  string
		proto probe.Protocol
		port  int
	}
	keyOf := func(addr string, proto probe.Protocol, port int) key {
		if proto == "" || proto == probe.ICMP {
			return key{addr, probe.ICMP, 0}
		}
		return key{addr, proto, port}
	}
	return func(ctx context.Context, emit func(Event)) {
		for ctx.Err() == nil {
			start := time.Now()
			var sts []probe.SweepTarget
			var owners [][]string // per sweep target, the candidates that listed it
			index := map[key]int{}
			for _, ot := range targets {
				t := ot.Target
				pt, err := resolveTarget(ctx, t)
				if err != nil {
					if ctx.Err() == nil {
						emit(Event{Candidate: ot.Candidate, Err: fmt.Errorf("ping %s: %w", t, err)})
					}
					continue
				}
				k := keyOf(pt.Addr.String(), t.Protocol, t.Port)
				if i, ok := index[k]; ok {
					owners[i] = append(owners[i], ot.Candidate)
					continue
				}
				index[k] = len(sts)
				sts = append(sts, probe.SweepTarget{Target: pt, Protocol: t.Protocol, Port: t.Port})
				owners = append(owners, []string{ot.Candidate})
			}
			probed := false
			if len(sts) > 0 {
				res, err := o.Prober.Sweep(ctx, sts, cfg, func(r probe.Record) {
					i, ok := index[keyOf(r.Addr, r.Protocol, r.Port)]
					if !ok {
						return
					}
					for _, name := range owners[i] {
						rec := r
						emit(Event{Candidate: name, Record: &rec})
					}
				})
				switch {
				case err != nil && ctx.Err() == nil:
					for i, st := range sts {
						for _, name := range owners[i] {
							emit(Event{Candidate: name, Err: fmt.Errorf("ping %s: %w", Target{Addr: st.Name, Protocol: st.Protocol, Port: st.Port}, err)})
						}
					}
				case err == nil:
					for i, r := range res {
						if r.Err == nil {
							probed = true
							continue
						}
						st := sts[i]
						for _, name := range owners[i] {
							emit(Event{Candidate: name, Err: fmt.Errorf("ping %s: %w", Target{Addr: st.Name, Protocol: st.Protocol, Port: st.Port}, r.Err)})
						}
					}
				}
			}
			if !probed && ctx.Err() == nil {
				wait(ctx, o.Backoff)
			} else {
				// The interval holds across rounds too, whatever a round took.
				paceRound(ctx, start, o.Interval)
			}
		}
	}
}

// traceConfig is the forward-trace configuration of a target: its protocol
// and port, as compare's one-shot run traces it.
func traceConfig(t Target, cycles int, interval, timeout time.Duration) probe.TraceConfig {
	return probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: 30, Cycles: cycles, Interval: interval, Timeout: timeout}
}

// paceRound waits until at least min has passed since start.
func paceRound(ctx context.Context, start time.Time, min time.Duration) {
	if left := min - time.Since(start); left > 0 {
		wait(ctx, left)
	}
}

// wait sleeps d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// TraceLoop traces a candidate's target continuously, mtr style: one
// cycle every o.TraceInterval, a snapshot (annotated with carriers and the
// line class) emitted after each cycle, runs of o.TraceRunCycles cycles one
// after another. A failed run is reported and retried after o.Backoff.
func TraceLoop(candidate string, t Target, o MonitorOptions) Loop {
	o.defaults()
	cfg := traceConfig(t, o.TraceRunCycles, o.TraceInterval, o.Timeout)
	return func(ctx context.Context, emit func(Event)) {
		for ctx.Err() == nil {
			start := time.Now()
			pt, err := resolveTarget(ctx, t)
			if err == nil {
				err = o.Prober.Trace(ctx, pt.Addr.String(), cfg, func(tr *route.Trace) {
					tr.Target = t.Addr
					route.Annotate(tr, o.ASNDB)
					emit(Event{Candidate: candidate, Trace: tr, Direction: "forward"})
				})
			}
			if err != nil && ctx.Err() == nil {
				emit(Event{Candidate: candidate, Err: fmt.Errorf("trace %s: %w", t, err)})
				wait(ctx, o.Backoff)
			} else {
				// A run that ended early never makes the loop spin.
				paceRound(ctx, start, o.TraceInterval)
			}
		}
	}
}

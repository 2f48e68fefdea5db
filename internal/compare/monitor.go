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
// from the results so far (route.BuildHops), which the tracer never
// touches again: no copy is needed.
func (ProbeSender) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error {
	_, err := probe.Trace(ctx, addr, cfg, onCycle)
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
// loop per target and one trace loop (forward, to the first target with
// its protocol and port) per candidate. It refuses what a live run of
// compare refuses: a recorded_only file, documentation addresses.
func MonitorLoops(f *File, o MonitorOptions) ([]Loop, error) {
	if f.RecordedOnly {
		return nil, ErrRecordedOnly
	}
	if err := CheckLiveTargets(f); err != nil {
		return nil, err
	}
	o.defaults()
	var loops []Loop
	for i := range f.Candidates {
		c := &f.Candidates[i]
		for _, t := range c.Targets {
			loops = append(loops, PingLoop(c.Name, t, o))
		}
		if len(c.Targets) > 0 {
			loops = append(loops, TraceLoop(c.Name, c.Targets[0], o))
		}
	}
	return loops, nil
}

// traceConfig is the forward-trace configuration of a target: its protocol
// and port, as compare's one-shot run traces it.
func traceConfig(t Target, cycles int, interval, timeout time.Duration) probe.TraceConfig {
	return probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: 30, Cycles: cycles, Interval: interval, Timeout: timeout}
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

// PingLoop probes one target of a candidate round after round, emitting
// every record. A failed round (resolution, privilege) is reported as an
// Event with Err and retried after o.Backoff.
func PingLoop(candidate string, t Target, o MonitorOptions) Loop {
	o.defaults()
	cfg := probe.PingConfig{Count: o.Count, Interval: o.Interval, Timeout: o.Timeout}
	return func(ctx context.Context, emit func(Event)) {
		for ctx.Err() == nil {
			pt, err := resolveTarget(ctx, t)
			if err == nil {
				var res []probe.SweepResult
				res, err = o.Prober.Sweep(ctx, []probe.SweepTarget{{Target: pt, Protocol: t.Protocol, Port: t.Port}}, cfg,
					func(r probe.Record) { emit(Event{Candidate: candidate, Record: &r}) })
				if err == nil && len(res) == 1 && res[0].Err != nil {
					err = res[0].Err
				}
			}
			if err != nil && ctx.Err() == nil {
				emit(Event{Candidate: candidate, Err: fmt.Errorf("ping %s: %w", t, err)})
				wait(ctx, o.Backoff)
			}
		}
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
			}
		}
	}
}

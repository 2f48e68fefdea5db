package engine

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Prober sends live probes: the one seam between the live runtime and
// package probe. The real one (Sender) uses package probe; tests inject
// their own so no packet leaves. compare's one-shot run takes the same
// method set (compare.Options.Prober).
type Prober interface {
	// Sweep probes the targets (each with its protocol and port) Count
	// times each, calling onRecord (when not nil) for every outcome as it
	// is decided, and returns each target's summary.
	Sweep(ctx context.Context, targets []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error)
	// Trace runs cfg.Cycles trace cycles to addr, calling onCycle with a
	// new document after each cycle; the caller owns that document.
	Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error
}

// MultipathProber is a Prober that also runs multipath discoveries (trace
// --multipath): it returns the trace document with its paths. A Prober
// without it traces a multipath candidate on one path.
type MultipathProber interface {
	Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error)
}

// PathMTUProber is a Prober that also searches path MTUs (probe.PathMTU).
type PathMTUProber interface {
	PathMTU(ctx context.Context, addr netip.Addr, cfg probe.MTUConfig) (*probe.MTURun, error)
}

// Sender is the Prober that really sends (package probe). With a Budget,
// every trace probe takes its slot from it (the sweeps' cap is their
// PingConfig.Rate, which the loops set to the budget's rate).
type Sender struct {
	Budget *pacing.Budget
	Clock  probe.Clock // the budget's clock (the real one when nil)
}

// Sweep calls probe.Sweep (one entry point for mixed-protocol targets).
func (Sender) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error) {
	return probe.Sweep(ctx, ts, cfg, onRecord)
}

// Trace calls probe.Trace. Every onCycle call gets a document built afresh
// (route.BuildTrace) from a snapshot of the results so far, which the
// tracer never touches again: no copy is needed.
func (s Sender) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error {
	var each func(*probe.TraceRun)
	if onCycle != nil {
		each = func(r *probe.TraceRun) { onCycle(route.BuildTrace(r)) }
	}
	if s.Budget == nil {
		_, err := probe.Trace(ctx, addr, cfg, each)
		return err
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return fmt.Errorf("trace %s: an address is needed (resolve it first)", addr)
	}
	drv, err := probe.OpenTraceDriver(cfg, a)
	if err != nil {
		return err
	}
	defer drv.Close()
	clk := s.Clock
	if clk == nil {
		clk = pacing.RealClock{}
	}
	_, err = probe.TraceWithDriver(ctx, &pacing.PacedDriver{Driver: drv, Budget: s.Budget, Clock: clk, Ctx: ctx}, addr, a, cfg, each)
	return err
}

// Multipath runs probe.Multipath and builds its trace document
// (route.BuildMultipath: nodes, links and paths).
func (Sender) Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error) {
	run, err := probe.Multipath(ctx, addr, cfg)
	if err != nil {
		return nil, err
	}
	return route.BuildMultipath(run), nil
}

// PathMTU calls probe.PathMTU (sequential UDP probes, one at a time: the
// trace budget does not pace it).
func (Sender) PathMTU(ctx context.Context, addr netip.Addr, cfg probe.MTUConfig) (*probe.MTURun, error) {
	return probe.PathMTU(ctx, addr, cfg)
}

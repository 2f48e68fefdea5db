package compare

import (
	"context"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// The seam of compare's one-shot live run (Probe, Run without Offline).
// The live loops and their prober are internal/engine's; engine imports
// compare, so compare cannot import engine, and this run keeps the seam it
// had: the method set is engine.Prober's, so engine's sender serves here
// too, and tests inject a fake so no packet leaves.

// oneShotProber sends the one-shot run's probes (Options.Prober).
type oneShotProber interface {
	// Sweep probes the targets (each with its protocol and port) Count
	// times each, calling onRecord (when not nil) for every outcome as it
	// is decided, and returns each target's summary.
	Sweep(ctx context.Context, targets []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error)
	// Trace runs cfg.Cycles trace cycles to addr, calling onCycle with a
	// new document after each cycle; the caller owns that document.
	Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error
}

// pathMTUProber is a one-shot prober that also searches path MTUs
// (probe.PathMTU).
type pathMTUProber interface {
	PathMTU(ctx context.Context, addr netip.Addr, cfg probe.MTUConfig) (*probe.MTURun, error)
}

// oneShotSender is the one-shot run's default prober: package probe, with
// no budget (a one-shot run is one sweep and one trace per candidate).
type oneShotSender struct{}

// Sweep calls probe.Sweep (one entry point for mixed-protocol targets).
func (oneShotSender) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.SweepResult, error) {
	return probe.Sweep(ctx, ts, cfg, onRecord)
}

// Trace calls probe.Trace; each onCycle call gets a document built afresh
// (route.BuildTrace) from a snapshot the tracer never touches again.
func (oneShotSender) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, onCycle func(*route.Trace)) error {
	var each func(*probe.TraceRun)
	if onCycle != nil {
		each = func(r *probe.TraceRun) { onCycle(route.BuildTrace(r)) }
	}
	_, err := probe.Trace(ctx, addr, cfg, each)
	return err
}

// PathMTU calls probe.PathMTU (sequential UDP probes, one at a time).
func (oneShotSender) PathMTU(ctx context.Context, addr netip.Addr, cfg probe.MTUConfig) (*probe.MTURun, error) {
	return probe.PathMTU(ctx, addr, cfg)
}

// TraceConfig is the forward-trace configuration of a target: its protocol
// and port, as the one-shot run traces it and the live loops (engine) too.
func TraceConfig(t Target, cycles int, interval, timeout time.Duration) probe.TraceConfig {
	return probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: 30, Cycles: cycles, Interval: interval, Timeout: timeout}
}

package compare

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// The seam of compare's one-shot live run (Probe, Run without Offline).
// The live loops and the prober that sends are internal/engine's; engine
// imports compare, so compare cannot import engine, and this run keeps the
// seam it had, with engine.Prober's method set: cmd gives it engine.Sender,
// tests a fake so no packet leaves.

// ErrNoProber is a live run asked without Options.Prober.
var ErrNoProber = errors.New("compare: a live run needs Options.Prober (engine.Sender sends)")

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

// TraceConfig is the forward-trace configuration of a target: its protocol
// and port, as the one-shot run traces it and the live loops (engine) too.
func TraceConfig(t candidates.Target, cycles int, interval, timeout time.Duration) probe.TraceConfig {
	return probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: 30, Cycles: cycles, Interval: interval, Timeout: timeout}
}

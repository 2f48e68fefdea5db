package engine

import (
	"context"
	"errors"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// LiveMultipathCycles is how many cycles a live loop's multipath round
// probes each path's own flow (at Options.TraceInterval) before the
// paths are shown and discovered afresh; a run of Options.
// TraceRunCycles fewer than that takes as many.
const LiveMultipathCycles = 10

// MultipathTraceLoop is TraceLoop for a candidate with multipath on
// (`multipath: true`, compare --multipath): each run is the discovery
// compare's one-shot run makes (multipathConfig) followed by
// LiveMultipathCycles cycles on each path's own flow, and its trace
// document, every path in it, is the event; the first run probes each
// path once, so that the paths show at once. The discovery sends at the
// budget's rate and is charged to it once it ends, as serve's are. A
// prober that cannot run a discovery is reported once and the loop traces
// one path (TraceLoop).
func MultipathTraceLoop(candidate string, t candidates.Target, o Options) Loop {
	o.defaults()
	mp, ok := o.Prober.(MultipathProber)
	if !ok {
		plain := TraceLoop(candidate, t, o)
		return func(ctx context.Context, emit func(Event)) {
			emit(Event{Candidate: candidate, Err: errors.New(NoMultipathProber)})
			plain(ctx, emit)
		}
	}
	cfg := MultipathTraceConfig(t, min(o.TraceRunCycles, LiveMultipathCycles), o.Timeout)
	cfg.Interval, cfg.Clock, cfg.Rate, cfg.Burst = o.TraceInterval, o.Clock, o.Budget.Rate(), 1
	return traceLoop(candidate, t, o, func(rctx context.Context, addr string, round int, each func(*route.Trace)) (int, error) {
		c := cfg
		if round == 0 {
			c.PathCycles = 1
		}
		tr, err := mp.Multipath(rctx, addr, c)
		if err != nil {
			return probesOf(tr), err
		}
		if tr == nil {
			return 0, errors.New("the multipath discovery returned no trace")
		}
		each(tr)
		return probesOf(tr), nil
	})
}

// probesOf is the packets a multipath run sent: the discovery's and each
// path's cycles.
func probesOf(tr *route.Trace) int {
	if tr == nil || tr.Multipath == nil {
		return 0
	}
	n := tr.Multipath.ProbesUsed
	for _, p := range tr.Paths {
		for _, h := range p.Hops {
			if h.Sent != nil {
				n += *h.Sent
			}
		}
	}
	return n
}

package compare

import (
	"context"
	"errors"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// MultipathProber is a Prober that also runs multipath discoveries (trace
// --multipath): it returns the trace document with its paths.
type MultipathProber interface {
	Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error)
}

// multipathConfig is the live discovery toward a candidate's target: TCP
// flows by source port toward a TCP target; toward an ICMP target UDP flows
// by destination port, since most routers hash ICMP echoes on the
// addresses alone and ICMP would show one path of several. Each path's own
// flow is then probed cycles times for its statistics.
func multipathConfig(t Target, cycles int, timeout time.Duration) probe.MultipathConfig {
	tc := traceConfig(t, cycles, 500*time.Millisecond, timeout)
	if t.Protocol == probe.ICMP {
		tc.Proto, tc.Port, tc.FlowDstPort = probe.UDP, 33434, true
	}
	return probe.MultipathConfig{TraceConfig: tc, Confidence: probe.DefaultConfidence, MaxProbes: probe.DefaultMaxProbes, PathCycles: cycles}
}

// noMultipathProber says why a multipath candidate is traced on one path.
const noMultipathProber = "multipath: this prober cannot run a multipath discovery; the forward route is traced on one path"

// liveMultipath traces the forward route of c with multipath discovery; ok
// is false (with a warning) when the prober cannot, and the caller traces
// one path instead.
func liveMultipath(ctx context.Context, c *Candidate, m *Measurement, addr string, opt Options) (tr *route.Trace, ok bool, err error) {
	mp, can := opt.Prober.(MultipathProber)
	if !can {
		m.Warnings = append(m.Warnings, noMultipathProber)
		return nil, false, nil
	}
	cfg := multipathConfig(c.Targets[0], opt.TraceCycles, opt.Timeout)
	opt.progress("%s: multipath discovery toward %s (%s, %d%% confidence)", c.Name, addr, cfg.Proto, cfg.Confidence)
	tr, err = mp.Multipath(ctx, addr, cfg)
	return tr, true, err
}

// Multipath runs probe.Multipath and builds its trace document
// (route.BuildMultipath: nodes, links and paths).
func (ProbeSender) Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error) {
	run, err := probe.Multipath(ctx, addr, cfg)
	if err != nil {
		return nil, err
	}
	return route.BuildMultipath(run), nil
}

// MultipathTraceConfig is the discovery a live run makes toward target t
// (what compare traces a multipath candidate's first target with), for
// serve's traces of the same candidates.
func MultipathTraceConfig(t Target, cycles int, timeout time.Duration) probe.MultipathConfig {
	return multipathConfig(t, cycles, timeout)
}

// LiveMultipathCycles is how many cycles a live loop's multipath round
// probes each path's own flow (at MonitorOptions.TraceInterval) before the
// paths are shown and discovered afresh; a run of MonitorOptions.
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
func MultipathTraceLoop(candidate string, t Target, o MonitorOptions) Loop {
	o.defaults()
	mp, ok := o.Prober.(MultipathProber)
	if !ok {
		plain := TraceLoop(candidate, t, o)
		return func(ctx context.Context, emit func(Event)) {
			emit(Event{Candidate: candidate, Err: errors.New(noMultipathProber)})
			plain(ctx, emit)
		}
	}
	cfg := multipathConfig(t, min(o.TraceRunCycles, LiveMultipathCycles), o.Timeout)
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

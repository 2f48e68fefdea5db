package compare

import (
	"context"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// oneShotMultipath is a one-shot prober that also runs multipath
// discoveries (trace --multipath): it returns the trace document with its
// paths.
type oneShotMultipath interface {
	Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error)
}

// multipathConfig is the live discovery toward a candidate's target: TCP
// flows by source port toward a TCP target; toward an ICMP target UDP flows
// by destination port, since most routers hash ICMP echoes on the
// addresses alone and ICMP would show one path of several. Each path's own
// flow is then probed cycles times for its statistics.
func multipathConfig(t candidates.Target, cycles int, timeout time.Duration) probe.MultipathConfig {
	tc := TraceConfig(t, cycles, 500*time.Millisecond, timeout)
	if t.Protocol == probe.ICMP {
		tc.Proto, tc.Port, tc.FlowDstPort = probe.UDP, 33434, true
	}
	return probe.MultipathConfig{TraceConfig: tc, Confidence: probe.DefaultConfidence, MaxProbes: probe.DefaultMaxProbes, PathCycles: cycles}
}

// NoMultipathProber says why a multipath candidate is traced on one path.
const NoMultipathProber = "multipath: this prober cannot run a multipath discovery; the forward route is traced on one path"

// liveMultipath traces the forward route of c with multipath discovery; ok
// is false (with a warning) when the prober cannot, and the caller traces
// one path instead.
func liveMultipath(ctx context.Context, c *candidates.Candidate, m *verdict.Measurement, addr string, opt Options) (tr *route.Trace, ok bool, err error) {
	mp, can := opt.Prober.(oneShotMultipath)
	if !can {
		m.Warnings = append(m.Warnings, NoMultipathProber)
		return nil, false, nil
	}
	cfg := multipathConfig(c.Targets[0], opt.TraceCycles, opt.Timeout)
	opt.progress("%s: multipath discovery toward %s (%s, %d%% confidence)", c.Name, addr, cfg.Proto, cfg.Confidence)
	tr, err = mp.Multipath(ctx, addr, cfg)
	return tr, true, err
}

// MultipathTraceConfig is the discovery a live run makes toward target t
// (what compare traces a multipath candidate's first target with), for
// serve's traces of the same candidates.
func MultipathTraceConfig(t candidates.Target, cycles int, timeout time.Duration) probe.MultipathConfig {
	return multipathConfig(t, cycles, timeout)
}

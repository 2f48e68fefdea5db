package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// TraceConfig is the forward-trace configuration of a target: its protocol
// and port, as compare's one-shot run and the live loops trace it.
func TraceConfig(t candidates.Target, cycles int, interval, timeout time.Duration) probe.TraceConfig {
	return probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: 30, Cycles: cycles, Interval: interval, Timeout: timeout}
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

// MultipathTraceConfig is the discovery a live run makes toward target t
// (what compare traces a multipath candidate's first target with), for
// serve's traces of the same candidates.
func MultipathTraceConfig(t candidates.Target, cycles int, timeout time.Duration) probe.MultipathConfig {
	return multipathConfig(t, cycles, timeout)
}

// NoMultipathProber says why a multipath candidate is traced on one path.
const NoMultipathProber = "multipath: this prober cannot run a multipath discovery; the forward route is traced on one path"

// CheckLiveTargets refuses a live run whose targets probe's safety gate
// refuses (documentation addresses, illustrative data, are only ever
// replayed), naming the candidate's line.
func CheckLiveTargets(f *candidates.File) error {
	for _, c := range f.Candidates {
		for _, t := range c.Targets {
			a, err := netip.ParseAddr(t.Addr)
			if err != nil {
				continue
			}
			if err := probe.CheckTarget(t.Addr, a, "it is never probed"); err != nil {
				if errors.Is(err, probe.ErrDocumentation) {
					return fmt.Errorf("%s:%d: candidate %s: %v, or run with --offline", f.Path, c.Line, c.Name, err)
				}
				return fmt.Errorf("%s:%d: candidate %s: %v", f.Path, c.Line, c.Name, err)
			}
		}
	}
	return nil
}

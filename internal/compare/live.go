package compare

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// Probe measures one candidate live: its targets only (ICMP echo, TCP
// connect per port), then its forward route. The return route cannot be
// traced from here: a recorded one (recorded.return) is used when given.
func Probe(ctx context.Context, c *candidates.Candidate, opt Options) (*verdict.Measurement, error) {
	ms, err := probeAll(ctx, []*candidates.Candidate{c}, opt)
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// probeAll measures every candidate's targets in one mixed-protocol sweep
// (probe.Sweep: one sweep per protocol and port, side by side), all targets
// interleaved, so that a run takes Count × Interval rather than that per target.
func probeAll(ctx context.Context, cs []*candidates.Candidate, opt Options) ([]*verdict.Measurement, error) {
	opt.defaults()
	if opt.Prober == nil {
		return nil, ErrNoProber
	}
	ms := make([]*verdict.Measurement, len(cs))
	var sts []probe.SweepTarget
	var owners [][2]int // candidate index, target index
	for i, c := range cs {
		ms[i] = &verdict.Measurement{Targets: make([]verdict.TargetResult, len(c.Targets))}
		for j, t := range c.Targets {
			ms[i].Targets[j].Target = t
			pt, err := resolveTarget(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("candidate %s: target %s: %w", c.Name, t.Addr, err)
			}
			sts = append(sts, probe.SweepTarget{Target: pt, Protocol: t.Protocol, Port: t.Port})
			owners = append(owners, [2]int{i, j})
		}
	}
	// Each probe's record, with its time, goes to its candidate's windows
	// (Measurement.Probes), so that a live run is judged over the SLA
	// windows it covers as a recording is (issue 30). Sweep calls onRecord
	// from one goroutine at a time.
	builders := make([]*verdict.WindowBuilder, len(cs))
	for i, c := range cs {
		builders[i] = verdict.NewWindowBuilder(c.Targets)
	}
	onRecord := func(r probe.Record) {
		for _, b := range builders {
			b.Add(r)
		}
	}
	opt.progress("probing %d targets (ICMP echo, TCP connect), %d probes each", len(sts), opt.Count)
	res, err := opt.Prober.Sweep(ctx, sts, probe.PingConfig{Count: opt.Count, Interval: opt.Interval, Timeout: opt.Timeout}, onRecord)
	if err != nil {
		return nil, err
	}
	for i, b := range builders {
		// Records of the other candidates' targets are theirs, not extras.
		ms[i].Probes, _ = b.Windows()
	}
	for k, pr := range res {
		o := owners[k]
		tr := &ms[o[0]].Targets[o[1]]
		if pr.Err != nil {
			// A missing privilege hits the ICMP targets only (TCP connect
			// needs none): those read no data, with the fix, and the
			// others are still judged (issue 35).
			if !errors.Is(pr.Err, probe.ErrPrivilege) {
				return nil, pr.Err
			}
			ms[o[0]].Warnings = append(ms[o[0]].Warnings, fmt.Sprintf("%s: not probed, no data: %v", tr.Target, pr.Err))
			continue
		}
		w := verdict.NewWindow(0)
		w.AddCycle(pr.Sent, pr.Recv, pr.Late, pr.Dup, pr.RTTs)
		*tr = w.Result(tr.Target, nil)
		if pr.Refused > 0 {
			ms[o[0]].Warnings = append(ms[o[0]].Warnings, fmt.Sprintf("%s: connection refused %d times: the port is closed", tr.Target, pr.Refused))
		}
	}
	for i, c := range cs {
		if err := liveRoutes(ctx, c, ms[i], opt); err != nil {
			// Interrupted: keep what was measured (Run marks the result partial).
			if ctx.Err() != nil {
				break
			}
			return nil, err
		}
	}
	return ms, nil
}

// resolveTarget turns a listed target into exactly one probe target; probe's
// safety gate refuses what is never probed (a name resolving to a
// documentation address here, an address literal when it is probed).
func resolveTarget(ctx context.Context, t candidates.Target) (probe.Target, error) {
	var pt probe.Target
	if a, err := netip.ParseAddr(t.Addr); err == nil {
		pt = probe.Target{Name: t.Addr, Addr: a}
	} else {
		ts, err := probe.ResolveTargets(ctx, []string{t.Addr}, probe.ExpandOptions{})
		if err != nil {
			return pt, err
		}
		if len(ts) != 1 {
			return pt, fmt.Errorf("resolves to %d addresses, want one", len(ts))
		}
		pt = ts[0]
	}
	return pt, nil
}

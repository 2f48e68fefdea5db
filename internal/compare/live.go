package compare

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Probe measures one candidate live: its targets only (ICMP echo, TCP
// connect per port), then its forward route. The return route cannot be
// traced from here: a recorded one (recorded.return) is used when given.
func Probe(ctx context.Context, c *Candidate, opt Options) (*Measurement, error) {
	ms, err := probeAll(ctx, []*Candidate{c}, opt)
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// group is one sweep: every target sharing a protocol and port, across candidates.
type group struct {
	port    int // 0 = ICMP
	targets []probe.Target
	owners  [][2]int // candidate index, target index
}

// probeAll measures every candidate's targets in as few sweeps as possible
// (one per protocol and port), all targets interleaved, so that a run takes
// Count × Interval per sweep rather than per target.
func probeAll(ctx context.Context, cs []*Candidate, opt Options) ([]*Measurement, error) {
	opt.defaults()
	ms := make([]*Measurement, len(cs))
	groups := map[int]*group{}
	var order []int
	for i, c := range cs {
		ms[i] = &Measurement{Targets: make([]TargetResult, len(c.Targets))}
		for j, t := range c.Targets {
			ms[i].Targets[j].Target = t
			pt, err := resolveTarget(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("candidate %s: target %s: %w", c.Name, t.Addr, err)
			}
			port := 0
			if t.Protocol == "tcp" {
				port = t.Port
			}
			g, ok := groups[port]
			if !ok {
				g = &group{port: port}
				groups[port] = g
				order = append(order, port)
			}
			g.targets = append(g.targets, pt)
			g.owners = append(g.owners, [2]int{i, j})
		}
	}
	for _, port := range order {
		g := groups[port]
		what := "ICMP echo"
		if port != 0 {
			what = fmt.Sprintf("TCP connect to port %d", port)
		}
		opt.progress("probing %d targets: %s, %d probes each", len(g.targets), what, opt.Count)
		res, err := probe.PingTargets(ctx, g.targets, probe.PingConfig{Count: opt.Count, Interval: opt.Interval, Timeout: opt.Timeout, TCPPort: port}, nil)
		if err != nil {
			return nil, err
		}
		for k, pr := range res {
			o := g.owners[k]
			tr := &ms[o[0]].Targets[o[1]]
			tr.Sent, tr.Recv, tr.Late, tr.Duplicates = pr.Sent, pr.Recv, pr.Late, pr.Dup
			tr.Loss = pr.Loss()
			tr.Samples = pr.RTTs
			tr.RTT, tr.Jitter = route.Summarize(pr.RTTs)
			if pr.Refused > 0 {
				ms[o[0]].Warnings = append(ms[o[0]].Warnings, fmt.Sprintf("%s: connection refused %d times: the port is closed", tr.Target, pr.Refused))
			}
		}
	}
	for i, c := range cs {
		if err := liveRoutes(ctx, c, ms[i], opt); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// resolveTarget turns a listed target into exactly one probe target and
// refuses anything that resolves to a documentation address.
func resolveTarget(ctx context.Context, t Target) (probe.Target, error) {
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
	for _, p := range docPrefixes {
		if p.Contains(pt.Addr) {
			return pt, fmt.Errorf("%s is a documentation address (%s): never probed", pt.Addr, p)
		}
	}
	return pt, nil
}

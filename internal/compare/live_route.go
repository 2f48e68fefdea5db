package compare

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/probe"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// pathMTU adds the path MTU toward addr to the live forward trace; a
// search that fails becomes a warning (the SLA check then says no data).
func pathMTU(ctx context.Context, c *candidates.Candidate, m *verdict.Measurement, addr netip.Addr, opt Options) {
	mp, ok := opt.Prober.(engine.PathMTUProber)
	if !ok {
		m.Warnings = append(m.Warnings, "the path MTU was not measured: this prober cannot search it")
		return
	}
	opt.progress("%s: searching the path MTU to %s", c.Name, addr)
	run, err := mp.PathMTU(ctx, addr, probe.MTUConfig{Timeout: opt.Timeout})
	if err != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("path MTU to %s: %v", addr, err))
		return
	}
	route.AddMTU(m.Forward, run)
}

// liveRoutes traces the forward route (vantage → each of the candidate's
// route targets, one per address family, with its protocol and port) and takes the return route
// from the recording, since it can only be traced from the server. A trace
// that fails (no raw-socket privilege, say) becomes a warning, with the
// recorded forward trace, if any, used instead.
func liveRoutes(ctx context.Context, c *candidates.Candidate, m *verdict.Measurement, opt Options) error {
	var err error
	if c.Recorded.Return != "" {
		if err := readRecordedReturn(c, m); err != nil {
			return err
		}
	} else {
		m.Warnings = append(m.Warnings, "the return path (server → users) cannot be traced from here: run `linecheck backtrace` on the server and give its JSON as recorded.return")
	}
	ts := c.RouteTargets()
	if len(ts) == 0 {
		return fmt.Errorf("candidate %s: no target to trace", c.Name)
	}
	tr, err := liveForward(ctx, c, ts[0], m, opt, true)
	if err != nil {
		return err
	}
	if tr == nil && c.Recorded.Forward != "" {
		if err := readRecordedForward(c, m); err != nil {
			return err
		}
		m.Warnings = append(m.Warnings, "forward route taken from the recording")
	}
	// A dual-stack candidate is traced once per address family (issue 32):
	// its IPv6 route may ride another line than its IPv4 one.
	for _, t := range ts[1:] {
		tr, err := liveForward(ctx, c, t, m, opt, false)
		if err != nil {
			return err
		}
		if tr != nil {
			if m.FamilyForward == nil {
				m.FamilyForward = map[string]*route.Trace{}
			}
			fam := candidates.AddrFamily(t.Addr)
			if fam == "" {
				fam = verdict.Family(tr.Addr)
			}
			m.FamilyForward[fam] = tr
		}
	}
	return nil
}

// liveForward traces the forward route to t (with its protocol and port;
// multipath when the candidate asks); first is the candidate's first route
// target, whose trace is m.Forward and gets the path MTU. A trace that
// fails becomes a warning and a nil trace.
func liveForward(ctx context.Context, c *candidates.Candidate, t candidates.Target, m *verdict.Measurement, opt Options, first bool) (*route.Trace, error) {
	pt, err := resolveTarget(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("candidate %s: target %s: %w", c.Name, t.Addr, err)
	}
	cfg := engine.TraceConfig(t, opt.TraceCycles, 500*time.Millisecond, opt.Timeout)
	opt.progress("%s: tracing the forward route to %s (%d cycles)", c.Name, pt.Addr, opt.TraceCycles)
	var tr *route.Trace
	multipath := false
	if c.Multipath && first {
		tr, multipath, err = liveMultipath(ctx, c, t, m, pt.Addr.String(), opt)
	}
	if !multipath {
		err = opt.Prober.Trace(ctx, pt.Addr.String(), cfg, func(t *route.Trace) { tr = t })
	}
	if err == nil && tr == nil {
		err = fmt.Errorf("no trace cycle completed")
	}
	if err == nil {
		tr.Source = "live"
		if first {
			m.Forward = tr
			if opt.PathMTU {
				pathMTU(ctx, c, m, pt.Addr, opt)
			}
		}
		return tr, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	m.Warnings = append(m.Warnings, fmt.Sprintf("forward trace to %s failed: %v", pt.Addr, err))
	return nil, nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// backtraceMultipathConfig is the discovery of backtrace --multipath, from
// the trace flags: without --proto it runs over UDP with flows by
// destination port, since most routers hash ICMP echoes on the addresses
// alone and ICMP would show one path of several; --cycles, when given,
// probes each path's own flow that many cycles.
func backtraceMultipathConfig(c *cobra.Command, o *backtraceOptions, cfg probe.TraceConfig) probe.MultipathConfig {
	if !c.Flags().Changed("proto") {
		cfg.Proto, cfg.Port = probe.UDP, 0
	}
	cfg.FlowDstPort = cfg.Proto == probe.UDP
	mc := probe.MultipathConfig{TraceConfig: cfg, Confidence: probe.DefaultConfidence, MaxProbes: probe.DefaultMaxProbes}
	if c.Flags().Changed("cycles") {
		mc.PathCycles = o.cycles
	}
	return mc
}

// backtraceMultipath runs a multipath discovery toward every target, one
// after another (each paces its probes at --rate), and returns each
// target's result: its trace document with the paths, classified per path
// (route.Annotate), or why it could not be traced.
func backtraceMultipath(ctx context.Context, stderr io.Writer, sel []route.BacktraceTarget, cfg probe.MultipathConfig, db route.ASNDB, samples bool) []route.BacktraceResult {
	var done atomic.Int32
	stopProgress := prProgress(stderr, func() string {
		return fmt.Sprintf("backtrace --multipath: %d/%d targets done", done.Load(), len(sel))
	})
	defer stopProgress()
	out := make([]route.BacktraceResult, len(sel))
	for i, t := range sel {
		var tr *route.Trace
		why := "interrupted before it was traced"
		if ctx.Err() == nil {
			run, err := probe.Multipath(ctx, netip.MustParseAddr(t.Addr).String(), cfg)
			if err != nil {
				why = err.Error()
				fmt.Fprintf(stderr, "linecheck: %s (%s): %v\n", t.Name, t.Addr, err)
			} else {
				tr = route.BuildMultipath(run)
				route.Annotate(tr, db)
				if !samples {
					for h := range tr.Hops {
						for j := range tr.Hops[h].Responders {
							tr.Hops[h].Responders[j].Samples = nil
						}
					}
				}
			}
		}
		out[i] = route.NewBacktraceResult(t, tr, why)
		done.Add(1)
	}
	return out
}

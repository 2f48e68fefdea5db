package compare

import (
	"context"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe/bw"
)

// measureThroughputs runs the live throughput test of every candidate that
// declares a bandwidth_test, one after another (each fills the line; an
// iperf3 server serves one test at a time), download direction.
func measureThroughputs(ctx context.Context, cs []*candidates.Candidate, ms []*verdict.Measurement, opt Options) {
	d := opt.BWTime
	if d <= 0 {
		d = engine.DefaultBWTime
	}
	for i, c := range cs {
		if c.BandwidthTest == nil || ctx.Err() != nil {
			continue
		}
		opt.progress("%s: throughput test (download, %v) against %s port %d", c.Name, d, c.BandwidthTest.Addr, c.BandwidthTest.Port)
		tp := engine.MeasureThroughput(ctx, *c.BandwidthTest, d, bw.Download)
		if tp.Error != "" {
			ms[i].Warnings = append(ms[i].Warnings, "throughput test: "+tp.Error)
		}
		ms[i].Throughput = tp
	}
}

package engine

import (
	"context"
	"errors"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/percentile"
	"github.com/linecheck/linecheck/probe/bw"
)

// DefaultBWTime is the live throughput test's measured time (compare
// --bw-time): short, because compare tests every candidate in turn.
const DefaultBWTime = 5 * time.Second

// defaultBusyRetries is how long RunBandwidthTest waits before each new try
// when the server says it is busy: an iperf3 server serves one client at a
// time, and a connection that has only just closed (a TCP probe of the same
// port, the previous candidate's test) can hold it for a moment.
var defaultBusyRetries = []time.Duration{250 * time.Millisecond, time.Second, 3 * time.Second}

// MeasureThroughput runs one live test against the candidate's iperf3
// server for d, in direction (download: the server sends), through
// RunBandwidthTest. A test that cannot run gives a Throughput with Error
// and no figures.
func MeasureThroughput(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string) *verdict.Throughput {
	return measureThroughput(ctx, t, d, direction, defaultBusyRetries)
}

// RunBandwidthTest is the one live throughput test of compare, the TUI and
// serve --bw-every: d measured after 1 s of warm-up (omitted), in direction,
// against the candidate's iperf3 server; a busy server is tried again after
// 0.25 s, 1 s and 3 s. The result may come with an error (a test cut short
// gives the figures of what ran).
func RunBandwidthTest(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string) (*bw.Result, error) {
	return runBandwidthTest(ctx, t, d, direction, defaultBusyRetries)
}

func runBandwidthTest(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string, busyRetries []time.Duration) (*bw.Result, error) {
	cfg := bw.Config{Percentile: percentile.NearestRank, Port: t.Port, Duration: d, Reverse: direction != bw.Upload, Omit: time.Second}
	return runBusyRetried(ctx, t.Addr, cfg, busyRetries, nil)
}

// runBusyRetried runs one test, and again after each wait of busyRetries
// while the server says it is busy; onBusy (when not nil) is told each
// wait before it begins.
func runBusyRetried(ctx context.Context, server string, cfg bw.Config, busyRetries []time.Duration, onBusy func(wait time.Duration)) (*bw.Result, error) {
	r, err := bw.Run(ctx, server, cfg)
	for _, wait := range busyRetries {
		if !errors.Is(err, bw.ErrBusy) {
			break
		}
		if onBusy != nil {
			onBusy(wait)
		}
		if pacing.Sleep(ctx, pacing.RealClock{}, wait) != nil {
			break
		}
		r, err = bw.Run(ctx, server, cfg)
	}
	return r, err
}

func measureThroughput(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string, busyRetries []time.Duration) *verdict.Throughput {
	r, err := runBandwidthTest(ctx, t, d, direction, busyRetries)
	if r == nil {
		return &verdict.Throughput{Source: "live", Server: t.Addr, Direction: direction, Error: err.Error()}
	}
	tp := verdict.ThroughputFromResult(r, "live")
	if err != nil {
		tp.Error = err.Error()
	}
	return tp
}

package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/probe/bw"
)

// serveBWHelp is the part of serve --help about throughput tests.
const serveBWHelp = `

Throughput (--bw-every D, default off): every D, each candidate that names
bandwidth_test: {addr, port} (a stock iperf3 -s on it; docs/bw.md) gets a
download test of --bw-time (after 1 s of warm-up; a busy server is tried
again after 0.25 s, 1 s and 3 s), one candidate after another, as compare
and the tui test; the first round starts --count × --interval after launch
(one cycle of pings, so the latency figures come first). Pings and traces
pause while the tests run (a cycle under way is cut: what was answered
before counts, probes still in flight are left out, not lost) and resume
after them, so no RTT or loss figure is taken on the line a test fills.
Throughput tests are heavy: each fills the line for --bw-time (and an iperf3
server serves one test at a time), so run them hours apart, not every cycle.
  linecheck_throughput_bits_per_second  gauge, the last test's mean (bit/s),
                                        labelled candidate, server, direction
  linecheck_bw_tests_total              tests run, labelled result (ok, error)
The candidates file is re-read before each round.`

// startServeBW runs the throughput loop of serve --bw-every in wg until ctx
// ends, holding quiet for each round (the probe cycles pause) and starting
// after first; it returns the number of candidates with a bandwidth_test.
func startServeBW(ctx context.Context, wg *sync.WaitGroup, exp *exporter.Exporter, config string, every, d, first time.Duration, quiet *engine.Quiet, log io.Writer) (int, error) {
	if every <= 0 || config == "" {
		return 0, nil
	}
	targets, err := exporter.LoadBWTargets(config)
	if err != nil {
		return 0, err
	}
	m := exporter.NewBWMetrics(exp.Registry())
	var mu sync.Mutex
	current := targets
	list := func() []exporter.BWTarget {
		mu.Lock()
		defer mu.Unlock()
		if ts, err := exporter.LoadBWTargets(config); err == nil {
			current = ts
		} else {
			fmt.Fprintf(log, "linecheck serve: throughput targets: %v (keeping the previous ones)\n", err)
		}
		return current
	}
	l := engine.BWLoop{Every: every, First: first, Targets: list, Directions: []string{bw.Download},
		Run: engine.MeasureRunner(d), Observe: exporter.BWObserver(m, exp), Log: log, Quiet: quiet}
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.Loop(ctx)
	}()
	return len(targets), nil
}

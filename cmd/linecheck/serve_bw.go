package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/probe/bw"
)

// serveBWHelp is the part of serve --help about throughput tests.
const serveBWHelp = `

Throughput (--bw-every D, default off): every D, each candidate that names
bandwidth_test: {addr, port} (a stock iperf3 -s on it; docs/bw.md) gets a
download test of --bw-time, one candidate after another. Throughput tests are
heavy: each fills the line for --bw-time (and an iperf3 server serves one
test at a time), so run them hours apart, not every cycle.
  linecheck_throughput_bits_per_second  gauge, the last test's mean (bit/s),
                                        labelled candidate, server, direction
  linecheck_bw_tests_total              tests run, labelled result (ok, error)
The candidates file is re-read before each round.`

// startServeBW runs the throughput loop of serve --bw-every in wg until ctx
// ends; it returns the number of candidates with a bandwidth_test.
func startServeBW(ctx context.Context, wg *sync.WaitGroup, exp *exporter.Exporter, config string, every, d time.Duration, log io.Writer) (int, error) {
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
	run := func(ctx context.Context, t exporter.BWTarget, dir string) (*bw.Result, error) {
		return bw.Run(ctx, t.Addr, bw.Config{Port: t.Port, Duration: d, Omit: time.Second, Reverse: dir == bw.Download})
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		exporter.RunBW(ctx, every, list, []string{bw.Download}, run, m, log)
	}()
	return len(targets), nil
}

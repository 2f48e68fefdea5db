package exporter

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/probe/bw"
)

// BWMetrics are the throughput metrics of serve --bw-every:
//
//	linecheck_throughput_bits_per_second{candidate,server,direction}
//	    gauge: the mean of the last test (bytes received / measured time)
//	linecheck_bw_tests_total{candidate,server,direction,result}
//	    counter: tests run, result "ok" or "error"
//
// A failed test leaves the gauge at the last good value and counts an error;
// a throughput series appears only after a first good test.
type BWMetrics struct {
	throughput GaugeVec
	tests      CounterVec
}

var bwLabels = []string{"candidate", "server", "direction"}

// NewBWMetrics registers the throughput metrics with reg.
func NewBWMetrics(reg *Registry) *BWMetrics {
	return &BWMetrics{
		throughput: reg.NewGaugeVec("linecheck_throughput_bits_per_second",
			"Throughput of the last iperf3-protocol test (bw): bytes received over the measured time, in bit/s.", bwLabels...),
		tests: reg.NewCounterVec("linecheck_bw_tests_total",
			"Throughput tests run (serve --bw-every), by result (ok, error).", append(append([]string{}, bwLabels...), "result")...),
	}
}

// BWTarget is one candidate's iperf3 server.
type BWTarget struct {
	Candidate string
	Addr      string
	Port      int
}

// Observe records one test's outcome.
func (m *BWMetrics) Observe(t BWTarget, direction string, r *bw.Result, err error) {
	server := fmt.Sprintf("%s:%d", t.Addr, t.Port)
	result := "ok"
	if err != nil || r == nil || r.Throughput.Mean == nil {
		result = "error"
	} else {
		m.throughput.WithLabelValues(t.Candidate, server, direction).Set(*r.Throughput.Mean)
	}
	m.tests.WithLabelValues(t.Candidate, server, direction, result).Inc()
}

// BWRunner runs one throughput test (bw.Run in serve; tests inject one).
type BWRunner func(ctx context.Context, t BWTarget, direction string) (*bw.Result, error)

// RunBW tests every target in turn, in every direction, then waits until
// every has passed since the round began, until ctx ends. Tests run one
// after another, never at once: each fills the line, and an iperf3 server
// serves one test at a time. log (nil: nowhere) gets a line per failure.
func RunBW(ctx context.Context, every time.Duration, targets func() []BWTarget, directions []string, run BWRunner, m *BWMetrics, log io.Writer) {
	for {
		start := time.Now()
		for _, t := range targets() {
			for _, d := range directions {
				if ctx.Err() != nil {
					return
				}
				r, err := run(ctx, t, d)
				if ctx.Err() != nil {
					return // a test cut short by the stop is not a result
				}
				m.Observe(t, d, r, err)
				if err != nil && log != nil {
					fmt.Fprintf(log, "linecheck serve: throughput test %s %s:%d %s: %v\n", t.Candidate, t.Addr, t.Port, d, err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(every))):
		}
	}
}

// LoadBWTargets reads the bandwidth_test of every candidate of a candidates
// file (checked by the same loader as LoadTargets).
func LoadBWTargets(path string) ([]BWTarget, error) {
	f, err := compare.LoadWith(path, loadOptions)
	if err != nil {
		return nil, err
	}
	var out []BWTarget
	for _, c := range f.Candidates {
		if c.BandwidthTest != nil {
			out = append(out, BWTarget{Candidate: c.Name, Addr: c.BandwidthTest.Addr, Port: c.BandwidthTest.Port})
		}
	}
	return out, nil
}

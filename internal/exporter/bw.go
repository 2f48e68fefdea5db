package exporter

import (
	"fmt"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
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

// BWTarget is one candidate's iperf3 server (engine.BWTarget).
type BWTarget = engine.BWTarget

// Observe records one test's outcome.
func (m *BWMetrics) Observe(t BWTarget, direction string, r *engine.BWResult, err error) {
	server := fmt.Sprintf("%s:%d", t.Addr, t.Port)
	result := "ok"
	if err != nil || r == nil || r.Throughput.Mean == nil {
		result = "error"
	} else {
		m.throughput.WithLabelValues(t.Candidate, server, direction).Set(*r.Throughput.Mean)
	}
	m.tests.WithLabelValues(t.Candidate, server, direction, result).Inc()
}

// BWObserver is what serve does with each test of its throughput loop
// (engine.BWLoop.Observe): m records it, and judge (when set) takes each
// download test as the candidate's throughput for its SLA and the snapshot
// (ObserveThroughput), as compare's live run takes its one download test.
func BWObserver(m *BWMetrics, judge *Exporter) func(engine.BWTarget, string, *engine.BWResult, error) {
	return func(t engine.BWTarget, direction string, r *engine.BWResult, err error) {
		m.Observe(t, direction, r, err)
		if judge != nil && direction == engine.Download {
			judge.ObserveThroughput(t.Candidate, r, err)
		}
	}
}

// LoadBWTargets reads the bandwidth_test of every candidate of a candidates
// file (checked by the same loader as LoadTargets).
func LoadBWTargets(path string) ([]BWTarget, error) {
	f, err := candidates.LoadWith(path, loadOptions)
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

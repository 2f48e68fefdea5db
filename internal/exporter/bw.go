package exporter

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/pacing"
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

// BWRunner runs one throughput test (MeasureRunner in serve; tests inject one).
type BWRunner func(ctx context.Context, t BWTarget, direction string) (*bw.Result, error)

// MeasureRunner is the test of serve --bw-every: compare.RunBandwidthTest,
// the one compare and the TUI run (d measured after 1 s of warm-up, a busy
// server tried again after 0.25 s, 1 s and 3 s).
func MeasureRunner(d time.Duration) BWRunner {
	return func(ctx context.Context, t BWTarget, direction string) (*bw.Result, error) {
		return compare.RunBandwidthTest(ctx, compare.BandwidthTest{Addr: t.Addr, Port: t.Port}, d, direction)
	}
}

// BWLoop is the throughput loop of serve --bw-every; Loop runs it.
type BWLoop struct {
	// Every is the time from the start of one round to the start of the
	// next; First the wait before the first round (serve: one ping cycle,
	// so that the latency figures come first, as in the TUI).
	Every, First time.Duration
	// Targets is called before each round (serve re-reads the candidates file).
	Targets    func() []BWTarget
	Directions []string
	Run        BWRunner
	Metrics    *BWMetrics
	// Log (nil: nowhere) gets a line per failed test.
	Log io.Writer
	// Quiet is held for the whole of each round: the ping and trace cycles
	// that share it (LoopConfig.Quiet) pause, and those under way are cut,
	// so that no latency figure is taken on the line a test fills (nil:
	// nothing pauses).
	Quiet *engine.Quiet
	// Judge, when set, takes each download test as the candidate's
	// throughput for its SLA and the snapshot (Exporter.ObserveThroughput),
	// as compare's live run takes its one download test.
	Judge *Exporter
}

// RunBW is BWLoop's Loop with no wait before the first round and no probe
// cycles to pause.
func RunBW(ctx context.Context, every time.Duration, targets func() []BWTarget, directions []string, run BWRunner, m *BWMetrics, log io.Writer) {
	BWLoop{Every: every, Targets: targets, Directions: directions, Run: run, Metrics: m, Log: log}.Loop(ctx)
}

// Loop tests every target in turn, in every direction, then waits until
// Every has passed since the round began, until ctx ends. Tests run one
// after another, never at once: each fills the line, and an iperf3 server
// serves one test at a time. The Quiet is held from the round's first test
// to the end of its last.
func (l BWLoop) Loop(ctx context.Context) {
	// The rounds hold the Quiet themselves (the probing loops wait for
	// it): the scheduler only says when each is due.
	clk := pacing.RealClock{}
	engine.Scheduler{Clock: clk}.Run(ctx, &bwRounds{l: l, clk: clk, next: clk.Now().Add(l.First)}, nil)
}

// bwRounds is BWLoop as engine.Rounds: the first round First after the
// start, each next one Every after the one before began.
type bwRounds struct {
	l    BWLoop
	clk  Clock
	next time.Time
}

func (r *bwRounds) Due() (time.Time, bool) { return r.next, true }

func (r *bwRounds) Round(ctx context.Context, _ engine.Scheduler) bool {
	start := r.clk.Now()
	if !r.l.round(ctx) {
		return false
	}
	r.next = start.Add(r.l.Every)
	return true
}

// round runs one round of tests; false when ctx ended.
func (l BWLoop) round(ctx context.Context) bool {
	targets := l.Targets()
	if len(targets) == 0 || len(l.Directions) == 0 {
		return ctx.Err() == nil
	}
	release, err := l.Quiet.Hold(ctx)
	if err != nil {
		return false
	}
	defer release()
	for _, t := range targets {
		for _, d := range l.Directions {
			if ctx.Err() != nil {
				return false
			}
			r, err := l.Run(ctx, t, d)
			if ctx.Err() != nil {
				return false // a test cut short by the stop is not a result
			}
			l.Metrics.Observe(t, d, r, err)
			if l.Judge != nil && d == bw.Download {
				l.Judge.ObserveThroughput(t.Candidate, r, err)
			}
			if err != nil && l.Log != nil {
				fmt.Fprintf(l.Log, "linecheck serve: throughput test %s %s:%d %s: %v\n", t.Candidate, t.Addr, t.Port, d, err)
			}
		}
	}
	return true
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

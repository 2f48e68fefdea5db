package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/probe/bw"
)

// This file is serve's throughput loop (serve --bw-every): a round of
// tests every Every, the Quiet held for each so the cycles pause.

// BWTarget is one candidate's iperf3 server.
type BWTarget struct {
	Candidate string
	Addr      string
	Port      int
}

// BWRunner runs one throughput test (MeasureRunner in serve; tests inject one).
type BWRunner func(ctx context.Context, t BWTarget, direction string) (*bw.Result, error)

// MeasureRunner is the test of serve --bw-every: RunBandwidthTest,
// the one compare and the TUI run (d measured after 1 s of warm-up, a busy
// server tried again after 0.25 s, 1 s and 3 s).
func MeasureRunner(d time.Duration) BWRunner {
	return func(ctx context.Context, t BWTarget, direction string) (*bw.Result, error) {
		return RunBandwidthTest(ctx, candidates.BandwidthTest{Addr: t.Addr, Port: t.Port}, d, direction)
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
	// Observe gets every test's outcome (serve: its metrics, and each
	// download test as the candidate's throughput for its SLA,
	// exporter.BWObserver).
	Observe func(t BWTarget, direction string, r *bw.Result, err error)
	// Log (nil: nowhere) gets a line per failed test.
	Log io.Writer
	// Quiet is held for the whole of each round: the ping and trace cycles
	// that share it (CycleConfig.Quiet) pause, and those under way are cut,
	// so that no latency figure is taken on the line a test fills (nil:
	// nothing pauses).
	Quiet *Quiet
}

// RunBW is BWLoop's Loop with no wait before the first round and no probe
// cycles to pause.
func RunBW(ctx context.Context, every time.Duration, targets func() []BWTarget, directions []string, run BWRunner, observe func(BWTarget, string, *bw.Result, error), log io.Writer) {
	BWLoop{Every: every, Targets: targets, Directions: directions, Run: run, Observe: observe, Log: log}.Loop(ctx)
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
	Scheduler{Clock: clk}.Run(ctx, &bwRounds{l: l, clk: clk, next: clk.Now().Add(l.First)}, nil)
}

// bwRounds is BWLoop as Rounds: the first round First after the
// start, each next one Every after the one before began.
type bwRounds struct {
	l    BWLoop
	clk  Clock
	next time.Time
}

func (r *bwRounds) Due() (time.Time, bool) { return r.next, true }

func (r *bwRounds) Round(ctx context.Context, _ Scheduler) bool {
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
			l.Observe(t, d, r, err)
			if err != nil && l.Log != nil {
				fmt.Fprintf(l.Log, "linecheck serve: throughput test %s %s:%d %s: %v\n", t.Candidate, t.Addr, t.Port, d, err)
			}
		}
	}
	return true
}

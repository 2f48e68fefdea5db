package engine

import (
	"context"
	"time"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/probe"
)

// Scheduler is the one scheduler of live probing: it runs the probing
// loops of the TUI (SweepLoop, TraceLoop, MultipathTraceLoop) and of serve
// (RunCycles), each given as Rounds, so when a round may start
// (its targets due, the shared packet budget ready), how a throughput test
// holds or cuts it, and when the loop ends are decided in one place. What a
// round does is the loop's: which targets it probes, what it reports, how
// it backs off.
type Scheduler struct {
	Clock probe.Clock
	// Budget is the packets-per-second cap every round is charged to (nil:
	// none).
	Budget *pacing.Budget
	// Quiet pauses the rounds while a throughput test fills the line (nil:
	// nothing pauses them).
	Quiet *Quiet
}

// Rounds is a live loop as the Scheduler runs it: when its next round is
// due, and the round itself.
type Rounds interface {
	// Due is the earliest time the next round may start; false when there
	// is nothing to probe (then only the wake channel or the end of the
	// context ends the wait).
	Due() (time.Time, bool)
	// Round runs one round, its probes through s.Round, and schedules the
	// next (what Due says after it); false ends the loop (ctx ended).
	Round(ctx context.Context, s Scheduler) bool
}

// Run runs r round after round until ctx ends: each round once it is due
// and the budget allows it (WaitDue); wake (nil: none) makes it ask Due
// again, as a reload that brings new targets does.
func (s Scheduler) Run(ctx context.Context, r Rounds, wake <-chan struct{}) {
	for ctx.Err() == nil {
		if s.WaitDue(ctx, r.Due, wake) != nil {
			return
		}
		if !r.Round(ctx, s) {
			return
		}
	}
}

// WaitDue waits until the earliest time a target may be probed (due; ok
// false when there is no target: then only wake or ctx end the wait) has
// come and the budget allows a round. wake (nil: none) interrupts the wait
// to ask due again: a reload's new targets are due at once. The error is
// ctx's when it ended.
func (s Scheduler) WaitDue(ctx context.Context, due func() (time.Time, bool), wake <-chan struct{}) error {
	for {
		now := s.Clock.Now()
		at, ok := due()
		if s.Budget != nil {
			if b := s.Budget.Ready(); at.Before(b) {
				at = b
			}
		}
		if ok && !at.After(now) {
			return nil
		}
		var timer <-chan time.Time
		if ok {
			timer = s.Clock.After(at.Sub(now))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-timer:
		}
	}
}

// Round runs one round (a sweep, a trace) once no throughput test holds
// the line; run's context ends when a test begins meanwhile. It returns
// when the round's schedule started (after any wait for a test), whether a
// test cut it, and ctx's error when ctx ended (a round cut short by the
// stop is no measurement). Whether the round was cut is read before the
// round is released, which cancels its context: read after, every round
// looked cut (0473bb4, 7f56c41).
func (s Scheduler) Round(ctx context.Context, run func(rctx context.Context)) (start time.Time, cut bool, err error) {
	rctx, done, err := s.Quiet.Round(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	start = s.Clock.Now()
	run(rctx)
	cut = roundCut(ctx, rctx)
	done()
	return start, cut, ctx.Err()
}

package compare

import (
	"context"
	"time"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/probe"
)

// Scheduler is the one scheduler of live probing: compare's live loops
// (SweepLoop and TraceLoop: the TUI and live compare) and serve's loop
// (exporter.Run) wait for their rounds and run them through it, so when a
// round may start (its targets due, the shared packet budget ready) and
// when a throughput test cut one are decided in one place. Each loop keeps
// its own bookkeeping of targets (what it reports, how it backs off).
type Scheduler struct {
	Clock probe.Clock
	// Budget is the packets-per-second cap every round is charged to (nil:
	// none).
	Budget *pacing.Budget
	// Quiet pauses the rounds while a throughput test fills the line (nil:
	// nothing pauses them).
	Quiet *Quiet
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

package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/pacing"
)

// countedRounds is a loop of rounds every period that spends packets of
// the budget each; it records when each round started.
type countedRounds struct {
	budget  *pacing.Budget
	period  time.Duration
	packets int
	next    time.Time
	starts  []time.Time
	stopAt  int // Round returns false at this round (0: never)
}

func (r *countedRounds) Due() (time.Time, bool) { return r.next, true }

func (r *countedRounds) Round(ctx context.Context, s Scheduler) bool {
	start, _, err := s.Round(ctx, func(context.Context) {})
	if err != nil {
		return false
	}
	r.starts = append(r.starts, start)
	if r.budget != nil {
		r.budget.Spend(start, r.packets)
	}
	r.next = start.Add(r.period)
	return r.stopAt == 0 || len(r.starts) < r.stopAt
}

// Scheduler.Run starts each round when it is due, later when the shared
// budget has not recovered from the last round's packets, and ends when a
// round says so or the context ends. By hand: rounds due every 1 s that
// spend 300 packets of a 100/s budget start 3 s apart; without the budget
// 1 s apart.
func TestSchedulerRunsRoundsWhenDueAndTheBudgetAllows(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		budget bool
		gap    time.Duration
	}{{"due every second", false, time.Second}, {"held back by the budget", true, 3 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := &jumpClock{now: t0, end: t0.Add(time.Hour), cancel: cancel}
			r := &countedRounds{period: time.Second, packets: 300, stopAt: 5, next: t0}
			s := Scheduler{Clock: clk}
			if tc.budget {
				r.budget = pacing.NewBudget(100)
				s.Budget = r.budget
			}
			s.Run(ctx, r, nil)
			if len(r.starts) != 5 {
				t.Fatalf("%d rounds, want 5 (the fifth ends the loop)", len(r.starts))
			}
			for i, st := range r.starts {
				if want := t0.Add(time.Duration(i) * tc.gap); !st.Equal(want) {
					t.Errorf("round %d started at +%v, want +%v", i+1, st.Sub(t0), want.Sub(t0))
				}
			}
		})
	}
}

// A loop with nothing due waits for its wake channel (a reload) and then
// asks Due again; the end of the context ends the wait.
func TestSchedulerWakesOnReloadAndStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{})
	r := &wakeRounds{ran: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		Scheduler{Clock: pacing.RealClock{}}.Run(ctx, r, wake)
		close(done)
	}()
	select {
	case <-r.ran:
		t.Fatal("a round ran with nothing due")
	case <-time.After(50 * time.Millisecond):
	}
	r.set(true)
	wake <- struct{}{}
	select {
	case <-r.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("no round after the wake")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}

type wakeRounds struct {
	ran chan struct{}
	has atomic.Bool // a round is due (set by the test, as a reload's new targets)
}

func (r *wakeRounds) set(v bool) { r.has.Store(v) }

func (r *wakeRounds) Due() (time.Time, bool) { return time.Time{}, r.has.Load() }

func (r *wakeRounds) Round(ctx context.Context, _ Scheduler) bool {
	r.has.Store(false)
	r.ran <- struct{}{}
	return true
}

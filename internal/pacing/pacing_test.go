package pacing

import (
	"context"
	"sync"
	"testing"
	"time"
)

// stepClock is a fake clock: After(d) moves it d ahead at once.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	ch := make(chan time.Time, 1)
	ch <- c.now
	c.mu.Unlock()
	return ch
}

// Two probers sharing one 10 packet/s budget: together they never get more
// than the cap, whatever each asks for (a sweep of 20, single trace probes).
func TestBudgetIsOneCapForAllItsProbers(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	clk := &stepClock{now: t0}
	b := NewBudget(10)
	ctx := context.Background()
	sent := 0
	for i := 0; i < 50; i++ {
		n := 1
		if i%10 == 0 {
			n = 20
		}
		if err := b.Take(ctx, clk, n); err != nil {
			t.Fatal(err)
		}
		// The batch that just got its slot may start now: everything before
		// it fits the cap by then.
		if el := clk.Now().Sub(t0).Seconds(); float64(sent) > el*10+1e-9 {
			t.Fatalf("after %v: %d packets had left, more than 10/s", clk.Now().Sub(t0), sent)
		}
		sent += n
	}
	// 5 sweeps of 20 and 45 single probes: 145 packets, 14.5 s of cap.
	if got := b.Ready().Sub(t0); got != 14500*time.Millisecond {
		t.Errorf("budget ready after %v, want 14.5 s", got)
	}
}

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 5 * time.Second, 1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second, 4: 40 * time.Second, 5: time.Minute, 40: time.Minute} {
		if got := Backoff(5*time.Second, time.Minute, n); got != want {
			t.Errorf("failure %d: %v, want %v", n, got, want)
		}
	}
	if got := Backoff(time.Millisecond, time.Minute, 1); got != MinBackoff {
		t.Errorf("short base: %v, want %v", got, MinBackoff)
	}
}

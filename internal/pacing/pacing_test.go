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

// A burst budget (backtrace's pacing) never lets probes of all callers
// together run ahead of the rate: probe i (in send order) leaves no earlier than (i+1-burst)/rate after
// the start. Lower bounds only, so machine load cannot make it flaky.
func TestBurstBudgetHoldsAcrossCallers(t *testing.T) {
	const rate, burst, callers, each = 400.0, 4, 5, 12
	p := NewBurstBudget(rate, burst)
	start := time.Now()
	var mu sync.Mutex
	var at []time.Duration
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := p.Take(context.Background(), RealClock{}, 1); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				at = append(at, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(at) != callers*each {
		t.Fatalf("%d sends", len(at))
	}
	// at is appended under the lock after Take returned, so sort it.
	for i := 1; i < len(at); i++ {
		for j := i; j > 0 && at[j] < at[j-1]; j-- {
			at[j], at[j-1] = at[j-1], at[j]
		}
	}
	for i, d := range at {
		floor := time.Duration(float64(i+1-burst) / rate * float64(time.Second))
		if d < floor-time.Millisecond {
			t.Errorf("send %d at %v, before the pacing floor %v", i, d, floor)
		}
	}
	want := time.Duration(float64(callers*each-burst) / rate * float64(time.Second))
	if at[len(at)-1] < want-time.Millisecond {
		t.Errorf("%d sends took %v, want ≥ %v", len(at), at[len(at)-1], want)
	}
}

func TestBurstBudgetStopsOnCancel(t *testing.T) {
	p := NewBurstBudget(1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.Take(ctx, RealClock{}, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := p.Take(ctx, RealClock{}, 1); err == nil {
		t.Error("Take after cancel returned nil")
	}
}

// A burst budget is a token bucket, on a fake clock exactly: after a pause
// burst packets leave at once, the next ones 1/rate apart, and a pause of
// k/rate lets k more leave at once (never more than burst).
func TestBurstBudgetIsATokenBucket(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	clk := &stepClock{now: t0}
	b := NewBurstBudget(100, 16) // 10 ms a packet
	ctx := context.Background()
	take := func() time.Duration {
		if err := b.Take(ctx, clk, 1); err != nil {
			t.Fatal(err)
		}
		return clk.Now().Sub(t0)
	}
	for i := 0; i < 16; i++ {
		if at := take(); at != 0 {
			t.Fatalf("packet %d of the first burst waited until %v", i+1, at)
		}
	}
	for i := 1; i <= 3; i++ {
		if at, want := take(), time.Duration(i)*10*time.Millisecond; at != want {
			t.Errorf("packet %d after the burst left at %v, want %v", 16+i, at, want)
		}
	}
	clk.After(50 * time.Millisecond) // 5 tokens back
	pause := clk.Now().Sub(t0)
	for i := 0; i < 5; i++ {
		if at := take(); at != pause {
			t.Errorf("packet %d after a 50 ms pause left at %v, want at once (%v)", i+1, at, pause)
		}
	}
	if at, want := take(), pause+10*time.Millisecond; at != want {
		t.Errorf("the 6th packet after the pause left at %v, want %v", at, want)
	}
}

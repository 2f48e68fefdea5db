package rdns

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// The cache answers at once, looks each address up once (failures too), and
// Wait collects the names that arrive in time.
func TestNameNeverBlocksAndAsksOnce(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	release := make(chan struct{})
	c := New(func(ctx context.Context, addr string) ([]string, error) {
		mu.Lock()
		calls[addr]++
		mu.Unlock()
		<-release
		if addr == "10.77.0.1" {
			return []string{"r1.lab.test."}, nil
		}
		return nil, errors.New("no name")
	})
	start := time.Now()
	if n, done := c.Name("10.77.0.1"); n != "" || done {
		t.Errorf("first call: %q %v, want a pending lookup", n, done)
	}
	if time.Since(start) > 100*time.Millisecond {
		t.Error("Name blocked")
	}
	close(release)
	names := c.Wait(context.Background(), []string{"10.77.0.1", "10.77.0.2"})
	if names["10.77.0.1"] != "r1.lab.test" || len(names) != 1 {
		t.Errorf("names %v", names)
	}
	c.Name("10.77.0.1")
	c.Name("10.77.0.2")
	c.Wait(context.Background(), []string{"10.77.0.1", "10.77.0.2"})
	mu.Lock()
	defer mu.Unlock()
	if calls["10.77.0.1"] != 1 || calls["10.77.0.2"] != 1 {
		t.Errorf("calls %v, want one per address", calls)
	}
}

// Wait gives up at its deadline; the lookup still lands in the cache later.
func TestWaitStopsAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	got := make(chan string, 1)
	c := New(func(ctx context.Context, addr string) ([]string, error) {
		<-release
		return []string{"late.test"}, nil
	})
	c.OnName = func(addr, name string) { got <- name }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if names := c.Wait(ctx, []string{"10.77.0.9"}); len(names) != 0 {
		t.Errorf("names %v before the lookup ended", names)
	}
	close(release)
	if n := <-got; n != "late.test" {
		t.Errorf("OnName %q", n)
	}
	if n, done := c.Name("10.77.0.9"); n != "late.test" || !done {
		t.Errorf("cached %q %v", n, done)
	}
}

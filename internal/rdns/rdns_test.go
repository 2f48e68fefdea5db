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
	// The resolver is held until Name has returned: a Name that waited for
	// its lookup would never return. The deadline only bounds that wait (a
	// wall-clock limit on Name itself fails on a loaded machine).
	type answer struct {
		name string
		done bool
	}
	first := make(chan answer, 1)
	go func() {
		n, done := c.Name("10.77.0.1")
		first <- answer{n, done}
	}()
	select {
	case got := <-first:
		if got.name != "" || got.done {
			t.Errorf("first call: %q %v, want a pending lookup", got.name, got.done)
		}
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("Name blocked on its lookup")
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

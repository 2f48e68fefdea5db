package engine

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// jumpClock is a fake clock: After(d) moves it d ahead at once. Past end it
// cancels the run.
type jumpClock struct {
	mu     sync.Mutex
	now    time.Time
	end    time.Time
	cancel context.CancelFunc
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	c.advance(d)
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

func (c *jumpClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	if !c.now.Before(c.end) {
		c.cancel()
	}
}

// countingLookup answers every name with 127.0.0.5 (TTL 30 s), "nx.test"
// with an error, and counts the lookups per name.
type countingLookup struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *countingLookup) LookupTTL(_ context.Context, host string) ([]netip.Addr, time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[host]++
	if host == "nx.test" {
		return nil, 0, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.5")}, 30 * time.Second, nil
}

// clockProber answers a sweep on the fake clock: its replies are in
// SweepSpan plus 20 ms after it starts (the last probe's slot plus one round
// trip), and the sweep of 127.0.0.9 fails as a whole (no privilege, say).
type clockProber struct {
	clk   *jumpClock
	calls []sweepCall
}

type sweepCall struct {
	at    time.Time
	addrs []string
	span  time.Duration
}

func (p *clockProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, on func(probe.Record)) ([]probe.SweepResult, error) {
	c := sweepCall{at: p.clk.Now(), span: probe.SweepSpan(ts, cfg)}
	out := make([]probe.SweepResult, len(ts))
	for i, t := range ts {
		c.addrs = append(c.addrs, t.Addr.String())
		if t.Addr == netip.MustParseAddr("127.0.0.9") {
			out[i].Err = probe.ErrPrivilege
			continue
		}
		out[i].Sent, out[i].Recv = cfg.Count, cfg.Count
	}
	p.calls = append(p.calls, c)
	p.clk.advance(c.span + 20*time.Millisecond)
	return out, nil
}

func (p *clockProber) Trace(context.Context, string, probe.TraceConfig, func(*route.Trace)) error {
	return errors.New("not traced here")
}

// The live sweep keeps its pace on an injected clock over ten minutes: a
// target is probed again one interval after the last probe of its previous
// round was due, however soon the replies came (they come 20 ms after that
// probe here); a failing target backs off exponentially while the others go
// on; a name is looked up once per TTL, one that does not resolve once per
// negative TTL at most.
func TestSweepLoopKeepsTheIntervalAcrossRoundsAndBacksOff(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	run := 10 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &jumpClock{now: t0, end: t0.Add(run), cancel: cancel}
	look := &countingLookup{n: map[string]int{}}
	p := &clockProber{clk: clk}
	o := Options{Prober: p, Count: 5, Interval: time.Second, Timeout: time.Second, Rate: 100,
		Backoff: 5 * time.Second, MaxBackoff: time.Minute, Clock: clk, Resolver: pacing.NewResolver(look, clk, 0)}
	loop := SweepLoop([]OwnedTarget{
		{Candidate: "a", Target: candidates.Target{Addr: "127.0.0.1", Protocol: probe.ICMP}},
		{Candidate: "a", Target: candidates.Target{Addr: "lo.test", Protocol: probe.TCP, Port: 443}},
		{Candidate: "b", Target: candidates.Target{Addr: "127.0.0.9", Protocol: probe.ICMP}},
		{Candidate: "c", Target: candidates.Target{Addr: "nx.test", Protocol: probe.ICMP}},
	}, o)
	errs := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop(ctx, func(ev Event) {
			if ev.Err != nil {
				errs[ev.Candidate]++
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the loop waits in real time, not on its clock")
	}
	var good, bad []sweepCall
	for _, c := range p.calls {
		for _, a := range c.addrs {
			switch a {
			case "127.0.0.1":
				good = append(good, c)
			case "127.0.0.9":
				bad = append(bad, c)
			}
		}
	}
	// Rounds of 5 probes a second: about one round per 5 s.
	if len(good) < int(run/(6*time.Second)) {
		t.Fatalf("127.0.0.1 swept %d times in %v, want about %d", len(good), run, run/(5*time.Second))
	}
	for k := 1; k < len(good); k++ {
		lastDue := good[k-1].at.Add(good[k-1].span)
		if gap := good[k].at.Sub(lastDue); gap < o.Interval {
			t.Fatalf("round %d started %v after the last probe of round %d was due, want at least the %v interval", k, gap, k-1, o.Interval)
		}
	}
	// 127.0.0.9 fails each time: 5 s, 10 s, 20 s, 40 s, then a minute apart.
	if len(bad) < 5 || len(bad) > 2+int(run/time.Minute)+4 {
		t.Fatalf("failing target swept %d times in %v", len(bad), run)
	}
	for k := 1; k < len(bad); k++ {
		want := pacing.Backoff(o.Backoff, o.MaxBackoff, k)
		if gap := bad[k].at.Sub(bad[k-1].at); gap < want || gap > want+10*time.Second {
			t.Errorf("failing target: try %d came %v after the previous, want %v (the backoff)", k, gap, want)
		}
	}
	if errs["b"] != len(bad) {
		t.Errorf("%d errors reported for b, want one per failed try (%d)", errs["b"], len(bad))
	}
	// lo.test: TTL 30 s → one lookup per 30 s; nx.test: at most one per
	// pacing.NegativeTTL, fewer as it backs off.
	if n, max := look.n["lo.test"], int(run/(30*time.Second))+1; n > max || n < max/2 {
		t.Errorf("lo.test: %d lookups in %v, want about %d (one per TTL)", n, run, max)
	}
	if n, max := look.n["nx.test"], int(run/pacing.NegativeTTL)+1; n > max || n < 2 {
		t.Errorf("nx.test: %d lookups in %v, want at most %d", n, run, max)
	}
}

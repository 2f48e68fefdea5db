// Package pacing is how linecheck's long-running probers (serve's loop in
// internal/exporter, the live loops of compare that the TUI runs) keep their
// pace, written once: a Resolver that looks host names up at a bounded rate
// and caches the answers (for their DNS TTL, failures for NegativeTTL), the
// exponential Backoff of a failing target, the Period after which a sweep's
// targets may be probed again (their interval kept across sweeps), and a
// Budget that keeps every prober of a process under one packets-per-second
// cap. Time comes from an injected probe.Clock, so tests run hours of pacing
// on a fake one.
package pacing

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// After is time.After.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Backoff defaults.
const (
	// DefaultMaxBackoff caps the wait before a failing target is tried again.
	DefaultMaxBackoff = 5 * time.Minute
	// MinBackoff is the first wait after a failure when the base is shorter.
	MinBackoff = time.Second
)

// Backoff is the wait after the n-th failure in a row: base (at least
// MinBackoff) doubled for each further failure, capped at max.
func Backoff(base, max time.Duration, n int) time.Duration {
	if base < MinBackoff {
		base = MinBackoff
	}
	if n < 1 {
		n = 1
	}
	d := float64(base) * math.Pow(2, float64(n-1))
	if d > float64(max) {
		return max
	}
	return time.Duration(d)
}

// Period is how long after a sweep of ts starts they may be probed again:
// one cfg.Interval after the sweep's last probe is due (probe.SweepSpan),
// which keeps every target's interval across sweeps whatever their grouping.
// With no target it is one round of cfg.Count probes.
func Period(ts []probe.SweepTarget, cfg probe.PingConfig) time.Duration {
	if cfg.Interval <= 0 {
		cfg.Interval = probe.DefaultInterval
	}
	if cfg.Count <= 0 {
		cfg.Count = probe.DefaultCount
	}
	if len(ts) == 0 {
		return time.Duration(cfg.Count) * cfg.Interval
	}
	return probe.SweepSpan(ts, cfg) + cfg.Interval
}

// Budget keeps the probers that share it under one packets-per-second cap:
// each spends the packets it sent, and none starts the next batch before
// Ready, the time the cap allows it (all packets spent so far at Rate).
// A budget made with a burst lets that many packets leave at once after a
// pause, a token bucket of that size: never more than burst + Rate × t in
// any span t. It is safe for concurrent use.
type Budget struct {
	rate float64
	// lag is how far behind now the next slot may be: (burst−1)/rate, so
	// after a pause burst packets have slots at or before now.
	lag time.Duration
	mu  sync.Mutex
	at  time.Time // the cap allows the next batch from then on
}

// NewBudget is a budget of rate packets a second (probe.DefaultPingRate when
// not positive), without a burst: packets leave 1/rate apart.
func NewBudget(rate float64) *Budget { return NewBurstBudget(rate, 1) }

// NewBurstBudget is a budget of rate packets a second of which up to burst
// may leave at once.
func NewBurstBudget(rate float64, burst int) *Budget {
	if rate <= 0 {
		rate = probe.DefaultPingRate
	}
	b := &Budget{rate: rate}
	if burst > 1 {
		b.lag = b.span(burst - 1)
	}
	return b
}

// Rate is the cap in packets per second.
func (b *Budget) Rate() float64 { return b.rate }

// span is how long n packets take at the cap.
func (b *Budget) span(n int) time.Duration {
	return time.Duration(float64(n) / b.rate * float64(time.Second))
}

// reserve takes n packets' slots from t on (under b.mu) and returns the
// first: the slot after every packet reserved before, or t less the burst's
// lag when the budget has been idle.
func (b *Budget) reserve(t time.Time, n int) time.Time {
	if floor := t.Add(-b.lag); b.at.Before(floor) {
		b.at = floor
	}
	slot := b.at
	b.at = b.at.Add(b.span(n))
	return slot
}

// Ready is when the next batch may start.
func (b *Budget) Ready() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at
}

// Spend accounts for packets sent by a batch that started at start.
func (b *Budget) Spend(start time.Time, packets int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserve(start, packets)
}

// Take reserves n packets under the cap and waits, on clk, until the first
// of them may leave: the slot after every packet reserved before (never
// earlier than now, less the burst). It returns ctx's error when ctx ends
// first.
func (b *Budget) Take(ctx context.Context, clk probe.Clock, n int) error {
	now := clk.Now()
	b.mu.Lock()
	slot := b.reserve(now, n)
	b.mu.Unlock()
	return Sleep(ctx, clk, slot.Sub(now))
}

// Sleep waits d on clk, or returns ctx's error when ctx ends first.
func Sleep(ctx context.Context, clk probe.Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}

// PacedDriver is a trace Driver whose every probe first takes its slot from
// a shared Budget, so that traces and sweeps together keep one cap.
type PacedDriver struct {
	probe.Driver
	Budget *Budget
	Clock  probe.Clock
	Ctx    context.Context
}

// Send waits for the probe's slot, then sends it.
func (d *PacedDriver) Send(p probe.TraceProbe) (time.Time, error) {
	if err := d.Budget.Take(d.Ctx, d.Clock, 1); err != nil {
		return time.Time{}, err
	}
	return d.Driver.Send(p)
}

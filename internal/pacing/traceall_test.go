package pacing

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// silentDriver sends into nothing: no probe is ever answered.
type silentDriver struct{}

func (silentDriver) Send(probe.TraceProbe) (time.Time, error) { return time.Now(), nil }
func (silentDriver) Receive(ctx context.Context) (probe.TraceReply, error) {
	<-ctx.Done()
	return probe.TraceReply{}, ctx.Err()
}
func (silentDriver) Close() error          { return nil }
func (silentDriver) Mode() probe.TraceMode { return probe.ModeRaw }

// An interrupted TraceAll of 3,000 targets (backtrace's Ctrl-C, issue 35)
// opens no driver after the interrupt and returns within a bound: it used
// to open and close every target's sockets first (6–15 s). The interrupt
// comes on the 100th open; the traces already past their check may still
// open (at most the goroutines running at that moment), none of the rest.
func TestTraceAllStopsOpeningTracesOnceInterrupted(t *testing.T) {
	const n, at = 3000, 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opens atomic.Int32
	var cancelled atomic.Int64
	openDriver = func(probe.TraceConfig, netip.Addr) (probe.Driver, error) {
		if opens.Add(1) == at {
			cancelled.Store(time.Now().UnixNano())
			cancel()
		}
		return silentDriver{}, nil
	}
	defer func() { openDriver = probe.OpenTraceDriver }()
	names, addrs := make([]string, n), make([]netip.Addr, n)
	for i := range n {
		addrs[i] = netip.AddrFrom4([4]byte{127, 1, byte(i / 250), byte(1 + i%250)})
		names[i] = addrs[i].String()
	}
	cfg := probe.TraceConfig{Proto: probe.ICMP, MaxTTL: 30, Cycles: 10, Interval: time.Second, Timeout: 2 * time.Second, Rate: 100}
	var each atomic.Int32
	res, err := TraceAll(ctx, names, addrs, cfg, NewBurstBudget(100, 16), func() { each.Add(1) })
	took := time.Since(time.Unix(0, cancelled.Load()))
	if err != nil {
		t.Fatal(err)
	}
	if got := opens.Load(); got > at+64 {
		t.Errorf("%d drivers opened, the interrupt came at the %dth: want at most %d", got, at, at+64)
	}
	if each.Load() != n {
		t.Errorf("each called %d times, want %d", each.Load(), n)
	}
	var started, skipped int
	for i, r := range res {
		switch {
		case errors.Is(r.Err, ErrNotStarted) && r.Run == nil:
			skipped++
		case r.Err == nil && r.Run != nil:
			started++
		default:
			t.Errorf("target %d: run %v, err %v", i, r.Run != nil, r.Err)
		}
	}
	if started != int(opens.Load()) || started+skipped != n {
		t.Errorf("%d traces kept, %d not started, %d opened", started, skipped, opens.Load())
	}
	// Generous for a loaded machine: the traces already open end on ctx.
	if took > 3*time.Second {
		t.Errorf("returned %v after the interrupt, want under 3 s", took)
	}
}

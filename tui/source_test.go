package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

func TestFeedReplaysTracesThenRecordsInTimeOrderAndLoops(t *testing.T) {
	feed := FixtureFeed(1e6) // fast: the order is what is tested, not the pace
	ctx := context.Background()
	first, ok := feed.Next(ctx).(UpdatesMsg)
	if !ok || len(first) != len(FixtureTraces()) {
		t.Fatalf("first message = %T with %d updates, want the %d traces", first, len(first), len(FixtureTraces()))
	}
	for _, u := range first {
		if _, ok := u.(TraceMsg); !ok {
			t.Fatalf("first batch holds a %T", u)
		}
	}
	total := 0
	for _, rtts := range fixtureRTTs {
		total += len(rtts)
	}
	var last time.Time
	seen := 0
	for seen < 2*total {
		batch, ok := feed.Next(ctx).(UpdatesMsg)
		if !ok {
			t.Fatal("feed ended; it should loop")
		}
		for _, u := range batch {
			pm := u.(ProbeMsg)
			if pm.Record.Time.Before(last) {
				t.Fatalf("record %d at %v after %v: not in time order", seen, pm.Record.Time, last)
			}
			last = pm.Record.Time
			seen++
		}
	}
	// The second loop is shifted by the recording's span (10 s: 0..9 s + 1 s).
	if want := FixtureStart().Add(19 * time.Second); last.Before(want) {
		t.Errorf("after two loops the clock is at %v, want at least %v", last, want)
	}
}

func TestFeedWithoutLoopEnds(t *testing.T) {
	feed := FixtureFeed(1e6)
	feed.Loop = false
	feed.Traces = nil
	ctx := context.Background()
	n := 0
	for i := 0; i < 100; i++ {
		switch m := feed.Next(ctx).(type) {
		case FeedDoneMsg:
			if n != 40 {
				t.Errorf("replayed %d records before the end, want 40", n)
			}
			return
		case UpdatesMsg:
			n += len(m)
		}
	}
	t.Fatal("the feed never ended")
}

func TestLiveFeederOnLoopback(t *testing.T) {
	// A TCP listener this test opens on 127.0.0.1: the only address probed.
	port := testbin.TCPListener(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	feed := &Feed{Snapshot: Snapshot{Candidates: []Candidate{{Name: "lo"}}},
		Live: []Feeder{LoopFeeder(engine.PingLoop("lo", candidates.Target{Addr: "127.0.0.1", Protocol: "tcp", Port: port},
			engine.Options{Count: 3, Interval: 50 * time.Millisecond}))}}
	m := NewLoaded(ctx, feed, feed.Snapshot, Options{Width: 100, Height: 30, NoColor: true})
	for m.Candidate("lo").Stats.Recv < 3 {
		if ctx.Err() != nil {
			t.Fatal("no replies from the loopback listener")
		}
		msg := feed.Next(ctx)
		if e, ok := msg.(UpdatesMsg); ok {
			for _, u := range e {
				if fe, ok := u.(FeedErrMsg); ok {
					t.Fatalf("feed error: %v", fe.Err)
				}
			}
		}
		m = step(t, m, msg)
		m.inflight = false
	}
	c := m.Candidate("lo")
	if !strings.HasPrefix(c.Target, "127.0.0.1 tcp/") || c.Stats.Lost != 0 || c.Stats.MinRTT <= 0 {
		t.Errorf("loopback row: target %q, %+v", c.Target, c.Stats)
	}
}

func TestNoColorHasNoColourCodes(t *testing.T) {
	mono := fixtureModel(t, 100, 30)
	colour := NewLoaded(context.Background(), nil, FixtureSnapshot(), Options{Width: 100, Height: 30})
	for _, keys := range [][]string{nil, {"enter"}, {"c"}, {"?"}} {
		if f := press(t, mono, keys...).Render(); strings.Contains(f, "[38;") || strings.Contains(f, "[48;") || strings.Contains(f, ";38;") {
			t.Errorf("monochrome frame %v holds colour codes", keys)
		}
	}
	if f := colour.Render(); !strings.Contains(f, "38;") {
		t.Error("the colour frame has no colour at all: the test above proves nothing")
	}
}

// TestTraceFeederOnLoopback traces 127.0.0.1 through the core's loop, runs
// of two cycles: the snapshots go on past the end of a run (the live TUI
// traces for as long as it runs) and each one holds the hop.
func TestTraceFeederOnLoopback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan Msg, 64)
	loop := engine.TraceLoop("lo", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"},
		engine.Options{TraceRunCycles: 2, TraceInterval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond})
	go func() {
		_ = LoopFeeder(loop)(ctx, func(m Msg) {
			select {
			case got <- m:
			default:
			}
		})
	}()
	traces := 0
	for traces < 5 {
		select {
		case m := <-got:
			switch m := m.(type) {
			case FeedErrMsg:
				if os.Getuid() != 0 {
					t.Skipf("tracing needs privileges here (not root): %v", m.Err)
				}
				t.Fatalf("feed error: %v", m.Err)
			case TraceMsg:
				traces++
				if m.Candidate != "lo" || m.Direction != "forward" || len(m.Trace.Hops) == 0 {
					t.Fatalf("trace message %+v", m)
				}
				r := routeFromTrace("forward", m.Trace)
				if a := showHop(r.Hops[0]).addr(); a != "127.0.0.1" || !r.Reached {
					t.Errorf("first hop %q, reached %v", a, r.Reached)
				}
			}
		case <-ctx.Done():
			t.Fatalf("only %d trace snapshots of 127.0.0.1 (want 5, past the end of the two-cycle runs)", traces)
		}
	}
}

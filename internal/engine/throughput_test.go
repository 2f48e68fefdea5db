package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// tickingTracer sends nothing: it emits a one-hop cycle every 10 ms until
// its context ends (a live trace run, as far as the loops can tell).
type tickingTracer struct{ Sender }

func (tickingTracer) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, on func(*route.Trace)) error {
	for c := 1; ; c++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		on(&route.Trace{Addr: addr, Reached: true, Hops: []route.Hop{{TTL: 1, Sent: c}}})
	}
}

// The live loops of a candidate with a bandwidth_test run its test against
// our iperf3-protocol server on loopback (download, the time asked for),
// and while it runs neither a ping nor a trace cycle happens: every probe
// record was sent before the test began or after it ended, and no event
// but the test's own arrives in between. Afterwards the pings and traces
// go on, and b (BWNow) runs the test again.
func TestMonitorLoopsRunTheThroughputTestInQuiet(t *testing.T) {
	port := bwtest.Server(t)
	tcp := testbin.TCPListener(t)
	f := &candidates.File{Candidates: []candidates.Candidate{{Name: "lo",
		Targets:       []candidates.Target{{Addr: "127.0.0.1", Protocol: probe.TCP, Port: tcp}},
		BandwidthTest: &candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}}}}
	now := make(chan struct{}, 1)
	loops, err := MonitorLoops(f, Options{Count: 2, Interval: 50 * time.Millisecond, TraceInterval: 10 * time.Millisecond,
		Prober: tickingTracer{}, BWTime: time.Second, BWNow: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(loops) != 3 {
		t.Fatalf("%d loops: want sweep, trace, throughput", len(loops))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Each event is stamped as it is emitted: a test's outcome is emitted
	// before the loops may probe again, so a probe sent after the test
	// has a later time than its stamp (the time it is received could be
	// later still, under load).
	type stamped struct {
		Event
		at time.Time
	}
	events := make(chan stamped, 4096)
	for _, l := range loops {
		go l(ctx, func(e Event) {
			select {
			case events <- stamped{e, time.Now()}:
			case <-ctx.Done():
			}
		})
	}
	type window struct{ from, to time.Time }
	var tests []window
	var results []*verdict.Throughput
	inTest := false
	var recsAfter, tracesAfter int
	for len(results) < 2 || recsAfter == 0 || tracesAfter == 0 {
		var e stamped
		select {
		case e = <-events:
		case <-ctx.Done():
			t.Fatalf("timed out: %d tests, %d records and %d traces after the first", len(results), recsAfter, tracesAfter)
		}
		switch {
		case e.Err != nil:
			t.Fatalf("loop error: %v", e.Err)
		case e.BWStart != nil:
			if inTest {
				t.Fatal("a test began while another ran")
			}
			if e.BWStart.Direction != bw.Download || e.BWStart.Time != time.Second || e.BWStart.Test.Port != port || e.Candidate != "lo" {
				t.Errorf("start %+v of %s", e.BWStart, e.Candidate)
			}
			inTest = true
			tests = append(tests, window{from: e.at})
		case e.Throughput != nil:
			if !inTest {
				t.Fatal("an outcome without a start")
			}
			inTest = false
			tests[len(tests)-1].to = e.at
			results = append(results, e.Throughput)
			if len(results) == 1 {
				now <- struct{}{} // the b key: test again
			}
		case inTest:
			t.Fatalf("an event during the throughput test: %+v", e.Event)
		case e.Record != nil:
			for _, w := range tests {
				if !e.Record.Time.Before(w.from) && !e.Record.Time.After(w.to) {
					t.Fatalf("a probe sent at %v, during the test (%v to %v)", e.Record.Time, w.from, w.to)
				}
			}
			if len(results) > 0 {
				recsAfter++
			}
		case e.Trace != nil && len(results) > 0:
			tracesAfter++
		}
	}
	// What the loop controls is that every test it starts gives one
	// outcome, live and in the direction asked, with figures or the reason
	// it has none. The figures themselves are the loopback server's and the
	// scheduler's: on a loaded machine an interval can pass with nothing
	// moved (a p5 of 0), and the second test, asked for the moment the first
	// ended, can find the server still closing the first past the busy
	// retries (issue 35: the test failed on a loaded 2-core machine while
	// the loops kept every order). So the first test, on an idle server,
	// must have moved data (mean > 0, a bound), and neither may be empty.
	for i, tp := range results {
		if tp.Direction != bw.Download || tp.Source != "live" {
			t.Errorf("test %d: %+v: want a live download", i+1, tp)
		}
		if tp.Error == "" && (tp.Mean == nil || *tp.Mean <= 0 || tp.P5 == nil) {
			t.Errorf("test %d: %+v: neither figures nor an error", i+1, tp)
		}
	}
	if first := results[0]; first.Error != "" || first.Mean == nil || *first.Mean <= 0 {
		t.Errorf("first test, on an idle server: %+v: want figures", first)
	}
}

// A server that refuses (nothing listens on the port) gives an outcome
// with the error and no figures; the loops go on.
func TestThroughputLoopReportsARefusingServer(t *testing.T) {
	port := testbin.ClosedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan Event, 4)
	go ThroughputLoop([]OwnedBWTest{{Candidate: "x", Test: candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}}},
		Options{Count: 1, Interval: time.Millisecond, BWTime: time.Second})(ctx, func(e Event) { got <- e })
	if e := <-got; e.BWStart == nil {
		t.Fatalf("first event %+v: want the start", e)
	}
	e := <-got
	if e.Throughput == nil || e.Throughput.Error == "" || e.Throughput.P5 != nil || e.Throughput.Mean != nil {
		t.Fatalf("outcome %+v: want an error and no figures", e.Throughput)
	}
}

// With BWEvery the rounds repeat from the start of one to the start of the
// next, the first after one ping round (Count × Interval); every
// candidate is tested in each, in file order. On a fake clock: 5 hours at
// 10 probes of 1 s and BWEvery 1h give rounds at 10 s, 1h0m10s, … 4h0m10s.
func TestThroughputLoopRepeatsEveryBWEvery(t *testing.T) {
	port := testbin.ClosedPort(t) // instant refusals: the clock alone sets the pace
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &jumpClock{now: t0, end: t0.Add(5 * time.Hour), cancel: cancel}
	var starts []string
	ThroughputLoop([]OwnedBWTest{
		{Candidate: "a", Test: candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}},
		{Candidate: "b", Test: candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}},
	}, Options{Count: 10, Interval: time.Second, BWEvery: time.Hour, Clock: clk})(ctx, func(e Event) {
		if e.BWStart != nil {
			starts = append(starts, e.Candidate+"@"+clk.Now().Sub(t0).String())
		}
	})
	want := []string{"a@10s", "b@10s", "a@1h0m10s", "b@1h0m10s", "a@2h0m10s", "b@2h0m10s", "a@3h0m10s", "b@3h0m10s", "a@4h0m10s", "b@4h0m10s"}
	if strings.Join(starts, " ") != strings.Join(want, " ") {
		t.Errorf("tests at %v\nwant        %v", starts, want)
	}
}

// A test-now request made the moment an outcome shows (emit itself sends
// it, as a user pressing b on seeing the figures) starts a second test:
// the loop used to drain the requests after the round's release, so this
// one was taken as answered and the second test never came.
func TestThroughputLoopAnswersARequestMadeOnTheOutcome(t *testing.T) {
	port := testbin.ClosedPort(t) // instant refusals
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := make(chan struct{}, 1)
	starts, outcomes := 0, 0
	ThroughputLoop([]OwnedBWTest{{Candidate: "x", Test: candidates.BandwidthTest{Addr: "127.0.0.1", Port: port}}},
		Options{Count: 1, Interval: time.Millisecond, BWTime: time.Second, BWNow: now})(ctx, func(e Event) {
		switch {
		case e.BWStart != nil:
			starts++
		case e.Throughput != nil:
			outcomes++
			if outcomes == 1 {
				now <- struct{}{}
			} else {
				cancel()
			}
		}
	})
	if starts != 2 || outcomes != 2 {
		t.Fatalf("%d starts, %d outcomes: want 2 and 2 (the request made on the first outcome answered by a second test)", starts, outcomes)
	}
}

package engine

import (
	"context"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"

	"github.com/linecheck/linecheck/probe/bw"
)

// This file is the throughput side of the live loops: the tests the TUI
// runs against each candidate's bandwidth_test, as compare's live run does
// (MeasureThroughput, download, DefaultBWTime), and the Quiet that keeps
// the ping and trace loops from probing while a test fills the line.

// Quiet keeps the probe loops that share it silent while a throughput test
// runs. Each loop runs its probe rounds (a sweep round, a trace run) inside
// Round; Hold ends the rounds in progress (their contexts are cancelled:
// probes still in flight are left out, never counted lost), waits until
// they are over and keeps new ones from starting until it is released. A
// test fills the line of the vantage as well as the candidate's, so every
// loop pauses, not only the candidate's own. A nil Quiet never holds.
type Quiet struct {
	mu     sync.Mutex
	held   bool
	open   chan struct{} // closed while not held
	rounds map[int]context.CancelFunc
	nextID int
	idle   chan struct{} // closed when the last round ends during a hold
}

// NewQuiet returns an open Quiet.
func NewQuiet() *Quiet {
	q := &Quiet{open: make(chan struct{}), rounds: map[int]context.CancelFunc{}}
	close(q.open)
	return q
}

// Round waits while q is held and then starts a probe round: rctx ends
// when ctx does or when a hold begins; done must be called when the round
// is over. The error is ctx's when it ended while waiting.
func (q *Quiet) Round(ctx context.Context) (rctx context.Context, done func(), err error) {
	if q == nil {
		return ctx, func() {}, ctx.Err()
	}
	for {
		q.mu.Lock()
		if !q.held {
			rctx, cancel := context.WithCancel(ctx)
			id := q.nextID
			q.nextID++
			q.rounds[id] = cancel
			q.mu.Unlock()
			var once sync.Once
			return rctx, func() {
				once.Do(func() {
					cancel()
					q.mu.Lock()
					delete(q.rounds, id)
					if len(q.rounds) == 0 && q.idle != nil {
						close(q.idle)
						q.idle = nil
					}
					q.mu.Unlock()
				})
			}, nil
		}
		open := q.open
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-open:
		}
	}
}

// Hold ends the rounds in progress, waits until they are over and keeps
// new rounds from starting until release is called. One hold at a time: a
// second Hold waits for the first's release.
func (q *Quiet) Hold(ctx context.Context) (release func(), err error) {
	if q == nil {
		return func() {}, ctx.Err()
	}
	q.mu.Lock()
	for q.held {
		open := q.open
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-open:
		}
		q.mu.Lock()
	}
	q.held = true
	q.open = make(chan struct{})
	var idle chan struct{}
	if len(q.rounds) > 0 {
		idle = make(chan struct{})
		q.idle = idle
	}
	for _, cancel := range q.rounds {
		cancel()
	}
	q.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			q.mu.Lock()
			q.held, q.idle = false, nil
			close(q.open)
			q.mu.Unlock()
		})
	}
	if idle != nil {
		select {
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		case <-idle:
		}
	}
	return release, nil
}

// BWStart announces a candidate's throughput test (Event.BWStart).
type BWStart struct {
	Test      candidates.BandwidthTest
	Direction string
	Time      time.Duration // measured time, after 1 s of warm-up
}

// OwnedBWTest is a candidate's bandwidth_test.
type OwnedBWTest struct {
	Candidate string
	Test      candidates.BandwidthTest
}

// ThroughputLoop runs throughput rounds until ctx ends: in each, every
// candidate's bandwidth_test in turn (an iperf3 server serves one test at
// a time, and each test fills the line), download for o.BWTime
// (DefaultBWTime when 0) through MeasureThroughput, as compare's live run
// does. An Event with BWStart announces each test, one with Throughput
// gives its outcome (Error set when it gave no figures). o.Quiet is held
// for the whole round, so the ping and trace loops sharing it pause.
//
// The first round starts after one ping round (o.Count × o.Interval), so
// the latency figures come first; further rounds every o.BWEvery from the
// start of the previous one (never, when 0) and whenever o.BWNow delivers
// (a request that arrives during a round is dropped: the round under way
// answers it).
func ThroughputLoop(tests []OwnedBWTest, o Options) Loop {
	o.defaults()
	d := o.BWTime
	if d <= 0 {
		d = DefaultBWTime
	}
	first := time.Duration(o.Count) * o.Interval
	return func(ctx context.Context, emit func(Event)) {
		if len(tests) == 0 {
			<-ctx.Done()
			return
		}
		clk := o.Clock
		wait := first
		for {
			var tick <-chan time.Time
			if wait >= 0 {
				tick = clk.After(wait)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick:
			case <-o.BWNow:
			}
			start := clk.Now()
			release, err := o.Quiet.Hold(ctx)
			if err != nil {
				return
			}
			for _, t := range tests {
				if ctx.Err() != nil {
					break
				}
				emit(Event{Candidate: t.Candidate, BWStart: &BWStart{Test: t.Test, Direction: bw.Download, Time: d}})
				tp := MeasureThroughput(ctx, t.Test, d, bw.Download)
				if ctx.Err() != nil {
					break
				}
				// A request made before this outcome shows is answered by
				// the round; one made after it (the user saw the figures
				// and pressed b again) starts the next. Drained after the
				// release instead, a request sent as soon as the outcome
				// arrived was lost when the loop was descheduled between
				// the two (seen under load: no second test in 60 s).
				drainRequests(o.BWNow)
				emit(Event{Candidate: t.Candidate, Throughput: tp})
			}
			release()
			if ctx.Err() != nil {
				return
			}
			wait = -1
			if o.BWEvery > 0 {
				wait = max(0, start.Add(o.BWEvery).Sub(clk.Now()))
			}
		}
	}
}

// drainRequests empties the test-now channel (nil: nothing to drain).
func drainRequests(now <-chan struct{}) {
	for {
		select {
		case <-now:
		default:
			return
		}
	}
}

// roundCut reports whether a probe round ended because a Quiet hold cut it
// (rctx ended, the loop's ctx did not): not a failure, nothing to back
// off from.
func roundCut(ctx, rctx context.Context) bool { return rctx.Err() != nil && ctx.Err() == nil }

package exporter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// sweepProber pings for real (probe.Sweep, TCP connect on loopback, as
// serve's prober does) and keeps what the test needs to see the pause: the
// send time of every probe decided, whether a sweep or trace is under way,
// and how many sweeps were cut (their context ended before they did).
type sweepProber struct {
	count    int
	interval time.Duration

	mu      sync.Mutex
	active  int         // sweeps and traces under way
	sent    []time.Time // of every probe decided, as the engine recorded it
	pings   int
	cut     int
	records chan struct{} // a probe was decided (never blocks)
}

func (p *sweepProber) enter() {
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
}

func (p *sweepProber) leave(ctx context.Context) {
	p.mu.Lock()
	p.active--
	if ctx.Err() != nil {
		p.cut++
	}
	p.mu.Unlock()
}

func (p *sweepProber) Sweep(ctx context.Context, sts []probe.SweepTarget, _ probe.PingConfig, _ func(probe.Record)) ([]probe.SweepResult, error) {
	p.enter()
	defer p.leave(ctx)
	p.mu.Lock()
	p.pings++
	p.mu.Unlock()
	// A timeout no loaded machine makes a loopback answer miss: every
	// probe decided is an answer.
	res, err := probe.Sweep(ctx, sts, probe.PingConfig{Count: p.count, Interval: p.interval, Timeout: 5 * time.Second}, func(r probe.Record) {
		p.mu.Lock()
		p.sent = append(p.sent, r.Time)
		p.mu.Unlock()
		select {
		case p.records <- struct{}{}:
		default:
		}
	})
	return res, err
}

func (p *sweepProber) Trace(ctx context.Context, _ string, _ probe.TraceConfig, on func(*route.Trace)) error {
	p.enter()
	defer p.leave(ctx)
	on(&route.Trace{Reached: true, Hops: []route.Hop{{TTL: 1, Sent: 1}}})
	return nil
}

func (p *sweepProber) snapshot() (active, pings, decided, cut int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active, p.pings, len(p.sent), p.cut
}

// While serve's throughput test runs (a real one, on loopback), no ping
// and no trace is under way or starts: the sweep in progress is cut, and
// the pings resume after the test. The probes the cut left in flight are
// not counted lost: a loopback listener answers every probe, so sent and
// received must agree.
func TestServeBWPausesThePings(t *testing.T) {
	bwPort := bwtest.Server(t)
	pingPort := testbin.TCPListener(t)
	target := Target{Candidate: "lo", Addr: "127.0.0.1", Protocol: probe.TCP, Port: pingPort}
	e := New(nil)
	e.SetTargets([]Target{target}, time.Now())
	// 40 probes 50 ms apart: a sweep lasts 2 s, so the test cuts one.
	p := &sweepProber{count: 40, interval: 50 * time.Millisecond, records: make(chan struct{}, 1)}
	quiet := engine.NewQuiet()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cycle 1 is cut by the test; cycle 2 runs after it. When cycle 2 is
	// over, no sweep is under way: the counters and the probes decided
	// are taken then.
	type counts struct {
		pings, decided int
		sent, recv     float64
	}
	second := make(chan counts, 1)
	lbl := map[string]string{"candidate": "lo"}
	onCycle := func(n int) {
		if n != 2 {
			return
		}
		_, pings, decided, _ := p.snapshot()
		second <- counts{pings, decided,
			metric(t, e, "linecheck_probes_sent_total", lbl).GetCounter().GetValue(),
			metric(t, e, "linecheck_probes_received_total", lbl).GetCounter().GetValue()}
		cancel()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		engine.RunCycles(ctx, e, engine.CycleConfig{Prober: p, Count: p.count, Interval: p.interval, TraceEvery: 1, TraceProbes: 1, Quiet: quiet, OnCycle: onCycle})
	}()

	type span struct{ start, end time.Time }
	tested := make(chan span, 1)
	var failure error
	rounds := 0
	targets := func() []BWTarget {
		rounds++
		if rounds > 1 {
			return nil
		}
		// The first round starts once the sweep has decided a few probes:
		// the test begins in the middle of a sweep.
		for n := 0; n < 3; n++ {
			select {
			case <-p.records:
			case <-ctx.Done():
				return nil
			}
		}
		return []BWTarget{{Candidate: "lo", Addr: "127.0.0.1", Port: bwPort}}
	}
	measure := engine.MeasureRunner(time.Second)
	run := func(ctx context.Context, tg BWTarget, dir string) (*bw.Result, error) {
		active, pings, decided, _ := p.snapshot()
		if active != 0 {
			failure = fmt.Errorf("%d sweeps or traces under way as the test starts", active)
		}
		s := span{start: time.Now()}
		r, err := measure(ctx, tg, dir)
		s.end = time.Now()
		a2, p2, d2, _ := p.snapshot()
		if a2 != 0 || p2 != pings || d2 != decided {
			failure = errors.Join(failure, fmt.Errorf("during the test: %d under way at its end, sweeps %d → %d, probes decided %d → %d", a2, pings, p2, decided, d2))
		}
		tested <- s
		return r, err
	}
	m := NewBWMetrics(e.Registry())
	go func() {
		defer wg.Done()
		engine.BWLoop{Every: time.Hour, Targets: targets, Directions: []string{bw.Download}, Run: run, Observe: BWObserver(m, nil), Quiet: quiet}.Loop(ctx)
	}()

	var test span
	select {
	case test = <-tested:
	case <-time.After(30 * time.Second):
		t.Fatal("no throughput test within 30 s")
	}
	if failure != nil {
		t.Error(failure)
	}
	// The pings resume: a whole sweep after the test.
	var c counts
	select {
	case c = <-second:
	case <-time.After(30 * time.Second):
		t.Fatal("no second cycle within 30 s of the test's end")
	}
	wg.Wait()
	_, _, _, cut := p.snapshot()
	if cut < 1 || c.pings != 2 {
		t.Errorf("%d sweeps cut of %d, want the first one cut by the test", cut, c.pings)
	}
	after := 0
	p.mu.Lock()
	for _, at := range p.sent {
		if !at.Before(test.start) && !at.After(test.end) {
			t.Errorf("a probe sent at %v, during the test (%v – %v)", at.Format(time.StampMicro), test.start.Format(time.StampMicro), test.end.Format(time.StampMicro))
		}
		if at.After(test.end) {
			after++
		}
	}
	p.mu.Unlock()
	if after != p.count {
		t.Errorf("%d probes after the test, want the %d of the second sweep", after, p.count)
	}
	// Every decided probe was an answer, and every probe counted was decided.
	if c.sent != float64(c.decided) || c.recv != c.sent || c.sent <= float64(p.count) {
		t.Errorf("sent %v received %v, want both %d (loopback answers all; the probes in flight at the cut are not lost)", c.sent, c.recv, c.decided)
	}
	server := fmt.Sprintf("127.0.0.1:%d", bwPort)
	if ok := sampleValue(t, e.Registry(), "linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "ok"); ok != 1 {
		t.Errorf("ok tests %v, want 1", ok)
	}
	if g := sampleValue(t, e.Registry(), "linecheck_throughput_bits_per_second", "candidate", "lo", "server", server, "direction", bw.Download); g <= 0 {
		t.Errorf("throughput gauge %v", g)
	}
}

// serve's test is compare's: a server busy for a moment (a client that sent
// its cookie and stalls holds it) is tried again, and the test
// counts as ok once it is free.
func TestServeBWRetriesABusyServer(t *testing.T) {
	port := bwtest.Server(t)
	hog := bwtest.Occupy(t, port)
	if _, err := bw.Run(context.Background(), "127.0.0.1", bw.Config{Port: port, Duration: time.Second}); !errors.Is(err, bw.ErrBusy) {
		t.Fatalf("with a stalled client holding the server: %v, want busy", err)
	}
	time.AfterFunc(400*time.Millisecond, func() { hog.Close() })

	reg := NewRegistry()
	m := NewBWMetrics(reg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rounds := 0
	targets := func() []BWTarget {
		rounds++
		if rounds > 1 {
			cancel()
			return nil
		}
		return []BWTarget{{Candidate: "lo", Addr: "127.0.0.1", Port: port}}
	}
	engine.BWLoop{Every: 10 * time.Millisecond, Targets: targets, Directions: []string{bw.Download}, Run: engine.MeasureRunner(time.Second), Observe: BWObserver(m, nil)}.Loop(ctx)
	server := fmt.Sprintf("127.0.0.1:%d", port)
	if ok := sampleValue(t, reg, "linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "ok"); ok != 1 {
		t.Errorf("ok tests %v, want 1 (the busy server tried again)", ok)
	}
	if e := sampleValue(t, reg, "linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "error"); e != -1 {
		t.Errorf("error tests %v, want none", e)
	}
}

// A test that fails at once (nothing listens on the bw port) still cuts
// the sweep under way; the sweep that follows keeps the target's interval:
// its first probe leaves no sooner than one interval after the last probe
// before the cut. The failed test counts as an error.
func TestServeBWCutKeepsTheInterval(t *testing.T) {
	bwPort := testbin.ClosedPort(t)
	pingPort := testbin.TCPListener(t)
	target := Target{Candidate: "lo", Addr: "127.0.0.1", Protocol: probe.TCP, Port: pingPort}
	e := New(nil)
	e.SetTargets([]Target{target}, time.Now())
	// 20 probes 200 ms apart: a sweep lasts 4 s.
	p := &sweepProber{count: 20, interval: 200 * time.Millisecond, records: make(chan struct{}, 1)}
	quiet := engine.NewQuiet()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cutAt time.Time // the last probe decided before the test
	onCycle := func(n int) {
		if n == 2 {
			cancel()
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		engine.RunCycles(ctx, e, engine.CycleConfig{Prober: p, Count: p.count, Interval: p.interval, Quiet: quiet, OnCycle: onCycle})
	}()
	rounds := 0
	targets := func() []BWTarget {
		rounds++
		if rounds > 1 {
			return nil
		}
		// Right after a probe is decided: the next is due one interval on.
		for n := 0; n < 2; n++ {
			select {
			case <-p.records:
			case <-ctx.Done():
				return nil
			}
		}
		return []BWTarget{{Candidate: "lo", Addr: "127.0.0.1", Port: bwPort}}
	}
	run := func(ctx context.Context, tg BWTarget, dir string) (*bw.Result, error) {
		p.mu.Lock()
		cutAt = p.sent[len(p.sent)-1]
		p.mu.Unlock()
		return engine.MeasureRunner(time.Second)(ctx, tg, dir)
	}
	m := NewBWMetrics(e.Registry())
	go func() {
		defer wg.Done()
		engine.BWLoop{Every: time.Hour, Targets: targets, Directions: []string{bw.Download}, Run: run, Observe: BWObserver(m, nil), Quiet: quiet}.Loop(ctx)
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("two cycles did not end within 60 s")
	}
	if cutAt.IsZero() {
		t.Fatal("no test ran")
	}
	var next time.Time
	for _, at := range p.sent {
		if at.After(cutAt) {
			next = at
			break
		}
	}
	if next.IsZero() || next.Sub(cutAt) < p.interval {
		t.Errorf("first probe after the cut %v after the last one before it, want at least the interval %v", next.Sub(cutAt), p.interval)
	}
	if _, _, _, cut := p.snapshot(); cut != 1 {
		t.Errorf("%d sweeps cut, want 1", cut)
	}
	server := fmt.Sprintf("127.0.0.1:%d", bwPort)
	if n := sampleValue(t, e.Registry(), "linecheck_bw_tests_total", "candidate", "lo", "server", server, "direction", bw.Download, "result", "error"); n != 1 {
		t.Errorf("error tests %v, want 1", n)
	}
}

// With a Quiet (serve --bw-every) but no throughput test under way, the
// sweeps and traces are not cut: every cycle's trace is exported. The loop
// used to ask the round's context whether it was cut after done(), which
// cancels it, so every sweep looked cut and no trace ever ran.
func TestServeQuietWithoutATestCutsNothing(t *testing.T) {
	pingPort := testbin.TCPListener(t)
	target := Target{Candidate: "lo", Addr: "127.0.0.1", Protocol: probe.TCP, Port: pingPort}
	e := New(nil)
	e.SetTargets([]Target{target}, time.Now())
	p := &sweepProber{count: 2, interval: 10 * time.Millisecond, records: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hops := make(chan bool, 1)
	onCycle := func(n int) {
		if n == 3 {
			hops <- metric(t, e, "linecheck_hops", map[string]string{"candidate": "lo"}) != nil
			cancel()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		engine.RunCycles(ctx, e, engine.CycleConfig{Prober: p, Count: p.count, Interval: p.interval, TraceEvery: 1, TraceProbes: 1, Quiet: engine.NewQuiet(), OnCycle: onCycle})
	}()
	select {
	case ok := <-hops:
		if !ok {
			t.Error("3 cycles with a Quiet and no throughput test: no linecheck_hops (every trace taken for cut)")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("3 cycles did not end in 30 s")
	}
	<-done
	if _, _, _, cut := p.snapshot(); cut > 1 {
		t.Errorf("%d sweeps or traces saw their context end (only the shutdown may cut one)", cut)
	}
}

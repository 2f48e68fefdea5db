package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// fakeClock is a clock whose waits return at once, having moved time on by
// what they waited. Past its end it cancels the run.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	end    time.Time
	cancel context.CancelFunc
}

var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock(run time.Duration, cancel context.CancelFunc) *fakeClock {
	return &fakeClock{now: epoch, end: epoch.Add(run), cancel: cancel}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	if !c.now.Before(c.end) {
		c.cancel()
	}
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// probeLog is what a fake prober sent: per target label, the (fake) times
// of its probes, as the sweep would have scheduled them.
type probeLog struct {
	mu     sync.Mutex
	at     map[string][]time.Time
	traces int
	pings  int
}

func (l *probeLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ts := range l.at {
		n += len(ts)
	}
	return n
}

// fakeProber answers at once (or fails at once, when fail says so), which
// is the case that used to spin: a cycle that ends immediately.
type fakeProber struct {
	clk      Clock
	count    int
	interval time.Duration
	rate     float64
	log      *probeLog
	fail     func(probe.SweepTarget) error
	traceErr error
}

func (f *fakeProber) Sweep(_ context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, _ func(probe.Record)) ([]probe.SweepResult, error) {
	now := f.clk.Now()
	iv, _ := probe.Schedule(len(ts), probe.PingConfig{Count: f.count, Interval: f.interval, Rate: f.rate})
	f.log.mu.Lock()
	defer f.log.mu.Unlock()
	f.log.pings++
	out := make([]probe.SweepResult, len(ts))
	for i, t := range ts {
		label := t.Name // Target.Label: the address, with the port for tcp
		if t.Protocol == probe.TCP {
			label = net.JoinHostPort(t.Name, strconv.Itoa(t.Port))
		}
		if f.fail != nil {
			if err := f.fail(t); err != nil {
				out[i].Err = err
				continue
			}
		}
		for k := 0; k < f.count; k++ {
			// The schedule of one sweep of all (icmp only in these tests):
			// probe k of target i at k·iv + i·iv/T, iv stretched by the cap.
			at := now.Add(time.Duration(k)*iv + time.Duration(i)*iv/time.Duration(len(ts)))
			f.log.at[label] = append(f.log.at[label], at)
		}
		out[i] = probe.SweepResult{PingResult: probe.PingResult{Sent: f.count, Recv: f.count, RTTs: make([]float64, f.count)}}
	}
	return out, nil
}

func (f *fakeProber) Trace(_ context.Context, _ string, _ probe.TraceConfig, on func(*route.Trace)) error {
	f.log.mu.Lock()
	defer f.log.mu.Unlock()
	f.log.traces++
	if f.traceErr != nil {
		return f.traceErr
	}
	on(&route.Trace{Reached: true, Hops: []route.Hop{{TTL: 1, Sent: 1}}})
	return nil
}

// fakeLookup answers from a table and counts (and times) its queries.
type fakeLookup struct {
	clk     Clock
	mu      sync.Mutex
	answers map[string]netip.Addr
	ttl     time.Duration
	queries []time.Time
	hosts   map[string]int
}

func (f *fakeLookup) LookupTTL(_ context.Context, host string) ([]netip.Addr, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, f.clk.Now())
	if f.hosts == nil {
		f.hosts = map[string]int{}
	}
	f.hosts[host]++
	if a, ok := f.answers[host]; ok {
		return []netip.Addr{a}, f.ttl, nil
	}
	return nil, 0, fmt.Errorf("lookup %s: no such host", host)
}

type loopRun struct {
	e     *Exporter
	clk   *fakeClock
	log   *probeLog
	look  *fakeLookup
	cfg   engine.CycleConfig
	stdio strings.Builder
}

// runFake runs the loop on ts for run of fake time with prober options set by
// tweak; it returns when the fake time is over.
func runFake(t *testing.T, ts []Target, run time.Duration, cfg engine.CycleConfig, tweak func(*fakeProber)) *loopRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &loopRun{clk: newFakeClock(run, cancel), log: &probeLog{at: map[string][]time.Time{}}}
	r.e = New(&r.stdio)
	r.e.SetTargets(ts, epoch)
	r.look = &fakeLookup{clk: r.clk, answers: map[string]netip.Addr{"lo.test": netip.MustParseAddr("127.0.0.9")}, ttl: 30 * time.Second}
	cfg.Clock = r.clk
	cfg.Resolver = pacing.NewResolver(r.look, r.clk, 0)
	r.cfg = cfg.WithDefaults()
	p := &fakeProber{clk: r.clk, count: r.cfg.Count, interval: r.cfg.Interval, rate: r.cfg.Rate, log: r.log}
	if tweak != nil {
		tweak(p)
	}
	done := make(chan struct{})
	go func() {
		cfg.Prober = p
		engine.RunCycles(ctx, r.e, cfg)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		// Minutes of fake time take well under a second when the loop waits.
		t.Fatalf("the loop did not get through %v of fake time in a minute of real time (it spins)", run)
	}
	return r
}

func tgt(c, addr string) Target { return Target{Candidate: c, Addr: addr, Protocol: "icmp"} }

// `--count 1 --interval 1s` once sent 500 probes in 5 s to one target: a
// cycle that ends at once started the next straight away. Now every probe
// to a target is at least one interval after the previous one.
func TestLoopKeepsTheIntervalAcrossCycles(t *testing.T) {
	for _, tc := range []struct {
		count    int
		interval time.Duration
		targets  int
	}{{1, time.Second, 1}, {3, 200 * time.Millisecond, 4}, {1, 50 * time.Millisecond, 10}} {
		var ts []Target
		for i := range tc.targets {
			ts = append(ts, tgt("c", fmt.Sprintf("127.0.0.%d", i+1)))
		}
		r := runFake(t, ts, time.Minute, engine.CycleConfig{Count: tc.count, Interval: tc.interval, Rate: 1e6}, nil)
		for label, at := range r.log.at {
			for k := 1; k < len(at); k++ {
				if gap := at[k].Sub(at[k-1]); gap < tc.interval {
					t.Fatalf("count %d interval %v: %s probes %d and %d only %v apart", tc.count, tc.interval, label, k-1, k, gap)
				}
			}
			// And it is not starved: at least a third of the probes the interval allows.
			if max := int(time.Minute / tc.interval); len(at) < max/3 || len(at) > max+tc.count {
				t.Errorf("count %d interval %v: %s got %d probes in a minute, want about %d", tc.count, tc.interval, label, len(at), max)
			}
		}
	}
}

// The global cap holds over cycles, traces included: a UDP-only config once
// sent 534× the cap because cycles without pings traced back to back.
func TestLoopHoldsTheRateCapWithTraces(t *testing.T) {
	var ts []Target
	for i := range 20 {
		ts = append(ts, tgt("c", fmt.Sprintf("127.0.1.%d", i+1)))
	}
	const rate, maxTTL = 100.0, 30
	run := 10 * time.Minute
	r := runFake(t, ts, run, engine.CycleConfig{Count: 1, Interval: 10 * time.Millisecond, Rate: rate, TraceProbes: maxTTL, TraceEvery: 1}, nil)
	packets := r.log.total() + r.log.traces*maxTTL
	// Allowance: one cycle's packets beyond the cap (the first cycle starts at once).
	if limit := int(rate*run.Seconds()) + len(ts)*(1+maxTTL); packets > limit {
		t.Errorf("%d packets in %v: more than the cap of %.0f/s allows (%d)", packets, run, rate, limit)
	}
	if r.log.traces == 0 || packets < int(rate*run.Seconds())/4 {
		t.Errorf("%d packets, %d traces: the loop starved itself", packets, r.log.traces)
	}
}

// A target that keeps failing backs off exponentially up to the cap, is
// counted in linecheck_probe_errors_total and down in linecheck_target_up,
// and once every target fails /-/healthy says so (with the reason on /).
func TestLoopBacksOffFailingTargetsAndTurnsUnhealthy(t *testing.T) {
	ts := []Target{tgt("ok", "127.0.0.1"), tgt("bad", "127.0.0.2")}
	failing := map[string]bool{"127.0.0.2": true}
	var mu sync.Mutex
	run := 30 * time.Minute
	r := runFake(t, ts, run, engine.CycleConfig{Count: 1, Interval: time.Second, Rate: 100, MaxBackoff: 4 * time.Minute}, func(p *fakeProber) {
		p.fail = func(t probe.SweepTarget) error {
			mu.Lock()
			defer mu.Unlock()
			if failing[t.Name] {
				return errors.New("sending ICMP echo: missing privilege")
			}
			return nil
		}
	})
	// Attempts at 0, then after 1.5, 3, 6, … s (base = the first cycle's
	// 1.5 s: one interval after its last probe, of two targets), capped at
	// 4 min: 1 + 8 (1.5 s … 192 s, 382.5 s in all) + (1800 − 382.5) / 240 ≈ 15.
	errs := metric(t, r.e, "linecheck_probe_errors_total", map[string]string{"candidate": "bad"}).GetCounter().GetValue()
	if errs < 12 || errs > 16 {
		t.Errorf("bad target: %v failed attempts in %v, want about 15 (exponential backoff capped at 4 min)", errs, run)
	}
	if ok := len(r.log.at["127.0.0.1"]); ok < 800 {
		t.Errorf("the good target got %d probes: its neighbour's failures slowed it down", ok)
	}
	if up := metric(t, r.e, "linecheck_target_up", map[string]string{"candidate": "bad"}).GetGauge().GetValue(); up != 0 {
		t.Errorf("bad target up = %v, want 0 while it backs off", up)
	}
	if up := metric(t, r.e, "linecheck_target_up", map[string]string{"candidate": "ok"}).GetGauge().GetValue(); up != 1 {
		t.Errorf("good target up = %v", up)
	}
	if ok, why := r.e.Health(); !ok {
		t.Errorf("unhealthy with one target probed: %s", why)
	}
	if !strings.Contains(r.stdio.String(), "bad icmp 127.0.0.2: sending ICMP echo: missing privilege (failure 1 in a row: backing off, next try in 1.5s, at most 4m0s apart)") {
		t.Errorf("log: %s", r.stdio.String())
	}
	if n := strings.Count(r.stdio.String(), "127.0.0.2"); n != 1 {
		t.Errorf("the lasting failure was logged %d times, want once:\n%s", n, r.stdio.String())
	}

	// Now everything fails: unhealthy, with the reason on /-/healthy and /.
	mu.Lock()
	failing["127.0.0.1"] = true
	mu.Unlock()
	r2 := runFake(t, ts, time.Minute, engine.CycleConfig{Count: 1, Interval: time.Second}, func(p *fakeProber) { p.fail = func(probe.SweepTarget) error { return errors.New("no route to host") } })
	srv := httptest.NewServer(r2.e.Mux())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/-/healthy")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), "nothing can be probed") || !strings.Contains(string(body), "no route to host") {
		t.Errorf("/-/healthy: %d %s", resp.StatusCode, body)
	}
	resp, err = srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"unhealthy", "backing off", "no route to host", "127.0.0.2"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/ lacks %q:\n%s", want, body)
		}
	}
}

// A name that does not resolve once cost 7,400 DNS queries a second. Now
// lookups are cached (answers for their TTL, failures for pacing.NegativeTTL),
// made at a bounded rate, and the failing target backs off.
func TestLoopResolvesNamesAtABoundedRateAndCachesThem(t *testing.T) {
	ts := []Target{tgt("good", "lo.test"), {Candidate: "good", Addr: "lo.test", Protocol: "tcp", Port: 80}, tgt("bad", "nx.test")}
	run := 10 * time.Minute
	r := runFake(t, ts, run, engine.CycleConfig{Count: 1, Interval: time.Second, Rate: 100}, nil)
	// lo.test: TTL 30 s → at most one query per 30 s for both of its targets.
	// nx.test: at most one per pacing.NegativeTTL, and fewer as its target backs off.
	if n, max := r.look.hosts["lo.test"], int(run/(30*time.Second))+1; n > max || n < max/2 {
		t.Errorf("lo.test: %d lookups in %v, want about %d (one per TTL)", n, run, max)
	}
	if n, max := r.look.hosts["nx.test"], int(run/pacing.NegativeTTL)+1; n > max || n < 2 {
		t.Errorf("nx.test: %d lookups in %v, want at most %d", n, run, max)
	}
	for k := 1; k < len(r.look.queries); k++ {
		if gap := r.look.queries[k].Sub(r.look.queries[k-1]); gap < time.Duration(float64(time.Second)/pacing.DefaultResolveRate) {
			t.Fatalf("lookups %d and %d only %v apart: more than %v a second", k-1, k, gap, pacing.DefaultResolveRate)
		}
	}
	if len(r.log.at["lo.test"]) < 100 || len(r.log.at["lo.test:80"]) < 100 {
		t.Errorf("the resolvable name was barely probed: %d, %d", len(r.log.at["lo.test"]), len(r.log.at["lo.test:80"]))
	}
	if up := metric(t, r.e, "linecheck_target_up", map[string]string{"candidate": "bad"}).GetGauge().GetValue(); up != 0 {
		t.Errorf("unresolvable target up = %v", up)
	}
	if errs := metric(t, r.e, "linecheck_probe_errors_total", map[string]string{"candidate": "bad"}).GetCounter().GetValue(); errs < 3 {
		t.Errorf("unresolvable target: %v errors counted", errs)
	}
}

func TestResolverRefusesWhatIsNeverProbed(t *testing.T) {
	clk := newFakeClock(time.Hour, func() {})
	look := &fakeLookup{clk: clk, answers: map[string]netip.Addr{
		"doc.test": netip.MustParseAddr("198.51.100.7"), "mc.test": netip.MustParseAddr("239.1.2.3"),
	}, ttl: time.Minute}
	r := pacing.NewResolver(look, clk, 0)
	for host, want := range map[string]string{
		"doc.test": "documentation address", "mc.test": "broadcast or multicast", "127.255.255.255": "broadcast",
		"0.0.0.0": "not a unicast address", "203.0.113.1": "documentation address",
	} {
		if _, err := r.Resolve(context.Background(), host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", host, err, want)
		}
	}
	// IP literals cost no lookup.
	if a, err := r.Resolve(context.Background(), "127.0.0.1"); err != nil || a != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("127.0.0.1: %v %v", a, err)
	}
	if len(look.queries) != 2 {
		t.Errorf("%d lookups, want 2 (the two names)", len(look.queries))
	}
}

// Traces that fail (no raw-socket privilege) back off on their own; the
// target stays up and keeps being pinged.
func TestLoopBacksOffFailingTraces(t *testing.T) {
	run := 30 * time.Minute
	r := runFake(t, []Target{tgt("c", "127.0.0.1")}, run, engine.CycleConfig{Count: 1, Interval: time.Second, TraceEvery: 1, MaxBackoff: 4 * time.Minute},
		func(p *fakeProber) { p.traceErr = errors.New("missing privilege to open raw sockets") })
	if r.log.traces > 16 {
		t.Errorf("%d failing traces in %v, want about 14 (backoff)", r.log.traces, run)
	}
	if up := metric(t, r.e, "linecheck_target_up", nil).GetGauge().GetValue(); up != 1 {
		t.Errorf("up = %v: a failing trace took the target down", up)
	}
	if n := len(r.log.at["127.0.0.1"]); n < 800 {
		t.Errorf("%d pings", n)
	}
	st := r.e.Status()
	if len(st) != 1 || !strings.Contains(st[0].TraceErr, "raw sockets") {
		t.Errorf("status %+v", st)
	}
}

// A reload wakes a loop whose targets all back off: a new target is probed
// at once, not after the old ones' backoff.
func TestReloadWakesTheLoop(t *testing.T) {
	e := New(nil)
	e.SetTargets([]Target{tgt("old", "127.0.0.1")}, epoch)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probed := make(chan string, 100)
	candidate := map[string]string{"127.0.0.1": "old", "127.0.0.2": "new"}
	p := &funcProber{ping: func(ts []probe.SweepTarget) []probe.SweepResult {
		out := make([]probe.SweepResult, len(ts))
		for i, t := range ts {
			probed <- candidate[t.Name]
			if candidate[t.Name] == "old" {
				out[i].Err = errors.New("fails")
			}
		}
		return out
	}}
	go engine.RunCycles(ctx, e, engine.CycleConfig{Prober: p, Count: 1, Interval: time.Millisecond, MaxBackoff: time.Hour})
	if c := <-probed; c != "old" {
		t.Fatal(c)
	}
	e.SetTargets([]Target{tgt("old", "127.0.0.1"), tgt("new", "127.0.0.2")}, epoch)
	select {
	case c := <-probed:
		if c != "new" {
			t.Errorf("probed %s, want the new target (the old one backs off)", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the new target was not probed within 5 s of the reload")
	}
}

type funcProber struct {
	ping func([]probe.SweepTarget) []probe.SweepResult
}

func (f *funcProber) Sweep(_ context.Context, ts []probe.SweepTarget, _ probe.PingConfig, _ func(probe.Record)) ([]probe.SweepResult, error) {
	return f.ping(ts), nil
}
func (f *funcProber) Trace(context.Context, string, probe.TraceConfig, func(*route.Trace)) error {
	return errors.New("no traces here")
}

// Traces run every n-th cycle (the first included), and every cycle is counted.
func TestLoopTracesEveryNthCycle(t *testing.T) {
	ts := []Target{tgt("a", "127.0.0.1"), tgt("b", "127.0.0.2")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newFakeClock(time.Hour, cancel)
	log := &probeLog{at: map[string][]time.Time{}}
	e := New(nil)
	e.SetTargets(ts, epoch)
	p := &fakeProber{clk: clk, count: 3, interval: time.Second, rate: 100, log: log}
	engine.RunCycles(ctx, e, engine.CycleConfig{Prober: p, Count: 3, Interval: time.Second, TraceEvery: 3, Clock: clk, Resolver: pacing.NewResolver(&fakeLookup{clk: clk}, clk, 0),
		OnCycle: func(n int) {
			if n == 7 {
				cancel()
			}
		}})
	// 7 cycles; traces in cycles 1, 4, 7, two targets each.
	if log.pings != 7 || log.traces != 6 {
		t.Errorf("pings %d traces %d, want 7 and 6", log.pings, log.traces)
	}
	if m := metric(t, e, "linecheck_probes_sent_total", map[string]string{"candidate": "b"}); m.GetCounter().GetValue() != 21 {
		t.Errorf("sent %v, want 21", m)
	}
	if m := metric(t, e, "linecheck_cycles_total", nil); m.GetCounter().GetValue() != 7 {
		t.Errorf("cycles %v", m)
	}
}

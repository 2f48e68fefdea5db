package probe_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// fakeDriver answers probes along a fixed path without sockets. Replies are
// queued at Send time and handed out by Receive, so the test sees whether the
// algorithm sent every TTL before reading the first reply.
type fakeDriver struct {
	mu     sync.Mutex
	path   []netip.Addr // path[i] answers TTL i+1; the last one is the target
	clock  time.Time
	queue  []any // TraceReply or error
	wake   chan struct{}
	sends  []probe.TraceProbe
	sentAt []time.Time

	// receivesAt holds len(sends) at every Receive call.
	receivesAt []int

	drop      func(p probe.TraceProbe, n int) bool // n = how many probes at this TTL before
	late      func(p probe.TraceProbe) bool
	shuffle   bool
	duplicate bool
	foreign   int // foreign replies queued after each batch: half unknown keys, half ForeignErrors
	perTTL    map[int]int
	rnd       *rand.Rand
}

func newFake(path ...string) *fakeDriver {
	f := &fakeDriver{wake: make(chan struct{}, 1), perTTL: map[int]int{}, rnd: rand.New(rand.NewPCG(1, 2))}
	for _, p := range path {
		f.path = append(f.path, netip.MustParseAddr(p))
	}
	f.clock = time.Now()
	return f
}

func (f *fakeDriver) Send(p probe.TraceProbe) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends = append(f.sends, p)
	sent := time.Now()
	f.sentAt = append(f.sentAt, sent)
	if p.TTL == 1 && p.Flow == 0 {
		// A new cycle: other runs' packets arrive too.
		for i := 0; i < f.foreign; i++ {
			if i%2 == 0 {
				f.queue = append(f.queue, probe.TraceReply{Key: 0xfffe, From: f.path[0], At: sent})
			} else {
				f.queue = append(f.queue, &probe.ForeignError{Reason: "another run"})
			}
		}
	}
	n := f.perTTL[p.TTL]
	f.perTTL[p.TTL]++
	if f.drop != nil && f.drop(p, n) {
		return sent, nil
	}
	hop := min(p.TTL, len(f.path))
	r := probe.TraceReply{Key: p.Key, From: f.path[hop-1], At: sent.Add(time.Duration(hop) * time.Millisecond), Dest: hop == len(f.path)}
	if f.late != nil && f.late(p) {
		r.At = sent.Add(time.Hour)
	}
	f.queue = append(f.queue, r)
	if f.duplicate {
		f.queue = append(f.queue, r)
	}
	return sent, nil
}

func (f *fakeDriver) Receive(ctx context.Context) (probe.TraceReply, error) {
	f.mu.Lock()
	f.receivesAt = append(f.receivesAt, len(f.sends))
	if f.shuffle {
		f.rnd.Shuffle(len(f.queue), func(i, j int) { f.queue[i], f.queue[j] = f.queue[j], f.queue[i] })
	}
	if len(f.queue) > 0 {
		it := f.queue[0]
		f.queue = f.queue[1:]
		f.mu.Unlock()
		if err, ok := it.(error); ok {
			return probe.TraceReply{}, err
		}
		return it.(probe.TraceReply), nil
	}
	f.mu.Unlock()
	<-ctx.Done()
	return probe.TraceReply{}, ctx.Err()
}

func (f *fakeDriver) Close() error          { return nil }
func (f *fakeDriver) Mode() probe.TraceMode { return probe.ModeRaw }

var path4 = []string{"10.77.0.2", "10.77.1.2", "10.77.2.2", "10.77.3.2"}

func fastCfg(cycles int) probe.TraceConfig {
	// Cycles 20 ms apart: the fake answers at once, so a cycle is read out
	// long before the next one starts.
	return probe.TraceConfig{MaxTTL: 8, Cycles: cycles, Interval: 20 * time.Millisecond, Timeout: 30 * time.Millisecond, Rate: 1e6}
}

func hopAddrs(tr *route.Trace) []string {
	var out []string
	for _, h := range tr.Hops {
		if len(h.Responders) == 0 {
			out = append(out, "*")
			continue
		}
		out = append(out, h.Responders[0].Addr)
	}
	return out
}

// traceDoc runs the algorithm over drv and makes the trace document of the
// run (the probe → route step every caller takes).
func traceDoc(ctx context.Context, drv probe.Driver, dst netip.Addr, cfg probe.TraceConfig, onCycle func(*probe.TraceRun)) (*route.Trace, probe.TraceCounts, error) {
	run, err := probe.TraceWithDriver(ctx, drv, "lab", dst, cfg, onCycle)
	if run == nil {
		return nil, probe.TraceCounts{}, err
	}
	return route.BuildTrace(run), run.Counts, err
}

func runFake(t *testing.T, f *fakeDriver, cfg probe.TraceConfig) (*route.Trace, probe.TraceCounts) {
	t.Helper()
	tr, counts, err := traceDoc(context.Background(), f, f.path[len(f.path)-1], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr, counts
}

func TestTraceSendsEveryTTLBeforeReadingAReply(t *testing.T) {
	f := newFake(path4...)
	tr, _ := runFake(t, f, fastCfg(3))
	// Cycle 1 sends TTLs 1..8; once the target answered at TTL 4, cycles 2
	// and 3 send 1..4. A reply may only be read between two cycles.
	var ttls []int
	for _, p := range f.sends {
		ttls = append(ttls, p.TTL)
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 1, 2, 3, 4}; !slices.Equal(ttls, want) {
		t.Errorf("TTLs sent %v, want %v", ttls, want)
	}
	for _, n := range f.receivesAt {
		if n != 8 && n != 12 && n != 16 {
			t.Errorf("a reply was read after %d sends, in the middle of a cycle (reads at %v)", n, f.receivesAt)
			break
		}
	}
	if !slices.Equal(hopAddrs(tr), path4) || !tr.Reached {
		t.Errorf("hops %v reached %v, want %v", hopAddrs(tr), tr.Reached, path4)
	}
	for _, h := range tr.Hops {
		if h.Sent != 3 || h.Loss != 0 {
			t.Errorf("ttl %d: sent %d loss %v, want 3 and 0", h.TTL, h.Sent, h.Loss)
		}
		// The fake answers TTL k after k ms.
		if r := h.Responders[0]; r.RTT.Min != float64(h.TTL) || r.RTT.Max != float64(h.TTL) {
			t.Errorf("ttl %d: rtt %+v, want %d ms", h.TTL, r.RTT, h.TTL)
		}
	}
	if !slices.Equal(tr.Hops[3].Flags, []string{route.FlagDestination}) {
		t.Errorf("last hop flags %v", tr.Hops[3].Flags)
	}
}

func TestTraceShuffledDuplicatedAndForeignReplies(t *testing.T) {
	f := newFake(path4...)
	f.shuffle, f.duplicate, f.foreign = true, true, 4
	// MaxTTL at the destination: no probe goes past it (replies to those are
	// ignored once the destination is known, which would blur the count).
	cfg := fastCfg(5)
	cfg.MaxTTL = 4
	tr, counts := runFake(t, f, cfg)
	if !slices.Equal(hopAddrs(tr), path4) {
		t.Fatalf("hops %v, want %v", hopAddrs(tr), path4)
	}
	for _, h := range tr.Hops {
		if h.Sent != 5 || h.Loss != 0 || h.Responders[0].Recv != 5 {
			t.Errorf("ttl %d: sent %d loss %v recv %d, want 5, 0, 5", h.TTL, h.Sent, h.Loss, h.Responders[0].Recv)
		}
	}
	// Every probe answered twice: 5·4 = 20 probes, 20 duplicates; 4 foreign
	// per cycle, queued when the cycle starts. The run ends as soon as the
	// last cycle is answered, so what is still queued then was never read.
	var unreadDup, unreadForeign int
	for _, it := range f.queue {
		if r, ok := it.(probe.TraceReply); ok && r.Key != 0xfffe {
			unreadDup++
		} else {
			unreadForeign++
		}
	}
	if counts.Duplicates+unreadDup != 20 || counts.Foreign+unreadForeign != 20 || counts.Late != 0 {
		t.Errorf("counts %+v with %d duplicates and %d foreign unread, want 20 duplicates, 20 foreign, 0 late",
			counts, unreadDup, unreadForeign)
	}
}

func TestTraceMissingRepliesGiveHopLossAndRateLimitFlag(t *testing.T) {
	f := newFake(path4...)
	// TTL 2 answers every other probe; everything else always answers.
	f.drop = func(p probe.TraceProbe, n int) bool { return p.TTL == 2 && n%2 == 1 }
	cfg := fastCfg(20)
	cfg.Timeout = 5 * time.Millisecond
	tr, _ := runFake(t, f, cfg)
	wantLoss := []float64{0, 0.5, 0, 0}
	for i, h := range tr.Hops {
		if h.Loss != wantLoss[i] || h.Sent != 20 {
			t.Errorf("ttl %d: loss %v sent %d, want %v and 20", h.TTL, h.Loss, h.Sent, wantLoss[i])
		}
	}
	if !slices.Equal(tr.Hops[1].Flags, []string{route.FlagRateLimited}) {
		t.Errorf("ttl 2 flags %v, want [%s]", tr.Hops[1].Flags, route.FlagRateLimited)
	}
}

func TestTraceSilentHopAndLateReplies(t *testing.T) {
	f := newFake(path4...)
	f.drop = func(p probe.TraceProbe, _ int) bool { return p.TTL == 2 }
	f.late = func(p probe.TraceProbe) bool { return p.TTL == 3 }
	cfg := fastCfg(2)
	cfg.Timeout = 5 * time.Millisecond
	tr, counts := runFake(t, f, cfg)
	if want := []string{"10.77.0.2", "*", "*", "10.77.3.2"}; !slices.Equal(hopAddrs(tr), want) {
		t.Fatalf("hops %v, want %v", hopAddrs(tr), want)
	}
	if tr.Hops[1].Loss != 1 || tr.Hops[2].Loss != 1 || len(tr.Hops[1].Responders) != 0 {
		t.Errorf("silent hops %+v %+v", tr.Hops[1], tr.Hops[2])
	}
	if counts.Late != 2 {
		t.Errorf("late %d, want 2 (TTL 3 in both cycles)", counts.Late)
	}
}

func TestTraceCancellationReturnsFinishedCycles(t *testing.T) {
	f := newFake(path4...)
	// From the second cycle on nothing answers, and the timeout is long.
	f.drop = func(p probe.TraceProbe, n int) bool { return n >= 1 }
	cfg := fastCfg(5)
	cfg.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var tr *route.Trace
	var err error
	go func() {
		tr, _, err = traceDoc(ctx, f, f.path[3], cfg, func(*probe.TraceRun) {})
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("trace did not stop after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	// Only cycle 1 finished: in-flight probes of cycle 2 are not counted as lost.
	for _, h := range tr.Hops {
		if h.Sent != 1 || h.Loss != 0 {
			t.Errorf("ttl %d: sent %d loss %v, want 1 and 0", h.TTL, h.Sent, h.Loss)
		}
	}
}

func TestTraceFlowsListAlternateResponders(t *testing.T) {
	f := newFake(path4...)
	// An ECMP hop at TTL 2: odd flows go through 10.77.9.2.
	alt := netip.MustParseAddr("10.77.9.2")
	base := f
	drv := &ecmpFake{fakeDriver: base, alt: alt}
	cfg := fastCfg(2)
	cfg.Flows = 4
	tr, _, err := traceDoc(context.Background(), drv, f.path[3], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := tr.Hops[1].Responders
	if len(rs) != 2 || rs[0].Addr != "10.77.1.2" || rs[1].Addr != "10.77.9.2" {
		t.Fatalf("ttl 2 responders %+v", rs)
	}
	if !slices.Equal(rs[0].Flows, []int{0, 2}) || !slices.Equal(rs[1].Flows, []int{1, 3}) {
		t.Errorf("flows %v and %v, want [0 2] and [1 3]", rs[0].Flows, rs[1].Flows)
	}
}

// ecmpFake answers TTL 2 of odd flows from alt.
type ecmpFake struct {
	*fakeDriver
	alt netip.Addr
}

func (e *ecmpFake) Send(p probe.TraceProbe) (time.Time, error) {
	at, err := e.fakeDriver.Send(p)
	if p.TTL == 2 && p.Flow%2 == 1 {
		e.mu.Lock()
		r := e.queue[len(e.queue)-1].(probe.TraceReply)
		r.From = e.alt
		e.queue[len(e.queue)-1] = r
		e.mu.Unlock()
	}
	return at, err
}

func TestForeignErrorIsRetryable(t *testing.T) {
	var err error = &probe.ForeignError{Reason: "x"}
	if !errors.Is(err, probe.ErrForeign) {
		t.Fatal("probe.ForeignError is not probe.ErrForeign")
	}
}

func TestTraceLostProbesDoNotHoldTheNextCycleBack(t *testing.T) {
	f := newFake(path4...)
	f.drop = func(p probe.TraceProbe, _ int) bool { return p.TTL == 2 }
	cfg := fastCfg(10)
	cfg.Interval = time.Millisecond
	cfg.Timeout = 300 * time.Millisecond
	var sendsAtCycle []int
	tr, _, err := traceDoc(context.Background(), f, f.path[3], cfg, func(*probe.TraceRun) {
		f.mu.Lock()
		sendsAtCycle = append(sendsAtCycle, len(f.sends))
		f.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	// Cycle 1's TTL 2 probe is decided only when its timeout has passed; by
	// then all 10 cycles (1 ms apart) are out: 8 + 9·4 probes.
	if len(sendsAtCycle) != 10 || sendsAtCycle[0] != 44 {
		t.Errorf("probes sent when each cycle was reported: %v, want 10 reports, the first after all 44 sends", sendsAtCycle)
	}
	if tr.Hops[1].Loss != 1 || tr.Hops[1].Sent != 10 {
		t.Errorf("ttl 2: %+v", tr.Hops[1])
	}
}

func TestTracePaceHoldsWhenCyclesFallBehind(t *testing.T) {
	f := newFake(path4...)
	// 200 packets/s, but cycles due every millisecond: the schedule falls
	// behind at once, and after the first cycle's burst the probes must
	// still leave 5 ms apart.
	cfg := probe.TraceConfig{MaxTTL: 8, Cycles: 5, Interval: time.Millisecond, Timeout: time.Second, Rate: 200}
	runFake(t, f, cfg)
	if len(f.sentAt) != 8+4*4 {
		t.Fatalf("%d probes sent, want 24", len(f.sentAt))
	}
	// The bucket holds one cycle (8 probes); after that a timer never fires
	// early, so probe i ≥ 8 leaves at least (i−7)·5 ms after the first.
	for i, at := range f.sentAt {
		earliest := time.Duration(max(0, i-7)) * 5 * time.Millisecond
		if d := at.Sub(f.sentAt[0]); d < earliest {
			t.Fatalf("probe %d left %v after the first, before %v: faster than --rate", i, d, earliest)
		}
	}
}

func TestTraceStopsWaitingForProbesPastTheDestination(t *testing.T) {
	f := newFake(path4...)
	// Probes past TTL 4 are never answered; once the target answered at TTL 4
	// the trace must not wait out their (hour-long) timeout.
	f.drop = func(p probe.TraceProbe, _ int) bool { return p.TTL > 4 }
	cfg := fastCfg(2)
	cfg.Timeout = time.Hour
	done := make(chan struct{})
	var tr *route.Trace
	var counts probe.TraceCounts
	go func() {
		tr, counts, _ = traceDoc(context.Background(), f, f.path[3], cfg, nil)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the trace waited for probes past the destination")
	}
	if len(tr.Hops) != 4 || tr.Hops[3].Sent != 2 || counts.Late != 0 {
		t.Errorf("hops %v, destination sent %d, counts %+v", hopAddrs(tr), tr.Hops[3].Sent, counts)
	}
}

func TestTraceDocumentCountsLateDuplicateAndForeignPerHop(t *testing.T) {
	f := newFake(path4...)
	// Every reply duplicated; TTL 3 always late; 2 foreign packets per cycle.
	// Replies are queued in order (no shuffle); the run ends as soon as every
	// probe is decided, so the last duplicates may stay unread.
	f.duplicate, f.foreign = true, 2
	f.late = func(p probe.TraceProbe) bool { return p.TTL == 3 }
	cfg := fastCfg(3)
	cfg.MaxTTL = 4
	cfg.Timeout = 5 * time.Millisecond
	tr, counts := runFake(t, f, cfg)
	ttlOf := map[uint16]int{}
	for _, p := range f.sends {
		ttlOf[p.Key] = p.TTL
	}
	unread := map[int]int{}
	for _, it := range f.queue {
		r, ok := it.(probe.TraceReply)
		if !ok || ttlOf[r.Key] == 0 {
			t.Fatalf("a foreign packet was left unread: %+v", it)
		}
		unread[ttlOf[r.Key]]++
	}
	// Per TTL, 3 probes each answered twice: TTLs 1, 2, 4 get 3 received + 3
	// duplicates; TTL 3 gets 3 late (lost) + 3 duplicates of the late replies.
	for _, h := range tr.Hops {
		wantLate, wantLoss := 0, 0.0
		if h.TTL == 3 {
			wantLate, wantLoss = 3, 1
		}
		if h.Sent != 3 || h.Late != wantLate || h.Duplicates+unread[h.TTL] != 3 || h.Loss != wantLoss {
			t.Errorf("ttl %d: sent %d late %d duplicates %d (+%d unread) loss %v, want 3, %d, 3, %v",
				h.TTL, h.Sent, h.Late, h.Duplicates, unread[h.TTL], h.Loss, wantLate, wantLoss)
		}
	}
	if tr.Foreign != 6 || counts.Foreign != 6 || counts.Late != 3 || counts.Duplicates+len(f.queue) != 12 {
		t.Errorf("trace foreign %d, counts %+v (%d unread); want 6 foreign, 3 late, 12 duplicates",
			tr.Foreign, counts, len(f.queue))
	}
	// The JSON always carries the three counts, as numbers.
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Foreign *int `json:"foreign"`
		Hops    []map[string]any
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Foreign == nil || *raw.Foreign != 6 {
		t.Errorf("JSON foreign %v, want 6", raw.Foreign)
	}
	for _, h := range raw.Hops {
		if _, ok := h["late"].(float64); !ok {
			t.Errorf("hop %v: late missing", h["ttl"])
		}
		if _, ok := h["duplicates"].(float64); !ok {
			t.Errorf("hop %v: duplicates missing", h["ttl"])
		}
	}
}

func TestTraceTimeoutShorterThanThePathListsTheSilentTTLs(t *testing.T) {
	// An 8-hop path whose hops 3.. answer only after the timeout (a slow
	// link after hop 2): not reached, TTLs 3..7 late, 8 (the target) late.
	path := []string{"10.77.0.2", "10.77.1.2", "10.77.2.2", "10.77.3.2", "10.77.4.2", "10.77.5.2", "10.77.6.2", "10.77.7.2"}
	f := newFake(path...)
	f.late = func(p probe.TraceProbe) bool { return p.TTL >= 3 }
	cfg := fastCfg(1)
	cfg.MaxTTL = 30
	cfg.Timeout = 5 * time.Millisecond
	tr, counts := runFake(t, f, cfg)
	if tr.Reached {
		t.Error("reached, though the target only answered late")
	}
	want := []string{"10.77.0.2", "10.77.1.2", "*", "*", "*", "*", "*", "*"}
	if !slices.Equal(hopAddrs(tr), want) {
		t.Fatalf("hops %v, want %v (one entry per TTL up to the target's late answer)", hopAddrs(tr), want)
	}
	for _, h := range tr.Hops[2:] {
		if h.Late != 1 || h.Loss != 1 || h.Sent != 1 {
			t.Errorf("ttl %d: late %d loss %v sent %d, want 1, 1, 1", h.TTL, h.Late, h.Loss, h.Sent)
		}
	}
	// TTLs 3..30 were all late (those past 8 reached the target late too).
	if counts.Late != 28 {
		t.Errorf("late %d, want 28", counts.Late)
	}

	// Nothing answers past TTL 2 at all: the entries go on for MaxUnknown
	// silent TTLs after it, each with no responders and loss 1.
	f = newFake(path...)
	f.drop = func(p probe.TraceProbe, _ int) bool { return p.TTL >= 3 }
	tr, _ = runFake(t, f, cfg)
	want = []string{"10.77.0.2", "10.77.1.2", "*", "*", "*", "*", "*"}
	if !slices.Equal(hopAddrs(tr), want) || tr.Reached {
		t.Fatalf("hops %v reached %v, want %v and false", hopAddrs(tr), tr.Reached, want)
	}
	for _, h := range tr.Hops[2:] {
		if h.Late != 0 || h.Loss != 1 || h.Responders == nil || len(h.Responders) != 0 {
			t.Errorf("ttl %d: %+v, want no responders, loss 1, late 0", h.TTL, h)
		}
	}
}

// fakeClock is a clock that jumps: After(d) moves it d ahead at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
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
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// clockDriver answers along path on the fake clock: hop h after h ms; TTL 2
// never answers.
type clockDriver struct {
	clk   *fakeClock
	path  []netip.Addr
	mu    sync.Mutex
	queue []probe.TraceReply
}

func (d *clockDriver) Send(p probe.TraceProbe) (time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clk.Now()
	if p.TTL != 2 {
		hop := min(p.TTL, len(d.path))
		d.queue = append(d.queue, probe.TraceReply{Key: p.Key, From: d.path[hop-1],
			At: now.Add(time.Duration(hop) * time.Millisecond), Dest: hop == len(d.path)})
	}
	return now, nil
}

func (d *clockDriver) Receive(ctx context.Context) (probe.TraceReply, error) {
	d.mu.Lock()
	if len(d.queue) > 0 {
		r := d.queue[0]
		d.queue = d.queue[1:]
		d.mu.Unlock()
		return r, nil
	}
	d.mu.Unlock()
	<-ctx.Done()
	return probe.TraceReply{}, ctx.Err()
}

func (d *clockDriver) Close() error          { return nil }
func (d *clockDriver) Mode() probe.TraceMode { return probe.ModeRaw }

// The algorithm runs on the injected clock: three cycles an hour apart with
// a minute's timeout finish at once in real time, the run starts at the
// clock's time, RTTs are the clock's, and the silent TTL is declared lost
// only once its minute (plus the reading grace) has passed on that clock.
func TestTraceRunsOnTheInjectedClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := &fakeClock{now: t0}
	drv := &clockDriver{clk: clk}
	for _, p := range path4 {
		drv.path = append(drv.path, netip.MustParseAddr(p))
	}
	cfg := probe.TraceConfig{MaxTTL: 8, Cycles: 3, Interval: time.Hour, Timeout: time.Minute, Clock: clk}
	done := make(chan struct{})
	var run *probe.TraceRun
	var err error
	go func() {
		defer close(done)
		run, err = probe.TraceWithDriver(context.Background(), drv, "lab", drv.path[3], cfg, nil)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the trace waits in real time, not on its clock")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !run.Start.Equal(t0) {
		t.Errorf("start %v, want the clock's %v", run.Start, t0)
	}
	// The last cycle starts 2 h in; its TTL 2 probe is lost a minute later.
	if end := clk.Now().Sub(t0); end < 2*time.Hour+time.Minute {
		t.Errorf("clock advanced %v, want at least 2h1m", end)
	}
	lost := 0
	for _, r := range run.Results {
		switch {
		case r.TTL == 2:
			if r.Addr != "" || r.Late {
				t.Errorf("TTL 2: %+v, want lost", r)
			}
			lost++
		case r.TTL <= 4:
			if want := float64(r.TTL); r.RTTms != want {
				t.Errorf("TTL %d: RTT %v ms, want %v (the clock's)", r.TTL, r.RTTms, want)
			}
		}
	}
	if lost != 3 {
		t.Errorf("%d lost TTL 2 probes, want one per cycle", lost)
	}
	tr := route.BuildTrace(run)
	if tr.Start != "2026-01-02T03:04:05Z" || !tr.Reached || len(tr.Hops) != 4 || tr.Hops[1].Loss != 1 {
		t.Errorf("document: start %s reached %v hops %v", tr.Start, tr.Reached, hopAddrs(tr))
	}
}

// pastDestDriver refuses, as the unprivileged TCP driver does, every probe
// of a flow above the TTL at which the destination answered that flow.
type pastDestDriver struct {
	*fakeDriver
	destTTL map[int]int
	refused int
}

func (d *pastDestDriver) Send(p probe.TraceProbe) (time.Time, error) {
	if t, ok := d.destTTL[p.Flow]; ok && p.TTL > t {
		d.refused++
		return time.Time{}, probe.ErrPastDestination
	}
	if p.TTL >= len(d.path) {
		d.destTTL[p.Flow] = p.TTL
	}
	return d.fakeDriver.Send(p)
}

func (d *pastDestDriver) Mode() probe.TraceMode { return probe.ModeRecverr }

// Probes a driver refuses with ErrPastDestination get no result and end
// nothing: the hops are those of a driver that sent them, and the run
// carries the driver's mode.
func TestTracePastDestinationProbesAreLeftOut(t *testing.T) {
	d := &pastDestDriver{fakeDriver: newFake(path4...), destTTL: map[int]int{}}
	run, err := probe.TraceWithDriver(context.Background(), d, "lab", d.path[3], fastCfg(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := route.BuildTrace(run)
	if got := hopAddrs(tr); !slices.Equal(got, path4) || !tr.Reached {
		t.Fatalf("hops %v reached %v, want %v", got, tr.Reached, path4)
	}
	for _, h := range tr.Hops {
		if h.Sent != 3 || h.Loss != 0 {
			t.Errorf("hop %d: sent %d loss %v, want 3 and 0", h.TTL, h.Sent, h.Loss)
		}
	}
	// Cycle 1 asks for TTLs 1..8 and gets 5..8 refused; later cycles stop at 4.
	if d.refused != 4 || len(run.Results) != 12 || run.Mode != probe.ModeRecverr || tr.Mode != probe.ModeRecverr {
		t.Errorf("refused %d, %d results, mode %q/%q; want 4, 12, recverr", d.refused, len(run.Results), run.Mode, tr.Mode)
	}
}

// natFake is the fake path with a router that rewrites the probe's source
// without state (10.77.0.1 → 10.77.3.1) before TTL behind: replies from
// there on quote the checksum as that router left it (RFC 1624), earlier
// ones quote it as sent. mode is the driver's mode.
type natFake struct {
	*fakeDriver
	behind int
	mode   probe.TraceMode
	ttl    map[uint16]int
}

func (f *natFake) Send(p probe.TraceProbe) (time.Time, error) {
	f.mu.Lock()
	f.ttl[p.Key] = p.TTL
	f.mu.Unlock()
	return f.fakeDriver.Send(p)
}

func (f *natFake) Receive(ctx context.Context) (probe.TraceReply, error) {
	r, err := f.fakeDriver.Receive(ctx)
	if err != nil || f.mode != probe.ModeRaw {
		return r, err
	}
	f.mu.Lock()
	ttl := f.ttl[r.Key]
	f.mu.Unlock()
	// The sent checksum is the key; the rewrite replaces the words
	// 0x0a4d 0x0001 by 0x0a4d 0x0301: HC' = ~(~HC + ~0x0001 + 0x0301).
	quoted := r.Key
	if ttl >= f.behind {
		s := uint32(^r.Key) + uint32(^uint16(0x0001)) + 0x0301
		for s > 0xffff {
			s = s>>16 + s&0xffff
		}
		quoted = ^uint16(s)
	}
	r.NATID, r.HasNATID = probe.TraceNATID(r.Key, quoted), true
	return r, nil
}

func (f *natFake) Mode() probe.TraceMode { return f.mode }

// With --nat, the hops before the rewriting router's next hop read NAT ID 0,
// and from it on 64768 (0xFD00 = −0x300, the rewrite adding 0x0300 to the
// header sum): that hop is flagged and named in the document's nat. In
// recverr mode nothing is measured: no hop has a nat_id, and the note says
// why. A trace without NAT asked has no nat at all (goldens unchanged).
func TestTraceNATIDPerHopFromTheFakeDriver(t *testing.T) {
	cfg := fastCfg(3)
	cfg.Proto, cfg.NAT = probe.UDP, true
	f := &natFake{fakeDriver: newFake(path4...), behind: 3, mode: probe.ModeRaw, ttl: map[uint16]int{}}
	tr, _, err := traceDoc(context.Background(), f, f.path[len(f.path)-1], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.NAT == nil || !tr.NAT.Measured || len(tr.NAT.Changes) != 1 {
		t.Fatalf("nat %+v, want measured with one change", tr.NAT)
	}
	if c := tr.NAT.Changes[0]; c.TTL != 3 || c.NATID != 64768 || c.Addr != path4[2] {
		t.Errorf("change %+v, want TTL 3, NAT ID 64768 from %s", c, path4[2])
	}
	for _, h := range tr.Hops {
		want := 0
		if h.TTL >= 3 {
			want = 64768
		}
		if h.NATID == nil || *h.NATID != want {
			t.Errorf("hop %d: nat_id %v, want %d", h.TTL, h.NATID, want)
		}
		if flagged := slices.Contains(h.Flags, route.FlagNAT); flagged != (h.TTL == 3) {
			t.Errorf("hop %d: flags %v", h.TTL, h.Flags)
		}
	}

	f = &natFake{fakeDriver: newFake(path4...), behind: 3, mode: probe.ModeRecverr, ttl: map[uint16]int{}}
	tr, _, err = traceDoc(context.Background(), f, f.path[len(f.path)-1], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.NAT == nil || tr.NAT.Measured || len(tr.NAT.Changes) != 0 || tr.NAT.Note == "" {
		t.Errorf("recverr: nat %+v, want not measured, with a note", tr.NAT)
	}
	for _, h := range tr.Hops {
		if h.NATID != nil {
			t.Errorf("recverr: hop %d has nat_id %d", h.TTL, *h.NATID)
		}
	}

	cfg.NAT = false
	tr, _ = runFake(t, newFake(path4...), cfg)
	if b, _ := json.Marshal(tr); tr.NAT != nil || (strings.Contains(string(b), `"nat"`) || strings.Contains(string(b), `"nat_id"`)) {
		t.Errorf("without --nat: nat %+v in %s", tr.NAT, b)
	}
	cfg.NAT, cfg.Proto = true, probe.ICMP
	if _, err := probe.TraceWithDriver(context.Background(), newFake(path4...), "lab", netip.MustParseAddr(path4[3]), cfg, nil); err == nil || !strings.Contains(err.Error(), "udp") {
		t.Errorf("NAT with icmp: err %v, want a refusal naming udp", err)
	}
}

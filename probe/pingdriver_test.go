package probe

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"testing"
	"time"
)

// stepClock is a fake clock that moves only when the fake driver waits:
// the sweep sees time pass exactly as its waits end.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time { return c.now }

// After is not used by the sweep (its driver waits); a channel that never
// fires makes a use of it hang the test rather than pass.
func (c *stepClock) After(time.Duration) <-chan time.Time { return nil }

// fakeReply is one packet the fake network delivers after a probe is sent.
type fakeReply struct {
	after   time.Duration // after the probe's send
	from    string        // "" = the probe's target
	probe   int           // the probe number it claims; -1 = the probe itself
	foreign bool          // another run's nonce
}

// fakePing is a pingDriver over a scripted network on a stepClock: each
// probe sent schedules the replies script gives it.
type fakePing struct {
	r      *sweep
	clk    *stepClock
	script map[int][]fakeReply
	queue  []scheduled
	start  time.Time   // the clock when the sweep started
	sends  []time.Time // the clock at each probe's send, by probe number
	// cancel, when set, is called once the clock reaches cancelAt.
	cancel   func()
	cancelAt time.Time
}

type scheduled struct {
	at time.Time
	fakeReply
	i int
}

func (d *fakePing) send(idx []int) (error, error) {
	for _, i := range idx {
		d.sends[i] = d.clk.Now()
		for _, rep := range d.script[i] {
			d.queue = append(d.queue, scheduled{at: d.clk.Now().Add(rep.after), fakeReply: rep, i: i})
		}
	}
	sort.SliceStable(d.queue, func(a, b int) bool { return d.queue[a].at.Before(d.queue[b].at) })
	return nil, nil
}

func (d *fakePing) readQueued() error {
	r := d.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(d.queue) > 0 && !d.queue[0].at.After(d.clk.Now()) {
		s := d.queue[0]
		d.queue = d.queue[1:]
		from := r.targets[s.i%len(r.targets)].Addr
		if s.from != "" {
			from = netip.MustParseAddr(s.from)
		}
		n := s.i
		if s.probe >= 0 {
			n = s.probe
		}
		if s.foreign {
			r.foreignLocked(from)
			continue
		}
		r.replyLocked(n, from, s.at)
	}
	return nil
}

func (d *fakePing) wait(ctx context.Context, t time.Time) error {
	next := t
	if len(d.queue) > 0 && (next.IsZero() || d.queue[0].at.Before(next)) {
		next = d.queue[0].at
	}
	if next.IsZero() {
		return errors.New("fake driver: the sweep would wait forever")
	}
	if next.After(d.clk.now) {
		d.clk.now = next
	}
	if d.cancel != nil && !d.clk.now.Before(d.cancelAt) {
		d.cancel()
		d.cancel = nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return d.readQueued()
}

func (d *fakePing) close() {}

// runFake runs a sweep of targets over the fake driver.
func runFake(t *testing.T, ctx context.Context, targets []string, cfg PingConfig, script map[int][]fakeReply, cancelAt time.Duration, cancel func()) ([]PingResult, []Record, *fakePing) {
	t.Helper()
	var ts []Target
	for _, a := range targets {
		ts = append(ts, Target{Name: a, Addr: netip.MustParseAddr(a)})
	}
	clk := &stepClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Clock = clk
	cfg = cfg.withDefaults()
	var recs []Record
	r := newSweep(ts, cfg, func(rec Record) { recs = append(recs, rec) })
	d := &fakePing{r: r, clk: clk, script: script, start: clk.now, sends: make([]time.Time, r.total())}
	if cancel != nil {
		d.cancel, d.cancelAt = cancel, clk.now.Add(cancelAt)
	}
	res, err := r.run(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	return res, recs, d
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// The sweep algorithm over a fake driver on a fake clock, with shuffled,
// duplicated, late, missing and foreign replies. Three targets, 4 probes
// each, 30 ms apart per target: probe i (target i%3, round i/3) is due at
// i·10 ms; timeout 50 ms, so a probe is declared lost at 100 ms after its
// send (timeout + the 50 ms grace). A probe may leave up to 3 ms early (the
// slack) when the loop is awake anyway, so no reply arrives within 3 ms
// before a probe's slot. The counts below are worked out by hand from the
// script, not read from the code.
func TestSweepAlgorithmOnAFakeDriver(t *testing.T) {
	a, b, c := "127.0.0.1", "127.0.0.2", "127.0.0.3"
	script := map[int][]fakeReply{
		// a: every reply in time but shuffled: probe 3 (sent 30 ms) is
		// answered at 44 ms, before probe 0 (sent 0) at 45 ms; probe 9
		// (90 ms) at 95 ms, before probe 6 (60 ms) at 100 ms.
		0: {{after: ms(45), probe: -1}}, 3: {{after: ms(14), probe: -1}},
		6: {{after: ms(40), probe: -1}}, 9: {{after: ms(5), probe: -1}},
		// b: probe 1 answered twice (a duplicate); probe 4 never; probe 7
		// after 70 ms (late: past the timeout, before the reaper); probe 10
		// after 105 ms, when the reaper has declared it lost at 100 ms
		// (late, not received).
		1:  {{after: ms(20), probe: -1}, {after: ms(25), probe: -1}},
		7:  {{after: ms(70), probe: -1}},
		10: {{after: ms(105), probe: -1}},
		// c: probes 2 and 5 answered in 10 ms, 8 and 11 never. Foreign, at
		// c's address: another run's nonce; a reply claiming a's probe 0; a
		// reply claiming probe 11 before it was sent. A reply from an
		// address that is no target counts nowhere.
		2: {{after: ms(10), probe: -1}, {after: ms(15), foreign: true}, {after: ms(16), probe: 0, from: c},
			{after: ms(12), probe: 11, from: c}, {after: ms(13), probe: 2, from: "127.0.0.9"}},
		5: {{after: ms(10), probe: -1}},
	}
	res, recs, d := runFake(t, context.Background(), []string{a, b, c},
		PingConfig{Count: 4, Interval: ms(30), Timeout: ms(50), Rate: 1000}, script, 0, nil)

	want := []PingResult{
		{Target: a, Sent: 4, Recv: 4, RTTs: []float64{45, 14, 40, 5}},
		{Target: b, Sent: 4, Recv: 1, Late: 2, Dup: 1, RTTs: []float64{20}},
		{Target: c, Sent: 4, Recv: 2, Foreign: 3, RTTs: []float64{10, 10}},
	}
	for i, w := range want {
		g := res[i]
		if g.Target != w.Target || g.Sent != w.Sent || g.Recv != w.Recv || g.Late != w.Late || g.Dup != w.Dup ||
			g.Foreign != w.Foreign || !slices.Equal(g.RTTs, w.RTTs) {
			t.Errorf("%s: %+v, want %+v", w.Target, g, w)
		}
	}
	if l := res[1].Loss(); l != 0.75 {
		t.Errorf("b's loss %v, want 0.75 (1 of 4 received)", l)
	}
	// The schedule on the fake clock: probe i leaves at i·10 ms exactly.
	for i, at := range d.sends {
		if want := d.start.Add(ms(float64(10 * i))); !at.Equal(want) {
			t.Errorf("probe %d sent at %v, want %v", i, at, want)
		}
	}
	// One record per outcome, in the order decided: at 30 ms b#0's reply
	// and c#0's are taken before probe 3 leaves; at 140 ms b#2's late reply
	// comes before the reaper declares b#1 lost; b#3 is lost at 200 ms and
	// late at 205 ms; c#3 is declared lost at the next reap, 215 ms.
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s#%d:%s", r.Target[len(r.Target)-1:], r.Seq, r.Status))
	}
	wantRecs := []string{
		"2#0:ok", "3#0:ok", "2#0:dup", "1#1:ok", "1#0:ok", "3#1:ok", "1#3:ok", "1#2:ok",
		"2#2:late", "2#1:lost", "3#2:lost", "2#3:lost", "2#3:late", "3#3:lost",
	}
	if !slices.Equal(got, wantRecs) {
		t.Errorf("records\n got %v\nwant %v", got, wantRecs)
	}
}

// A sweep cancelled mid-way leaves the probes still in flight out of Sent
// (neither received nor lost), and sends no more.
func TestSweepCancelledLeavesInFlightProbesOut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One target, probes 100 ms apart, replies after 30 ms except probe 1,
	// which is never answered; cancelled at 150 ms, when probe 0 is
	// received, probe 1 (sent 100 ms) waits for its timeout.
	script := map[int][]fakeReply{0: {{after: ms(30), probe: -1}}, 2: {{after: ms(30), probe: -1}}}
	res, _, d := runFake(t, ctx, []string{"127.0.0.1"}, PingConfig{Count: 5, Interval: ms(100), Timeout: ms(80)}, script, ms(150), cancel)
	if g := res[0]; g.Sent != 1 || g.Recv != 1 || !slices.Equal(g.RTTs, []float64{30}) {
		t.Errorf("%+v, want 1 sent (probe 1 in flight is left out), 1 received", g)
	}
	for i := 2; i < len(d.sends); i++ {
		if !d.sends[i].IsZero() {
			t.Errorf("probe %d sent after the cancel", i)
		}
	}
}

// A new protocol is one driver plus its line in protocols: a fake one
// registered here is swept by Sweep like icmp and tcp (grouped by port,
// scheduled on the injected clock, its records named after it), and its
// targets must name a port as it says. No socket is opened.
func TestANewProtocolIsOneDriverAndItsLine(t *testing.T) {
	clk := &stepClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	saved := protocols
	defer func() { protocols = saved }()
	protocols = append(append([]protocolSpec(nil), protocols...), protocolSpec{name: "fake", ping: &pingProtocol{port: true, open: func(_ context.Context, r *sweep) (pingDriver, error) {
		script := map[int][]fakeReply{}
		for i := range r.total() {
			script[i] = []fakeReply{{after: ms(2), probe: -1}}
		}
		return &fakePing{r: r, clk: clk, script: script, start: clk.now, sends: make([]time.Time, r.total())}, nil
	}}})
	a := Target{Name: "a", Addr: netip.MustParseAddr("127.0.0.1")}
	b := Target{Name: "b", Addr: netip.MustParseAddr("127.0.0.2")}
	var recs []Record
	res, err := Sweep(context.Background(), []SweepTarget{{Target: a, Protocol: "fake", Port: 7}, {Target: b, Protocol: "fake", Port: 7}},
		PingConfig{Count: 3, Interval: ms(10), Timeout: ms(50), Clock: clk}, func(r Record) { recs = append(recs, r) })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Sent != 3 || r.Recv != 3 || !slices.Equal(r.RTTs, []float64{2, 2, 2}) {
			t.Errorf("%s: %+v, want 3 of 3 in 2 ms", r.Target, r)
		}
	}
	if len(recs) != 6 || recs[0].Protocol != "fake" || recs[0].Port != 7 {
		t.Errorf("records %+v, want 6 of protocol fake, port 7", recs)
	}
	if _, err := Sweep(context.Background(), []SweepTarget{{Target: a, Protocol: "fake"}}, PingConfig{Clock: clk}, nil); err == nil ||
		err.Error() != "target a: fake port 0: use 1..65535" {
		t.Errorf("a fake target without a port: %v", err)
	}
	if _, err := Sweep(context.Background(), []SweepTarget{{Target: a, Protocol: "sctp"}}, PingConfig{}, nil); err == nil ||
		err.Error() != `target a: protocol "sctp": a sweep probes fake, icmp or tcp` {
		t.Errorf("an unknown protocol: %v", err)
	}
}

// A reply stamped before its probe's send time (issue 35: the send time
// was placed later than the real send; a wall clock stepped back does the
// same) is received, but its RTT is unknown: never reported below zero, not
// made up as 0, counted as a clock fault. Probe 0's reply comes 1 ms
// before its send on the driver's clock, probe 1's 2 ms after.
func TestSweepNeverReportsAnRTTBelowZero(t *testing.T) {
	script := map[int][]fakeReply{
		0: {{after: -ms(1), probe: -1}},
		1: {{after: ms(2), probe: -1}},
	}
	res, recs, _ := runFake(t, context.Background(), []string{"127.0.0.1"},
		PingConfig{Count: 2, Interval: ms(10), Timeout: ms(50), Rate: 1000}, script, 0, nil)
	g := res[0]
	if g.Sent != 2 || g.Recv != 2 || g.ClockFaults != 1 || !slices.Equal(g.RTTs, []float64{2}) {
		t.Errorf("%+v: want 2 sent, 2 received, 1 clock fault, RTTs [2]", g)
	}
	for _, r := range recs {
		switch {
		case r.RTTms != nil && *r.RTTms < 0:
			t.Errorf("record %d: RTT %v ms", r.Seq, *r.RTTms)
		case r.Seq == 0 && (r.Status != StatusOK || r.RTTms != nil):
			t.Errorf("record 0: %s, RTT %v: want ok without an RTT", r.Status, r.RTTms)
		}
	}
}

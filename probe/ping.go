package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"
)

// Ping defaults.
const (
	DefaultCount    = 10
	DefaultInterval = time.Second
	DefaultTimeout  = time.Second
	DefaultSize     = 56
	// DefaultPingRate is the global packets-per-second cap of a sweep (fping's
	// default spacing of 10 ms between any two probes).
	DefaultPingRate = 100
	// lostGrace is how long after a probe's timeout it is declared lost: a
	// reply stamped by the kernel before the timeout but read a little later
	// still counts as received.
	lostGrace = 50 * time.Millisecond
	// paceSlack is how early a probe may leave its slot on the schedule at
	// most: a sender that wakes for a probe sends the ones due within the
	// slack too, in one batch, instead of sleeping for each, so a sweep
	// of many targets wakes about 100 times a second at most. The rate cap
	// then holds over any second to within 1 %. The slack is a twentieth of
	// the per-target interval, at least minPaceSlack, so that the probes of
	// one target keep their spacing (back-to-back probes see a warmer path:
	// on the 8-hop lab the second of a pair has a third of the RTT).
	paceSlack    = 10 * time.Millisecond
	minPaceSlack = 3 * time.Millisecond
)

// MinRate is the lowest packets-per-second cap a sweep or a trace takes:
// one packet every 100 s. Below it a run would wait practically forever
// between two probes (or, at 1e-300, overflow the wait and not pace at all).
const MinRate = 0.01

// CheckRate says what is wrong with a packets-per-second cap that was set:
// NaN, infinite, or below MinRate (0 and below are wrong too; a zero field
// of PingConfig or TraceConfig is the default and is not checked).
func CheckRate(rate float64) error {
	if rate >= MinRate && !math.IsInf(rate, 1) {
		return nil
	}
	return fmt.Errorf("rate %g: give a number of packets per second, %g or more", rate, MinRate)
}

// PingConfig configures a sweep. Zero fields take the defaults above.
type PingConfig struct {
	Count    int           // probes per target
	Interval time.Duration // between two probes to the same target
	Timeout  time.Duration // a reply later than this is late, not received
	Size     int           // ICMP payload bytes (at least 12: nonce and probe number)
	// TTL is the unicast TTL (IPv6 hop limit) of the probes; 0 keeps the
	// system's (ping -t).
	TTL int
	// Pattern fills the ICMP payload after its 12 bytes of nonce and probe
	// number, repeated (ping -p); nil leaves zeros.
	Pattern []byte
	Rate    float64 // global packets-per-second cap over all targets
	TCPPort int     // the port probed (TCP connect); set alone, it selects TCP
	// Protocol is what is probed: ICMP echo (the default, "") or TCP
	// connect time (PingProtocols).
	Protocol Protocol
	Network  string // "ip4", "ip6" or "" (both)
	// Socket selects the ICMP socket: "" or "auto" (unprivileged datagram
	// socket first, raw as fallback), "dgram" or "raw".
	Socket string
	// OpenSocket opens the sockets (unix.Socket when nil); tests inject one.
	OpenSocket SocketFunc
	// Clock is the time the sweep runs on (its schedule, timeouts and the
	// send times of drivers that take it); the real clock when nil. Tests
	// drive the sweep with a fake one over a fake driver.
	Clock Clock
	// AllowLarge and AllowBroadcast lift the sweep guards of ResolveTargets.
	AllowLarge, AllowBroadcast bool
}

// PingResult is one target's outcome. Sent counts only probes whose wait has
// ended; Recv only replies within the timeout.
type PingResult struct {
	Target, Addr string
	Sent, Recv   int
	Late         int // replies after the timeout (not in Recv)
	Dup          int // further replies to an answered probe
	Foreign      int // echo replies from this address that belonged to another process or run
	Refused      int // TCP only: connection refused (the port is closed)
	// ClockFaults counts replies stamped earlier than their probe's send
	// time: the wall clock stepped back while they were in flight, so
	// their round trip is unknown. They count in Recv; their RTT is left
	// out of RTTs (never reported below zero, never made up as 0).
	ClockFaults int
	// RTTs are the round-trip times in ms of received replies, in send order.
	RTTs []float64
	// Blocked is set (wrapping ErrFirewall) when this host's firewall
	// refused to send the target's probes; those probes count as lost.
	Blocked error
}

// Loss is 1 − Recv/Sent (0 when nothing was sent).
func (r PingResult) Loss() float64 {
	if r.Sent == 0 {
		return 0
	}
	return 1 - float64(r.Recv)/float64(r.Sent)
}

func (c PingConfig) withDefaults() PingConfig {
	if c.Count <= 0 {
		c.Count = DefaultCount
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Size <= 0 {
		c.Size = DefaultSize
	}
	if c.Size < 12 {
		c.Size = 12
	}
	if c.Rate <= 0 {
		c.Rate = DefaultPingRate
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	return c
}

// protocol is the protocol the sweep probes with: Protocol when set, else
// TCP connect when TCPPort is set, else ICMP echo.
func (c PingConfig) protocol() Protocol {
	switch {
	case c.Protocol != "":
		return c.Protocol
	case c.TCPPort != 0:
		return TCP
	}
	return ICMP
}

// Schedule returns the per-target interval a sweep of n targets really uses:
// cfg.Interval, or longer when the global rate cap cannot send n probes per
// interval (stretched is then true).
func Schedule(n int, cfg PingConfig) (interval time.Duration, stretched bool) {
	cfg = cfg.withDefaults()
	need := time.Duration(float64(n) / cfg.Rate * float64(time.Second))
	if need > cfg.Interval {
		return need, true
	}
	return cfg.Interval, false
}

// Ping probes every target cfg.Count times, all targets interleaved on one
// schedule (see Schedule), and returns one result per target in input order.
// onRecord, when not nil, gets every probe's outcome as it is decided (calls
// are serialized). Cancelling ctx stops sending; probes still in flight are
// left out of Sent.
func Ping(ctx context.Context, targets []string, cfg PingConfig, onRecord func(Record)) ([]PingResult, error) {
	cfg = cfg.withDefaults()
	ts, err := ResolveTargets(ctx, targets, ExpandOptions{Network: cfg.Network, AllowLarge: cfg.AllowLarge, AllowBroadcast: cfg.AllowBroadcast})
	if err != nil {
		return nil, err
	}
	return pingTargets(ctx, ts, cfg, onRecord)
}

// PingTargets is Ping for targets already resolved. Every target passes the
// safety gate (CheckTarget, lifted for broadcasts by cfg.AllowBroadcast)
// before a socket opens; one refused target refuses the sweep.
func PingTargets(ctx context.Context, ts []Target, cfg PingConfig, onRecord func(Record)) ([]PingResult, error) {
	g := newGate(cfg.AllowBroadcast, "")
	for _, t := range ts {
		if err := g.check(t.Name, t.Addr); err != nil {
			return nil, err
		}
	}
	return pingTargets(ctx, ts, cfg, onRecord)
}

// pingTargets is PingTargets for targets that passed the gate.
func pingTargets(ctx context.Context, ts []Target, cfg PingConfig, onRecord func(Record)) ([]PingResult, error) {
	if cfg.Rate != 0 {
		if err := CheckRate(cfg.Rate); err != nil {
			return nil, err
		}
	}
	cfg = cfg.withDefaults()
	if len(ts) == 0 {
		return nil, errors.New("no targets")
	}
	pp, ok := pingProtocolOf(cfg.protocol())
	if !ok {
		return nil, fmt.Errorf("ping: protocol %q: use %s", cfg.protocol(), pingProtocolNames())
	}
	r := newSweep(ts, cfg, onRecord)
	d, err := pp.open(ctx, r)
	if err != nil {
		return nil, err
	}
	return r.run(ctx, d)
}

// newSweep makes the probe table and results of a sweep of ts.
func newSweep(ts []Target, cfg PingConfig, onRecord func(Record)) *sweep {
	r := &sweep{cfg: cfg, targets: ts, onRecord: onRecord, clock: cfg.Clock, proto: cfg.protocol()}
	r.results = make([]PingResult, len(ts))
	r.byAddr = make(map[netip.Addr]int, len(ts))
	for i, t := range ts {
		r.results[i].Target, r.results[i].Addr = t.Name, t.Addr.String()
		if _, ok := r.byAddr[t.Addr]; !ok {
			r.byAddr[t.Addr] = i
		}
	}
	r.interval, _ = Schedule(len(ts), cfg)
	r.slack = min(paceSlack, max(minPaceSlack, r.interval/20))
	r.probes = make([]probeState, r.total())
	return r
}

// Probe states in a sweep.
const (
	stUnsent uint8 = iota
	stPending
	stOK
	stLost
	stLate
)

type probeState struct {
	sent  time.Time
	state uint8
	rtt   float64
}

// sweep is one Ping run, the algorithm every protocol shares: the schedule,
// a probe table indexed by i = round·T + target that the loop and the
// driver's receivers share, and the accounting of replies (received, late,
// duplicate, foreign) and losses. The driver (pingDriver) sends and reads.
type sweep struct {
	cfg      PingConfig
	targets  []Target
	results  []PingResult
	byAddr   map[netip.Addr]int
	onRecord func(Record)
	clock    Clock
	proto    Protocol
	interval time.Duration
	slack    time.Duration // how early a probe may leave (paceSlack)

	mu       sync.Mutex
	probes   []probeState
	sent     int // probes handed to the driver (prefix of probes)
	resolved int // probes whose outcome is decided (ok, lost or late)
	reaped   int // probes before this index are not pending any more
}

func (r *sweep) total() int { return len(r.targets) * r.cfg.Count }

// emit reports probe i's outcome; r.mu is held.
func (r *sweep) emit(i int, status Status, rtt float64) {
	if r.onRecord == nil {
		return
	}
	t := i % len(r.targets)
	rec := Record{
		Schema: StreamSchema, Time: r.probes[i].sent, Target: r.targets[t].Name,
		Addr: r.results[t].Addr, Protocol: r.proto, Port: r.cfg.TCPPort,
		Seq: i / len(r.targets), Status: status,
	}
	if status != StatusLost && !math.IsNaN(rtt) {
		v := rtt
		rec.RTTms = &v
	}
	r.onRecord(rec)
}

// reap declares pending probes whose wait (timeout + grace) ended before now lost; r.mu is held.
func (r *sweep) reap(now time.Time) {
	wait := r.cfg.Timeout + lostGrace
	for r.reaped < r.sent {
		p := &r.probes[r.reaped]
		if p.state == stPending {
			if now.Sub(p.sent) < wait {
				return
			}
			p.state = stLost
			r.resolved++
			r.emit(r.reaped, StatusLost, 0)
		}
		r.reaped++
	}
}

// answer applies a reply to probe i received at "at"; r.mu is held. A
// reply stamped before its send time is a clock fault (ClockFaults): its
// RTT is NaN, kept out of the results and the stream (issue 35: RTTs of
// −0.002 to −20.8 ms were reported when send times were interpolated over
// a sendmmsg call).
func (r *sweep) answer(i int, at time.Time) {
	p := &r.probes[i]
	rtt := float64(at.Sub(p.sent).Nanoseconds()) / 1e6
	inTime := at.Sub(p.sent) <= r.cfg.Timeout
	res := &r.results[i%len(r.targets)]
	if rtt < 0 {
		rtt = math.NaN()
		if p.state == stPending || p.state == stLost {
			res.ClockFaults++
		}
	}
	switch p.state {
	case stPending, stLost:
		if p.state == stPending {
			r.resolved++
		}
		if inTime {
			p.state, p.rtt = stOK, rtt
			r.emit(i, StatusOK, rtt)
		} else {
			p.state = stLate
			res.Late++
			r.emit(i, StatusLate, rtt)
		}
	case stOK, stLate:
		res.Dup++
		r.emit(i, StatusDup, rtt)
	}
}

// replyLocked is a reply from "from" that its driver matched to probe i
// (by a nonce or a connection of this run) received at "at"; r.mu is held.
// A probe number not sent yet, or a reply from another address than the
// probe's target, is foreign.
func (r *sweep) replyLocked(i int, from netip.Addr, at time.Time) {
	if i < 0 || i >= r.sent || r.probes[i].state == stUnsent || r.targets[i%len(r.targets)].Addr != from {
		r.foreignLocked(from)
		return
	}
	r.answer(i, at)
}

// foreignLocked counts a reply from "from" that belongs to another process
// or run against the target at that address, if any; r.mu is held.
func (r *sweep) foreignLocked(from netip.Addr) {
	if t, ok := r.byAddr[from]; ok {
		r.results[t].Foreign++
	}
}

// failLocked decides probe i lost at once (a send that failed, a refused
// connection) rather than at its timeout, sent at "sent"; r.mu is held.
func (r *sweep) failLocked(i int, sent time.Time) {
	if p := &r.probes[i]; p.state == stPending {
		p.sent = sent
		p.state = stLost
		r.resolved++
		r.emit(i, StatusLost, 0)
	}
}

// finish fills Sent, Recv and RTTs from the probe table.
func (r *sweep) finish() []PingResult {
	T := len(r.targets)
	for i := 0; i < r.sent; i++ {
		res := &r.results[i%T]
		switch r.probes[i].state {
		case stOK:
			res.Sent++
			res.Recv++
			if !math.IsNaN(r.probes[i].rtt) {
				res.RTTs = append(res.RTTs, r.probes[i].rtt)
			}
		case stLost, stLate:
			res.Sent++
		}
	}
	return r.results
}

// reapEvery is how often, at most, the loop wakes only to declare probes
// lost: a sweep of unanswered targets would otherwise wake for each.
const reapEvery = 10 * time.Millisecond

// run is the sweep: the loop over d, then the outcome of what is left in
// flight (lost when the sweep ended, left out of Sent when ctx did).
func (r *sweep) run(ctx context.Context, d pingDriver) ([]PingResult, error) {
	sendErr, err := r.loop(ctx, d)
	// The driver's receivers must stop before the results are read.
	d.close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() == nil {
		r.reap(r.clock.Now().Add(time.Hour))
	} else {
		// Probes still waiting are in flight, not lost: leave them out of Sent.
		for i := range r.sent {
			if r.probes[i].state == stPending {
				r.probes[i].state = stUnsent
			}
		}
	}
	res := r.finish()
	if sendErr != nil && allZero(res) {
		return res, sendErr
	}
	return res, nil
}

// loop is the sweep's one loop: every wake-up it takes every reply queued at
// the driver, declares overdue probes lost, sends every probe due (within
// r.slack) in one batch, takes the replies those sends produced (on loopback
// the kernel answers inside the send) and waits for the next probe's slot,
// a reply or the next reap, whichever comes first. sendErr is the first
// send error; err a fatal one (privilege).
func (r *sweep) loop(ctx context.Context, d pingDriver) (sendErr, err error) {
	T, total := len(r.targets), r.total()
	start := r.clock.Now()
	due := func(i int) time.Time {
		return start.Add(time.Duration(i/T)*r.interval + time.Duration(i%T)*r.interval/time.Duration(T))
	}
	next := 0 // the next probe to send
	batch := make([]int, 0, maxBatch)
	for {
		if err := d.readQueued(); err != nil {
			return sendErr, nil
		}
		now := r.clock.Now()
		r.mu.Lock()
		r.reap(now)
		r.mu.Unlock()
		if ctx.Err() != nil {
			return sendErr, nil
		}
		if next < total && !due(next).After(now.Add(r.slack)) {
			// Every probe due within the slack leaves now: at 1,000
			// packets/s the loop wakes for every tenth probe, not for
			// each (a wake-up costs about what a loopback echo does).
			batch = batch[:0]
			limit := now.Add(r.slack)
			for next < total && !due(next).After(limit) && len(batch) < maxBatch {
				batch = append(batch, next)
				next++
			}
			// Marked pending before the sends so that a reply read before
			// its send returns finds its probe; the whole batch at once, as
			// r.sent is a prefix of the table.
			r.mu.Lock()
			for _, i := range batch {
				r.probes[i] = probeState{sent: now, state: stPending}
			}
			r.sent = next
			r.mu.Unlock()
			serr, ferr := d.send(batch)
			if sendErr == nil {
				sendErr = serr
			}
			if ferr != nil {
				return sendErr, ferr
			}
			// Loopback answers inside the send: take those replies now
			// rather than wake up for them.
			if err := d.readQueued(); err != nil {
				return sendErr, nil
			}
			if len(batch) == maxBatch {
				continue // a full batch: send the rest of the slot's probes
			}
		}
		r.mu.Lock()
		done := next >= total && r.resolved >= r.sent
		wake := time.Time{}
		if next < total {
			wake = due(next)
		}
		if r.reaped < r.sent {
			w := r.probes[r.reaped].sent.Add(r.cfg.Timeout + lostGrace)
			w = later(w, now.Add(reapEvery))
			if wake.IsZero() || w.Before(wake) {
				wake = w
			}
		}
		r.mu.Unlock()
		if done {
			return sendErr, nil
		}
		if err := d.wait(ctx, wake); err != nil {
			return sendErr, nil
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func allZero(rs []PingResult) bool {
	for _, r := range rs {
		if r.Recv > 0 {
			return false
		}
	}
	return true
}

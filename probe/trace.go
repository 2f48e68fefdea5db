package probe

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Trace defaults.
const (
	DefaultMaxTTL       = 30
	DefaultTraceTimeout = time.Second
	DefaultUDPPort      = 33434
	DefaultTCPPort      = 80
	// DefaultTraceRate paces the probes of one cycle: 30 TTLs leave within
	// 30 ms, so a trace still takes about one round trip.
	DefaultTraceRate = 1000
	// MaxCycles bounds one run (its per-cycle bookkeeping is kept in memory).
	MaxCycles = 1_000_000
)

// TraceConfig configures a traceroute. Zero fields take the defaults.
type TraceConfig struct {
	Proto            Protocol      // ICMP (default), UDP or TCP
	Port             int           // destination port for udp (33434) and tcp (80)
	FirstTTL, MaxTTL int           // 1 and 30 by default
	Cycles           int           // rounds over all TTLs (mtr style), 1 by default
	Interval         time.Duration // between the starts of two cycles, 1 s by default
	Timeout          time.Duration // a reply later than this is late, not received
	Flows            int           // flows per TTL (Paris flow ids 0..Flows−1), 1 by default
	Rate             float64       // packets per second while sending a cycle
	// Burst is how many probes may leave at once before Rate applies; 0
	// is one cycle (at most 64), as traceroute sends 16 at once. serve
	// sets 1: every probe at Rate, as its --rate promises.
	Burst   int
	Network string // "ip4", "ip6" or ""
	// Mode forces the sockets (ModeRaw, ModeDatagram for icmp, ModeRecverr
	// for udp and tcp); "" picks them (see OpenTraceDriver).
	Mode TraceMode
	// NAT asks for the NAT ID of every reply (udp over IPv4 only): in raw
	// mode each probe's IP ID is its UDP checksum, and the checksum quoted
	// back is compared with it (see TraceReply.NATID). Other modes cannot
	// set the IP ID or see the quoted header: their replies carry none.
	NAT bool
	// FlowDstPort makes udp flows differ in the destination port (flow f
	// goes to Port+f from one source port, as scamper's tracelb -P
	// udp-dport) instead of the source port; tcp and icmp ignore it.
	FlowDstPort bool
	// perFlowDest (Multipath's per-path cycles) stops each flow at the TTL
	// where the target answered that flow, not at the lowest over all
	// flows: paths of unequal length each keep their own last hops.
	perFlowDest bool
	// Clock is the time the algorithm runs on (cycle starts, timeouts,
	// pacing, RTTs of drivers that take it); the real clock when nil.
	Clock Clock
	// OpenSocket opens the sockets (unix.Socket when nil); tests inject one.
	OpenSocket SocketFunc
}

func (c TraceConfig) withDefaults() (TraceConfig, error) {
	if c.Proto == "" {
		c.Proto = ICMP
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	spec, _ := protocolOf(c.Proto)
	switch {
	case spec.trace == nil:
		return c, fmt.Errorf("protocol %q: use %s", c.Proto, ProtocolNames(TraceProtocols()))
	case !spec.port:
		c.Port = 0
	case c.Port == 0:
		c.Port = spec.tracePort
	}
	switch {
	case c.Mode == "" || c.Mode == ModeRaw:
	case c.Mode == ModeDatagram && spec.trace.unprivileged() != ModeDatagram:
		return c, fmt.Errorf("mode datagram traces with ICMP only (udp and tcp use recverr)")
	case c.Mode == ModeRecverr && spec.trace.unprivileged() != ModeRecverr:
		return c, fmt.Errorf("mode recverr traces with udp or tcp (icmp uses datagram)")
	case c.Mode != ModeDatagram && c.Mode != ModeRecverr:
		return c, fmt.Errorf("mode %q: use raw, datagram or recverr", c.Mode)
	}
	if c.NAT && !spec.nat {
		return c, fmt.Errorf("NAT detection traces with udp (the IP ID is set to the UDP checksum): use udp, not %s", c.Proto)
	}
	if c.Port < 0 || c.Port > 65535 {
		return c, fmt.Errorf("port %d: not a port number", c.Port)
	}
	if c.FirstTTL <= 0 {
		c.FirstTTL = 1
	}
	if c.MaxTTL <= 0 {
		c.MaxTTL = DefaultMaxTTL
	}
	if c.MaxTTL > 255 || c.FirstTTL > c.MaxTTL {
		return c, fmt.Errorf("TTLs %d..%d: use 1 ≤ first ≤ max ≤ 255", c.FirstTTL, c.MaxTTL)
	}
	if c.Cycles <= 0 {
		c.Cycles = 1
	}
	if c.Cycles > MaxCycles {
		return c, fmt.Errorf("cycles %d: at most %d per run", c.Cycles, MaxCycles)
	}
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTraceTimeout
	}
	if c.Flows <= 0 {
		c.Flows = 1
	}
	if c.Flows > 64 {
		return c, fmt.Errorf("flows %d: at most 64", c.Flows)
	}
	if c.Rate != 0 {
		if err := CheckRate(c.Rate); err != nil {
			return c, err
		}
	}
	if c.Rate == 0 {
		c.Rate = DefaultTraceRate
	}
	return c, nil
}

// TraceProbe is one probe a Driver sends.
type TraceProbe struct {
	TTL  int
	Flow int    // Paris flow id: the fields routers hash are fixed per flow
	Key  uint16 // identifies the probe in the reply (1..0xfffe)
}

// FlowIdent is the header fields one flow of a Driver is sent with: ID is
// the value a report names the flow by (the udp destination port, the udp
// or tcp source port, or the ICMP checksum), SrcPort and DstPort are its
// ports (0 for icmp; SrcPort 0 before a recverr tcp flow's first probe).
type FlowIdent struct {
	ID      int
	SrcPort int
	DstPort int
}

// FlowNamer is a Driver that can tell a flow's header fields: every
// socket driver is one; Multipath reports flow ids with it.
type FlowNamer interface {
	FlowIdent(flow int) FlowIdent
}

// icmpFlowSum is the checksum-complement an ICMP probe of flow f keeps
// (parisEcho): 0x101 is odd, so flows below 65,536 never share one.
func icmpFlowSum(flow int) uint16 { return uint16(0x1000 + flow*0x101) }

// TraceReply is one reply a Driver received and decoded.
type TraceReply struct {
	Key  uint16     // the Key of the probe it answers
	From netip.Addr // the responder
	At   time.Time  // kernel receive time
	// Dest is true when the target itself answered (echo reply, port or
	// protocol unreachable from the target, TCP SYN-ACK or RST).
	Dest bool
	MPLS []MPLS
	// NATID is the quoted UDP checksum minus the one sent (TraceNATID),
	// when HasNATID: only a raw-mode udp trace with TraceConfig.NAT reads it.
	NATID    uint16
	HasNATID bool
}

// TraceNATID is the NAT ID of a reply, as dublin-traceroute reports it: the
// UDP checksum quoted in the ICMP error minus the checksum sent, as a 16-bit
// value. A router that rewrites the source address or port without state
// (and fixes the checksum, RFC 1624) shifts the checksum by the one's-
// complement difference of the old and new words, so every reply from
// behind it carries the same non-zero NAT ID; 0 means the quoted header came
// back as sent. The difference is taken in one's complement and written as
// a two's-complement value, so the end-around carry of the incremental
// update (whether a checksum wrapped past 0) does not move it by one: a
// rewrite that adds 0x0300 to the header sum reads 0xFD00 (−0x300) for
// every probe.
func TraceNATID(sent, quoted uint16) uint16 {
	d := fold(uint32(quoted) + uint32(^sent))
	switch {
	case d == 0xffff: // one's-complement −0
		return 0
	case d >= 0x8000: // negative: −k is 0xffff−k in one's complement
		return d + 1
	}
	return d
}

// ErrPastDestination is what a Driver's Send may return for a probe of a
// flow whose earlier probe at a lower TTL the destination already answered
// (a driver that sends one probe of a flow at a time knows it): the probe
// would only reach the destination again and is left out of the hops anyway,
// so the algorithm drops it without a result.
var ErrPastDestination = errors.New("the destination already answered this flow at a lower TTL")

// ErrForeign is what a Driver's Receive returns (wrapped in a *ForeignError)
// for a packet that looks like a trace reply but belongs to another process
// or run. It is retryable: the caller counts it and reads on.
var ErrForeign = errors.New("not a reply to this run")

// ForeignError is a non-matching packet; errors.Is(err, ErrForeign) holds.
type ForeignError struct{ Reason string }

func (e *ForeignError) Error() string        { return ErrForeign.Error() + ": " + e.Reason }
func (e *ForeignError) Is(target error) bool { return target == ErrForeign }

// Driver sends trace probes and receives their replies; the traceroute
// algorithm (TraceWithDriver) is written once on top of it. Send returns when
// the probe left, with the time just before it was handed to the kernel (it
// may block first, e.g. until the flow's previous probe is decided, and may
// refuse a probe with ErrPastDestination). Every probe of one Flow leaves
// with the same header fields that routers hash (Paris), whatever its TTL
// and Key. Receive returns the next queued reply, even when ctx has already
// ended; with none queued it blocks until one arrives or ctx ends (returning
// ctx's error). Packets of other runs give a *ForeignError; unrelated
// traffic is skipped. Mode names the sockets it uses, for the report.
type Driver interface {
	Send(p TraceProbe) (time.Time, error)
	Receive(ctx context.Context) (TraceReply, error)
	Close() error
	Mode() TraceMode
}

// TraceMode is which sockets a trace ran on; its string is the "mode" of
// the linecheck.trace/v1 document.
type TraceMode string

// Trace modes.
const (
	// ModeRaw: raw sockets (root or CAP_NET_RAW). Every header field is
	// ours, and ICMP errors arrive whole, with their extensions (MPLS).
	ModeRaw TraceMode = "raw"
	// ModeDatagram: ICMP datagram ("ping") sockets, for icmp without
	// privileges where net.ipv4.ping_group_range allows; errors come from
	// the socket's error queue, without ICMP extensions (no MPLS labels).
	ModeDatagram TraceMode = "datagram"
	// ModeRecverr: ordinary UDP and TCP sockets with IP_RECVERR, for udp and
	// tcp without any privilege (as tracepath); errors come from the error
	// queue, without ICMP extensions (no MPLS labels).
	ModeRecverr TraceMode = "recverr"
)

// ShowsMPLS tells whether a mode can see MPLS label stacks (ICMP
// extensions): raw only. "" (a recording that does not say) counts as raw.
func (m TraceMode) ShowsMPLS() bool { return m == "" || m == ModeRaw }

// TraceCounts are the replies that were not counted as received.
type TraceCounts struct {
	Late       int // after the timeout
	Duplicates int // a further reply to an answered probe
	Foreign    int // replies to another process or run, or to no probe of ours
}

// openTraceDriver opens the driver cfg.Mode names or, with no mode, the
// raw-socket driver, falling back without CAP_NET_RAW to ICMP datagram
// sockets (icmp) or to ordinary sockets and the error queue (udp, tcp).
func openTraceDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	if cfg.NAT && dst.Is6() {
		return nil, fmt.Errorf("NAT detection traces IPv4 only (IPv6 has no IP ID to carry the checksum): %s is IPv6", dst)
	}
	switch cfg.Mode {
	case ModeRaw:
		return openRawDriver(cfg, dst)
	case ModeDatagram:
		return openDgramDriver(cfg, dst)
	case ModeRecverr:
		return openRecverrDriver(cfg, dst)
	}
	d, err := openRawDriver(cfg, dst)
	if err == nil || !errors.Is(err, ErrPrivilege) {
		return d, err
	}
	if traceProtoOf(cfg.Proto).unprivileged() == ModeRecverr {
		return openRecverrDriver(cfg, dst)
	}
	dd, derr := openDgramDriver(cfg, dst)
	if derr == nil {
		return dd, nil
	}
	if isPermission(derr) {
		return nil, privilegeError("trace --proto icmp needs unprivileged ICMP sockets or raw sockets (--proto udp and --proto tcp need neither)",
			fmt.Errorf("raw socket: %v; datagram socket: %w", errors.Unwrap(err), derr), true)
	}
	return nil, derr
}

// OpenTraceDriver opens the socket driver Trace uses for a trace to dst:
// cfg.Mode's, or else raw sockets when the process may open them (root or
// CAP_NET_RAW); without that privilege, for icmp, ICMP datagram sockets
// (where net.ipv4.ping_group_range allows; otherwise an ErrPrivilege error
// naming the sysctl and the setcap command), and for udp and tcp ordinary
// sockets with IP_RECVERR, which need no privilege at all. Callers that run
// several traces at once wrap it, e.g. to pace all of them under one rate,
// and run TraceWithDriver on it.
func OpenTraceDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return openTraceDriver(cfg, dst)
}

// Trace runs a traceroute to target (an address or a name) over the socket
// driver and returns its raw results (route.BuildTrace makes the
// linecheck.trace/v1 document of them). onCycle, when not nil, gets a
// snapshot after each cycle (for live views). On cancellation it returns the
// cycles finished so far together with ctx's error.
func Trace(ctx context.Context, target string, cfg TraceConfig, onCycle func(*TraceRun)) (*TraceRun, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	addr, err := ResolveTraceTarget(ctx, target, cfg.Network)
	if err != nil {
		return nil, err
	}
	drv, err := openTraceDriver(cfg, addr)
	if err != nil {
		return nil, err
	}
	defer drv.Close()
	return TraceWithDriver(ctx, drv, target, addr, cfg, onCycle)
}

// tprobe is one sent probe awaiting or holding its outcome.
type tprobe struct {
	res      ProbeResult
	cycle    int
	sent     time.Time
	answered bool // a reply (in time or late) was seen
	final    bool // its outcome is decided and recorded
	beyond   bool // sent past the destination's TTL: its reply no longer matters
	idx      int  // its entry in tracer.results once final
}

// traceGrace is how long after its timeout a probe is declared lost: a reply
// the kernel stamped in time but that is read a little later still counts.
const traceGrace = 50 * time.Millisecond

type tracer struct {
	drv     Driver
	cfg     TraceConfig
	clk     Clock
	pending map[uint16]*tprobe
	key     uint16
	order   int
	queue   []*tprobe // every probe in send order (and so in deadline order)
	expired int       // queue[:expired] are past their wait
	left    []int     // per cycle: probes not final yet
	sentIn  []bool    // per cycle: all its probes were sent
	next    int       // the next cycle to report to onCycle
	results []ProbeResult
	counts  TraceCounts
	destTTL int
	// destOf is each flow's destination TTL with cfg.perFlowDest.
	destOf  map[int]int
	onCycle func()
}

// flowDest is the TTL past which flow's probes only reach the target
// again (0: not known yet).
func (t *tracer) flowDest(flow int) int {
	if t.cfg.perFlowDest {
		return t.destOf[flow]
	}
	return t.destTTL
}

func (t *tracer) nextKey() uint16 {
	t.key++
	if t.key == 0 || t.key == 0xffff {
		t.key = 1
	}
	return t.key
}

// finalize records p's outcome.
func (t *tracer) finalize(p *tprobe) {
	if p.final {
		return
	}
	p.final = true
	p.idx = len(t.results)
	t.results = append(t.results, p.res)
	t.left[p.cycle]--
	t.report()
}

// report calls onCycle for every cycle, in order, whose probes are all final.
func (t *tracer) report() {
	for t.next < len(t.left) && t.sentIn[t.next] && t.left[t.next] == 0 {
		t.next++
		if t.onCycle != nil {
			t.onCycle()
		}
	}
}

// expire declares probes whose wait ended before now lost.
func (t *tracer) expire(now time.Time) {
	wait := t.cfg.Timeout + traceGrace
	for t.expired < len(t.queue) && now.Sub(t.queue[t.expired].sent) >= wait {
		t.finalize(t.queue[t.expired])
		t.expired++
	}
}

// wake is when the oldest probe still waiting will have waited long enough.
func (t *tracer) wake() (time.Time, bool) {
	for t.expired < len(t.queue) && t.queue[t.expired].final {
		t.expired++
	}
	if t.expired == len(t.queue) {
		return time.Time{}, false
	}
	return t.queue[t.expired].sent.Add(t.cfg.Timeout + traceGrace), true
}

// handle applies one decoded reply.
func (t *tracer) handle(r TraceReply) {
	p := t.pending[r.Key]
	if p == nil {
		t.counts.Foreign++
		return
	}
	if p.beyond {
		return
	}
	if p.answered {
		// answered implies final: the duplicate is added to its result.
		t.counts.Duplicates++
		t.results[p.idx].Dups++
		return
	}
	p.answered = true
	if p.final || r.At.Sub(p.sent) > t.cfg.Timeout {
		t.counts.Late++
		t.finalize(p)
		t.results[p.idx].Late = true
		t.results[p.idx].Dest = r.Dest
		return
	}
	p.res.Addr = r.From.String()
	p.res.RTTms = float64(r.At.Sub(p.sent).Nanoseconds()) / 1e6
	p.res.Dest = r.Dest
	p.res.MPLS = r.MPLS
	p.res.NATID, p.res.HasNATID = r.NATID, r.HasNATID
	t.finalize(p)
	if d := t.flowDest(p.res.Flow); r.Dest && (d == 0 || p.res.TTL < d) {
		if t.destTTL == 0 || p.res.TTL < t.destTTL {
			t.destTTL = p.res.TTL
		}
		if t.cfg.perFlowDest {
			t.destOf[p.res.Flow] = p.res.TTL
		}
		// Probes past the destination only ever reach it again and are left
		// out of the hops: stop waiting for them, so the trace can end one
		// round trip after the destination's own probe left.
		for _, q := range t.queue[t.expired:] {
			if !q.final && q.res.TTL > p.res.TTL && (!t.cfg.perFlowDest || q.res.Flow == p.res.Flow) {
				q.beyond = true
				t.finalize(q)
			}
		}
	}
}

// receiveUntil reads replies until "until" (replies already queued are read
// even when until has passed), or, when until is zero, until no probe waits
// any more. Probes are expired only when nothing is queued, so a reply that
// waited in a queue behind others is not turned into a late one. It returns
// ctx's error when ctx ended.
func (t *tracer) receiveUntil(ctx context.Context, until time.Time) error {
	for {
		w, waiting := t.wake()
		if until.IsZero() {
			if !waiting {
				return nil
			}
		} else if !waiting || until.Before(w) {
			w = until
		}
		rctx, cancel := t.deadline(ctx, w)
		r, err := t.drv.Receive(rctx)
		woke := rctx.Err() != nil
		cancel()
		switch {
		case err == nil:
			t.handle(r)
		case errors.Is(err, ErrForeign):
			t.counts.Foreign++
		case ctx.Err() != nil:
			return ctx.Err()
		case woke:
			now := t.clk.Now()
			t.expire(now)
			if !until.IsZero() && !now.Before(until) {
				return nil
			}
		default:
			return fmt.Errorf("receiving: %w", err)
		}
	}
}

// deadline is ctx ending at w on the trace's clock.
func (t *tracer) deadline(ctx context.Context, w time.Time) (context.Context, context.CancelFunc) {
	return deadlineOn(ctx, t.clk, w)
}

// TraceWithDriver runs the traceroute algorithm over drv. Cycle c starts at
// start + c·Interval whatever earlier cycles still wait for (mtr style: a lost
// probe does not hold the next cycle back). Each cycle sends every TTL of
// every flow (paced by a token bucket: a burst of one cycle, at most 64
// probes, then cfg.Rate) before it reads a reply, so a cycle takes
// about one round trip; the kernel's receive timestamps keep the RTTs exact
// although replies are read afterwards. Once the target answered at TTL d,
// later cycles stop at d. Replies are matched by probe key: a reply to no
// probe is foreign, a second reply a duplicate, a reply after the timeout
// late (the probe counts as lost). A probe without a reply is lost once its
// timeout (plus a 50 ms grace for reading) has passed. After the last cycle
// it returns as soon as no probe waits. onCycle gets a snapshot each time a
// cycle's probes are all decided, in cycle order; every snapshot (and the
// run returned) holds its own copy of the results.
func TraceWithDriver(ctx context.Context, drv Driver, target string, addr netip.Addr, cfg TraceConfig, onCycle func(*TraceRun)) (*TraceRun, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &tracer{drv: drv, cfg: cfg, clk: cfg.Clock, pending: make(map[uint16]*tprobe),
		left: make([]int, cfg.Cycles), sentIn: make([]bool, cfg.Cycles), destOf: map[int]int{}}
	start := t.clk.Now()
	doc := func() *TraceRun {
		return &TraceRun{Target: target, Addr: addr, Protocol: cfg.Proto, Port: cfg.Port, Flows: cfg.Flows,
			Mode: drv.Mode(), NAT: cfg.NAT, MaxTTL: cfg.MaxTTL, Start: start, Counts: t.counts, Results: slices.Clone(t.results)}
	}
	if onCycle != nil {
		t.onCycle = func() { onCycle(doc()) }
	}
	// A token bucket paces the probes: a whole cycle (up to 64 probes) may
	// leave at once, as traceroute sends 16 at once, and the long-run rate
	// never exceeds cfg.Rate.
	burst := float64(min((cfg.MaxTTL-cfg.FirstTTL+1)*cfg.Flows, 64))
	if cfg.Burst > 0 {
		burst = float64(cfg.Burst)
	}
	tokens, filled := burst, start
	var sendErr error
	for c := 0; c < cfg.Cycles; c++ {
		cycleStart := start.Add(time.Duration(c) * cfg.Interval)
		if c > 0 {
			if err := t.receiveUntil(ctx, cycleStart); err != nil {
				return doc(), err
			}
		}
		for f := 0; f < cfg.Flows; f++ {
			hi := cfg.MaxTTL
			if d := t.flowDest(f); d > 0 {
				hi = min(hi, d)
			}
			for ttl := cfg.FirstTTL; ttl <= hi; ttl++ {
				// Pacing only: no reply is read until the whole cycle is out.
				// When cycles fall behind their start times, the bucket
				// still holds the rate.
				now := t.clk.Now()
				tokens = min(burst, tokens+now.Sub(filled).Seconds()*cfg.Rate)
				filled = now
				if tokens < 1 {
					wait := time.Duration((1 - tokens) / cfg.Rate * float64(time.Second))
					if err := sleepUntil(ctx, t.clk, now.Add(wait)); err != nil {
						return doc(), err
					}
					tokens, filled = 1, now.Add(wait)
				}
				tokens--
				key := t.nextKey()
				at, err := drv.Send(TraceProbe{TTL: ttl, Flow: f, Key: key})
				if errors.Is(err, ErrPastDestination) {
					continue
				}
				if err != nil {
					if errors.Is(err, ErrPrivilege) {
						return nil, err
					}
					if sendErr == nil {
						sendErr = fmt.Errorf("sending a probe with TTL %d: %w", ttl, err)
					}
					// Never sent: it gets no result, it is not lost.
					continue
				}
				p := &tprobe{res: ProbeResult{TTL: ttl, Flow: f, Order: t.order}, cycle: c, sent: at}
				t.order++
				if old := t.pending[key]; old != nil && !old.final {
					// 65,534 probes later the key comes round again.
					t.finalize(old)
				}
				t.pending[key] = p
				t.queue = append(t.queue, p)
				t.left[c]++
			}
		}
		t.sentIn[c] = true
		if t.left[c] == 0 && sendErr != nil {
			return doc(), sendErr
		}
		t.report()
	}
	if err := t.receiveUntil(ctx, time.Time{}); err != nil {
		return doc(), err
	}
	return doc(), nil
}

// sleepUntil waits for d on clk, or for ctx.
func sleepUntil(ctx context.Context, clk Clock, d time.Time) error {
	w := d.Sub(clk.Now())
	if w <= 0 {
		return ctx.Err()
	}
	if _, real := clk.(realClock); real {
		tm := time.NewTimer(w)
		defer tm.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tm.C:
			return nil
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(w):
		return nil
	}
}

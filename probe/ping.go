package probe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// PingConfig configures a sweep. Zero fields take the defaults above.
type PingConfig struct {
	Count    int           // probes per target
	Interval time.Duration // between two probes to the same target
	Timeout  time.Duration // a reply later than this is late, not received
	Size     int           // ICMP payload bytes (at least 12: nonce and probe number)
	Rate     float64       // global packets-per-second cap over all targets
	TCPPort  int           // 0: ICMP echo; else TCP connect time to this port
	Network  string        // "ip4", "ip6" or "" (both)
	// Socket selects the ICMP socket: "" or "auto" (unprivileged datagram
	// socket first, raw as fallback), "dgram" or "raw".
	Socket string
	// OpenSocket opens the sockets (unix.Socket when nil); tests inject one.
	OpenSocket SocketFunc
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
	return c
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
	cfg = cfg.withDefaults()
	if len(ts) == 0 {
		return nil, errors.New("no targets")
	}
	r := &sweep{cfg: cfg, targets: ts, onRecord: onRecord}
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
	if cfg.TCPPort != 0 {
		return r.runTCP(ctx)
	}
	return r.runICMP(ctx)
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

// sweep is one Ping run: a probe table indexed by i = round·T + target, shared
// by the sender and the receivers.
type sweep struct {
	cfg      PingConfig
	targets  []Target
	results  []PingResult
	byAddr   map[netip.Addr]int
	onRecord func(Record)
	interval time.Duration
	slack    time.Duration // how early a probe may leave (paceSlack)

	mu       sync.Mutex
	probes   []probeState
	sent     int // probes handed to the kernel (prefix of probes)
	resolved int // probes whose outcome is decided (ok, lost or late)
	reaped   int // probes before this index are not pending any more
	nonce    [8]byte
	id       uint16
	proto    Protocol
	timer    *time.Timer // the sender's pacing timer (sender goroutine only)
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
	if status != StatusLost {
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

// answer applies a reply to probe i received at "at"; r.mu is held.
func (r *sweep) answer(i int, at time.Time) {
	p := &r.probes[i]
	rtt := float64(at.Sub(p.sent).Nanoseconds()) / 1e6
	inTime := at.Sub(p.sent) <= r.cfg.Timeout
	res := &r.results[i%len(r.targets)]
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

// finish fills Sent, Recv and RTTs from the probe table.
func (r *sweep) finish() []PingResult {
	T := len(r.targets)
	for i := 0; i < r.sent; i++ {
		res := &r.results[i%T]
		switch r.probes[i].state {
		case stOK:
			res.Sent++
			res.Recv++
			res.RTTs = append(res.RTTs, r.probes[i].rtt)
		case stLost, stLate:
			res.Sent++
		}
	}
	return r.results
}

// pace waits until probe i's slot on the schedule; false when ctx ended.
func (r *sweep) pace(ctx context.Context, start time.Time, i int) bool {
	T := len(r.targets)
	due := start.Add(time.Duration(i/T)*r.interval + time.Duration(i%T)*r.interval/time.Duration(T))
	// A probe may leave up to r.slack early: at 1,000 packets/s the sender
	// then wakes for every tenth probe instead of every one; each wake-up
	// costs a context switch and a pass of the scheduler, about as much CPU
	// as a loopback echo.
	if d := time.Until(due); d > r.slack {
		if r.timer == nil {
			r.timer = time.NewTimer(d)
		} else {
			r.timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return false
		case <-r.timer.C:
		}
	}
	return ctx.Err() == nil
}

// openEcho opens the echo socket of one family by cfg.Socket's rule.
func openEcho(open SocketFunc, v6 bool, mode string) (*sock, error) {
	proto, fam := unix.IPPROTO_ICMP, "IPv4"
	if v6 {
		proto, fam = unix.IPPROTO_ICMPV6, "IPv6"
	}
	var derr error
	if mode != "raw" {
		s, err := openBareSock(open, v6, unix.SOCK_DGRAM, proto)
		if err == nil {
			return s, nil
		}
		if mode == "dgram" || !isPermission(err) {
			if isPermission(err) {
				return nil, privilegeError("opening an unprivileged "+fam+" ICMP socket", err, true)
			}
			return nil, fmt.Errorf("opening an %s ICMP socket: %w", fam, err)
		}
		derr = err
	}
	s, err := openBareSock(open, v6, unix.SOCK_RAW, proto)
	if err != nil {
		if isPermission(err) {
			if derr != nil {
				err = fmt.Errorf("datagram socket: %v; raw socket: %w", derr, err)
			}
			return nil, privilegeError("opening an "+fam+" ICMP socket", err, true)
		}
		return nil, fmt.Errorf("opening a raw %s ICMP socket: %w", fam, err)
	}
	if v6 {
		err = s.filterICMP(icmp6EchoReply)
	} else {
		err = s.filterICMP(icmp4EchoReply)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("ICMP filter: %w", err)
	}
	return s, nil
}

func (r *sweep) runICMP(ctx context.Context) ([]PingResult, error) {
	r.proto = ICMP
	if _, err := rand.Read(r.nonce[:]); err != nil {
		return nil, err
	}
	r.id = binary.BigEndian.Uint16(r.nonce[6:])
	var socks [2]*sock
	var perFam [2]int
	for _, t := range r.targets {
		fam := 0
		if t.Addr.Is6() {
			fam = 1
		}
		perFam[fam]++
		if socks[fam] == nil {
			s, err := openEcho(r.cfg.OpenSocket, fam == 1, r.cfg.Socket)
			if err != nil {
				for _, o := range socks {
					if o != nil {
						o.Close()
					}
				}
				return nil, err
			}
			socks[fam] = s
		}
	}
	// The family with more targets is read by the sweep's own loop, between
	// its sends; the other one (if any) by a goroutine of its own.
	primary := 0
	if perFam[1] > perFam[0] {
		primary = 1
	}
	var wg sync.WaitGroup
	if o := socks[1-primary]; o != nil {
		wg.Add(1)
		go func() { defer wg.Done(); r.receive(o) }()
	}
	var closeOnce sync.Once
	closeAll := func() {
		closeOnce.Do(func() {
			for _, s := range socks {
				if s != nil {
					s.stopReaders()
				}
			}
			wg.Wait()
			for _, s := range socks {
				if s != nil {
					s.Close()
				}
			}
		})
	}
	defer closeAll()

	r.probes = make([]probeState, r.total())
	sendErr, err := r.loop(ctx, socks, primary)
	if err != nil {
		return nil, err
	}
	// The receivers must stop before the results are read.
	closeAll()
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() == nil {
		r.reap(time.Now().Add(time.Hour))
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

// reapEvery is how often, at most, the loop wakes only to declare probes
// lost: a sweep of unanswered targets would otherwise wake for each.
const reapEvery = 10 * time.Millisecond

// loop is the sweep's one I/O loop: every wake-up it reads all replies
// queued on the primary socket, declares overdue probes lost, sends every
// probe due (within r.slack) in one batch per socket, reads the replies
// those sends produced (on loopback the kernel answers inside the send) and
// waits for the next probe's slot, a reply or the next reap, whichever
// comes first. sendErr is the first send error; err a fatal one (privilege).
func (r *sweep) loop(ctx context.Context, socks [2]*sock, primary int) (sendErr, err error) {
	prim := socks[primary]
	T, total := len(r.targets), r.total()
	start := time.Now()
	due := func(i int) time.Time {
		return start.Add(time.Duration(i/T)*r.interval + time.Duration(i%T)*r.interval/time.Duration(T))
	}
	// Replies are at most the size of our requests (an IPv4 header on raw
	// sockets in front); a bigger one is another program's and is counted
	// as foreign from what fits.
	rb := newMmsgBuf(maxBatch/2, max(2048, 8+r.cfg.Size+64), oobSize)
	var sbs [2]*mmsgBuf
	for f, s := range socks {
		if s != nil {
			sbs[f] = newMmsgBuf(maxBatch, 8+r.cfg.Size, 0)
		}
	}
	payload := make([]byte, r.cfg.Size)
	copy(payload, r.nonce[:])
	// Cancelling ctx wakes a wait on either the socket or the timer.
	r.timer = time.NewTimer(time.Hour)
	defer r.timer.Stop()
	stop := context.AfterFunc(ctx, func() { _ = prim.ep.SetReadDeadline(time.Now()) })
	defer stop()

	next := 0 // the next probe to send
	var pauseUntil time.Time
	var idx [2][]int // probe numbers of a batch, per socket
	for {
		if err := r.readQueued(prim, rb); err != nil {
			return sendErr, nil
		}
		now := time.Now()
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
			idx[0], idx[1] = idx[0][:0], idx[1][:0]
			limit := now.Add(r.slack)
			first := next
			for next < total && !due(next).After(limit) && len(idx[0]) < maxBatch && len(idx[1]) < maxBatch {
				f := 0
				if r.targets[next%T].Addr.Is6() {
					f = 1
				}
				idx[f] = append(idx[f], next)
				next++
			}
			// Marked pending before the sends so that a reply read before
			// its send returns finds its probe; the whole batch at once, as
			// r.sent is a prefix of the table.
			r.mu.Lock()
			for i := first; i < next; i++ {
				r.probes[i] = probeState{sent: now, state: stPending}
			}
			r.sent = next
			r.mu.Unlock()
			for f := range socks {
				if len(idx[f]) == 0 {
					continue
				}
				serr, ferr := r.sendProbes(socks[f], sbs[f], idx[f], payload)
				if sendErr == nil {
					sendErr = serr
				}
				if ferr != nil {
					return sendErr, ferr
				}
			}
			// Loopback answers inside the send: read those replies now
			// rather than wake up for them.
			if err := r.readQueued(prim, rb); err != nil {
				return sendErr, nil
			}
			if len(idx[0]) == maxBatch || len(idx[1]) == maxBatch {
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
		if prim.stamps {
			// The kernel stamps replies, so they may queue for a while:
			// right after a reply woke the loop (readPause), and whenever
			// the loop wakes within readPause anyway (the next probe is due
			// soon). The loop then sleeps on its timer alone, which costs
			// the scheduler less than a wait on the socket, and a socket
			// that became readable meanwhile does not wake it again.
			if now.Before(pauseUntil) && (wake.IsZero() || pauseUntil.Before(wake)) {
				wake = pauseUntil
			}
			if !wake.IsZero() && wake.Sub(now) <= readPause {
				if !r.sleepUntil(ctx, pollDeadline(time.Now(), wake)) {
					return sendErr, nil
				}
				continue
			}
		}
		got, err := r.waitRead(ctx, prim, rb, pollDeadline(time.Now(), wake))
		if err != nil {
			return sendErr, nil
		}
		if got && prim.stamps && readPause > 0 {
			pauseUntil = time.Now().Add(readPause)
		}
	}
}

// pollDeadline is when to set a timer that should fire at t, seen at now,
// so that the runtime sleeps for it once: Go's poller sleeps in whole
// milliseconds, rounded down, and then sleeps again for the rest (a second
// wake-up for one timer). So a wait ends on its next whole millisecond
// instead, up to 1 ms late (as Go's timers are anyway); the 20 µs keep the
// rounded-down sleep from ending just short of it.
func pollDeadline(now, t time.Time) time.Time {
	d := t.Sub(now)
	if d <= 0 {
		return t
	}
	ms := (d + time.Millisecond - 1).Truncate(time.Millisecond)
	return now.Add(ms + 20*time.Microsecond)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepUntil waits until t; false when ctx ended first.
func (r *sweep) sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	r.timer.Reset(d)
	select {
	case <-ctx.Done():
		return false
	case <-r.timer.C:
		return true
	}
}

// waitRead waits until a reply is queued on s or until t (zero: no limit)
// and handles the replies read; s must have been emptied just before. got says whether any was; err is set when s
// was closed or failed, or ctx ended.
func (r *sweep) waitRead(ctx context.Context, s *sock, b *mmsgBuf, t time.Time) (got bool, err error) {
	if err := s.ep.SetReadDeadline(t); err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var n int
	var rerr error
	// The caller emptied the socket just before: wait before the first read.
	// A reply that came since has signalled the poller, which then returns at
	// once.
	first := true
	err = s.eprc.Read(func(uintptr) bool {
		if first {
			first = false
			return false
		}
		n, rerr = recvBatch(uintptr(s.fd), b)
		return rerr != unix.EAGAIN && rerr != unix.EINTR
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return false, ctx.Err()
	}
	if err != nil {
		return false, err
	}
	if rerr != nil {
		return false, rerr
	}
	r.handleBatch(s, b, n)
	return true, nil
}

// readQueued handles every reply queued on s without waiting; an error
// only when s is closed or failed.
func (r *sweep) readQueued(s *sock, b *mmsgBuf) error {
	soft := 0
	for {
		var n int
		var rerr error
		if err := s.control(func(fd int) error {
			n, rerr = recvBatch(uintptr(fd), b)
			return nil
		}); err != nil {
			return err
		}
		if rerr == unix.EINTR {
			continue
		}
		if rerr == unix.EAGAIN {
			return nil
		}
		if rerr != nil {
			// A pending socket error (an ICMP error the kernel reports
			// once, then clears) is no reason to stop reading replies.
			soft++
			if rerr == unix.EBADF || soft > 8 {
				return rerr
			}
			continue
		}
		r.handleBatch(s, b, n)
		if n < len(b.hdrs) {
			return nil
		}
	}
}

// handleBatch handles the n replies read into b.
func (r *sweep) handleBatch(s *sock, b *mmsgBuf, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range n {
		r.handleLocked(s, b.packet(i))
	}
}

// sendProbes sends the probes numbered idx (all of s's family, already
// marked pending) with batched sends. A probe's send time is placed within
// its call: a batch's packets leave one after another over the call's few
// microseconds. sendErr is the first send error; fatal a privilege error
// that ends the sweep.
func (r *sweep) sendProbes(s *sock, b *mmsgBuf, idx []int, payload []byte) (sendErr, fatal error) {
	T := len(r.targets)
	for k, i := range idx {
		t := r.targets[i%T]
		binary.BigEndian.PutUint32(payload[8:], uint32(i))
		n := putEcho(b.bufs[k], s.v6, r.id, uint16(i), payload)
		b.setDest(k, t.Addr, n)
	}
	for k := 0; k < len(idx); {
		n, before, after, err := s.sendBatch(b, k, len(idx))
		r.mu.Lock()
		span := after.Sub(before)
		for j := range n {
			p := &r.probes[idx[k+j]]
			if p.state == stPending {
				p.sent = before.Add(span * time.Duration(j) / time.Duration(n))
			}
		}
		k += n
		var failed int
		blocked := err != nil && isFirewall(err)
		if err != nil && k < len(idx) {
			failed = idx[k]
			res := &r.results[failed%T]
			switch {
			case blocked && res.Blocked == nil:
				res.Blocked = firewallError("sending ICMP echo", r.targets[failed%T].Addr, err)
			case !blocked && sendErr == nil:
				sendErr = fmt.Errorf("sending to %s: %w", r.targets[failed%T].Addr, err)
			}
			if p := &r.probes[failed]; p.state == stPending {
				p.sent = before
				p.state = stLost
				r.resolved++
				r.emit(failed, StatusLost, 0)
			}
			k++
		}
		r.mu.Unlock()
		if err != nil && isPermission(err) && !blocked {
			a := r.targets[failed%T].Addr
			if berr := broadcastSendError("sending ICMP echo", a, err); berr != err {
				return sendErr, berr
			}
			return sendErr, privilegeError("sending ICMP echo", err, true)
		}
		if err == nil && n == 0 {
			break // not expected of sendmmsg; never spin
		}
	}
	return sendErr, nil
}

func allZero(rs []PingResult) bool {
	for _, r := range rs {
		if r.Recv > 0 {
			return false
		}
	}
	return true
}

// readPause is how long a sweep lets replies queue after it emptied the
// socket, when the kernel stamps them (SO_TIMESTAMPNS): the RTTs stay exact,
// and a sweep of many targets wakes at most about 200 times a second for
// replies instead of once per reply. It is far below lostGrace, so no reply
// is declared lost for being read late.
const readPause = 5 * time.Millisecond

// receive reads the echo replies of a sweep's second socket (the family with
// fewer targets) until it is closed, pausing after each burst as the loop
// does.
func (r *sweep) receive(s *sock) {
	b := newMmsgBuf(maxBatch/2, max(2048, 8+r.cfg.Size+64), oobSize)
	for {
		if _, err := r.waitRead(context.Background(), s, b, time.Time{}); err != nil {
			return
		}
		if err := r.readQueued(s, b); err != nil {
			return
		}
		if s.stamps && readPause > 0 {
			time.Sleep(readPause)
		}
	}
}

// handle matches one echo reply to its probe by the run's nonce and the probe
// number in the payload (the kernel rewrites the ICMP id of datagram sockets).
func (r *sweep) handle(s *sock, p packet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handleLocked(s, p)
}

// handleLocked is handle with r.mu held.
func (r *sweep) handleLocked(s *sock, p packet) {
	payload, ok := echoReplyData(s.v6, !s.v6 && !s.dgram, p.data)
	if !ok {
		return
	}
	from := p.from
	if len(payload) < 12 || [8]byte(payload[:8]) != r.nonce {
		r.foreign(from)
		return
	}
	i := int(binary.BigEndian.Uint32(payload[8:]))
	if i >= r.sent || r.probes[i].state == stUnsent || r.targets[i%len(r.targets)].Addr != from {
		r.foreign(from)
		return
	}
	r.answer(i, p.at)
}

func (r *sweep) foreign(from netip.Addr) {
	if t, ok := r.byAddr[from]; ok {
		r.results[t].Foreign++
	}
}

// runTCP measures TCP connect time: the SYN → SYN-ACK round trip, no
// privilege needed. A refused connection (RST) is counted as lost and Refused.
func (r *sweep) runTCP(ctx context.Context) ([]PingResult, error) {
	r.proto = TCP
	r.probes = make([]probeState, r.total())
	var wg sync.WaitGroup
	start := time.Now()
	port := strconv.Itoa(r.cfg.TCPPort)
	for i := 0; i < r.total(); i++ {
		if !r.pace(ctx, start, i) {
			break
		}
		t := r.targets[i%len(r.targets)]
		r.mu.Lock()
		r.probes[i] = probeState{sent: time.Now(), state: stPending}
		r.sent = i + 1
		r.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: r.cfg.Timeout}
			network := "tcp4"
			if t.Addr.Is6() {
				network = "tcp6"
			}
			t0 := time.Now()
			c, err := d.DialContext(ctx, network, net.JoinHostPort(t.Addr.String(), port))
			el := time.Since(t0)
			r.mu.Lock()
			defer r.mu.Unlock()
			p := &r.probes[i]
			p.sent = t0
			switch {
			case err == nil && el > r.cfg.Timeout:
				// The dial timer fired late (a busy machine): still not in time.
				c.Close()
				p.state = stLate
				r.results[i%len(r.targets)].Late++
				r.resolved++
				r.emit(i, StatusLate, float64(el.Nanoseconds())/1e6)
			case err == nil:
				c.Close()
				p.state, p.rtt = stOK, float64(el.Nanoseconds())/1e6
				r.resolved++
				r.emit(i, StatusOK, p.rtt)
			case ctx.Err() != nil:
				p.state = stUnsent
			default:
				res := &r.results[i%len(r.targets)]
				if errors.Is(err, syscall.ECONNREFUSED) {
					res.Refused++
				}
				if isFirewall(err) && res.Blocked == nil {
					res.Blocked = firewallError("connecting", t.Addr, err)
				}
				p.state = stLost
				r.resolved++
				r.emit(i, StatusLost, 0)
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finish(), nil
}

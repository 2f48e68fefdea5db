package probe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
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
	// paceSlack is how early a probe may leave its slot on the schedule. It
	// matters only above ~330 probes/s: a sender that wakes for a probe sends
	// the ones due within paceSlack too, instead of sleeping for each.
	paceSlack = 3 * time.Millisecond
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
	return PingTargets(ctx, ts, cfg, onRecord)
}

// PingTargets is Ping for targets already resolved.
func PingTargets(ctx context.Context, ts []Target, cfg PingConfig, onRecord func(Record)) ([]PingResult, error) {
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
	// A probe may leave up to paceSlack early: at 1,000 packets/s the sender
	// then wakes for every fourth probe instead of every one (Go timers
	// overshoot by about 1 ms anyway); each wake-up costs a context switch
	// and a pass of the scheduler, about as much CPU as a loopback echo.
	if d := time.Until(due); d > paceSlack {
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

// drain waits until every sent probe is decided or its wait has ended.
func (r *sweep) drain(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		r.mu.Lock()
		r.reap(time.Now())
		done := r.resolved >= r.sent
		r.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// openEcho opens the echo socket of one family by cfg.Socket's rule.
func openEcho(open SocketFunc, v6 bool, mode string) (*sock, error) {
	proto, fam := unix.IPPROTO_ICMP, "IPv4"
	if v6 {
		proto, fam = unix.IPPROTO_ICMPV6, "IPv6"
	}
	var derr error
	if mode != "raw" {
		s, err := openSock(open, v6, unix.SOCK_DGRAM, proto)
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
	s, err := openSock(open, v6, unix.SOCK_RAW, proto)
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
	for _, t := range r.targets {
		fam := 0
		if t.Addr.Is6() {
			fam = 1
		}
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
	var wg sync.WaitGroup
	for _, s := range socks {
		if s != nil {
			wg.Add(1)
			go func() { defer wg.Done(); r.receive(s) }()
		}
	}
	var closeOnce sync.Once
	closeAll := func() {
		closeOnce.Do(func() {
			for _, s := range socks {
				if s != nil {
					s.Close()
				}
			}
			wg.Wait()
		})
	}
	defer closeAll()

	r.probes = make([]probeState, r.total())
	payload := make([]byte, r.cfg.Size)
	copy(payload, r.nonce[:])
	start := time.Now()
	var sendErr error
	for i := 0; i < r.total(); i++ {
		if !r.pace(ctx, start, i) {
			break
		}
		t := r.targets[i%len(r.targets)]
		s := socks[0]
		if t.Addr.Is6() {
			s = socks[1]
		}
		binary.BigEndian.PutUint32(payload[8:], uint32(i))
		msg := echoMessage(t.Addr.Is6(), r.id, uint16(i), payload)
		r.mu.Lock()
		r.reap(time.Now())
		// Marked pending before the send so that a reply read before
		// sendTo returns finds its probe.
		r.probes[i] = probeState{sent: time.Now(), state: stPending}
		r.sent = i + 1
		r.mu.Unlock()
		at, err := s.sendTo(msg, t.Addr, 0)
		r.mu.Lock()
		if r.probes[i].state == stPending {
			r.probes[i].sent = at
		}
		if err != nil {
			if sendErr == nil {
				sendErr = fmt.Errorf("sending to %s: %w", t.Addr, err)
			}
			if r.probes[i].state == stPending {
				r.probes[i].state = stLost
				r.resolved++
				r.emit(i, StatusLost, 0)
			}
		}
		r.mu.Unlock()
		if err != nil && isPermission(err) {
			if berr := broadcastSendError("sending ICMP echo", t.Addr, err); berr != err {
				return nil, berr
			}
			return nil, privilegeError("sending ICMP echo", err, true)
		}
	}
	r.drain(ctx)
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

func allZero(rs []PingResult) bool {
	for _, r := range rs {
		if r.Recv > 0 {
			return false
		}
	}
	return true
}

// readPause is how long the receiver lets replies queue after it emptied
// the socket, when the kernel stamps them (SO_TIMESTAMPNS): the RTTs stay
// exact, and a 1,000-target sweep wakes the receiver about 200 times a
// second instead of once per reply. It is far below lostGrace, so no reply
// is declared lost for being read late.
const readPause = 5 * time.Millisecond

// receive reads echo replies from s until it is closed.
func (r *sweep) receive(s *sock) {
	buf := make([]byte, 65536)
	oob := make([]byte, oobSize)
	for {
		p, err := s.recv(buf, oob)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return
		}
		r.handle(s, p)
		// Empty the queue without waiting, then pause.
		for {
			p, err = s.tryRecv(buf, oob)
			if err != nil {
				break
			}
			r.handle(s, p)
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, syscall.EINTR) {
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
	msg := p.data
	if !s.v6 && !s.dgram {
		var ok bool
		if msg, ok = ipv4Payload(msg); !ok {
			return
		}
	}
	e, ok := parseEchoReply(s.v6, msg)
	if !ok {
		return
	}
	from := p.from
	r.mu.Lock()
	defer r.mu.Unlock()
	payload := e.Data
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
				if errors.Is(err, syscall.ECONNREFUSED) {
					r.results[i%len(r.targets)].Refused++
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

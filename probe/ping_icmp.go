package probe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// icmpDriver sends a sweep's ICMP echo requests from one socket per address
// family (openEcho) with batched sends, and matches echo replies by the
// run's nonce and the probe number in the payload (the kernel rewrites the
// ICMP id of datagram sockets). The family with more targets is read by the
// sweep's own loop, between its sends; the other one (if any) by a
// goroutine of its own.
type icmpDriver struct {
	r     *sweep
	nonce [8]byte
	id    uint16
	socks [2]*sock
	prim  *sock
	rb    *mmsgBuf    // receive buffers of prim
	sbs   [2]*mmsgBuf // send buffers per family
	// Error-queue buffers per family for the transmit stamps (txstamp.go):
	// the sender's, and the readers' (the second family's reader is a
	// goroutine of its own).
	txs, txr [2]*mmsgBuf
	idx      [2][]int // probe numbers of a batch, per family
	payload  []byte
	timer    *time.Timer // the loop's sleep timer
	// pauseUntil is when the loop may wait on the socket again after a
	// reply woke it (readPause).
	pauseUntil time.Time
	stopCtx    func() bool // undoes the context.AfterFunc that wakes a wait
	wg         sync.WaitGroup
	closeOnce  sync.Once
}

// icmpSpec is ICMP: echo requests for ping, ICMP probes for trace
// (raw sockets, or unprivileged datagram sockets).
var icmpSpec = protocolSpec{name: ICMP, ping: &pingProtocol{open: openICMPDriver}, trace: icmpTrace{}}

// openICMPDriver opens the echo sockets sweep r needs, by cfg.Socket's rule.
func openICMPDriver(ctx context.Context, r *sweep) (pingDriver, error) {
	d := &icmpDriver{r: r}
	if _, err := rand.Read(d.nonce[:]); err != nil {
		return nil, err
	}
	d.id = binary.BigEndian.Uint16(d.nonce[6:])
	var perFam [2]int
	for _, t := range r.targets {
		fam := 0
		if t.Addr.Is6() {
			fam = 1
		}
		perFam[fam]++
		if d.socks[fam] == nil {
			s, err := openEcho(r.cfg.OpenSocket, fam == 1, r.cfg.Socket)
			if err == nil && r.cfg.TTL > 0 {
				if err = s.setTTL(r.cfg.TTL); err != nil {
					s.Close()
					err = fmt.Errorf("setting the TTL %d: %w", r.cfg.TTL, err)
				}
			}
			if err != nil {
				for _, o := range d.socks {
					if o != nil {
						o.Close()
					}
				}
				return nil, err
			}
			d.socks[fam] = s
		}
	}
	primary := 0
	if perFam[1] > perFam[0] {
		primary = 1
	}
	d.prim = d.socks[primary]
	// Replies are at most the size of our requests (an IPv4 header on raw
	// sockets in front); a bigger one is another program's and is counted
	// as foreign from what fits.
	d.rb = newMmsgBuf(maxBatch/2, max(2048, 8+r.cfg.Size+64), oobSize)
	for f, s := range d.socks {
		if s != nil {
			d.sbs[f] = newMmsgBuf(maxBatch, 8+r.cfg.Size, 0)
			if s.txStamps {
				// A looped-back request: a link and an IP header in front.
				d.txs[f] = newMmsgBuf(maxBatch/2, 8+r.cfg.Size+128, txOobSize)
				d.txr[f] = newMmsgBuf(maxBatch/2, 8+r.cfg.Size+128, txOobSize)
			}
		}
	}
	d.payload = make([]byte, r.cfg.Size)
	copy(d.payload, d.nonce[:])
	if len(r.cfg.Pattern) > 0 {
		for i := 12; i < len(d.payload); i += len(r.cfg.Pattern) {
			copy(d.payload[i:], r.cfg.Pattern)
		}
	}
	d.timer = time.NewTimer(time.Hour)
	// Cancelling ctx wakes a wait on either the socket or the timer.
	prim := d.prim
	d.stopCtx = context.AfterFunc(ctx, func() { _ = prim.ep.SetReadDeadline(time.Now()) })
	if o := d.socks[1-primary]; o != nil {
		d.wg.Add(1)
		go func() { defer d.wg.Done(); d.receive(o) }()
	}
	return d, nil
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
			s.txStamps = txStampsOn(s.fd)
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
	s.txStamps = txStampsOn(s.fd)
	return s, nil
}

func (d *icmpDriver) close() {
	d.closeOnce.Do(func() {
		d.stopCtx()
		d.timer.Stop()
		for _, s := range d.socks {
			if s != nil {
				s.stopReaders()
			}
		}
		d.wg.Wait()
		for _, s := range d.socks {
			if s != nil {
				s.Close()
			}
		}
	})
}

func (d *icmpDriver) send(idx []int) (sendErr, fatal error) {
	T := len(d.r.targets)
	d.idx[0], d.idx[1] = d.idx[0][:0], d.idx[1][:0]
	for _, i := range idx {
		f := 0
		if d.r.targets[i%T].Addr.Is6() {
			f = 1
		}
		d.idx[f] = append(d.idx[f], i)
	}
	for f, s := range d.socks {
		if len(d.idx[f]) == 0 {
			continue
		}
		serr, ferr := d.sendProbes(s, d.sbs[f], d.txs[f], d.idx[f])
		if sendErr == nil {
			sendErr = serr
		}
		if ferr != nil {
			return sendErr, ferr
		}
	}
	return sendErr, nil
}

func (d *icmpDriver) readQueued() error { return d.readFrom(d.prim, d.rb) }

// wait waits on the primary socket until a reply or t. When the kernel
// stamps replies, so they may queue for a while: right after a reply woke
// the loop (readPause), and whenever the loop wakes within readPause anyway
// (the next probe is due soon), it sleeps on its timer alone, which costs
// the scheduler less than a wait on the socket, and a socket that became
// readable meanwhile does not wake it again.
func (d *icmpDriver) wait(ctx context.Context, t time.Time) error {
	now := time.Now()
	if d.prim.stamps {
		if now.Before(d.pauseUntil) && (t.IsZero() || d.pauseUntil.Before(t)) {
			t = d.pauseUntil
		}
		if !t.IsZero() && t.Sub(now) <= readPause {
			if !d.sleepUntil(ctx, pollDeadline(time.Now(), t)) {
				return ctx.Err()
			}
			return nil
		}
	}
	got, err := d.waitRead(ctx, d.prim, d.rb, pollDeadline(time.Now(), t))
	if err != nil {
		return err
	}
	if got && d.prim.stamps && readPause > 0 {
		d.pauseUntil = time.Now().Add(readPause)
	}
	return nil
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

// sleepUntil waits until t; false when ctx ended first.
func (d *icmpDriver) sleepUntil(ctx context.Context, t time.Time) bool {
	w := time.Until(t)
	if w <= 0 {
		return ctx.Err() == nil
	}
	d.timer.Reset(w)
	select {
	case <-ctx.Done():
		return false
	case <-d.timer.C:
		return true
	}
}

// waitRead waits until a reply is queued on s or until t (zero: no limit)
// and handles the replies read. got says whether any was; err is set when s
// was closed or failed, or ctx ended.
func (d *icmpDriver) waitRead(ctx context.Context, s *sock, b *mmsgBuf, t time.Time) (got bool, err error) {
	if err := s.ep.SetReadDeadline(t); err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var n int
	var rerr error
	// Read before waiting, although the caller has just emptied the socket:
	// RawConn.Read clears the poller's readiness before its first call, so a
	// reply that came between the caller's last read and this call would
	// wake nobody, and the last reply of a sweep then waited unread until
	// its probe was declared lost (seen under load on the second family's
	// socket, which waits with no deadline).
	err = s.eprc.Read(func(uintptr) bool {
		n, rerr = recvBatch(uintptr(s.fd), b)
		if rerr == unix.EAGAIN {
			// A transmit stamp wakes the wait too (the error queue is
			// readable): take it, or the wait would wake again at once.
			d.takeStamps(s, d.txr[fam(s)])
		}
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
	d.handleBatch(s, b, n)
	return true, nil
}

// readFrom handles every reply queued on s without waiting; an error only
// when s is closed or failed.
func (d *icmpDriver) readFrom(s *sock, b *mmsgBuf) error {
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
			d.takeStamps(s, d.txr[fam(s)])
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
		d.handleBatch(s, b, n)
		if n < len(b.hdrs) {
			return nil
		}
	}
}

// handleBatch handles the n replies read into b.
func (d *icmpDriver) handleBatch(s *sock, b *mmsgBuf, n int) {
	d.r.mu.Lock()
	defer d.r.mu.Unlock()
	for i := range n {
		d.handleLocked(s, b.packet(i))
	}
}

// sendProbes sends the probes numbered idx (all of s's family, already
// marked pending) with batched sends. A probe's send time is the clock
// read just before its call, never later than the real send, then the
// kernel's transmit stamp where it gives one (takeStamps, txstamp.go).
// sendErr is the first send error; fatal a privilege error that ends the
// sweep. tx is the error-queue buffer of s (nil: no transmit stamps).
func (d *icmpDriver) sendProbes(s *sock, b, tx *mmsgBuf, idx []int) (sendErr, fatal error) {
	r := d.r
	T := len(r.targets)
	for k, i := range idx {
		t := r.targets[i%T]
		binary.BigEndian.PutUint32(d.payload[8:], uint32(i))
		n := putEcho(b.bufs[k], s.v6, d.id, uint16(i), d.payload)
		b.setDest(k, t.Addr, n)
	}
	// On loopback the replies are queued inside the call; they are read
	// after it, when the stamps are in place.
	defer d.takeStamps(s, tx)
	for k := 0; k < len(idx); {
		n, before, _, err := sendMmsg(s, b, k, len(idx))
		r.mu.Lock()
		// Not spread over the call (issue 35): a request that left early
		// in a slow call then had a send time later than its reply's
		// stamp.
		for j := range n {
			if p := &r.probes[idx[k+j]]; p.state == stPending {
				p.sent = before
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
			r.failLocked(failed, before)
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

// sendMmsg is (*sock).sendBatch; a test slows it down.
var sendMmsg = (*sock).sendBatch

// takeStamps sets the send time of every pending probe whose transmit
// stamp is queued on s (tx is s's error-queue buffer for the caller; nil:
// s gives none).
func (d *icmpDriver) takeStamps(s *sock, tx *mmsgBuf) {
	if tx == nil {
		return
	}
	readTxStamps(s.fd, tx, func(data []byte, at time.Time) {
		i, ok := echoProbeNumber(data, d.nonce)
		if !ok {
			return
		}
		d.r.mu.Lock()
		if i >= 0 && i < d.r.sent && d.r.probes[i].state == stPending {
			d.r.probes[i].sent = at
		}
		d.r.mu.Unlock()
	})
}

// fam is s's index in icmpDriver's per-family arrays.
func fam(s *sock) int {
	if s.v6 {
		return 1
	}
	return 0
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
func (d *icmpDriver) receive(s *sock) {
	b := newMmsgBuf(maxBatch/2, max(2048, 8+d.r.cfg.Size+64), oobSize)
	for {
		if _, err := d.waitRead(context.Background(), s, b, time.Time{}); err != nil {
			return
		}
		if err := d.readFrom(s, b); err != nil {
			return
		}
		if s.stamps && readPause > 0 {
			time.Sleep(readPause)
		}
	}
}

// handleLocked matches one echo reply to its probe by the run's nonce and
// the probe number in the payload; r.mu is held.
func (d *icmpDriver) handleLocked(s *sock, p packet) {
	payload, ok := echoReplyData(s.v6, !s.v6 && !s.dgram, p.data)
	if !ok {
		return
	}
	if len(payload) < 12 || [8]byte(payload[:8]) != d.nonce {
		d.r.foreignLocked(p.from)
		return
	}
	d.r.replyLocked(int(binary.BigEndian.Uint32(payload[8:])), p.from, p.at)
}

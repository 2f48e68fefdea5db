package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// slotListener serves at most max connections at once, and at most perIP
// from one client address, as netutil.LimitListener does, but it never
// leaves a newcomer queued in the kernel's backlog behind connections that
// do nothing: every connection is accepted at once; one that finds the
// slots taken reclaims one (see victim), and only when every slot serves a
// request that is making progress does it wait, in a queue that gives the
// next free slot to the client holding the fewest (a scraper before a
// flood). A client over its own limit that holds nothing reclaimable is
// refused at once; the others are not touched.
//
// Issue 37: 500 idle or silent connections queued a new scrape for 3 s
// behind them (each took a slot for 0.25 s in turn), and 64 clients that
// pipelined requests without reading held every slot for the 30 s write
// timeout. Now a client that does not read is cut off after stall without
// progress (slotConn.Write), and one whose write is stalled is reclaimed at
// once when a newcomer needs the slot.
type slotListener struct {
	net.Listener
	max, perIP int
	grace      time.Duration // how long a connection may sit without a request, or stall, before it is reclaimable
	stall      time.Duration // a write that makes no progress for this long fails
	maxWait    time.Duration // a connection waits this long for a slot at most
	sndbuf     int           // the socket send buffer of each connection (0: the kernel's)

	ready chan *slotConn // admitted, for Accept
	done  chan struct{}  // closed when the listener fails
	err   error          // why, set before done closes

	mu      sync.Mutex
	conns   map[*slotConn]struct{}
	byIP    map[string]int // slots held, by client
	waiting []*slotConn    // accepted, waiting for a slot, oldest first
	ticking bool           // a timer re-checks the waiting ones
}

// slotConn is a served connection and what the HTTP server last said of it.
type slotConn struct {
	net.Conn
	l     *slotListener
	ip    string
	state http.ConnState // l.mu
	since time.Time      // l.mu: when it entered state (when it came, while waiting)
	gone  bool           // l.mu: its slot is given back

	inHandler atomic.Bool  // a request is being answered (set by the handler wrapper)
	writing   atomic.Int64 // UnixNano when the pending Write began, 0 when none
	deadline  atomic.Int64 // the HTTP server's write deadline (UnixNano, 0: none)
}

func newSlotListener(ln net.Listener, max, perIP int, grace, stall, maxWait time.Duration, sndbuf int) *slotListener {
	l := &slotListener{Listener: ln, max: max, perIP: perIP, grace: grace, stall: stall, maxWait: maxWait, sndbuf: sndbuf,
		ready: make(chan *slotConn, max), done: make(chan struct{}),
		conns: map[*slotConn]struct{}{}, byIP: map[string]int{}}
	go l.acceptLoop()
	return l
}

// Accept returns the next connection given a slot.
func (l *slotListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting and closes the connections still waiting.
func (l *slotListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	for _, c := range l.waiting {
		_ = c.Conn.Close()
	}
	l.waiting = nil
	l.mu.Unlock()
	return err
}

// acceptLoop takes every connection from the kernel as it comes.
func (l *slotListener) acceptLoop() {
	var pause time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.err = err
				close(l.done)
				return
			}
			// Out of descriptors (EMFILE) or a connection aborted in the
			// backlog: wait and go on, as http.Server does, rather than
			// stop serving.
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			time.Sleep(pause)
			continue
		}
		pause = 0
		l.offer(c)
	}
}

// offer finds c a slot, queues it, or refuses it (its client is over
// perIP with nothing of its own to reclaim).
func (l *slotListener) offer(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok && l.sndbuf > 0 {
		// Autotuned, a socket buffers some 3 MB for a client that does
		// not read: memory and copying the server spends on it.
		_ = tc.SetWriteBuffer(l.sndbuf)
	}
	now := time.Now()
	sc := &slotConn{Conn: c, l: l, ip: hostOf(c.RemoteAddr()), state: http.StateNew, since: now}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP > 0 && l.byIP[sc.ip]+l.waitingOf(sc.ip) >= l.perIP {
		v := l.victim(now, sc.ip, true, nil)
		if v == nil {
			_ = c.Close()
			return
		}
		l.evict(v)
	}
	if len(l.conns) < l.max && len(l.waiting) == 0 {
		l.admit(sc)
		return
	}
	if len(l.waiting) >= l.max {
		// As many waiting as there are slots, every one of them busy: one
		// of the client holding the most (slots and waiting) goes.
		worst, most := 0, -1
		for i, w := range l.waiting {
			if n := l.byIP[w.ip] + l.waitingOf(w.ip); n > most {
				worst, most = i, n
			}
		}
		_ = l.waiting[worst].Conn.Close()
		l.waiting = slices.Delete(l.waiting, worst, worst+1)
	}
	l.waiting = append(l.waiting, sc)
	l.serveWaiting(now)
}

// waitingOf counts ip's queued connections; l.mu is held.
func (l *slotListener) waitingOf(ip string) int {
	n := 0
	for _, c := range l.waiting {
		if c.ip == ip {
			n++
		}
	}
	return n
}

// admit gives c a slot and hands it to Accept; l.mu is held.
func (l *slotListener) admit(c *slotConn) {
	c.since = time.Now()
	l.conns[c] = struct{}{}
	l.byIP[c.ip]++
	select {
	case l.ready <- c:
	default:
		// Slots given back before Accept took their connection left
		// ready full: hand this one over without holding l.mu.
		go func() {
			select {
			case l.ready <- c:
			case <-l.done:
				_ = c.Conn.Close()
			}
		}()
	}
}

// serveWaiting gives the free slots, and those it may reclaim, to the
// waiting connections: first to the one whose client holds the fewest
// slots, the oldest among equals. Those waiting past maxWait are dropped.
// What still waits is looked at again every grace. l.mu is held.
func (l *slotListener) serveWaiting(now time.Time) {
	kept := l.waiting[:0]
	for _, c := range l.waiting {
		if now.Sub(c.since) >= l.maxWait {
			_ = c.Conn.Close()
			continue
		}
		kept = append(kept, c)
	}
	clear(l.waiting[len(kept):])
	l.waiting = kept
	for len(l.waiting) > 0 {
		best := 0
		for i, c := range l.waiting {
			if l.byIP[c.ip] < l.byIP[l.waiting[best].ip] {
				best = i
			}
		}
		w := l.waiting[best]
		if len(l.conns) >= l.max {
			// Only from its own client, from one holding more slots than
			// its client, or an idle one of a client holding as many: a
			// flood spread over many addresses cannot take a scraper's one
			// connection between two scrapes.
			v := l.victim(now, "", false, func(c *slotConn) bool {
				n, m := l.byIP[c.ip], l.byIP[w.ip]
				return c.ip == w.ip || n > m || n == m && c.state == http.StateIdle
			})
			if v == nil {
				break
			}
			l.evict(v)
		}
		l.waiting = slices.Delete(l.waiting, best, best+1)
		l.admit(w)
	}
	if len(l.waiting) > 0 && !l.ticking {
		l.ticking = true
		time.AfterFunc(l.grace, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.ticking = false
			l.serveWaiting(time.Now())
		})
	}
}

// victim is the connection to reclaim for a newcomer (of client ip, or of
// anyone when ip is "", of those allow allows), nil when none may be;
// l.mu is held. Reclaimable
// are: a keep-alive connection between requests; one whose response has
// not moved for grace (its client does not read); one that has not sent a
// whole request header for grace; and, for a newcomer over its client's
// limit only (fresh), one of its own that has sent nothing yet (a flood of
// new connections churns its own; a waiting connection never takes the
// slot of one just admitted). Of those it takes one of the client that
// holds the most slots (a flood loses its own connections first, a
// scraper's single one last), the most idle kind, the oldest.
func (l *slotListener) victim(now time.Time, ip string, fresh bool, allow func(*slotConn) bool) *slotConn {
	var best *slotConn
	var bestRank, bestN int
	for c := range l.conns {
		if ip != "" && c.ip != ip || allow != nil && !allow(c) {
			continue
		}
		r := c.reclaimRank(now, l.grace, fresh)
		if r < 0 {
			continue
		}
		n := l.byIP[c.ip]
		if best == nil || n > bestN || n == bestN && (r < bestRank || r == bestRank && c.since.Before(best.since)) {
			best, bestRank, bestN = c, r, n
		}
	}
	return best
}

// reclaimRank orders what may be reclaimed, lowest first: idle, stalled
// writer, silent past grace, slow header past grace, then (with fresh) any
// connection without a request yet; -1 when c is answering a request that
// moves. l.mu is held.
func (c *slotConn) reclaimRank(now time.Time, grace time.Duration, fresh bool) int {
	if w := c.writing.Load(); w != 0 && now.Sub(time.Unix(0, w)) >= grace {
		return 1
	}
	old := now.Sub(c.since) >= grace
	switch {
	case c.state == http.StateIdle:
		return 0
	case c.state == http.StateNew && old:
		return 2
	case c.state == http.StateActive && !c.inHandler.Load() && old:
		return 3
	case c.state == http.StateNew && fresh:
		return 4
	}
	return -1
}

// evict closes v and gives its slot back; l.mu is held.
func (l *slotListener) evict(v *slotConn) {
	l.remove(v)
	// Closing a socket does not block; the server's goroutine on it ends
	// with an error from its read or write.
	_ = v.Conn.Close()
}

// remove gives c's slot back (once); l.mu is held.
func (l *slotListener) remove(c *slotConn) {
	if c.gone {
		return
	}
	c.gone = true
	delete(l.conns, c)
	if l.byIP[c.ip]--; l.byIP[c.ip] <= 0 {
		delete(l.byIP, c.ip)
	}
}

// release gives c's slot back, to a waiting connection if there is one;
// l.mu is held.
func (l *slotListener) release(c *slotConn) {
	l.remove(c)
	if len(l.waiting) > 0 {
		l.serveWaiting(time.Now())
	}
}

// connState is the http.Server's ConnState hook.
func (l *slotListener) connState(c net.Conn, st http.ConnState) {
	sc := slotConnOf(c)
	if sc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		l.release(sc)
		return
	}
	sc.state, sc.since = st, time.Now()
	if st == http.StateIdle && len(l.waiting) > 0 {
		l.serveWaiting(time.Now()) // a waiting newcomer may reclaim it now
	}
}

// slotConnOf is the slotConn under c (a TLS connection wraps it), or nil.
func slotConnOf(c net.Conn) *slotConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, _ := c.(*slotConn)
	return sc
}

type slotConnKey struct{}

// connContext is the http.Server's ConnContext hook: the handler wrapper
// finds the connection there.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if sc := slotConnOf(c); sc != nil {
		return context.WithValue(ctx, slotConnKey{}, sc)
	}
	return ctx
}

// markHandling wraps h so that a connection answering a request is not
// taken for one that is still sending its header.
func markHandling(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sc, ok := r.Context().Value(slotConnKey{}).(*slotConn); ok {
			sc.inHandler.Store(true)
			defer sc.inHandler.Store(false)
		}
		h.ServeHTTP(w, r)
	})
}

// Close closes the connection and frees its slot.
func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
	return err
}

// SetDeadline records the server's write deadline and sets both.
func (c *slotConn) SetDeadline(t time.Time) error {
	c.deadline.Store(unixNano(t))
	return c.Conn.SetDeadline(t)
}

// SetWriteDeadline records the server's write deadline (Write keeps to it).
func (c *slotConn) SetWriteDeadline(t time.Time) error {
	c.deadline.Store(unixNano(t))
	return c.Conn.SetWriteDeadline(t)
}

// Write writes p, failing when the client takes none of it for stall (or
// at the server's own write deadline): a client that reads slowly but
// steadily gets its response, one that does not read gives its slot back
// within stall instead of the whole write timeout.
func (c *slotConn) Write(p []byte) (int, error) {
	defer c.writing.Store(0)
	n := 0
	for n < len(p) {
		// In chunks, so that writing says when the client last took some.
		chunk := p[n:min(len(p), n+writeChunk)]
		now := time.Now()
		c.writing.Store(now.UnixNano())
		dl, server := now.Add(c.l.stall), false
		if d := c.deadline.Load(); d != 0 && d <= dl.UnixNano() {
			dl, server = time.Unix(0, d), true
		}
		if err := c.Conn.SetWriteDeadline(dl); err != nil {
			return n, err
		}
		m, err := c.Conn.Write(chunk)
		n += m
		if err != nil && (server || m == 0 || !errors.Is(err, os.ErrDeadlineExceeded)) {
			return n, err
		}
		// A timeout after some progress: the client reads, slowly.
	}
	return n, nil
}

// writeChunk is what a client must take within a stall to keep its
// connection when a newcomer needs the slot (16 KiB per 0.25 s: 64 KiB/s).
const writeChunk = 16 << 10

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// hostOf is the client of a connection: its IPv4 address, or the /64 of
// its IPv6 address (one host commonly holds a whole /64).
func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		if t.IP.To4() == nil && len(t.IP) == net.IPv6len {
			return t.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
		}
		return t.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

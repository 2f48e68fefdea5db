package bw

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ServerConfig describes a --listen server.
type ServerConfig struct {
	// Addr is [host]:port to listen on; an empty host is 127.0.0.1 (a
	// throughput server reachable from outside must be asked for).
	Addr string
	// Network is "tcp", "tcp4" or "tcp6".
	Network string
	// Interval is the server's own reporting interval; 0 = 1 s.
	Interval time.Duration
	// Percentile computes the results' p5, p50 and p95 (as Config's); nil
	// leaves them null.
	Percentile Percentile
	// OnResult receives every test's outcome in the client's view (the
	// direction names what the client asked for). err is non-nil when the
	// test failed or was cut short; res then covers what ran, if anything.
	OnResult func(res *Result, err error)
	// OnStart, when set, is told of each test as it starts.
	OnStart func(client string, p TestParams)
	// IdleTimeout ends a running test in which no data moved, in either
	// direction, for this long; 0 = DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxDuration is the longest test the server runs: a client asking
	// for more (time + omit) is refused, and a byte- or block-limited test
	// is cut there; 0 = DefaultMaxDuration.
	MaxDuration time.Duration
	// CookieWait is how long a new connection has to send its cookie, and
	// then its parameters; 0 = DefaultCookieWait. Until its cookie came a
	// connection holds nothing: other clients' tests start meanwhile.
	CookieWait time.Duration
}

// DefaultCookieWait: an iperf3 client sends its cookie as soon as it
// connects and its parameters as soon as asked, so a few seconds cover any
// line; a connection silent for longer is a scan or an attack (issue 37:
// one silent connection every 10 s denied every test).
const DefaultCookieWait = 5 * time.Second

// maxWaitingCookies bounds the connections whose cookie the server waits
// for; a newcomer beyond it closes the oldest of them, so a flood of
// silent connections cannot keep a real client (whose cookie comes within
// a round trip) out.
const maxWaitingCookies = 64

// DefaultIdleTimeout ends a test whose data stopped: a client that asked
// for an hour and sends nothing holds the server this long, not the hour.
const DefaultIdleTimeout = 30 * time.Second

// DefaultMaxDuration is the longest test a server runs unless told
// otherwise (iperf3 clients may ask for up to 24 h).
const DefaultMaxDuration = 10 * time.Minute

// serverBufferBudget bounds the bytes the server allocates for the blocks
// of one test's streams, whatever the client asks for (128 streams each
// way with 1 MiB blocks would take 256 MiB).
const serverBufferBudget = 64 << 20

// maxBlock is the largest TCP block a client may ask for: iperf3's own
// client refuses more than 1 MiB.
const maxBlock = 1 << 20

// maxPendingStreams bounds the data connections whose cookie the server
// is still waiting for during one test's setup.
const maxPendingStreams = 64

// TestParams is what a client asked for.
type TestParams struct {
	Protocol  string
	Direction string
	Streams   int
	Duration  time.Duration
	Omit      time.Duration
	Bitrate   float64 // bits per second per stream; 0 = unlimited
	Length    int
	Version   string // the client's client_version quoted and cut (PeerText); empty when it sent none
}

// Server answers iperf3 clients (stock iperf3 -c, or linecheck bw), one
// test at a time as iperf3 does: a client that comes while a test runs is
// told ACCESS_DENIED.
type Server struct {
	cfg ServerConfig
	ln  *net.TCPListener

	mu      sync.Mutex
	busy    bool
	setup   *streamSetup   // non-nil while a TCP test is connecting its streams
	waiting []*net.TCPConn // connections whose cookie has not come yet, oldest first
	wg      sync.WaitGroup

	resultMu sync.Mutex // OnResult is called by one goroutine at a time
}

// streamSetup is a test connecting its TCP data streams: each newcomer's
// cookie is read on its own goroutine, so a stranger that sends a wrong
// cookie, or none, neither delays nor displaces the client's streams.
type streamSetup struct {
	cookie  [cookieLen]byte
	ch      chan *net.TCPConn // connections that presented the cookie
	done    chan struct{}     // closed when the setup ends
	pending atomic.Int32
}

// admit reads a data connection's cookie and hands it to the test when it
// matches; anything else is told ACCESS_DENIED, as iperf3 does.
func (su *streamSetup) admit(c *net.TCPConn) {
	_ = c.SetReadDeadline(time.Now().Add(setupWait))
	var got [cookieLen]byte
	if _, err := io.ReadFull(c, got[:]); err != nil || got != su.cookie {
		_, _ = c.Write([]byte{denied})
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	select {
	case su.ch <- c:
	case <-su.done:
		_ = c.Close()
	}
}

// Listen opens the server's TCP port (UDP streams use the same port number
// and open it per test).
func Listen(cfg ServerConfig) (*Server, error) {
	if cfg.Network == "" {
		cfg.Network = "tcp"
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxDuration == 0 {
		cfg.MaxDuration = DefaultMaxDuration
	}
	if cfg.CookieWait == 0 {
		cfg.CookieWait = DefaultCookieWait
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w (want [ADDR:]PORT)", cfg.Addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen(cfg.Network, net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, ln: ln.(*net.TCPListener)}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// Serve answers clients until ctx ends, then closes the port and waits for
// the test in progress to stop.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = s.ln.Close() })
	defer stop()
	for {
		c, err := s.ln.AcceptTCP()
		if err != nil {
			if ctx.Err() != nil {
				s.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.wg.Wait()
			return err
		}
		s.mu.Lock()
		switch {
		case s.setup != nil:
			su := s.setup
			s.mu.Unlock()
			if su.pending.Add(1) > maxPendingStreams {
				su.pending.Add(-1)
				_, _ = c.Write([]byte{denied})
				_ = c.Close()
				continue
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer su.pending.Add(-1)
				su.admit(c)
			}()
		case s.busy:
			s.mu.Unlock()
			// As iperf3: never read from a newcomer while a test runs
			// (it could block the test); say busy and hang up.
			_, _ = c.Write([]byte{denied})
			_ = c.Close()
		default:
			// Not busy yet: the server is taken when a cookie comes, not
			// when a connection does, so a connection that never speaks
			// blocks no one.
			s.waiting = append(s.waiting, c)
			if len(s.waiting) > maxWaitingCookies {
				_ = s.waiting[0].Close()
				s.waiting = s.waiting[1:]
			}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.control(ctx, c)
			}()
		}
	}
}

// control waits for a new connection's cookie and then, if no other
// client's test took the server meanwhile, runs its test.
func (s *Server) control(ctx context.Context, c *net.TCPConn) {
	client := c.RemoteAddr().String()
	cookie, err := s.readCookie(ctx, c)
	s.mu.Lock()
	for i, w := range s.waiting {
		if w == c {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	if err != nil {
		s.mu.Unlock()
		_ = c.Close()
		s.report(nil, fmt.Errorf("%s: %w: %w (not an iperf3 client?)", client, ErrNoClient, err))
		return
	}
	if s.busy || s.setup != nil {
		s.mu.Unlock()
		// Another client's cookie came first.
		_, _ = c.Write([]byte{denied})
		_ = c.Close()
		return
	}
	s.busy = true
	s.mu.Unlock()
	res, err := s.session(ctx, c, cookie)
	s.mu.Lock()
	s.busy, s.setup = false, nil
	s.mu.Unlock()
	if res != nil || err != nil {
		s.report(res, err)
	}
}

// report hands a test's outcome to OnResult, one at a time.
func (s *Server) report(res *Result, err error) {
	if s.cfg.OnResult == nil {
		return
	}
	s.resultMu.Lock()
	defer s.resultMu.Unlock()
	s.cfg.OnResult(res, err)
}

// readCookie reads a control connection's cookie within CookieWait.
func (s *Server) readCookie(ctx context.Context, c *net.TCPConn) ([cookieLen]byte, error) {
	var cookie [cookieLen]byte
	stop := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = c.SetReadDeadline(time.Now().Add(s.cfg.CookieWait))
	n, err := io.ReadFull(c, cookie[:])
	var ne net.Error
	switch {
	case err == nil:
		return cookie, nil
	case ctx.Err() != nil:
		return cookie, fmt.Errorf("the server was stopped")
	case errors.As(err, &ne) && ne.Timeout():
		return cookie, fmt.Errorf("%d of the cookie's %d bytes within %v", n, cookieLen, s.cfg.CookieWait)
	case errors.Is(err, net.ErrClosed):
		return cookie, fmt.Errorf("closed to make room: more than %d connections were waiting for their cookie", maxWaitingCookies)
	}
	return cookie, err
}

// setupWait bounds each step of a client's setup.
const setupWait = 10 * time.Second

// serverSession is one client's test on the server, from its cookie to
// the exchange of results. session runs its states in order: parameters,
// stream setup, the test, the end.
type serverSession struct {
	s      *Server
	ctrl   *net.TCPConn
	client string
	p      params
	tp     TestParams
	udp    *net.UDPConn // the test's UDP socket; nil for TCP

	streams  []*stream
	upstream []bool // upstream[i]: stream i carries client→server data

	// stop closes when the client speaks on the control connection or
	// hangs up; endState and endErr say which.
	stop     chan struct{}
	endState int8
	endErr   error
}

func (s *Server) session(ctx context.Context, ctrl *net.TCPConn, cookie [cookieLen]byte) (*Result, error) {
	defer ctrl.Close()
	ss := &serverSession{s: s, ctrl: ctrl, client: ctrl.RemoteAddr().String()}
	stopCtx := context.AfterFunc(ctx, func() { _ = ctrl.SetDeadline(time.Unix(1, 0)) })
	defer stopCtx()
	// The server is taken from here: the parameters must come as promptly
	// as the cookie did.
	_ = ctrl.SetDeadline(time.Now().Add(s.cfg.CookieWait))
	if err := ss.exchangeParams(); err != nil {
		return nil, err
	}
	if s.cfg.OnStart != nil {
		s.cfg.OnStart(ss.client, ss.tp)
	}
	if ss.p.UDP {
		if err := ss.openUDP(); err != nil {
			return nil, err
		}
		defer ss.udp.Close()
	}
	defer func() {
		for _, st := range ss.streams {
			st.close()
		}
	}()
	if err := ss.setupStreams(cookie); err != nil {
		return nil, err
	}
	m, capped, err := ss.runTest()
	if err != nil {
		return nil, err
	}
	return ss.end(ctx, m, capped)
}

// exchangeParams reads the client's test parameters and refuses what the
// server will not run.
func (ss *serverSession) exchangeParams() error {
	if _, err := ss.ctrl.Write([]byte{byte(stParamExchange)}); err != nil {
		return fmt.Errorf("%s: %w", ss.client, err)
	}
	if err := readJSON(ss.ctrl, &ss.p); err != nil {
		return fmt.Errorf("%s: reading the test parameters: %w", ss.client, err)
	}
	tp, err := checkParams(ss.p, ss.s.cfg.MaxDuration)
	if err != nil {
		// A stock client prints "the server has terminated" for this.
		_, _ = ss.ctrl.Write([]byte{byte(stServerTerm)})
		return fmt.Errorf("%s: refused: %w", ss.client, err)
	}
	ss.tp = tp
	return nil
}

// openUDP opens the test's UDP socket on the server's port number.
func (ss *serverSession) openUDP() error {
	la := ss.s.Addr()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: la.IP, Port: la.Port, Zone: la.Zone})
	if err != nil {
		_, _ = ss.ctrl.Write([]byte{byte(stServerTerm)})
		return fmt.Errorf("%s: opening UDP port %d: %w", ss.client, la.Port, err)
	}
	_ = udp.SetReadBuffer(4 << 20)
	_ = udp.SetWriteBuffer(4 << 20)
	ss.udp = udp
	return nil
}

// watchControl starts reading the control connection for the client's
// end of the test (TEST_END, CLIENT_TERMINATE, or a close).
func (ss *serverSession) watchControl() {
	ss.stop = make(chan struct{})
	go func() {
		var b [1]byte
		_, ss.endErr = io.ReadFull(ss.ctrl, b[:])
		ss.endState = int8(b[0])
		close(ss.stop)
	}()
}

// ended says how the client ended the test; call it after stop closed.
func (ss *serverSession) ended() string {
	if ss.endErr != nil {
		return "closed the control connection"
	}
	return "sent " + stateName(ss.endState)
}

// setupStreams asks the client for its data streams and waits until all
// of them connected (TCP: presented the cookie; UDP: sent a greeting).
func (ss *serverSession) setupStreams(cookie [cookieLen]byte) error {
	s, p := ss.s, ss.p
	n := p.Parallel
	if p.Bidir {
		n *= 2
	}
	su := &streamSetup{cookie: cookie, ch: make(chan *net.TCPConn), done: make(chan struct{})}
	defer func() {
		s.mu.Lock()
		if s.setup == su {
			s.setup = nil
		}
		s.mu.Unlock()
		select {
		case <-su.done:
		default:
			close(su.done)
		}
	}()
	if !p.UDP {
		s.mu.Lock()
		s.setup = su
		s.mu.Unlock()
	}
	if _, err := ss.ctrl.Write([]byte{byte(stCreateStreams)}); err != nil {
		return fmt.Errorf("%s: %w", ss.client, err)
	}
	// From here the client says nothing on the control connection until
	// it ends the test: TEST_END, CLIENT_TERMINATE, or a close. Watching it
	// already during the setup lets a client that connects no streams and
	// hangs up free the server at once, not after setupWait.
	_ = ss.ctrl.SetReadDeadline(time.Time{})
	ss.watchControl()
	ss.streams = make([]*stream, 0, n)
	ss.upstream = make([]bool, 0, n)
	deadline := time.Now().Add(setupWait)
	if ss.udp != nil {
		// A close of the control connection wakes the greeting wait.
		setupEnd := make(chan struct{})
		defer close(setupEnd)
		go func() {
			select {
			case <-ss.stop:
				_ = ss.udp.SetReadDeadline(time.Unix(1, 0))
			case <-setupEnd:
			}
		}()
	}
	blk := p.Len
	if !p.UDP {
		blk = streamBlock(p.Len, n)
	}
	for i := range n {
		// The client connects its sending streams first (bidir), so the
		// first Parallel streams are the ones this side receives.
		sender := p.Reverse || p.Bidir && i >= p.Parallel
		st := &stream{id: streamID(i), sender: sender, udp: p.UDP, blk: blk, c64: p.Counters64}
		if sender {
			st.rate = p.Bandwidth
		}
		if err := ss.connectStream(st, su, deadline, i, n); err != nil {
			return err
		}
		ss.streams = append(ss.streams, st)
		ss.upstream = append(ss.upstream, !sender)
	}
	return nil
}

// connectStream waits for stream st, the i-th of n, to connect.
func (ss *serverSession) connectStream(st *stream, su *streamSetup, deadline time.Time, i, n int) error {
	if ss.udp != nil {
		addr, err := udpGreeting(ss.udp, deadline, ss.streams)
		if err != nil {
			select {
			case <-ss.stop:
				return fmt.Errorf("%s %s while its UDP streams were being set up", ss.client, ss.ended())
			default:
			}
			return fmt.Errorf("%s: UDP stream %d: %w", ss.client, st.id, err)
		}
		st.uconn, st.peer = ss.udp, addr
		return nil
	}
	select {
	case c := <-su.ch:
		st.tcp = c
		return nil
	case <-ss.stop:
		return fmt.Errorf("%s %s while its data streams were being set up (%d of %d connected)", ss.client, ss.ended(), i, n)
	case <-time.After(time.Until(deadline)):
		return fmt.Errorf("%s: stream %d: the client did not connect its data streams within %v (a firewall passes the control connection only?)", ss.client, streamID(i), setupWait)
	}
}

// runTest starts the test and measures it until the client ends it or it
// is cut short; capped says the client asked for no time (a byte- or
// block-limited test), so MaxDuration bounds it.
func (ss *serverSession) runTest() (m measurement, capped bool, err error) {
	if _, err := ss.ctrl.Write([]byte{byte(stTestStart), byte(stTestRunning)}); err != nil {
		return m, false, fmt.Errorf("%s: %w", ss.client, err)
	}
	_ = ss.ctrl.SetDeadline(time.Time{})
	start := time.Now()
	if ss.udp != nil {
		go udpDemux(ss.udp, ss.streams)
	}
	// The client ends the test with TEST_END; a close, CLIENT_TERMINATE,
	// a client gone quiet past the planned end, data that stopped moving
	// for IdleTimeout, or MaxDuration cuts it short.
	cfg := ss.s.cfg
	var until time.Time
	capped = ss.p.Time == 0
	if capped {
		until = start.Add(cfg.MaxDuration)
	} else {
		until = start.Add(ss.tp.Omit + ss.tp.Duration + 30*time.Second)
	}
	m = measure(ss.streams, ss.upstream, start, ss.tp.Omit, cfg.Interval, until, ss.stop, nil, cfg.IdleTimeout)
	// The client's data is no longer wanted: close now, as iperf3 does.
	for _, st := range ss.streams {
		st.close()
	}
	if ss.udp != nil {
		_ = ss.udp.Close()
	}
	return m, capped, nil
}

// newResult is the head of the session's result: who tested what.
func (ss *serverSession) newResult() *Result {
	// The address the client reached: on a server bound to every address
	// ([::], 0.0.0.0) that is the control connection's local end.
	server := ss.s.Addr().IP
	if la, ok := ss.ctrl.LocalAddr().(*net.TCPAddr); ok && server.IsUnspecified() {
		server = la.IP
		if v4 := server.To4(); v4 != nil {
			server = v4
		}
	}
	res := &Result{Server: server.String(), Port: ss.s.Addr().Port, Protocol: proto(ss.p.UDP), Streams: ss.p.Parallel, Client: ss.client}
	if ss.p.Bandwidth > 0 {
		res.BitrateBps = f64(ss.p.Bandwidth)
	}
	return res
}

// end waits for the client's end of the test and exchanges results; a
// test the client did not end with TEST_END is reported cut short, with
// the figures of what ran.
func (ss *serverSession) end(ctx context.Context, m measurement, capped bool) (*Result, error) {
	cfg := ss.s.cfg
	res := ss.newResult()
	cutShort := func(err error) (*Result, error) {
		build(res, ss.streams, ss.upstream, m, nil, cfg.Interval, cfg.Percentile)
		res.CutShort = true
		return res, err
	}
	ran := m.end.Sub(m.start).Seconds()
	select {
	case <-ss.stop:
	default:
		_ = ss.ctrl.SetReadDeadline(time.Unix(1, 0))
		<-ss.stop
		switch {
		case m.idle:
			return cutShort(fmt.Errorf("%w after %.1f s: no data moved for %v (the idle timeout): %s stopped sending or reading", ErrCutShort, ran, cfg.IdleTimeout, ss.client))
		case capped:
			return cutShort(fmt.Errorf("%w: %s's byte- or block-limited test ran for %v, the longest this server runs", ErrCutShort, ss.client, cfg.MaxDuration))
		}
		return cutShort(fmt.Errorf("%w: %s did not end the test within 30 s of its planned end", ErrCutShort, ss.client))
	}
	if ss.endErr != nil || ss.endState != stTestEnd {
		why := ss.ended()
		if ctx.Err() != nil {
			why = "the server was stopped"
			_ = ss.ctrl.SetDeadline(time.Time{})
			_, _ = ss.ctrl.Write([]byte{byte(stServerTerm)})
		}
		return cutShort(fmt.Errorf("%w after %.1f s: %s %s", ErrCutShort, ran, ss.client, why))
	}
	_ = ss.ctrl.SetDeadline(time.Now().Add(setupWait))
	theirs, err := ss.exchangeResults(m)
	if err != nil {
		return cutShort(fmt.Errorf("%w: %s: %w", ErrCutShort, ss.client, err))
	}
	build(res, ss.streams, ss.upstream, m, &theirs, cfg.Interval, cfg.Percentile)
	return res, nil
}

// exchangeResults trades this side's per-stream results for the client's.
func (ss *serverSession) exchangeResults(m measurement) (peerResults, error) {
	var theirs peerResults
	if _, err := ss.ctrl.Write([]byte{byte(stExchangeResult)}); err != nil {
		return theirs, err
	}
	if err := readJSON(ss.ctrl, &theirs); err != nil {
		return theirs, fmt.Errorf("reading the client's results: %w", err)
	}
	if err := writeJSON(ss.ctrl, localResults(ss.streams, m)); err != nil {
		return theirs, err
	}
	if _, err := ss.ctrl.Write([]byte{byte(stDisplayResult)}); err != nil {
		return theirs, err
	}
	var b [1]byte
	_, _ = io.ReadFull(ss.ctrl, b[:]) // IPERF_DONE; a client that just closes is fine too
	return theirs, nil
}

// streamBlock is the block size the server uses for each of n TCP streams
// when the client asked for blocks of length bytes: at most what keeps all
// n streams' buffers (a receiver reads into at least 128 KiB) within
// serverBufferBudget. TCP carries a byte stream, so the server's block size
// changes no figure.
func streamBlock(length, n int) int {
	return max(min(length, serverBufferBudget/max(n, 1)), 1)
}

// checkParams refuses what the server will not run; longest is the
// longest test it runs.
func checkParams(p params, longest time.Duration) (TestParams, error) {
	tp := TestParams{Protocol: proto(p.UDP), Streams: p.Parallel, Bitrate: p.Bandwidth, Length: p.Len,
		Duration: time.Duration(p.Time * float64(time.Second)), Omit: time.Duration(p.Omit * float64(time.Second))}
	if p.ClientVersion != "" {
		tp.Version = PeerText(p.ClientVersion)
	}
	switch {
	case p.Bidir:
		tp.Direction = Bidir
	case p.Reverse:
		tp.Direction = Download
	default:
		tp.Direction = Upload
	}
	switch {
	case p.TCP == p.UDP:
		return tp, errors.New("the test is neither TCP nor UDP (SCTP is not supported)")
	case p.Parallel < 1 || p.Parallel > 128:
		return tp, fmt.Errorf("parallel %d: 1..128", p.Parallel)
	case p.Time < 0 || p.Time > 86400 || p.Omit < 0 || p.Omit > 3600 || math.IsNaN(p.Time) || math.IsNaN(p.Omit):
		return tp, fmt.Errorf("time %g s, omit %g s: out of range", p.Time, p.Omit)
	case tp.Duration+tp.Omit > longest:
		return tp, fmt.Errorf("time %g s with omit %g s: longer than %v, the longest test this server runs (its --max-duration)", p.Time, p.Omit, longest)
	case p.Time == 0 && (p.Num > 0 || p.Blockcount > 0) && (p.Reverse || p.Bidir):
		return tp, errors.New("a byte- or block-limited test (-n, -k) with the server sending is not supported: use -t")
	case p.UDP && (p.Len < 16 || p.Len > 65507):
		return tp, fmt.Errorf("UDP length %d: 16..65507", p.Len)
	case !p.UDP && (p.Len < 1 || p.Len > maxBlock):
		return tp, fmt.Errorf("length %d: 1..%d (1 MiB, iperf3's limit)", p.Len, maxBlock)
	case p.Bandwidth < 0:
		return tp, fmt.Errorf("bandwidth %g: negative", p.Bandwidth)
	}
	return tp, nil
}

// udpGreeting waits for a new client address's greeting datagram and
// answers it. Repeats of a known stream's greeting are answered again (the
// client repeats until it hears back).
func udpGreeting(u *net.UDPConn, deadline time.Time, known []*stream) (*net.UDPAddr, error) {
	var reply [4]byte
	binary.LittleEndian.PutUint32(reply[:], udpConnectReply)
	buf := make([]byte, 64)
	_ = u.SetReadDeadline(deadline)
	defer u.SetReadDeadline(time.Time{})
	for {
		n, addr, err := u.ReadFromUDP(buf)
		if err != nil {
			return nil, fmt.Errorf("no greeting datagram: %w", err)
		}
		if n != 4 {
			continue
		}
		seen := false
		for _, k := range known {
			if k.peer.String() == addr.String() {
				seen = true
			}
		}
		_, _ = u.WriteToUDP(reply[:], addr)
		if !seen {
			return addr, nil
		}
	}
}

// udpDemux reads the shared UDP socket and hands each datagram to the
// receiving stream of its sender's address.
func udpDemux(u *net.UDPConn, streams []*stream) {
	by := map[string]*stream{}
	for _, s := range streams {
		if !s.sender {
			by[s.peer.String()] = s
		}
	}
	buf := make([]byte, 65536)
	for {
		n, addr, err := u.ReadFromUDP(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if s := by[addr.String()]; s != nil && !s.closed.Load() && n != 4 {
			s.datagram(buf[:n], time.Now())
		}
	}
}

package bw

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// DefaultPort is iperf3's port.
const DefaultPort = 5201

// Config describes one test. Zero values take iperf3's defaults.
type Config struct {
	Port     int           // server port; 0 = 5201
	Network  string        // "tcp" (either family), "tcp4" or "tcp6"
	Duration time.Duration // measured time after Omit; 0 = 10 s
	// Bytes, when above 0, ends the test when this many bytes were sent,
	// over all streams, instead of after Duration (iperf3 -n); this side
	// must send (no Reverse, no Bidir) and Omit must be 0.
	Bytes    int64
	Omit     time.Duration // warm-up left out of every figure (TCP slow start)
	Interval time.Duration // reporting interval; 0 = 1 s
	Reverse  bool          // the server sends (download)
	Bidir    bool          // both send at once
	Parallel int           // streams per direction; 0 = 1
	UDP      bool
	// Bitrate is the target rate per stream in bits per second (iperf3's
	// -b): UDP's sending rate (0 = 1 Mbit/s, as iperf3), TCP pacing (0 =
	// as fast as the path takes it).
	Bitrate float64
	// Length is the block (TCP write) or datagram size; 0 = 128 KiB for
	// TCP, 1460 bytes for UDP.
	Length int
	// Percentile computes p5, p50 and p95 of the interval rates (the
	// caller's rule, percentile.NearestRank in linecheck); nil leaves them null.
	Percentile Percentile
	// ConnectTimeout bounds the control connection's connect and each wait
	// for the server during setup; 0 = 5 s.
	ConnectTimeout time.Duration
	// Progress, when set, is called once per interval while the test runs.
	Progress func(Progress)
	// Dial opens the connections (control and data); nil = a net.Dialer
	// with ConnectTimeout. Tests inject it to see what would be dialed.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// LocalAddr is the address the connections leave from (iperf3 -B);
	// the zero value lets the kernel choose.
	LocalAddr netip.Addr
}

// CheckServer refuses a server address that probe's safety gate refuses
// (probe.CheckTarget): a documentation address (RFC 5737, RFC 3849), which
// stands in examples and is never tested, a broadcast, multicast or
// unspecified one. A name is checked once resolved, when Run dials it.
func CheckServer(host string) error {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return nil
	}
	return checkAddr(host, a)
}

func checkAddr(host string, a netip.Addr) error {
	const advice = "give the address of your iperf3 -s server"
	err := probe.CheckTarget(host, a, advice)
	var re *probe.RefusedError
	if errors.As(err, &re) {
		re.Advice = advice
	}
	return err
}

// dial opens one connection through cfg.Dial, or a net.Dialer that refuses
// a name resolving to a documentation address before it connects.
func (c *Config) dial(ctx context.Context, host, network, address string) (net.Conn, error) {
	if c.Dial != nil {
		return c.Dial(ctx, network, address)
	}
	d := net.Dialer{Timeout: c.ConnectTimeout, Control: func(_, addr string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(addr)
		if err != nil {
			return nil
		}
		return checkAddr(host, ap.Addr())
	}}
	if c.LocalAddr.IsValid() {
		if strings.HasPrefix(network, "udp") {
			d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(c.LocalAddr, 0))
		} else {
			d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(c.LocalAddr, 0))
		}
	}
	return d.DialContext(ctx, network, address)
}

// Version is what the client reports as client_version.
const Version = "linecheck-bw/1"

func (c *Config) defaults() error {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("port %d: must be 1..65535", c.Port)
	}
	if c.Network == "" {
		c.Network = "tcp"
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Parallel == 0 {
		c.Parallel = 1
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.UDP && c.Bitrate == 0 {
		c.Bitrate = 1e6
	}
	if c.Length == 0 {
		c.Length = 128 << 10
		if c.UDP {
			c.Length = 1460
		}
	}
	switch {
	case c.Duration < 0 || c.Duration > 24*time.Hour:
		return fmt.Errorf("duration %v: must be positive and at most 24h", c.Duration)
	case c.Omit < 0 || c.Omit > time.Hour:
		return fmt.Errorf("omit %v: must be 0..1h", c.Omit)
	case c.Interval < 100*time.Millisecond:
		return fmt.Errorf("interval %v: must be at least 100ms", c.Interval)
	case c.Parallel < 1 || c.Parallel > 128:
		return fmt.Errorf("parallel %d: must be 1..128 (iperf3's limit)", c.Parallel)
	case c.Bitrate < 0:
		return fmt.Errorf("bitrate %g: must not be negative", c.Bitrate)
	case c.Reverse && c.Bidir:
		return errors.New("reverse and bidir: choose one (bidir measures both directions)")
	case c.Bytes < 0:
		return fmt.Errorf("bytes %d: must not be negative", c.Bytes)
	case c.Bytes > 0 && (c.Reverse || c.Bidir):
		return errors.New("a byte-limited test sends from this side: not with reverse or bidir (give a time)")
	case c.Bytes > 0 && c.Omit > 0:
		return errors.New("a byte-limited test has no warm-up to leave out: omit goes with a time")
	case c.UDP && (c.Length < 16 || c.Length > 65507):
		return fmt.Errorf("length %d: a UDP datagram carries 16..65507 bytes", c.Length)
	case !c.UDP && (c.Length < 1 || c.Length > 1<<20):
		return fmt.Errorf("length %d: must be 1..1048576", c.Length)
	}
	return nil
}

// Run tests the throughput between this host and the iperf3 server at host
// (an IP address or a name the user gave). It returns the Result in the
// client's view, or an error wrapping one of ErrBusy, ErrRefused,
// ErrUnreachable, ErrProtocol, ErrServer or ErrCutShort that says what to
// do. A test cut short returns both its partial Result and the error.
func Run(ctx context.Context, host string, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := CheckServer(host); err != nil {
		return nil, err
	}
	where := net.JoinHostPort(host, strconv.Itoa(cfg.Port))
	cc, err := cfg.dial(ctx, host, cfg.Network, where)
	if err != nil {
		if errors.Is(err, probe.ErrRefused) {
			return nil, err
		}
		return nil, dialError(host, cfg, err)
	}
	ctrl := cc.(*net.TCPConn)
	defer ctrl.Close()
	remote := ctrl.RemoteAddr().(*net.TCPAddr)
	stopCtx := context.AfterFunc(ctx, func() { _ = ctrl.SetDeadline(time.Unix(1, 0)) })
	defer stopCtx()

	cookie := newCookie()
	if _, err := ctrl.Write(cookie[:]); err != nil {
		return nil, fmt.Errorf("%s: sending the cookie: %w", where, err)
	}
	c := &clientRun{cfg: cfg, ctrl: ctrl, where: where, host: host}
	if err := c.exchangeParams(ctx); err != nil {
		return nil, err
	}
	streams, upstream, err := c.openStreams(ctx, remote, cookie)
	defer func() {
		for _, s := range streams {
			s.close()
		}
	}()
	if err != nil {
		return nil, err
	}
	for _, want := range []int8{stTestStart, stTestRunning} {
		if err := c.expect(ctx, want); err != nil {
			return nil, err
		}
	}
	m, ctrlErr := c.runTest(ctx, streams, upstream)
	return c.end(ctx, streams, upstream, m, ctrlErr)
}

// expect reads the next state and fails unless it is want.
func (c *clientRun) expect(ctx context.Context, want int8) error {
	st, err := c.state(c.cfg.ConnectTimeout * 2)
	if err != nil {
		return c.setupErr(ctx, err)
	}
	if st != want {
		return c.unexpected(st, stateName(want))
	}
	return nil
}

// exchangeParams sends the test parameters when the server asks for them
// and waits for its word to create the streams.
func (c *clientRun) exchangeParams(ctx context.Context) error {
	cfg := c.cfg
	if err := c.expect(ctx, stParamExchange); err != nil {
		return err
	}
	p := params{TCP: !cfg.UDP, UDP: cfg.UDP, Omit: cfg.Omit.Seconds(), Time: cfg.Duration.Seconds(),
		Parallel: cfg.Parallel, Reverse: cfg.Reverse, Bidir: cfg.Bidir, Len: cfg.Length, PacingTimer: 1000,
		ClientVersion: Version}
	if cfg.Bitrate > 0 {
		p.Bandwidth = cfg.Bitrate
	}
	// iperf3 reads whole seconds for time and omit (an int in its JSON);
	// a fraction is rounded up so that the server never ends first.
	p.Time, p.Omit = ceilSec(cfg.Duration), ceilSec(cfg.Omit)
	if cfg.Bytes > 0 {
		// iperf3 -n: no time, the byte count; the server ends at TEST_END.
		p.Time, p.Num = 0, cfg.Bytes
	}
	if err := writeJSON(c.ctrl, p); err != nil {
		return fmt.Errorf("%s: sending the test parameters: %w", c.where, err)
	}
	return c.expect(ctx, stCreateStreams)
}

// runTest measures the streams for the planned time, or until the server
// gives up or ctx ends. ctrlErr is what the control connection said
// meanwhile: a timeout when it stayed quiet.
func (c *clientRun) runTest(ctx context.Context, streams []*stream, upstream []bool) (m measurement, ctrlErr error) {
	cfg := c.cfg
	// The control connection stays quiet unless the server gives up
	// (SERVER_TERMINATE, SERVER_ERROR, a close): a reader watches.
	_ = c.ctrl.SetDeadline(time.Time{})
	start := time.Now()
	stop := make(chan struct{})
	ctrlMsg := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := io.ReadFull(c.ctrl, b[:])
		if err == nil {
			if err = c.interpret(int8(b[0])); err == nil {
				err = c.unexpected(int8(b[0]), "nothing during the test")
			}
		}
		ctrlMsg <- err
		close(stop)
	}()
	merged := make(chan struct{})
	until := start.Add(cfg.Omit + cfg.Duration)
	var sent <-chan struct{} // a byte-limited test ends when its bytes are sent
	if c.budget != nil {
		until, sent = time.Time{}, c.budget.done
	}
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		case <-sent:
			drain(ctx, streams, cfg.ConnectTimeout)
		}
		close(merged)
	}()
	m = measure(streams, upstream, start, cfg.Omit, cfg.Interval, until, merged, cfg.Progress, 0)
	// Wake the control reader: from here on the control connection is read
	// in order again.
	_ = c.ctrl.SetReadDeadline(time.Unix(1, 0))
	<-stop
	ctrlErr = <-ctrlMsg
	_ = c.ctrl.SetDeadline(time.Time{})
	return m, ctrlErr
}

// end finishes a measured test: the results exchange when it ran its
// course, else a partial Result with the reason it was cut short.
func (c *clientRun) end(ctx context.Context, streams []*stream, upstream []bool, m measurement, ctrlErr error) (*Result, error) {
	cfg := c.cfg
	res := &Result{Server: c.host, Port: cfg.Port, Protocol: proto(cfg.UDP), Streams: cfg.Parallel}
	if cfg.Bitrate > 0 {
		res.BitrateBps = f64(cfg.Bitrate)
	}
	cutShort := func(err error) (*Result, error) {
		build(res, streams, upstream, m, nil, cfg.Interval, cfg.Percentile)
		res.CutShort = true
		return res, err
	}
	if ctx.Err() != nil {
		// Interrupted: tell the server, as iperf3 does, and keep what ran.
		_, _ = c.ctrl.Write([]byte{byte(stClientTerm)})
		res.Partial = true
		return cutShort(fmt.Errorf("%w after %.1f s: interrupted; the figures cover what ran", ErrCutShort, m.end.Sub(m.start).Seconds()))
	}
	// The reader's own wake-up is a timeout; anything else came from the server.
	var ne net.Error
	if !(errors.As(ctrlErr, &ne) && ne.Timeout()) {
		return cutShort(c.cutShort(ctrlErr, m))
	}
	if serr := streamErr(streams); serr != nil && (c.budget != nil || m.end.Before(m.start.Add(cfg.Omit+cfg.Duration))) {
		_, _ = c.ctrl.Write([]byte{byte(stTestEnd)})
		return cutShort(c.cutShort(serr, m))
	}
	results, err := c.finish(localResults(streams, m))
	build(res, streams, upstream, m, results, cfg.Interval, cfg.Percentile)
	if err != nil {
		res.CutShort = true
		return res, c.cutShort(err, m)
	}
	return res, nil
}

func ceilSec(d time.Duration) float64 {
	s := d.Seconds()
	if s != float64(int64(s)) {
		return float64(int64(s) + 1)
	}
	return s
}

func proto(udp bool) string {
	if udp {
		return "udp"
	}
	return "tcp"
}

type clientRun struct {
	cfg   Config
	ctrl  *net.TCPConn
	where string
	host  string
	// budget is a byte-limited test's (Config.Bytes) bytes left to send;
	// nil for a timed test.
	budget *byteBudget
}

// state reads the next state byte, waiting at most wait.
func (c *clientRun) state(wait time.Duration) (int8, error) {
	_ = c.ctrl.SetReadDeadline(time.Now().Add(wait))
	var b [1]byte
	if _, err := io.ReadFull(c.ctrl, b[:]); err != nil {
		return 0, err
	}
	st := int8(b[0])
	return st, c.interpret(st)
}

// interpret turns the states that end a test into errors.
func (c *clientRun) interpret(st int8) error {
	switch st {
	case stAccessDenied:
		return fmt.Errorf("%w: %s is running another client's test (iperf3 serves one test at a time): try again in a minute, or run a second server on another port (iperf3 -s -p 5202) and give --port", ErrBusy, c.where)
	case stServerError:
		var codes [8]byte
		_, _ = io.ReadFull(c.ctrl, codes[:])
		ie, en := int32(binary.BigEndian.Uint32(codes[:4])), int32(binary.BigEndian.Uint32(codes[4:]))
		detail := ""
		if en != 0 {
			detail = fmt.Sprintf(" (%v)", syscall.Errno(en))
		}
		return fmt.Errorf("%w: %s reported iperf3 error %d%s: see the server's own output; a server that requires authentication or refuses a parameter (--parallel, --length) says so there",
			ErrServer, c.where, ie, detail)
	case stServerTerm:
		return fmt.Errorf("%w: %s stopped its iperf3 server (SERVER_TERMINATE): start it again and retry", ErrServer, c.where)
	}
	return nil
}

func (c *clientRun) unexpected(st int8, want string) error {
	return fmt.Errorf("%w: %s sent %s where %s was due: the program on that port is not an iperf3 3.x server (iperf 2 listens on 5001 and speaks another protocol); start `iperf3 -s` there, or check --port",
		ErrProtocol, c.where, stateName(st), want)
}

// setupErr explains a failure to read during setup.
func (c *clientRun) setupErr(ctx context.Context, err error) error {
	if errors.Is(err, ErrBusy) || errors.Is(err, ErrServer) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: interrupted before the test started", c.where)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %s accepted the connection but said nothing for %v: the program on that port is not an iperf3 server, or a middlebox holds the connection",
			ErrProtocol, c.where, c.cfg.ConnectTimeout*2)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("%w: %s closed the connection during setup: the program on that port is not an iperf3 3.x server, or it refused this client (see its output)", ErrProtocol, c.where)
	}
	return fmt.Errorf("%s: %w", c.where, err)
}

func (c *clientRun) cutShort(err error, m measurement) error {
	ran := m.end.Sub(m.start).Seconds()
	if errors.Is(err, ErrServer) || errors.Is(err, ErrProtocol) {
		return fmt.Errorf("%w after %.1f s: %w", ErrCutShort, ran, err)
	}
	return fmt.Errorf("%w after %.1f s of %.0f: %v: the path or the server dropped the test (a reset, a firewall state timeout, the server stopped); the figures cover what ran — retry, or try --parallel 1 or a shorter --time",
		ErrCutShort, ran, (c.cfg.Omit + c.cfg.Duration).Seconds(), err)
}

// openStreams connects the data streams: for bidir the sending streams
// first, then the receiving ones, as iperf3's client does (the server pairs
// them in accept order and numbers them alike).
func (c *clientRun) openStreams(ctx context.Context, remote *net.TCPAddr, cookie [cookieLen]byte) ([]*stream, []bool, error) {
	cfg := c.cfg
	var senders []bool
	for range cfg.Parallel {
		senders = append(senders, !cfg.Reverse)
	}
	if cfg.Bidir {
		for range cfg.Parallel {
			senders = append(senders, false)
		}
	}
	var streams []*stream
	var upstream []bool
	if cfg.Bytes > 0 {
		c.budget = newByteBudget(cfg.Bytes, len(senders)) // every stream sends: no reverse, no bidir
	}
	for i, sender := range senders {
		s := &stream{id: streamID(i), sender: sender, udp: cfg.UDP, blk: cfg.Length}
		if sender {
			s.rate, s.budget = cfg.Bitrate, c.budget
		}
		if err := c.connect(ctx, s, remote, cookie); err != nil {
			return streams, nil, err
		}
		streams = append(streams, s)
		upstream = append(upstream, sender)
	}
	return streams, upstream, nil
}

// streamID numbers streams as iperf3 does: 1, then 3, 4, 5 … (2 was once
// the control connection's).
func streamID(i int) int {
	if i == 0 {
		return 1
	}
	return i + 2
}

func (c *clientRun) connect(ctx context.Context, s *stream, remote *net.TCPAddr, cookie [cookieLen]byte) error {
	if !s.udp {
		conn, err := c.cfg.dial(ctx, remote.IP.String(), "tcp", remote.String())
		if err != nil {
			return fmt.Errorf("%s: opening data stream %d: %w: the control connection worked, so a firewall may pass only one connection; allow TCP %d", c.where, s.id, err, c.cfg.Port)
		}
		s.tcp = conn.(*net.TCPConn)
		if _, err := s.tcp.Write(cookie[:]); err != nil {
			return fmt.Errorf("%s: data stream %d: %w", c.where, s.id, err)
		}
		return nil
	}
	conn, err := c.cfg.dial(ctx, remote.IP.String(), "udp", (&net.UDPAddr{IP: remote.IP, Port: remote.Port, Zone: remote.Zone}).String())
	if err != nil {
		return fmt.Errorf("%s: opening UDP stream %d: %w", c.where, s.id, err)
	}
	s.uconn = conn.(*net.UDPConn)
	_ = s.uconn.SetReadBuffer(4 << 20)
	_ = s.uconn.SetWriteBuffer(4 << 20)
	var hello [4]byte
	binary.LittleEndian.PutUint32(hello[:], udpConnectMsg)
	// The greeting is a datagram: repeat it until the server answers.
	deadline := time.Now().Add(c.cfg.ConnectTimeout)
	var reply [64]byte
	for time.Now().Before(deadline) {
		if _, err := s.uconn.Write(hello[:]); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("%s: UDP stream %d: %w", c.where, s.id, err)
		}
		_ = s.uconn.SetReadDeadline(time.Now().Add(time.Second))
		n, err := s.uconn.Read(reply[:])
		if err == nil && n == 4 {
			_ = s.uconn.SetReadDeadline(time.Time{})
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("%w: %s: UDP stream %d: no answer to the UDP greeting within %v: a firewall drops UDP %d (TCP passes); open it, or test TCP without --udp",
		ErrUnreachable, c.where, s.id, c.cfg.ConnectTimeout, c.cfg.Port)
}

// finish ends the test: TEST_END, the results exchange, IPERF_DONE.
func (c *clientRun) finish(mine peerResults) (*peerResults, error) {
	if _, err := c.ctrl.Write([]byte{byte(stTestEnd)}); err != nil {
		return nil, err
	}
	wait := c.cfg.ConnectTimeout*2 + 5*time.Second
	st, err := c.state(wait)
	if err != nil {
		return nil, err
	}
	if st != stExchangeResult {
		return nil, c.unexpected(st, "EXCHANGE_RESULTS")
	}
	_ = c.ctrl.SetDeadline(time.Now().Add(wait))
	if err := writeJSON(c.ctrl, mine); err != nil {
		return nil, err
	}
	var theirs peerResults
	if err := readJSON(c.ctrl, &theirs); err != nil {
		return nil, fmt.Errorf("reading the server's results: %w", err)
	}
	if st, err = c.state(wait); err != nil {
		return &theirs, err
	}
	if st != stDisplayResult {
		return &theirs, c.unexpected(st, "DISPLAY_RESULTS")
	}
	_, _ = c.ctrl.Write([]byte{byte(stIperfDone)})
	return &theirs, nil
}

// dialError says why the control connection failed and what to do.
func dialError(host string, cfg Config, err error) error {
	where := net.JoinHostPort(host, strconv.Itoa(cfg.Port))
	var ne net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: nothing listens on %s: start `iperf3 -s` there (or `linecheck bw --listen 0.0.0.0:%d`), or give the right --port", ErrRefused, where, cfg.Port)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("%s: %w: check the name, or give the server's address", host, err)
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return fmt.Errorf("%w: %s: %v: no route to the server; check the address and this host's network", ErrUnreachable, where, err)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w from %s within %v: a firewall drops TCP %d (open it on the server and its provider's security group), or the address is wrong", ErrUnreachable, where, cfg.ConnectTimeout, cfg.Port)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// drain waits, at most wait, until the peer has acknowledged every byte the
// TCP senders wrote, so that a byte-limited test's TEST_END does not cut
// off what is still in flight (the server counts what it read by then).
func drain(ctx context.Context, streams []*stream, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for _, s := range streams {
		if !s.sender || s.tcp == nil {
			continue
		}
		for s.info().acked < s.bytes.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}
}

package bw

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serverOutcome is one OnResult call.
type serverOutcome struct {
	res *Result
	err error
}

// hostileServer runs our server on loopback with cfg and returns its port
// and a channel of every OnResult, errors included (startServer fails the
// test on a server error; here errors are what is checked).
func hostileServer(t *testing.T, cfg ServerConfig) (int, chan serverOutcome, chan TestParams) {
	t.Helper()
	out := make(chan serverOutcome, 1024) // every silent connection of a flood reports
	starts := make(chan TestParams, 16)
	cfg.Addr = "127.0.0.1:0"
	if cfg.Interval == 0 {
		cfg.Interval = 200 * time.Millisecond
	}
	cfg.OnResult = func(r *Result, err error) { out <- serverOutcome{r, err} }
	cfg.OnStart = func(_ string, p TestParams) { starts <- p }
	srv, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv.Addr().Port, out, starts
}

// rawClient plays a client by hand up to CREATE_STREAMS with parameters p
// and returns the control connection and the cookie it sent.
func rawClient(t *testing.T, port int, p params) (*net.TCPConn, [cookieLen]byte) {
	t.Helper()
	c, err := net.DialTCP("tcp", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	cookie := newCookie()
	if _, err := c.Write(cookie[:]); err != nil {
		t.Fatal(err)
	}
	expectState(t, c, stParamExchange)
	if err := writeJSON(c, p); err != nil {
		t.Fatal(err)
	}
	expectState(t, c, stCreateStreams)
	return c, cookie
}

func expectState(t *testing.T, c net.Conn, want int8) {
	t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Fatalf("waiting for %s: %v", stateName(want), err)
	}
	if int8(b[0]) != want {
		t.Fatalf("got %s, want %s", stateName(int8(b[0])), stateName(want))
	}
}

func dataStream(t *testing.T, port int, cookie []byte) *net.TCPConn {
	t.Helper()
	d, err := net.DialTCP("tcp", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if cookie != nil {
		if _, err := d.Write(cookie); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func waitOutcome(t *testing.T, out chan serverOutcome, within time.Duration, what string) serverOutcome {
	t.Helper()
	select {
	case o := <-out:
		return o
	case <-time.After(within):
		t.Fatalf("%s: the server reported nothing within %v", what, within)
	}
	return serverOutcome{}
}

// TestServerDropsASetupWhoseClientHungUp: a client that sends its cookie
// and parameters and closes held the server for the 10 s stream setup, so
// that one such client every 10 s denied every real test. The setup must
// end on the hang-up (well before setupWait, the bound that the old code
// hit), and a real test right after must run. The server frees itself
// before it reports the outcome, so the order of the two is what is
// asserted, not how fast a loaded machine is.
func TestServerDropsASetupWhoseClientHungUp(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{})
	for round := range 3 {
		c, _ := rawClient(t, port, params{TCP: true, Parallel: 2, Time: 5, Len: 128 << 10})
		c.Close()
		o := waitOutcome(t, out, setupWait*3/4, "a client that hung up during setup")
		if o.err == nil || !strings.Contains(o.err.Error(), "closed the control connection while its data streams were being set up") {
			t.Fatalf("round %d: %v, want the hang-up named", round, o.err)
		}
		res, err := Run(context.Background(), "127.0.0.1", Config{Port: port, Duration: 500 * time.Millisecond, Interval: 250 * time.Millisecond, Bitrate: 10e6})
		if err != nil {
			t.Fatalf("round %d: a real test after the hang-up: %v", round, err)
		}
		if res.Bytes <= 0 || res.Throughput.Mean == nil {
			t.Errorf("round %d: %d bytes, mean %v: the test moved no data", round, res.Bytes, res.Throughput.Mean)
		}
		if o := waitOutcome(t, out, 30*time.Second, "the real test"); o.err != nil || o.res == nil {
			t.Errorf("round %d: server: %v", round, o.err)
		}
	}
}

// silentConnections opens a TCP connection to port that never sends a
// byte every gap until the test ends (issue 37: one every 10 s denied every
// test, as the server was taken at accept, before the cookie).
func silentConnections(t *testing.T, port int, gap time.Duration) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for i := 0; ; i++ {
			if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				conns = append(conns, c)
			}
			if i == 0 {
				close(first)
			}
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
		}
	}()
	<-first
	t.Cleanup(func() { close(stop); <-done })
}

// TestSilentConnectionsDoNotTakeTheServer: with a connection that sends
// nothing arriving every 200 ms (and one open from before the client
// came), a real client's test runs; each silent one is reported as no
// client once its cookie wait has passed.
func TestSilentConnectionsDoNotTakeTheServer(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{CookieWait: time.Second})
	began := time.Now()
	silentConnections(t, port, 200*time.Millisecond)
	res, err := Run(context.Background(), "127.0.0.1", Config{Port: port, Duration: 500 * time.Millisecond, Interval: 250 * time.Millisecond, Bitrate: 10e6})
	if err != nil {
		t.Fatalf("a real test beside silent connections: %v", err)
	}
	if res.Bytes <= 0 {
		t.Errorf("%d bytes: the test moved no data", res.Bytes)
	}
	var sawTest, sawSilent bool
	for !sawTest || !sawSilent {
		o := waitOutcome(t, out, 30*time.Second, "the test and a silent connection")
		switch {
		case o.err == nil && o.res != nil:
			sawTest = true
		case errors.Is(o.err, ErrNoClient):
			if !strings.Contains(o.err.Error(), "0 of the cookie's 37 bytes within 1s") {
				t.Errorf("silent connection: %v, want the cookie wait named", o.err)
			}
			if took := time.Since(began); took < time.Second {
				t.Errorf("a silent connection dropped after %v, before its 1 s cookie wait", took)
			}
			sawSilent = true
		default:
			t.Fatalf("unexpected outcome: %v", o.err)
		}
	}
}

// TestAFloodOfSilentConnectionsClosesTheOldest: past maxWaitingCookies a
// newcomer closes the oldest waiting connection, so the server holds a
// bounded number and a real client, whose cookie comes at once, gets in.
func TestAFloodOfSilentConnectionsClosesTheOldest(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{CookieWait: time.Minute})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	oldest, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer oldest.Close()
	for range maxWaitingCookies {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	o := waitOutcome(t, out, 30*time.Second, "the oldest silent connection")
	if !errors.Is(o.err, ErrNoClient) || !strings.Contains(o.err.Error(), "closed to make room") {
		t.Fatalf("%v, want the oldest closed to make room", o.err)
	}
	_ = oldest.SetReadDeadline(time.Now().Add(30 * time.Second))
	if n, err := oldest.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the oldest connection read %d bytes, want it closed", n)
	}
	if _, err := Run(context.Background(), "127.0.0.1", Config{Port: port, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond, Bitrate: 10e6}); err != nil {
		t.Fatalf("a real test beside %d silent connections: %v", maxWaitingCookies, err)
	}
}

// TestClientTextIsQuotedAndCut: a client_version with escape sequences
// (retitle the terminal, clear the screen) and 2 MB long reaches OnStart
// quoted, without a control byte, and cut.
func TestClientTextIsQuotedAndCut(t *testing.T) {
	port, _, starts := hostileServer(t, ServerConfig{})
	version := "\x1b]0;owned\x07\x1b[2J\x1b[H3.16" + strings.Repeat("A", 2<<20)
	c, _ := rawClient(t, port, params{TCP: true, Parallel: 1, Time: 5, Len: 128 << 10, ClientVersion: version})
	c.Close()
	var p TestParams
	select {
	case p = <-starts:
	case <-time.After(30 * time.Second):
		t.Fatal("no OnStart")
	}
	for _, r := range p.Version {
		if r < 0x20 || r >= 0x7f {
			t.Fatalf("Version holds %U: %q", r, p.Version)
		}
	}
	head := "\x1b]0;owned\x07\x1b[2J\x1b[H3.16"
	want := `"\x1b]0;owned\a\x1b[2J\x1b[H3.16` + strings.Repeat("A", 64-len(head)) + `"... (` + strconv.Itoa(len(version)) + ` bytes)`
	if p.Version != want {
		t.Errorf("Version = %q\nwant      %q", p.Version, want)
	}
	if got := PeerText("3.16"); got != `"3.16"` {
		t.Errorf("PeerText(3.16) = %s", got)
	}
}

// TestAHugeNumberInTheParametersIsNotLoggedWhole: encoding/json shows a
// number literal whole in its error; the message is cut.
func TestAHugeNumberInTheParametersIsNotLoggedWhole(t *testing.T) {
	var buf bytes.Buffer
	body := `{"parallel":` + strings.Repeat("9", 1<<20) + `}`
	binary.Write(&buf, binary.BigEndian, uint32(len(body)))
	buf.WriteString(body)
	var p params
	err := readJSON(&buf, &p)
	if !errors.Is(err, ErrProtocol) || len(err.Error()) > 300 {
		t.Fatalf("%d bytes of error: %.120s…", len(err.Error()), err)
	}
}

// TestServerEndsATestWhoseDataStopped: a client that asked for a long test
// and sends nothing held the server for the whole test plus 30 s.
func TestServerEndsATestWhoseDataStopped(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{IdleTimeout: time.Second})
	c, cookie := rawClient(t, port, params{TCP: true, Parallel: 1, Time: 300, Len: 128 << 10})
	dataStream(t, port, cookie[:])
	expectState(t, c, stTestStart)
	expectState(t, c, stTestRunning)
	began := time.Now()
	o := waitOutcome(t, out, 10*time.Second, "an idle test")
	if o.err == nil || !errors.Is(o.err, ErrCutShort) || !strings.Contains(o.err.Error(), "no data moved for 1s") {
		t.Fatalf("%v, want the idle timeout named", o.err)
	}
	if took := time.Since(began); took < 900*time.Millisecond {
		t.Errorf("ended after %v, before the 1 s idle timeout", took)
	}
	// The control connection is closed: the client learns it is over.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("control connection after the idle end: %v", err)
	}
}

// TestServerRefusesTestsBeyondItsLongest: time up to 86,400 s was taken.
func TestServerRefusesTestsBeyondItsLongest(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{MaxDuration: time.Minute})
	c, err := net.DialTCP("tcp", nil, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	cookie := newCookie()
	c.Write(cookie[:])
	expectState(t, c, stParamExchange)
	writeJSON(c, params{TCP: true, Parallel: 1, Time: 3600, Len: 128 << 10})
	expectState(t, c, stServerTerm)
	o := waitOutcome(t, out, 5*time.Second, "a 3600 s test")
	if o.err == nil || !strings.Contains(o.err.Error(), "longer than 1m0s, the longest test this server runs") {
		t.Errorf("%v, want the refusal to name the limit", o.err)
	}
	for _, tc := range []struct {
		p    params
		want string
	}{
		{params{TCP: true, Parallel: 1, Time: 10, Len: 16 << 20}, "length 16777216"},
		{params{TCP: true, Parallel: 1, Time: 10, Len: 1<<20 + 1}, "1 MiB"},
		{params{TCP: true, Parallel: 129, Time: 10, Len: 1 << 20}, "parallel 129"},
		{params{TCP: true, Parallel: 1, Time: 601, Len: 1 << 10}, "longer than 10m0s"},
	} {
		if _, err := checkParams(tc.p, DefaultMaxDuration); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
	if _, err := checkParams(params{TCP: true, Parallel: 128, Bidir: true, Time: 600, Len: 1 << 20}, DefaultMaxDuration); err != nil {
		t.Errorf("128 bidir streams of 1 MiB blocks for 600 s: %v, want accepted", err)
	}
}

// TestServerBuffersStayWithinBudget: 128 streams each way with the largest
// block allowed must not allocate more than the budget (16 MiB blocks ×
// 128 streams took 2–4 GB).
func TestServerBuffersStayWithinBudget(t *testing.T) {
	for _, n := range []int{1, 2, 16, 128, 256} {
		for _, l := range []int{1, 1000, 128 << 10, 1 << 20} {
			blk := streamBlock(l, n)
			if blk < 1 || blk > l {
				t.Errorf("%d streams of %d: block %d", n, l, blk)
			}
			// A receiver reads into max(block, 128 KiB); a sender writes a
			// block: the larger is what each stream holds.
			if per := max(blk, 128<<10); n*per > 64<<20 {
				t.Errorf("%d streams of %d-byte blocks hold %d bytes, over 64 MiB", n, l, n*per)
			}
		}
	}
	if got := streamBlock(1<<20, 2); got != 1<<20 {
		t.Errorf("2 streams of 1 MiB: block %d, want the client's 1 MiB", got)
	}
}

// TestServerIgnoresStrangersDuringStreamSetup: a stranger that connected
// while the client set up its streams, silent or with a wrong cookie, was
// read first; the client's own stream waited 1 s, was closed, and the test
// failed blaming a firewall.
func TestServerIgnoresStrangersDuringStreamSetup(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{})
	c, cookie := rawClient(t, port, params{TCP: true, Parallel: 2, Time: 1, Len: 128 << 10})
	silent := dataStream(t, port, nil)
	wrong := dataStream(t, port, []byte(strings.Repeat("x", cookieLen)))
	time.Sleep(100 * time.Millisecond) // both strangers are in before the client's streams
	d1 := dataStream(t, port, cookie[:])
	d2 := dataStream(t, port, cookie[:])
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	expectState(t, c, stTestStart)
	expectState(t, c, stTestRunning)
	_ = wrong.SetReadDeadline(time.Now().Add(3 * time.Second))
	var b [1]byte
	if _, err := io.ReadFull(wrong, b[:]); err != nil || b[0] != denied {
		t.Errorf("the stranger with a wrong cookie got %v (%v), want ACCESS_DENIED", b[0], err)
	}
	// The client's streams carry the test: both were accepted, not reset.
	block := make([]byte, 64<<10)
	for _, d := range []*net.TCPConn{d1, d2} {
		_ = d.SetWriteDeadline(time.Now().Add(3 * time.Second))
		if _, err := d.Write(block); err != nil {
			t.Errorf("the client's stream: %v", err)
		}
	}
	// TEST_END after the data has had time to arrive, then the results.
	time.Sleep(500 * time.Millisecond)
	c.Write([]byte{byte(stTestEnd)})
	expectState(t, c, stExchangeResult)
	c.Close()
	o := waitOutcome(t, out, 5*time.Second, "the test")
	if o.res == nil || o.res.Bytes < int64(2*len(block)) {
		t.Errorf("result %+v (%v): want the client's %d bytes counted", o.res, o.err, 2*len(block))
	}
	if o.err != nil && strings.Contains(o.err.Error(), "firewall") {
		t.Errorf("%v: blames a firewall", o.err)
	}
	silent.Close()
}

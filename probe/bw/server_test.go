package bw

import (
	"context"
	"errors"
	"io"
	"net"
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
	out := make(chan serverOutcome, 16)
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
// end at once and a real test right after must run.
func TestServerDropsASetupWhoseClientHungUp(t *testing.T) {
	port, out, _ := hostileServer(t, ServerConfig{})
	for round := range 3 {
		c, _ := rawClient(t, port, params{TCP: true, Parallel: 2, Time: 5, Len: 128 << 10})
		c.Close()
		o := waitOutcome(t, out, 2*time.Second, "a client that hung up during setup")
		if o.err == nil || !strings.Contains(o.err.Error(), "closed the control connection while its data streams were being set up") {
			t.Fatalf("round %d: %v, want the hang-up named", round, o.err)
		}
		res, err := Run(context.Background(), "127.0.0.1", Config{Port: port, Duration: 500 * time.Millisecond, Interval: 250 * time.Millisecond, Bitrate: 10e6})
		if err != nil {
			t.Fatalf("round %d: a real test after the hang-up: %v", round, err)
		}
		if res.Throughput.Mean == nil || !near(*res.Throughput.Mean, 10e6, 0.1) {
			t.Errorf("round %d: mean %v, want 10 Mbit/s", round, res.Throughput.Mean)
		}
		if o := waitOutcome(t, out, 5*time.Second, "the real test"); o.err != nil {
			t.Errorf("round %d: server: %v", round, o.err)
		}
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

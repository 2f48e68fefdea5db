package bw

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeServer accepts one control connection on loopback and runs script on
// it; the script plays the server's side of the protocol (or fails to).
func fakeServer(t *testing.T, script func(t *testing.T, ln *net.TCPListener, c *net.TCPConn)) int {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.AcceptTCP()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		script(t, ln, c)
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().(*net.TCPAddr).Port
}

func readN(t *testing.T, c net.Conn, n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Errorf("fake server: reading %d bytes: %v", n, err)
	}
	return b
}

// upToStreams plays a well-behaved server up to TEST_RUNNING with one TCP
// stream and returns that stream.
func upToStreams(t *testing.T, ln *net.TCPListener, c *net.TCPConn) *net.TCPConn {
	cookie := readN(t, c, cookieLen)
	if cookie[cookieLen-1] != 0 || strings.Trim(string(cookie[:cookieLen-1]), cookieAlphabet) != "" {
		t.Errorf("cookie %q: want 36 characters of iperf3's alphabet and a NUL", cookie)
	}
	c.Write([]byte{byte(stParamExchange)})
	var p params
	if err := readJSON(c, &p); err != nil {
		t.Errorf("params: %v", err)
	}
	if !p.TCP || p.Parallel != 1 || p.Time != 1 || p.Len != 128<<10 {
		t.Errorf("params %+v", p)
	}
	c.Write([]byte{byte(stCreateStreams)})
	d, err := ln.AcceptTCP()
	if err != nil {
		t.Errorf("data stream: %v", err)
		return nil
	}
	if got := readN(t, d, cookieLen); string(got) != string(cookie) {
		t.Errorf("data stream cookie %q, want the control's %q", got, cookie)
	}
	c.Write([]byte{byte(stTestStart), byte(stTestRunning)})
	go io.Copy(io.Discard, d)
	return d
}

func TestStateMachineAgainstFakeServers(t *testing.T) {
	cfg := Config{Duration: time.Second, Interval: 200 * time.Millisecond, ConnectTimeout: time.Second}
	cases := []struct {
		name    string
		script  func(t *testing.T, ln *net.TCPListener, c *net.TCPConn)
		wantErr error
		wantMsg string
		check   func(t *testing.T, r *Result)
	}{
		{"busy", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			c.Write([]byte{denied})
		}, ErrBusy, "one test at a time", nil},
		{"not iperf3: http", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			readN(t, c, cookieLen)
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		}, ErrProtocol, "not an iperf3 3.x server", nil},
		{"not iperf3: silent", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			readN(t, c, cookieLen)
			time.Sleep(3 * time.Second)
		}, ErrProtocol, "said nothing", nil},
		{"closes after the cookie", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			readN(t, c, cookieLen)
		}, ErrProtocol, "closed the connection during setup", nil},
		{"server error", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			readN(t, c, cookieLen)
			c.Write([]byte{byte(stParamExchange)})
			var p params
			_ = readJSON(c, &p)
			c.Write([]byte{0xfe, 0, 0, 0, 5, 0, 0, 0, 0}) // SERVER_ERROR, i_errno 5
		}, ErrServer, "iperf3 error 5", nil},
		{"cut short: control closes mid-test", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			d := upToStreams(t, ln, c)
			time.Sleep(400 * time.Millisecond)
			if d != nil {
				d.Close()
			}
			c.Close()
		}, ErrCutShort, "cut short after", func(t *testing.T, r *Result) {
			if r == nil || !r.CutShort || len(r.Intervals) == 0 {
				t.Errorf("want the partial result of what ran, got %+v", r)
			}
		}},
		{"server terminates mid-test", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			upToStreams(t, ln, c)
			time.Sleep(300 * time.Millisecond)
			c.Write([]byte{byte(stServerTerm)})
		}, ErrServer, "SERVER_TERMINATE", nil},
		{"whole test", func(t *testing.T, ln *net.TCPListener, c *net.TCPConn) {
			upToStreams(t, ln, c)
			if got := readN(t, c, 1); int8(got[0]) != stTestEnd {
				t.Errorf("got state %d, want TEST_END", got[0])
			}
			c.Write([]byte{byte(stExchangeResult)})
			var theirs peerResults
			if err := readJSON(c, &theirs); err != nil || len(theirs.Streams) != 1 || theirs.Streams[0].ID != 1 {
				t.Errorf("client results %+v, %v", theirs, err)
			}
			// The server says it received exactly 12.5 MB in 1 s: 100 Mbit/s.
			writeJSON(c, peerResults{SenderHasRetransmits: -1, Streams: []streamResult{{ID: 1, Bytes: 12.5e6, Retransmits: -1, EndTime: 1}}})
			c.Write([]byte{byte(stDisplayResult)})
			if got := readN(t, c, 1); int8(got[0]) != stIperfDone {
				t.Errorf("got state %d, want IPERF_DONE", got[0])
			}
		}, nil, "", func(t *testing.T, r *Result) {
			if r.Throughput.Mean == nil || *r.Throughput.Mean != 100e6 || r.Bytes != 12.5e6 || r.DurationS != 1 {
				t.Errorf("mean %v bytes %d duration %v: want the receiver's 100 Mbit/s over 1 s", r.Throughput.Mean, r.Bytes, r.DurationS)
			}
			if r.Direction != Upload || r.Retransmits == nil {
				t.Errorf("direction %s retransmits %v", r.Direction, r.Retransmits)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.Port = fakeServer(t, tc.script)
			r, err := Run(context.Background(), "127.0.0.1", c)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("message %q does not say %q", err, tc.wantMsg)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestRefusedSaysWhatToStart(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err := Run(context.Background(), "127.0.0.1", Config{Port: port})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "iperf3 -s") {
		t.Fatalf("err %v", err)
	}
}

func TestBusyServerDeniesASecondClient(t *testing.T) {
	srv, results, starts := startServerStarts(t)
	cfg := Config{Port: srv.Addr().Port, Duration: 2 * time.Second, Bitrate: 10e6}
	first := make(chan error, 1)
	go func() { _, err := Run(context.Background(), "127.0.0.1", cfg); first <- err }()
	// The second client comes once the server has started the first test
	// (its 2 s run then leaves ample time), not after a fixed pause.
	select {
	case <-starts:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start the first test within 20 s")
	}
	_, err := Run(context.Background(), "127.0.0.1", cfg)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("second client: %v, want ErrBusy", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first client: %v", err)
	}
	r := <-results
	if r == nil || r.Throughput.Mean == nil || !near(*r.Throughput.Mean, 10e6, 0.05) {
		t.Errorf("server result %+v", r)
	}
}

// TestUDPAccountingAsIperf3 checks loss, out-of-order and jitter against
// hand computation: sequence 1 2 4 5 3 7 (6 never comes).
func TestUDPAccountingAsIperf3(t *testing.T) {
	var rx udpRx
	t0 := time.Unix(1000, 0)
	// Transit times 10, 12, 11, 15, 13, 13 ms.
	seqs := []int64{1, 2, 4, 5, 3, 7}
	transit := []float64{10, 12, 11, 15, 13, 13}
	for i, s := range seqs {
		sent := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		rx.account(s, sent, sent.Add(time.Duration(transit[i]*float64(time.Millisecond))))
	}
	// Gaps: 3 missing at 4 (+1), 3 arrives late (−1, out of order +1), 6 missing at 7 (+1).
	if rx.lost != 1 || rx.outOfOrder != 1 || rx.highest != 7 {
		t.Errorf("lost %d ooo %d highest %d, want 1 1 7", rx.lost, rx.outOfOrder, rx.highest)
	}
	// J += (|D| − J)/16 over |D| = 2, 1, 4, 2, 0 ms.
	j := 0.0
	for _, d := range []float64{2, 1, 4, 2, 0} {
		j += (d - j) / 16
	}
	if got := rx.jitter * 1000; !near(got, j, 1e-9) {
		t.Errorf("jitter %.9f ms, want %.9f", got, j)
	}
}

// nearestRank is the test's own nearest-rank (rank ceil(p/100·n) of the
// sorted values), the rule linecheck passes as Config.Percentile.
func nearestRank(sorted []float64, p float64) float64 {
	k := min(max(int(math.Ceil(p*float64(len(sorted))/100)), 1), len(sorted))
	return sorted[k-1]
}

func TestPercentilesNearestRank(t *testing.T) {
	var tp Throughput
	bps := []float64{50, 10, 40, 20, 30, 5}
	lens := []float64{1, 1, 1, 1, 1, 0.2} // the short last interval is left out
	intervalStats(&tp, bps, lens, 1, nearestRank)
	if *tp.P5 != 10 || *tp.P50 != 30 || *tp.P95 != 50 || *tp.Min != 10 || *tp.Max != 50 {
		t.Errorf("p5 %v p50 %v p95 %v min %v max %v", *tp.P5, *tp.P50, *tp.P95, *tp.Min, *tp.Max)
	}
	var empty Throughput
	intervalStats(&empty, nil, nil, 1, nearestRank)
	if empty.P50 != nil {
		t.Error("no intervals must leave the percentiles null")
	}
	// Without a percentile rule probe computes none: null, min and max kept.
	var none Throughput
	intervalStats(&none, bps, lens, 1, nil)
	if none.P5 != nil || none.P50 != nil || none.P95 != nil || *none.Min != 10 || *none.Max != 50 {
		t.Errorf("no rule: p5 %v p50 %v p95 %v min %v max %v", none.P5, none.P50, none.P95, *none.Min, *none.Max)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"100M": 1e8, "1G": 1e9, "2.5g": 2.5e9, "500k": 5e5, "1000": 1000, "200Mbps": 2e8, "0": 0} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-5M", "fast", "1e30"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q): want an error", in)
		}
	}
}

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
)

// timedListener accepts TCP connections on a loopback port, closes them
// and keeps when each was accepted: serve's TCP pings, seen from the target.
type timedListener struct {
	mu sync.Mutex
	at []time.Time
}

func newTimedListener(t *testing.T) (int, *timedListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &timedListener{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.at = append(l.at, time.Now())
			l.mu.Unlock()
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, l
}

func (l *timedListener) times() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at...)
}

// span is when a connection was open.
type span struct{ open, close time.Time }

// timedProxy forwards a loopback port to the bw server on port and keeps
// when each connection (a test's control and data connections) was open:
// the tests, seen from the server's side.
func timedProxy(t *testing.T, port int) (int, func() []span) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var spans []span
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open := time.Now()
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					return
				}
				defer s.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
				<-done // either side hung up: the connection is over
				mu.Lock()
				spans = append(spans, span{open, time.Now()})
				mu.Unlock()
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, func() []span {
		mu.Lock()
		defer mu.Unlock()
		return append([]span(nil), spans...)
	}
}

// merge joins overlapping spans: one per test.
func merge(ss []span) []span {
	sort.Slice(ss, func(i, j int) bool { return ss[i].open.Before(ss[j].open) })
	var out []span
	for _, s := range ss {
		if n := len(out); n > 0 && !s.open.After(out[n-1].close) {
			if s.close.After(out[n-1].close) {
				out[n-1].close = s.close
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// Live, as a user runs it: serve pings a TCP listener of this test every
// 100 ms and runs a throughput test against our bw server (through a proxy
// that sees when the test's connections are open) every 4 s. While a test
// runs, the listener sees no ping (a margin of 300 ms at either end allows
// for the goroutines' own delays under load; unpaused, about 14 pings fall
// inside); between the tests the pings go on; and the cycles cut by a test
// count no probe lost: sent and received agree.
func TestServeBWPausesThePingsOnLoopback(t *testing.T) {
	pingPort, pings := newTimedListener(t)
	bwPort, tests := timedProxy(t, bwtest.Server(t))
	cfg := filepath.Join(t.TempDir(), "candidates.yaml")
	yaml := fmt.Sprintf("candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]\n    bandwidth_test: {addr: 127.0.0.1, port: %d}\n", pingPort, bwPort)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log, listen := startServe(t, "--config", cfg, "--count", "5", "--interval", "100ms", "--timeout", "5s",
		"--trace-every", "0", "--bw-every", "4s", "--bw-time", "1s")
	okTests := regexp.MustCompile(`linecheck_bw_tests_total\{[^}]*result="ok"[^}]*\} (\d+)`)
	waitFor(t, 60*time.Second, "two throughput tests", func() bool {
		_, body := get(t, "http://"+listen+"/metrics")
		m := okTests.FindStringSubmatch(body)
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n >= 2
	})
	ws := merge(tests())
	if len(ws) < 2 {
		t.Fatalf("the proxy saw %d tests (%v), want 2\n%s", len(ws), ws, log.String())
	}
	ws = ws[:2]
	const margin = 300 * time.Millisecond
	at := pings.times()
	for i, w := range ws {
		n := 0
		for _, a := range at {
			if a.After(w.open.Add(margin)) && a.Before(w.close.Add(-margin)) {
				n++
			}
		}
		if n > 0 {
			t.Errorf("test %d (%v long): %d pings while it ran", i+1, w.close.Sub(w.open).Round(time.Millisecond), n)
		}
	}
	between := 0
	for _, a := range at {
		if a.After(ws[0].close) && a.Before(ws[1].open) {
			between++
		}
	}
	if between < 5 {
		t.Errorf("%d pings between the tests (%v apart), want them to go on", between, ws[1].open.Sub(ws[0].close).Round(time.Millisecond))
	}
	_, body := get(t, "http://"+listen+"/metrics")
	value := func(name string) float64 {
		m := regexp.MustCompile(name + `\{[^}]*candidate="lo"[^}]*\} (\S+)`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s in\n%s", name, body)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if s, r := value("linecheck_probes_sent_total"), value("linecheck_probes_received_total"); s != r || s == 0 {
		t.Errorf("sent %v received %v: the loopback listener answers all, the cut cycles must not count a probe lost", s, r)
	}
}

// Package bwtest runs our iperf3-protocol server for tests that need a
// throughput test to reach (compare, exporter, cmd). It is imported only
// from _test.go files; it lives apart from testbin because probe's own
// tests import testbin, and bw imports probe.
package bwtest

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe/bw"
)

// Server runs the server in the test's process on an ephemeral loopback
// port until the test ends, and returns that port.
func Server(tb testing.TB) int {
	tb.Helper()
	srv, err := bw.Listen(bw.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	return srv.Addr().Port
}

// Occupy takes the bw server on port as a client that sends its cookie and
// then nothing, so that the server waits for this client's parameters and
// is busy for everyone else (the previous test still closing leaves it so
// too). A connection that sends no cookie no longer does: the server is
// taken when a cookie arrives (issue 37: one silent connection every few
// seconds denied every test). The server answers the cookie with
// PARAM_EXCHANGE (9) when it takes us, ACCESS_DENIED (-1) when it is still
// finishing its last test: connect again until it takes us. The server
// drops a client whose parameters do not follow within its wait (5 s),
// longer than the tests hold it.
func Occupy(tb testing.TB, port int) net.Conn {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	cookie := make([]byte, 37) // 36 characters and a NUL, as iperf3 sends
	copy(cookie, "lcbwtestoccupyoccupyoccupyoccupyoccu")
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := c.Write(cookie); err != nil {
			tb.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		_, err = c.Read(b[:])
		if err == nil && b[0] == 9 {
			_ = c.SetReadDeadline(time.Time{})
			return c
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatal("the bw server never took our cookie's connection as its client")
	return nil
}

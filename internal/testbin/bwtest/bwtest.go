// Package bwtest runs our iperf3-protocol server for tests that need a
// throughput test to reach (compare, exporter, cmd). It is imported only
// from _test.go files; it lives apart from testbin because probe's own
// tests import testbin, and bw imports probe.
package bwtest

import (
	"context"
	"errors"
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

// Occupy connects to the bw server on port and sends nothing, so that the
// server waits for this client's cookie and is busy for everyone else (as a
// TCP probe of the port, or the previous test still closing, leaves it). A
// server still finishing its last test refuses the connection at once
// (ACCESS_DENIED, then it hangs up): connect again until it waits. "At
// once" is judged over a second of silence, not 200 ms: a refusal that a
// loaded machine delays past the wait would pass for a server holding us,
// and the test after it would find the server free.
func Occupy(tb testing.TB, port int) net.Conn {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			tb.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		var b [1]byte
		_, err = c.Read(b[:])
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			_ = c.SetReadDeadline(time.Time{})
			return c
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatal("the bw server never took our silent connection as its client")
	return nil
}

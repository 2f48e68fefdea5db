// Package bwtest runs our iperf3-protocol server for tests that need a
// throughput test to reach (compare, exporter, cmd). It is imported only
// from _test.go files; it lives apart from testbin because probe's own
// tests import testbin, and bw imports probe.
package bwtest

import (
	"context"
	"testing"

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

// Package testbin builds the linecheck binary for tests that run it as a
// black box (lab tests, end-to-end compare and TUI tests). It is imported only
// from _test.go files.
package testbin

import (
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var bin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Linecheck returns the path of the linecheck binary, built once per test
// process and without -race: the race detector would distort every RTT the
// binary measures. LINECHECK_BIN names a prebuilt binary instead.
func Linecheck(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("LINECHECK_BIN"); p != "" {
		return p
	}
	bin.once.Do(func() {
		if bin.dir, bin.err = os.MkdirTemp("", "linecheck-testbin-"); bin.err != nil {
			return
		}
		bin.path = filepath.Join(bin.dir, "linecheck")
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(build.Default.GOROOT, "bin", "go")
		}
		cmd := exec.Command(goBin, "build", "-o", bin.path, "github.com/linecheck/linecheck/cmd/linecheck")
		if out, err := cmd.CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build ./cmd/linecheck: %w\n%s", err, out)
		}
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if bin.dir != "" {
		os.RemoveAll(bin.dir)
	}
}

// TCPListener opens a TCP listener on 127.0.0.1 (an ephemeral port) that
// accepts and closes every connection until the test ends, and returns its
// port: the only address a TCP probe in a test may reach.
func TCPListener(tb testing.TB) int {
	tb.Helper()
	return TCPListenerOn(tb, "127.0.0.1:0")
}

// TCPListenerOn is TCPListener on addr (a loopback address and port: port
// 0 picks one), e.g. the same port on 127.0.0.2 as on 127.0.0.1.
func TCPListenerOn(tb testing.TB, addr string) int {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// ClosedPort returns a loopback TCP port that nothing listened on a moment
// ago: a connection to it is refused (or, taken since, fails the test's
// expectation loudly rather than reaching a stranger's server).
func ClosedPort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

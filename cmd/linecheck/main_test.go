package main

import (
	"os"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// TestMain makes every command's flags before any test: in-process tests
// reach into commands (their flags, usage, help) in any order, as they did
// when all flags were made at start-up; lazyflags_test.go checks the binary,
// which makes only what a run needs, against this.
//
// The tests run one after another, except those marked t.Parallel(): they
// run linecheck only in child processes, on files of their own (the golden
// documents, --hide-hops in every format, the pandas and Prometheus
// checks). Under -race such a child is CPU-bound, and two at a time use
// both cores once the other packages are done (this package is the longest
// of CI). Lab, timing and in-process tests stay sequential: a child beside
// them would move their figures or share their flags.
//
// The child processes (the test binary run as linecheck) skip the race
// detector's 1 s sleep at exit (GORACE atexit_sleep_ms) unless GORACE says
// otherwise: this package starts hundreds of them. A race is reported
// when it happens and still fails the child (exit 66).
func TestMain(m *testing.M) {
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

package main

import (
	"os"
	"testing"

	"github.com/linecheck/linecheck/internal/testbin"
)

// TestMain makes every command's flags before any test: in-process tests
// reach into commands (their flags, usage, help) in any order, as they did
// when all flags were made at start-up; lazyflags_test.go checks the binary,
// which makes only what a run needs, against this.
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

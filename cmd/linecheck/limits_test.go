package main

import (
	"strings"
	"testing"
)

// A count whose probe table cannot be held is refused before any socket
// opens (ping -c 1000000000000 died out of memory with a 171-line stack).
func TestPingRefusesCountsItCannotHold(t *testing.T) {
	for _, args := range [][]string{
		{"ping", "-c", "1000000000000", "127.0.0.1"},
		{"ping", "-c", "9223372036854775807", "127.0.0.0/30"},
		{"ping", "-c", "5000001", "127.0.0.1", "127.0.0.2"},
		{"ping", "--watch", "-c", "1000000000000", "127.0.0.1"},
	} {
		out, errs, code := lcRun(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "more than 10000000 probes in one run") || strings.Contains(errs, "goroutine") {
			t.Errorf("%v: exit %d, stdout %q\n%s", args, code, out, errs)
		}
	}
	if err := checkPingTotal(5_000_000, 2, false); err != nil {
		t.Errorf("10 million probes: %v, want accepted", err)
	}
	if err := checkPingTotal(1<<62, 1, true); err != nil {
		t.Errorf("-l takes no count: %v", err)
	}
}

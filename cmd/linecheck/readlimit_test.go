package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestEndlessInputsAreRefusedWithinTheirLimit: issue 35, each of these grew
// to 3.7–6.5 GB on /dev/zero and hung; each must stop with exit 2 and an
// error naming the file and the limit. Nothing is probed: the input is
// refused before any probe.
func TestEndlessInputsAreRefusedWithinTheirLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"trace", "--replay", "/dev/zero"}, "/dev/zero: larger than 16 MiB; linecheck reads at most 16 MiB of it"},
		{[]string{"ping", "--report", "--journal", "/dev/zero"}, "/dev/zero:1: a line longer than 16 MiB; linecheck reads lines of at most 16 MiB"},
		{[]string{"backtrace", "--targets", "/dev/zero"}, "/dev/zero: larger than 16 MiB; linecheck reads at most 16 MiB of it"},
		{[]string{"gpu", "--topo", "/dev/zero"}, "/dev/zero: larger than 16 MiB; linecheck reads at most 16 MiB of it"},
	}
	for _, tc := range cases {
		began := time.Now()
		_, stderr, code := lcRun(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
		t.Logf("%v: %v", tc.args, time.Since(began))
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// The binary makes only the flags of the command it runs (prepareFlags);
// what it prints and how it exits must not differ from a process that made
// every flag first (this test process, see TestMain) — for every command's
// help, help TOPIC, the root's help, completion, and flag errors.
func TestOnlyTheRunCommandsFlagsAreMadeAndNothingShowsIt(t *testing.T) {
	bin := testbin.Linecheck(t)
	cases := [][]string{
		{"--help"}, {}, {"help"}, {"help", "trace"}, {"help", "bill"}, {"completion", "bash"}, {"__complete", "trace", "--f"}, {"__complete", "ping", "--"}, {"__complete", "tr"},
		{"bogus"}, {"trac", "127.0.0.1"}, {"-h", "trace"},
		{"trace", "--bogus"}, {"trace", "-q"}, {"trace", "--replay", "x.json", "-m", "5"}, {"ping", "--count", "x", "127.0.0.1"},
		{"bill", "--query-in", "x", "--query-out", "y", "f.csv"}, {"serve", "--bw-time", "x"},
	}
	for _, c := range []string{"backtrace", "bill", "bw", "compare", "demo", "ping", "serve", "trace", "tui"} {
		cases = append(cases, []string{c, "--help"}, []string{c, "--no-such-flag"})
	}
	for _, args := range cases {
		// The reference is this test binary run afresh as linecheck
		// (TestMain made every flag; a fresh process, so no flag keeps a
		// value from an earlier in-process run).
		self := exec.Command(os.Args[0], "-test.run=^TestRunAsLinecheck$")
		self.Env = append(os.Environ(), "LINECHECK_TEST_ARGS="+strings.Join(args, "\x1f"))
		out, errb, code := runOut(t, self)
		bout, berr, bcode := runOut(t, exec.Command(bin, args...))
		name := strings.Join(args, " ")
		if bcode != code {
			t.Errorf("linecheck %s: exit %d, with every flag made %d", name, bcode, code)
		}
		if bout != out {
			t.Errorf("linecheck %s: stdout differs from the one with every flag made:\n%s\n--- want:\n%s", name, bout, out)
		}
		if berr != errb {
			t.Errorf("linecheck %s: stderr %q, with every flag made %q", name, berr, errb)
		}
	}
}

func runOut(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// TestRunAsLinecheck is the test binary acting as linecheck for the test
// above: it runs the arguments in LINECHECK_TEST_ARGS and exits with the
// command's code.
func TestRunAsLinecheck(t *testing.T) {
	a, ok := os.LookupEnv("LINECHECK_TEST_ARGS")
	if !ok {
		t.Skip("only run by TestOnlyTheRunCommandsFlagsAreMadeAndNothingShowsIt")
	}
	var args []string
	if a != "" {
		args = strings.Split(a, "\x1f")
	}
	os.Exit(run(args))
}

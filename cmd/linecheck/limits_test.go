package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	// compare: the same bound over the candidates' targets (8 in the
	// sample), refused before any probe with no runtime stack.
	for _, args := range [][]string{
		{"compare", "--count", "1000000000000", "../../samples/candidates.yaml"},
		{"compare", "--count", "1250001", "../../samples/candidates.yaml"},
	} {
		out, errs, code := lcRun(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "× 8 target(s): more than 10000000 probes in one run") || strings.Contains(errs, "goroutine") || strings.Contains(errs, "-l") {
			t.Errorf("%v: exit %d, stdout %q\n%s", args, code, out, errs)
		}
	}
	if err := checkProbeTotal(1_250_000, 8, ""); err != nil {
		t.Errorf("10 million probes: %v, want accepted", err)
	}
	if err := checkPingTotal(5_000_000, 2, false); err != nil {
		t.Errorf("10 million probes: %v, want accepted", err)
	}
	if err := checkPingTotal(1<<62, 1, true); err != nil {
		t.Errorf("-l takes no count: %v", err)
	}
}

// A watch whose journal's disk fills up prints the report of the cycles the
// journal holds and exits 1 (it exited with the write error and printed
// nothing). The disk is a 8 KiB tmpfs in a mount namespace of the child's
// own (unshare -m), so nothing of this host's fills.
func TestWatchOnAFullDiskPrintsItsReport(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a tmpfs in a private mount namespace, raw ICMP); CI runs as root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) not installed")
	}
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j := filepath.Join(dir, "watch.ndjson")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size=8k tmpfs "$0" && exec "$@"`, dir,
		os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--watch", "--journal", j,
		"-c", "2", "-i", "0.005", "127.0.0.1"}, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "no space left on device") || !strings.Contains(errb.String(), "the report covers the cycles the journal holds") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	if !strings.Contains(out.String(), "127.0.0.1") {
		t.Errorf("no report on stdout:\n%s\n%s", out.String(), errb.String())
	}
}

// Off a terminal every table fits 120 columns (the demo's lines reached
// 338, backtrace --list 139, bw --report 131); --wide keeps them whole.
func TestTablesFit120ColumnsOffATerminal(t *testing.T) {
	for _, args := range [][]string{{"demo"}, {"backtrace", "--list"}} {
		out, errs, code := lcRun(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		for i, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("%v: line %d is %d columns: %q", args, i+1, n, l)
			}
		}
	}
	out, _, _ := lcRun(t, "backtrace", "--list", "--wide")
	if !strings.Contains(out, "TUNA (Tsinghua University) public DNS 101.6.6.6, education network (CERNET)") {
		t.Errorf("--wide: the source column is not kept whole:\n%s", out)
	}
}

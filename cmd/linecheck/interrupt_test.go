package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
)

// interruptHelper starts linecheck args in a child, waits for its probe
// socket and a further settle, sends SIGINT, and returns the exit code,
// stdout and stderr.
func interruptHelper(t *testing.T, settle time.Duration, args ...string) (int, []byte, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitForSocket(t, cmd.Process.Pid)
	time.Sleep(settle)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.Bytes(), errb.String()
}

// Ctrl-C during a bw test: the partial result is printed and the exit code
// is 130, as for ping and trace (it was 1, the code of a failed test).
func TestBWInterruptedPrintsThePartialResultAndExits130(t *testing.T) {
	port := bwtest.Server(t)
	code, out, errs := interruptHelper(t, 1500*time.Millisecond, "bw", "-p", fmt.Sprint(port), "-t", "30", "-b", "20M", "--format", "json", "127.0.0.1")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errs)
	}
	if doc["cut_short"] != true || doc["partial"] != true {
		t.Errorf("cut_short %v, partial %v: want both true", doc["cut_short"], doc["partial"])
	}
	if b, _ := doc["bytes"].(float64); b <= 0 || b >= 20e6/8*30 {
		t.Errorf("bytes %v: want the part of the 30 s test that ran", doc["bytes"])
	}
	if !strings.Contains(errs, "linecheck: interrupted") {
		t.Errorf("stderr:\n%s", errs)
	}
}

// Ctrl-C during a backtrace: the report of what was traced, then exit 130
// (it was 0, as if the run had finished).
func TestBacktraceInterruptedReportsAndExits130(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	targets := filepath.Join(t.TempDir(), "lo.yaml")
	if err := os.WriteFile(targets, []byte("targets:\n  - {name: lo, carrier: telecom, city: X, addr: 127.0.0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := interruptHelper(t, time.Second, "backtrace", "--targets", targets, "-c", "1000", "-i", "0.01", "-m", "3", "--format", "json")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errs)
	}
	var doc route.BacktraceDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 1 || doc.Results[0].Trace == nil || len(doc.Results[0].Trace.Hops) != 1 ||
		doc.Results[0].Trace.Hops[0].Sent == 0 || doc.Results[0].Trace.Hops[0].Sent >= 1000 {
		t.Errorf("results %+v", doc.Results)
	}
	if !strings.Contains(errs, "interrupted; the report covers what was traced so far") {
		t.Errorf("stderr:\n%s", errs)
	}
	var raw map[string]any
	if err := json.Unmarshal(out, &raw); err != nil || raw["partial"] != true {
		t.Errorf("partial %v (%v), want true", raw["partial"], err)
	}
}

// Ctrl-C during a backtrace of 3,000 loopback targets (issue 35: 15 s to
// stop): the run ends soon after the signal, with every target in the
// report (those not started yet "not traced: interrupted before it was
// traced", not named on stderr one by one) and "partial": true. The bound
// is generous for a loaded machine: it used to open and close every
// remaining target's raw sockets first.
func TestBacktraceOfThousandsStopsSoonAfterCtrlC(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	run := func(n int) (time.Duration, int, []byte, string) {
		var b strings.Builder
		b.WriteString("targets:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {name: t%d, carrier: telecom, city: X, addr: 127.2.%d.%d}\n", i, i/250, 1+i%250)
		}
		targets := filepath.Join(t.TempDir(), fmt.Sprintf("lo%d.yaml", n))
		if err := os.WriteFile(targets, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		var took time.Duration
		code, out, errs := interruptHelperTimed(t, 300*time.Millisecond, &took, "backtrace", "--targets", targets, "-c", "10", "-i", "1",
			"-m", "2", "--rate", "100", "--no-asn", "--format", "json")
		return took, code, out, errs
	}
	// The same stop with 30 targets, measured beside it: what this machine,
	// loaded as it is now, needs to stop a trace and report. Stopping costs
	// per trace already started (each closes its sockets and reports), and
	// how many started before the signal depends on the machine's speed:
	// 477 of 3,000 on a loaded VM, 1,557 on an idle one. So the bound is
	// the per-trace cost times the traces started, with room, plus 10 s: a
	// check that the stop does not hang or drain the targets left. The cause
	// of issue 35's 14 s (every remaining target's raw sockets opened and
	// closed first) is pinned without a clock by pacing's
	// TestTraceAllStopsOpeningTracesOnceInterrupted.
	small, code, _, errs := run(30)
	if code != 130 {
		t.Fatalf("30 targets: exit %d, want 130\n%s", code, errs)
	}
	took, code, out, errs := run(3000)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errs)
	}
	t.Logf("exited %v after Ctrl-C; 30 targets: %v", took, small)
	var doc route.BacktraceDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%.2000s", err, out)
	}
	notStarted := 0
	for _, r := range doc.Results {
		if r.Rule == "not traced: interrupted before it was traced" {
			notStarted++
		}
	}
	// How many had not started depends on how fast the machine opened
	// sockets before the signal: none is possible on a fast one.
	t.Logf("%d targets not started", notStarted)
	started := 3000 - notStarted
	if limit := 10*time.Second + time.Duration(4*float64(small)*float64(started)/30); took > limit {
		t.Errorf("exited %v after Ctrl-C with %d traces started, want within 10 s + 4 × %d × the 30 targets' %v / 30 = %v", took, started, started, small, limit)
	}
	if len(doc.Results) != 3000 || !doc.Partial {
		t.Errorf("%d results, partial %v: want 3000, true", len(doc.Results), doc.Partial)
	}
	if strings.Count(errs, "interrupted before it was traced") > 0 {
		t.Errorf("stderr names the targets not started one by one:\n%.2000s", errs)
	}
}

// interruptHelperTimed is interruptHelper that also gives how long the
// child took to exit after the signal.
func interruptHelperTimed(t *testing.T, settle time.Duration, took *time.Duration, args ...string) (int, []byte, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitForSocket(t, cmd.Process.Pid)
	time.Sleep(settle)
	sent := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	*took = time.Since(sent)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.Bytes(), errb.String()
}

// backtrace takes trace's -p and -m.
func TestBacktraceTakesTracesShortFlags(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	targets := filepath.Join(t.TempDir(), "lo.yaml")
	if err := os.WriteFile(targets, []byte("targets:\n  - {name: lo, carrier: telecom, city: X, addr: 127.0.0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := prRun(t, "backtrace", "--targets", targets, "--proto", "udp", "-p", "33500", "-m", "2", "-c", "1", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc route.BacktraceDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 1 || doc.Results[0].Trace == nil || doc.Results[0].Trace.Port != 33500 || doc.Results[0].Trace.Protocol != "udp" {
		t.Errorf("results %+v", doc.Results)
	}
	if strings.Contains(out, `"partial"`) {
		t.Errorf("a finished backtrace is marked partial:\n%s", out)
	}
	if _, code := prRun(t, "backtrace", "--targets", targets, "-m", "300"); code != 2 {
		t.Errorf("-m 300: exit %d, want 2 before any target is traced", code)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
)

// TestHelperLinecheckProcess is not a test: the tests below re-run the test
// binary with LINECHECK_HELPER_ARGS set to get a real linecheck process they
// can signal and kill by PID.
func TestHelperLinecheckProcess(t *testing.T) {
	argv := os.Getenv("LINECHECK_HELPER_ARGS")
	if argv == "" {
		t.Skip("helper process of the serve and watch tests")
	}
	os.Exit(run(strings.Split(argv, "\x1f")))
}

// startLinecheck starts `linecheck args...` as a child process; its stderr
// goes to the returned buffer. t.Cleanup kills it (by its PID) if still running.
func startLinecheck(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &stderr
}

// runLinecheck runs `linecheck args...` in a child process (flags are
// package state, so running commands in-process would leak them into other
// tests) and returns its stdout; a non-zero exit fails the test.
func runLinecheck(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("linecheck %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// waitFor polls cond every 50 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func journalCycles(t *testing.T, path string) ([]journal.Entry, journal.ReadInfo) {
	t.Helper()
	es, info, err := journal.Read(path)
	if err != nil {
		t.Fatalf("journal after kill: %v", err)
	}
	return es, info
}

func needICMP(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		b, _ := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
		if f := strings.Fields(string(b)); len(f) == 2 && f[0] == "1" && f[1] == "0" {
			t.Skip("ICMP to 127.0.0.1 needs root or net.ipv4.ping_group_range")
		}
	}
}

// A watch killed with SIGKILL mid-run leaves a journal whose every line
// parses (a torn last line is dropped and reported); a restart with the same
// --journal resumes the cycle numbers.
func TestWatchSurvivesSIGKILLAndResumes(t *testing.T) {
	needICMP(t)
	path := filepath.Join(t.TempDir(), "watch.ndjson")
	args := []string{"ping", "--watch", "--journal", path, "-c", "3", "-i", "20ms", "-W", "2s", "127.0.0.1"}

	cmd, _ := startLinecheck(t, args...)
	waitFor(t, 20*time.Second, "3 journaled cycles", func() bool {
		es, _, err := journal.Read(path)
		return err == nil && len(es) >= 3
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	es, info := journalCycles(t, path)
	for i, e := range es {
		if e.Cycle != i+1 || e.Run != 1 || len(e.Ping) != 1 || e.Ping[0].Sent != 3 || e.Ping[0].Recv != 3 {
			t.Fatalf("line %d after kill: %+v", i+1, e)
		}
	}
	killedAt := len(es)
	t.Logf("killed after %d cycles (torn last line: %v)", killedAt, info.Torn)

	// A crash can also cut the last write short; make sure that case is met.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schema":"linecheck.journal/v1","kind":"ping","cycle":`)
	f.Close()

	cmd, out := startLinecheck(t, args...)
	waitFor(t, 20*time.Second, "2 more cycles after the restart", func() bool {
		es, _, err := journal.Read(path)
		return err == nil && len(es) >= killedAt+2
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch stopped by SIGTERM: %v\n%s", err, out)
	}
	for _, want := range []string{"torn last line", "dropped", "resuming " + path + " after cycle"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("restart output lacks %q:\n%s", want, out)
		}
	}
	es, info = journalCycles(t, path)
	if info.Torn {
		t.Errorf("journal still torn after a graceful stop: %+v", info)
	}
	for i, e := range es {
		wantRun := 1
		if i >= killedAt {
			wantRun = 2
		}
		if e.Cycle != i+1 || e.Run != wantRun {
			t.Fatalf("line %d: cycle %d run %d, want cycle %d run %d", i+1, e.Cycle, e.Run, i+1, wantRun)
		}
	}
	// The report read back: every cycle counted, loopback always answers.
	rep := runLinecheck(t, "ping", "--report", "--journal", path, "--format", "json")
	var r journal.Report
	if err := json.Unmarshal(rep, &r); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	if r.Cycles != len(es) || r.Runs != 2 || len(r.Targets) != 1 || r.Targets[0].Availability != 1 || len(r.Targets[0].Hours) == 0 {
		t.Errorf("report %+v", r)
	}
}

// trace --watch journals one trace per cycle; the report counts the
// destination's entry of each.
func TestTraceWatchJournalsEachCycle(t *testing.T) {
	needICMP(t)
	if os.Geteuid() != 0 {
		t.Skip("trace needs raw sockets (root or CAP_NET_RAW)")
	}
	path := filepath.Join(t.TempDir(), "trace.ndjson")
	out := runLinecheck(t, "trace", "--watch", "--journal", path, "--watch-cycles", "3", "-i", "20ms", "--format", "json", "127.0.0.1")
	es, info := journalCycles(t, path)
	if info.Torn || len(es) != 3 {
		t.Fatalf("%d cycles, %+v", len(es), info)
	}
	for i, e := range es {
		if e.Kind != journal.KindTrace || e.Cycle != i+1 || e.Trace == nil || !e.Trace.Reached || e.Trace.Addr != "127.0.0.1" {
			t.Fatalf("cycle %d: %+v", i+1, e)
		}
	}
	var r journal.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Kind != "trace" || r.Cycles != 3 || len(r.Targets) != 1 || r.Targets[0].Availability != 1 || r.Targets[0].Recv != 3 {
		t.Errorf("report %+v", r)
	}
	// A trace journal cannot be continued by ping.
	code, stderr := runLinecheckCode(t, "ping", "--watch", "--journal", path, "--watch-cycles", "1", "127.0.0.1")
	if code != 2 || !strings.Contains(stderr, "holds trace cycles, not ping") {
		t.Errorf("ping on a trace journal: exit %d %q", code, stderr)
	}
}

// trace --watch journals hops and their statistics only: --nat and --mtu,
// which it would otherwise ignore without a word, are refused before
// anything is probed or a journal is created.
func TestTraceWatchRefusesWhatItCannotJournal(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--nat", "trace --watch does not journal NAT IDs"},
		{"--mtu", "trace --watch does not journal the path MTU"},
		{"--multipath", "trace --watch journals one path: drop --multipath"},
	} {
		j := filepath.Join(t.TempDir(), "w.ndjson")
		code, stderr := runLinecheckCode(t, "trace", "--watch", "--journal", j, tc.flag, "127.0.0.1")
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("trace --watch %s: exit %d, %q; want 2 and %q", tc.flag, code, stderr, tc.want)
		}
		if _, err := os.Stat(j); err == nil {
			t.Errorf("trace --watch %s created its journal before refusing", tc.flag)
		}
	}
}

// A watch reads its command's flags as a one-off run does, and refuses
// what a one-off run refuses: --size 5 was journaled as ping's, --tcp 70000
// as a port that never answered, --max-ttl 300 and -I -U went unchecked.
// Each is refused before a probe or a journal, with exit 2.
func TestWatchesCheckTheirFlagsAsOneOffRunsDo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ping", "--size", "5"}, "--size 5: use 12..65000 bytes"},
		{[]string{"ping", "--socket", "bogus"}, `--socket "bogus": use auto, dgram or raw`},
		{[]string{"ping", "--tcp", "70000"}, "--tcp 70000: not a port number"},
		{[]string{"ping", "-l"}, "--loop does not go with --watch"},
		{[]string{"ping", "--stream"}, "--stream does not go with --watch"},
		{[]string{"trace", "--max-ttl", "300"}, "--max-ttl 300: a TTL is 1..255"},
		{[]string{"trace", "-U", "--port", "0"}, "--port 0: not a port number"},
		{[]string{"trace", "-I", "-U"}, "-I and -U: each chooses the probe protocol"},
		{[]string{"trace", "--mode", "bogus"}, `--mode "bogus"`},
	} {
		j := filepath.Join(t.TempDir(), "w.ndjson")
		args := append(append([]string{tc.args[0], "--watch", "--journal", j}, tc.args[1:]...), "127.0.0.1")
		code, stderr := runLinecheckCode(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", args, code, stderr, tc.want)
		}
		if _, err := os.Stat(j); err == nil {
			t.Errorf("%v created its journal before refusing", args)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

func TestDurationFlagTakesSecondsAndGoDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0.2": 200 * time.Millisecond, "2": 2 * time.Second, "1.5": 1500 * time.Millisecond,
		"200ms": 200 * time.Millisecond, "1m30s": 90 * time.Second, "0": 0,
	} {
		got, err := parseSeconds(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "1e400", "NaN", "0x10", "2 s", ""} {
		_, err := parseSeconds(bad)
		if err == nil || !strings.Contains(err.Error(), "seconds (0.2, 2)") || !strings.Contains(err.Error(), "Go duration (200ms") {
			t.Errorf("%q: error %v does not show both forms", bad, err)
		}
	}
	// A number of seconds beyond time.Duration's ~292 years is a number all
	// the same: it is too long, not "not a duration".
	for _, long := range []string{"99999999999", "-1e12", "Inf"} {
		if _, err := parseSeconds(long); err == nil || !strings.Contains(err.Error(), "too long a duration: at most 9223372036 seconds") {
			t.Errorf("%q: %v", long, err)
		}
	}
}

// pflag's GetDuration reads the seconds flag like its own (watch.go uses it).
func TestDurationFlagReadsBackWithGetDuration(t *testing.T) {
	var d time.Duration
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	durationVarP(fs, &d, "interval", "i", time.Second, "")
	if err := fs.Parse([]string{"-i", "0.25"}); err != nil {
		t.Fatal(err)
	}
	got, err := fs.GetDuration("interval")
	if err != nil || got != 250*time.Millisecond || d != 250*time.Millisecond {
		t.Errorf("GetDuration %v %v, var %v", got, err, d)
	}
}

func TestVersionSaysVersionCommitAndGo(t *testing.T) {
	bin := buildBin(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		s := string(out)
		if !strings.HasPrefix(s, "linecheck "+version+"\n") || !strings.Contains(s, "\ncommit: ") ||
			!strings.Contains(s, "\ngo: go1.") {
			t.Errorf("%v:\n%s", args, s)
		}
	}
}

// buildBin builds linecheck with a commit stamped in, as a release build does.
func buildBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "linecheck")
	cmd := exec.Command("go", "build", "-ldflags", "-X main.commit=abc1234", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Flag help renders names literally: pflag takes the first `quoted` word of
// a usage string as the value's name, so a usage with two quoted parts
// prints "--replay mtr --json".
func TestHelpRendersFlagNamesLiterally(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if n := strings.Count(f.Usage, "`"); n > 2 {
				t.Errorf("%s --%s: usage has %d backticks: %q", c.CommandPath(), f.Name, n, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	root := newRootCmd()
	defineAllFlags(root)
	walk(root)
	var b bytes.Buffer
	traceCmd, _, err := root.Find([]string{"trace"})
	if err != nil {
		t.Fatal(err)
	}
	traceCmd.SetOut(&b)
	traceCmd.Usage()
	if strings.Contains(b.String(), "--replay mtr") || !strings.Contains(b.String(), "--replay FILE") {
		t.Errorf("trace help:\n%s", b.String())
	}
}

// lcRunCtx runs the CLI in-process with ctx after resetting c's flags.
func lcRunCtx(t *testing.T, ctx context.Context, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	testIO.SetOut(&out)
	testIO.SetErr(&errb)
	defer testIO.SetOut(nil)
	defer testIO.SetErr(nil)
	code := testIO.run(ctx, args)
	return out.String(), errb.String(), code
}

// fakeLookup resolves "ok.test" to 127.0.0.1 and nothing else, so no test
// asks the machine's resolver.
func fakeLookup(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host == "ok.test" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// ping, like fping: a name that does not resolve is listed and the others
// are probed and reported, in every format; exit 2 then, else 1 when a
// target never replied, else 0. TCP connect to loopback listeners needs no
// privilege.
func TestPingSweepsOnWhenANameDoesNotResolve(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ctx := context.WithValue(context.Background(), lookupKey{}, lookupFunc(fakeLookup))
	base := []string{"ping", "--tcp", port, "-c", "2", "-i", "0.01", "-W", "0.5"}

	out, errs, code := lcRunCtx(t, ctx, append(base, "--format", "json", "ok.test", "nosuch.test", "127.0.0.1")...)
	if code != 2 {
		t.Errorf("exit %d, want 2\n%s", code, errs)
	}
	var doc report.PingDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 2 || doc.Results[0].Target != "ok.test" || doc.Results[0].Recv != 2 || doc.Results[1].Recv != 2 ||
		len(doc.Unresolved) != 1 || doc.Unresolved[0].Target != "nosuch.test" || !strings.Contains(doc.Unresolved[0].Error, "no such host") {
		t.Errorf("document %+v", doc)
	}
	if !strings.Contains(errs, "nosuch.test: not probed") {
		t.Errorf("stderr does not list the bad name:\n%s", errs)
	}
	for _, f := range []string{"table", "csv", "markdown"} {
		out, _, code := lcRunCtx(t, ctx, append(base, "--format", f, "nosuch.test", "127.0.0.1")...)
		if code != 2 || !strings.Contains(out, "127.0.0.1") || !strings.Contains(out, "nosuch.test") {
			t.Errorf("--format %s: exit %d\n%s", f, code, out)
		}
	}
	if _, errs, code := lcRunCtx(t, ctx, append(base, "127.0.0.1")...); code != 0 {
		t.Errorf("all reply: exit %d, want 0\n%s", code, errs)
	}
	// -a lists the alive targets, -u the others (names that did not resolve too).
	out, _, _ = lcRunCtx(t, ctx, append(base, "-a", "127.0.0.1", "nosuch.test")...)
	if out != "127.0.0.1\n" {
		t.Errorf("-a: %q", out)
	}
	out, _, _ = lcRunCtx(t, ctx, append(base, "-u", "127.0.0.1", "nosuch.test")...)
	if out != "nosuch.test\n" {
		t.Errorf("-u: %q", out)
	}
	ln.Close()
	// Nobody listens any more: the port is closed, no reply, exit 1.
	if _, errs, code := lcRunCtx(t, ctx, append(base, "127.0.0.1")...); code != 1 || !strings.Contains(errs, "did not reply") {
		t.Errorf("no reply: exit %d, want 1\n%s", code, errs)
	}
}

// The sentences for usage mistakes say what to do.
func TestUsageMistakesGetASentence(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ping"}, "ping needs at least one TARGET"},
		{[]string{"trace", "--replay", "x.json", "127.0.0.1"}, "drop 127.0.0.1 to replay the file"},
		{[]string{"trace", "--replay", "x.json", "--proto", "tcp", "--cycles", "5"}, "--cycles, --proto shape(s) live probes"},
		{[]string{"trace", "-T", "-I", "127.0.0.1"}, "-I and -T: each chooses the probe protocol"},
		{[]string{"ping", "-a", "-u", "127.0.0.1"}, "choose one"},
		{[]string{"ping", "-Q", "5", "127.0.0.1"}, "add -l"},
		{[]string{"ping", "-i", "soon", "127.0.0.1"}, "use seconds (0.2, 2) or a Go duration"},
	}
	for _, tc := range tests {
		_, errs, code := lcRun(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// trace's short flags are traceroute's and mtr's: -q probes per hop, -w the
// wait, -m/-f the TTL range, -p the port, -T/-U/-u/-I the protocol.
func TestTraceShortFlagsAsTraceroute(t *testing.T) {
	c := newTraceCmd()
	defineFlags(c)
	fs := c.Flags()
	if err := fs.Parse([]string{"-q", "3", "-w", "2", "-m", "9", "-f", "2", "-p", "443", "-T", "-n"}); err != nil {
		t.Fatal(err)
	}
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	if get("cycles") != "3" || get("timeout") != "2s" || get("max-ttl") != "9" || get("first-ttl") != "2" || get("port") != "443" ||
		get("proto") != "tcp" || get("no-dns") != "true" {
		t.Errorf("cycles %s timeout %s max-ttl %s first-ttl %s port %s proto %s no-dns %s", get("cycles"), get("timeout"),
			get("max-ttl"), get("first-ttl"), get("port"), get("proto"), get("no-dns"))
	}
	if err := fs.Parse([]string{"-u"}); err != nil || get("proto") != "udp" {
		t.Errorf("-u: %v %q", err, get("proto"))
	}
}

// A trace table names hops by their reverse DNS name (from the injected
// resolver: no test asks the system's), cached per address.
func TestHopNamesAreLookedUpOncePerAddress(t *testing.T) {
	tr := traceFixture()
	calls := map[string]int{}
	var mu sync.Mutex
	lookup := func(ctx context.Context, addr string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[addr]++
		if addr == "10.77.0.1" {
			return []string{"r1.lab.test."}, nil
		}
		return nil, errors.New("no name")
	}
	cache := rdns.New(lookup)
	hopNames(context.Background(), tr, cache)
	names := hopNames(context.Background(), tr, cache)
	if names["10.77.0.1"] != "r1.lab.test" || len(names) != 1 || calls["10.77.0.1"] != 1 || calls["10.77.0.2"] != 1 {
		t.Errorf("names %v, calls %v", names, calls)
	}
	var b bytes.Buffer
	report.Render(&b, report.TraceReport{Trace: tr, View: report.TraceView{Names: names, ShowIPs: true}}, report.FormatTable, report.Options{Width: 120})
	if !strings.Contains(b.String(), "r1.lab.test (10.77.0.1)") {
		t.Errorf("-b table:\n%s", b.String())
	}
	// Without -b (mtr's default) a named hop shows its name alone.
	b.Reset()
	report.WriteWith(&b, "table", report.Options{Width: 120}, report.TraceTables(tr, "table", report.TraceView{Names: names})...)
	if !strings.Contains(b.String(), "r1.lab.test ") || strings.Contains(b.String(), "(10.77.0.1)") {
		t.Errorf("table:\n%s", b.String())
	}
}

// traceFixture is a reached two-hop trace inside the lab's addresses.
func traceFixture() *route.Trace {
	rs := func(addr string, ms float64) []route.Responder {
		return []route.Responder{{Addr: addr, Recv: 2, RTT: stats.RTTStats{Min: ms, Avg: ms, P50: ms, P95: ms, P99: ms, Max: ms}}}
	}
	return &route.Trace{Schema: route.TraceSchema, Target: "10.77.0.2", Addr: "10.77.0.2", Protocol: "icmp", Reached: true,
		Hops: []route.Hop{{TTL: 1, Sent: 2, Flags: []string{}, Responders: rs("10.77.0.1", 0.05)},
			{TTL: 2, Sent: 2, Flags: []string{"destination"}, Responders: rs("10.77.0.2", 0.08)}}}
}

// loopbackListener accepts and closes TCP connections on 127.0.0.1 until
// the test ends; it returns the port.
func loopbackListener(t *testing.T) string {
	return strconv.Itoa(testbin.TCPListener(t))
}

// waitForSocket waits until process pid has a socket open. The probing
// commands set up their SIGINT handler before they open any socket, so from
// then on an interrupt is theirs to handle (before, it kills the process).
func waitForSocket(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, 30*time.Second, "the child to open its probe socket", func() bool {
		fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				return true
			}
		}
		return false
	})
}

// Ctrl-C: ping prints the partial summary, says "interrupted" and exits 130.
func TestPingInterruptedPrintsThePartialSummary(t *testing.T) {
	port, conns := countingListener(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--tcp", strconv.Itoa(port), "-c", "1000", "-i", "0.01",
		"--format", "json", "127.0.0.1"}, "\x1f"))
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
	// Three probes have reached the listener: the signal handler is set up
	// (it comes before any probe) and the summary has a probe to report.
	// One is not enough: the listener may accept the first connection before
	// the child, on a loaded machine, has decided that probe (a probe in
	// flight at the interrupt is left out, not counted), and its summary
	// then says 0 sent; by the third, sent 10 ms later each, the first is
	// long decided.
	waitFor(t, 30*time.Second, "three probes", func() bool { return conns.Load() >= 3 })
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, errb.String())
	}
	var doc report.PingDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !doc.Partial || len(doc.Results) != 1 || doc.Results[0].Sent == 0 || doc.Results[0].Sent >= 1000 {
		t.Errorf("partial document %+v", doc)
	}
	if !strings.Contains(errb.String(), "linecheck: interrupted") {
		t.Errorf("stderr:\n%s", errb.String())
	}
}

// compare --offline with flags of live probing says what to do.
func TestCompareOfflineRefusesLiveFlags(t *testing.T) {
	_, errs, code := lcRun(t, "compare", "--offline", "--count", "50", "../../samples/candidates.yaml")
	if code != 2 || !strings.Contains(errs, "--offline replays the recordings") || !strings.Contains(errs, "drop --count") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}

// A TTL an mtr recording has no entry for reads "not recorded" in the table
// and the line-class notes, never "silent" or a loss of 100%.
func TestTraceReplaySaysNotRecordedForAMissingTTL(t *testing.T) {
	f := filepath.Join(t.TempDir(), "gap.mtr.json")
	// mtr 0.95's JSON layout; hub 2 left out by hand.
	os.WriteFile(f, []byte(`{"report":{"mtr":{"src":"x","dst":"127.0.0.1","tests":3},"hubs":[
{"count":1,"host":"127.0.0.2","Loss%":0,"Snt":3,"Last":0.05,"Avg":0.05,"Best":0.05,"Wrst":0.05,"StDev":0},
{"count":3,"host":"127.0.0.1","Loss%":0,"Snt":3,"Last":0.06,"Avg":0.06,"Best":0.06,"Wrst":0.06,"StDev":0}]}}`), 0o644)
	out, code := prRun(t, "trace", "--replay", f)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var ttl2 string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "2 ") {
			ttl2 = l
		}
	}
	if !strings.Contains(ttl2, "not recorded") || strings.Contains(ttl2, "100.0%") || strings.Contains(out, "silent") ||
		!strings.Contains(out, "TTL 2 not recorded") {
		t.Errorf("table:\n%s", out)
	}
	out, _ = prRun(t, "trace", "--replay", f, "--format", "csv")
	if !strings.Contains(out, "127.0.0.1,2,false,") {
		t.Errorf("csv does not mark TTL 2 as not recorded:\n%s", out)
	}
}

// pandasShape loads csv with pandas.read_csv as is and returns "rows cols"
// and the dtype of column col.
func pandasShape(t *testing.T, csv, col string) string {
	t.Helper()
	py := ""
	// Debian's python3-pandas is for the system python3, which a python3
	// earlier on PATH (pyenv) may not see.
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pandas").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("python3-pandas is not installed (scripts/test installs it as root)")
	}
	cmd := exec.Command(py, "-c", "import sys, pandas\ndf = pandas.read_csv(sys.stdin)\nprint(df.shape[0], df.shape[1], df[sys.argv[1]].dtype)", col)
	cmd.Stdin = strings.NewReader(csv)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pandas.read_csv: %v\n%s\n%s", err, out, csv)
	}
	return strings.TrimSpace(string(out))
}

// Every --format csv is one tidy table pandas reads as is: one header, one
// row per entity, numbers in base units (float64 columns), empty for none.
func TestCSVLoadsInPandas(t *testing.T) {
	out, code := prRun(t, "trace", "--replay", "../../samples/rec/hk-bgp-forward.json", "--format", "csv")
	if code != 0 {
		t.Fatal(code)
	}
	if got := pandasShape(t, out, "rtt_p95_ms"); got != "12 29 float64" {
		t.Errorf("trace hops: %s", got)
	}
	out, _ = prRun(t, "trace", "--replay", "../../samples/rec/hk-bgp-forward.json", "--format", "csv", "--table", "route")
	if got := pandasShape(t, out, "line_class"); got != "1 14 object" {
		t.Errorf("trace route: %s\n%s", got, out)
	}
	port := loopbackListener(t)
	ctx := context.WithValue(context.Background(), lookupKey{}, lookupFunc(fakeLookup))
	out, _, _ = lcRunCtx(t, ctx, "ping", "--tcp", port, "-c", "3", "-i", "0.01", "--format", "csv", "127.0.0.1", "ok.test", "nosuch.test")
	if got := pandasShape(t, out, "rtt_avg_ms"); got != "3 23 float64" {
		t.Errorf("ping: %s\n%s", got, out)
	}
}

// Ctrl-C during a trace: the cycles finished so far are reported, stderr
// says "interrupted", exit 130.
func TestTraceInterruptedReportsFinishedCycles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"trace", "-c", "1000", "-i", "0.01",
		"--format", "json", "127.0.0.1"}, "\x1f"))
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
	// The start of a (race-enabled) child on a loaded machine takes what it
	// takes: wait for its raw socket. Cycles are then 10 ms apart; a second
	// finishes some, still far from the 1000.
	waitForSocket(t, cmd.Process.Pid)
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, errb.String())
	}
	var tr route.Trace
	if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(tr.Hops) != 1 || tr.Hops[0].Sent == 0 || tr.Hops[0].Sent >= 1000 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("hops %+v\n%s", tr.Hops, errb.String())
	}
	// The JSON says it is cut short, by ping's name for it (issue 35).
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["partial"] != true {
		t.Errorf("partial %v (%v), want true", doc["partial"], err)
	}
}

// fping's sweep habits: -q over a CIDR prints the prefix's one summary
// line instead of a row per address; -l with -Q prints interim summaries on
// stderr until stopped.
func TestPingCIDRSummaryLineAndLoop(t *testing.T) {
	port := loopbackListener(t)
	out, _, code := lcRunCtx(t, context.Background(), "ping", "--tcp", port, "-q", "-c", "1", "-i", "0.01", "--rate", "1000", "127.0.0.0/29")
	// 127.0.0.1 listens; .2–.6 refuse (nobody listens there on that port).
	if code != 1 || !strings.Contains(out, "127.0.0.0/29: 6 targets, 1 alive, 5 unreachable, loss 83.3% of 6 probes") ||
		strings.Contains(out, "127.0.0.2 ") {
		t.Errorf("exit %d\n%s", code, out)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--tcp", port, "-l", "-Q", "0.3", "-i", "0.05",
		"127.0.0.1"}, "\x1f"))
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Stop the loop once it has printed two interim summaries (0.3 s apart),
	// however long the child took to start.
	waitFor(t, 30*time.Second, "two interim summaries", func() bool {
		return strings.Count(stderr.String(), "interim summary") >= 2
	})
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	// With -l, Ctrl-C is the normal end: the exit status is the sweep's.
	if err != nil {
		t.Errorf("exit %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "interim summary"); n < 2 {
		t.Errorf("%d interim summaries on stderr:\n%s", n, stderr.String())
	}
	if !strings.Contains(stdout.String(), "127.0.0.1") || strings.Contains(stdout.String(), "interim") {
		t.Errorf("final summary:\n%s", stdout.String())
	}
}

// The watch report's CSV: one tidy table per invocation, summary by
// default, hours with --table hours; an hour without replies has empty
// percentiles (null in JSON), not 0.
func TestWatchReportCSVTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.ndjson")
	w, _, err := journal.Open(path, journal.KindPing)
	if err != nil {
		t.Fatal(err)
	}
	t3 := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	t20 := time.Date(2026, 11, 1, 20, 0, 0, 0, time.UTC)
	for _, e := range []journal.Entry{
		{Time: t3, End: t3.Add(time.Second), Ping: []journal.PingResult{{Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp", Sent: 2, Recv: 2, RTTms: []float64{10, 12}}}},
		{Time: t20, End: t20.Add(time.Second), Ping: []journal.PingResult{{Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp", Sent: 2, Recv: 0, RTTms: []float64{}}}},
	} {
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	out, code := prRun(t, "ping", "--report", "--journal", path, "--format", "csv")
	if code != 0 || !strings.HasPrefix(pandasShape(t, out, "rtt_p95_ms"), "1 19 ") {
		t.Errorf("summary: exit %d\n%s", code, out)
	}
	out, code = prRun(t, "ping", "--report", "--journal", path, "--format", "csv", "--table", "hours")
	if code != 0 || !strings.Contains(out, ",3,1,1,2,2,0,10,12,12\n") || !strings.Contains(out, ",20,1,0,2,0,1,,,\n") {
		t.Errorf("hours: exit %d\n%s", code, out)
	}
	out, _ = prRun(t, "ping", "--report", "--journal", path, "--format", "json")
	if !strings.Contains(out, `"p50_ms": null`) {
		t.Errorf("json hour without replies:\n%s", out)
	}
}

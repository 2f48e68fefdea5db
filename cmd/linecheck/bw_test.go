package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
)

// TestHelperBWProcess is not a test: it runs linecheck with the watch's
// clock replaced by one that moves one hour per call, so a few seconds of
// --watch fill several hours of the day (LINECHECK_BW_ARGS holds the args).
func TestHelperBWProcess(t *testing.T) {
	argv := os.Getenv("LINECHECK_BW_ARGS")
	if argv == "" {
		t.Skip("helper process of the bw tests")
	}
	base := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	n := 0
	clock := func() time.Time { n++; return base.Add(time.Duration(n-1) * time.Hour) }
	os.Exit(runContext(context.WithValue(context.Background(), clockKey{}, clock), strings.Split(argv, "\x1f")))
}

// bwHelper returns the command that runs linecheck args with the fake clock.
func bwHelper(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBWProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_BW_ARGS="+strings.Join(args, "\x1f"))
	return cmd
}

// The JSON document carries exactly the fields the contract names.
func TestBWJSONHasTheContractFields(t *testing.T) {
	port := bwtest.Server(t)
	out := runLinecheck(t, "bw", "-p", fmt.Sprint(port), "-t", "1", "-b", "40M", "--format", "json", "127.0.0.1")
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"schema", "server", "port", "protocol", "direction", "duration_s", "streams", "throughput_bps", "bytes", "retransmits", "intervals", "udp"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("field %q missing", k)
		}
	}
	if doc["schema"] != "linecheck.bw/v1" || doc["direction"] != "upload" || doc["protocol"] != "tcp" || doc["udp"] != nil {
		t.Errorf("schema %v direction %v protocol %v udp %v", doc["schema"], doc["direction"], doc["protocol"], doc["udp"])
	}
	tp := doc["throughput_bps"].(map[string]any)
	var keys []string
	for k := range tp {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "max,mean,min,p5,p50,p95" {
		t.Errorf("throughput_bps keys %v", keys)
	}
	if m, _ := tp["mean"].(float64); m < 38e6 || m > 41e6 {
		t.Errorf("mean %v, want the paced 40 Mbit/s", tp["mean"])
	}
	iv := doc["intervals"].([]any)[0].(map[string]any)
	for _, k := range []string{"start_s", "end_s", "bps", "retransmits", "rtt_ms"} {
		if _, ok := iv[k]; !ok {
			t.Errorf("interval field %q missing", k)
		}
	}
	// UDP: the udp object with its five fields.
	out = runLinecheck(t, "bw", "-p", fmt.Sprint(port), "-t", "1", "-u", "-b", "10M", "--reverse", "--format", "json", "127.0.0.1")
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	u, ok := doc["udp"].(map[string]any)
	if !ok {
		t.Fatalf("udp: %v", doc["udp"])
	}
	for _, k := range []string{"packets", "lost", "loss", "jitter_ms", "out_of_order"} {
		if _, ok := u[k]; !ok {
			t.Errorf("udp field %q missing", k)
		}
	}
}

func TestBWBadInputExits2AndSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bw", "-b", "fast", "127.0.0.1"}, "--bitrate"},
		{[]string{"bw", "--reverse", "--bidir", "127.0.0.1"}, "choose one"},
		{[]string{"bw", "-P", "0", "127.0.0.1"}, "parallel"},
		{[]string{"bw", "--listen", "127.0.0.1:http"}, "--listen"},
		{[]string{"bw", "-s", "--listen", "5201"}, "--listen and --server: choose one"},
		{[]string{"bw", "-s", "127.0.0.1"}, "take no SERVER"},
		{[]string{"bw", "-1", "127.0.0.1"}, "--one-off applies to a server"},
		{[]string{"bw", "-c", "127.0.0.1", "127.0.0.2"}, "-c 127.0.0.1 names the SERVER already"},
		{[]string{"bw", "-s", "-c", "127.0.0.1"}, "-c (--client) names the server a client tests against"},
		{[]string{"bw", "-J", "--format", "csv", "127.0.0.1"}, "-J is --format json"},
		{[]string{"bw", "-s", "-p", "70000"}, "--port 70000: not a port number"},
		{[]string{"bw", "--udp", "-b", "0", "127.0.0.1"}, "needs a rate"},
		{[]string{"bw", "--report"}, "--journal"},
		{[]string{"bw", "--report", "--journal", "x", "--evening", "25-3"}, "--evening"},
		{[]string{"bw"}, "SERVER"},
	} {
		cmd := bwHelper(tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v, stderr %q; want exit 2 naming %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}

// A watch journals every test, resumes after a torn last line, and its
// report groups the tests by hour of day (the helper's clock moves an hour
// per test).
func TestBWWatchJournalsResumesAndReports(t *testing.T) {
	port := bwtest.Server(t)
	path := filepath.Join(t.TempDir(), "bw.ndjson")
	args := []string{"bw", "--watch", "--journal", path, "--every", "1s", "-t", "1", "-i", "250ms", "-b", "20M",
		"--watch-cycles", "2", "-p", fmt.Sprint(port), "--format", "json", "127.0.0.1"}
	if out, err := bwHelper(args...).CombinedOutput(); err != nil {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	// A crash mid-write leaves a torn line; the next run cuts it and goes on.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"schema":"linecheck.journal/v1","kind":"bw","cyc`)
	f.Close()
	cmd := bwHelper(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "torn last line") || !strings.Contains(stderr.String(), "resuming") {
		t.Errorf("stderr %q: want the torn line and the resume reported", stderr.String())
	}
	es, info, err := journal.Read(path)
	if err != nil || info.Torn || len(es) != 4 {
		t.Fatalf("journal: %d entries, %+v, %v", len(es), info, err)
	}
	for i, e := range es {
		if e.Cycle != i+1 || e.Kind != "bw" || e.BW == nil || e.BW.Throughput.Mean == nil {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if es[2].Run != 2 {
		t.Errorf("run %d after resume, want 2", es[2].Run)
	}
	var r journal.BWReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Both runs started their clocks at 00:30: hours 00 and 01 twice each.
	if r.Cycles != 4 || len(r.Hours) != 2 || r.Hours[0].Tests != 2 || r.Hours[1].Tests != 2 {
		t.Errorf("report: %d cycles, hours %+v", r.Cycles, r.Hours)
	}
	if r.Throughput.P50 == nil || *r.Throughput.P50 < 18e6 || *r.Throughput.P50 > 22e6 {
		t.Errorf("p50 %v, want about the 20 Mbit/s paced", r.Throughput.P50)
	}
}

// Live compare runs the candidate's bandwidth_test (our server on loopback,
// the TCP target on the same port) and judges sla.min_throughput_mbps on it.
func TestCompareLiveRunsTheBandwidthTest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live compare traces the forward route: raw sockets need root")
	}
	port := bwtest.Server(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "offers.yaml"), []byte(`offers:
  - name: lo-offer
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 100000, price: "1000"}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(fmt.Sprintf(`vantage: {city: Shanghai}
candidates:
  - name: lo
    region: {city: Shanghai}
    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]
    bandwidth_test: {addr: 127.0.0.1, port: %d}
    offer: lo-offer
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 100, shape: flat}
sla: {min_throughput_mbps: 100, max_oversell: 0.5}
`, port, port)), 0o644)
	cmd := bwHelper("compare", "--count", "3", "--interval", "50ms", "--cycles", "1", "--bw-time", "1s", "--format", "json", filepath.Join(dir, "c.yaml"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output() // exit 1: max_oversell has no data from one test
	var doc struct {
		Candidates []struct {
			Throughput *struct {
				Source   string   `json:"source"`
				P5       *float64 `json:"p5_bps"`
				PortBps  *float64 `json:"port_bps"`
				Achieved *float64 `json:"achieved"`
				Error    string   `json:"error"`
			} `json:"throughput"`
			SLA struct {
				Checks []struct {
					Name string `json:"name"`
					Pass bool   `json:"pass"`
					Note string `json:"note"`
				} `json:"checks"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Candidates) != 1 {
		t.Fatalf("%v\n%s\n%s", err, out, stderr.String())
	}
	tp := doc.Candidates[0].Throughput
	if tp == nil || tp.Source != "live" || tp.P5 == nil || *tp.P5 < 100e6 || tp.PortBps == nil || *tp.PortBps != 100e9 || tp.Achieved == nil {
		t.Fatalf("throughput %+v\n%s", tp, stderr.String())
	}
	got := map[string]bool{}
	for _, c := range doc.Candidates[0].SLA.Checks {
		got[c.Name] = c.Pass
	}
	if pass, ok := got["min_throughput_mbps"]; !ok || !pass {
		t.Errorf("min_throughput_mbps %v %v", ok, pass)
	}
	if pass, ok := got["max_oversell"]; !ok || pass {
		t.Errorf("max_oversell from one test must fail for want of data: %v %v", ok, pass)
	}
}

// `bw` refuses a documentation address with exit 2 and a sentence before it
// opens any socket (bw.Run's refusal comes before its dialer, see
// probe/bw); a watch does not even create its journal.
func TestBWRefusesDocumentationAddresses(t *testing.T) {
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	for _, host := range []string{"192.0.2.1", "198.51.100.20", "203.0.113.5", "2001:db8::5"} {
		errb.Reset()
		if _, code := prRun(t, "bw", "--connect-timeout", "1h", host); code != 2 ||
			!strings.Contains(errb.String(), host+" is a documentation address") {
			t.Errorf("bw %s: exit %d\n%s", host, code, errb.String())
		}
	}
	j := filepath.Join(t.TempDir(), "bw.ndjson")
	errb.Reset()
	if _, code := prRun(t, "bw", "--watch", "--journal", j, "203.0.113.5"); code != 2 ||
		!strings.Contains(errb.String(), "documentation address (203.0.113.0/24)") {
		t.Errorf("bw --watch: exit %d\n%s", code, errb.String())
	}
	if _, err := os.Stat(j); !os.IsNotExist(err) {
		t.Errorf("the refused watch created its journal: %v", err)
	}
}

// bw -s -1, as iperf3 -s -1: a server on every address at --port that exits
// after one test, 0 when it ran; a connection that never sends a cookie (a
// port check) is no test. A test that fails part-way makes it exit 1.
func TestBWServerOneOff(t *testing.T) {
	wait := func(cmd *exec.Cmd) (int, bool) {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
			return cmd.ProcessState.ExitCode(), true
		case <-time.After(20 * time.Second):
			return -1, false
		}
	}
	listening := func(port int) func() bool {
		return func() bool {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				return false
			}
			c.Close() // no cookie: a port check, not a test
			return true
		}
	}
	port := freePort(t)
	cmd, out := startLinecheck(t, "bw", "-s", "-1", "-p", fmt.Sprint(port))
	waitFor(t, 10*time.Second, "bw -s listening", listening(port))
	// The port check (no cookie) takes no server since issue 37; a busy
	// answer would still be tried again, as compare does.
	// The client in iperf3's spelling too: -c SERVER, -J for JSON.
	waitFor(t, 10*time.Second, "one test against bw -s -1", func() bool {
		code, stdout, stderr := runLinecheckOut(t, "bw", "-c", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "1", "-q", "-J")
		if code != 0 && !strings.Contains(stderr, "server busy") {
			t.Fatalf("bw against bw -s -1: exit %d\n%s", code, stderr)
		}
		if code == 0 {
			var doc struct{ Schema, Server string }
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Schema != "linecheck.bw/v1" || doc.Server != "127.0.0.1" {
				t.Errorf("-c 127.0.0.1 -J: %v %+v\n%s", err, doc, stdout)
			}
		}
		return code == 0
	})
	if code, ok := wait(cmd); !ok || code != 0 {
		t.Fatalf("bw -s -1 after one test: exit %d (ended %v)\n%s", code, ok, out)
	}
	// The server's own report names the address the client reached, not [::].
	if want := fmt.Sprintf("bw: 127.0.0.1 port %d, tcp upload", port); !strings.Contains(out.String(), want) {
		t.Errorf("server report: want %q in\n%s", want, out)
	}
	if want := fmt.Sprintf("listening on [::]:%d", port); !strings.Contains(out.String(), want) && !strings.Contains(out.String(), fmt.Sprintf("0.0.0.0:%d", port)) {
		t.Errorf("not on every address: want %q in\n%s", want, out)
	}

	port = freePort(t)
	cmd, out = startLinecheck(t, "bw", "-s", "-1", "-p", fmt.Sprint(port))
	waitFor(t, 10*time.Second, "bw -s listening", listening(port))
	// A cookie, then nothing: the test fails at the parameters. The server
	// answers a cookie it takes with PARAM_EXCHANGE (9); while the port
	// check's session still holds it, with ACCESS_DENIED: connect again.
	waitFor(t, 10*time.Second, "the server to take our cookie", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(strings.Repeat("x", 36) + "\x00"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		n, _ := c.Read(b[:])
		return n == 1 && b[0] == 9
	})
	if code, ok := wait(cmd); !ok || code != 1 || !strings.Contains(out.String(), "--one-off: the test failed") {
		t.Fatalf("bw -s -1 after a failed test: exit %d (ended %v), want 1\n%s", code, ok, out)
	}
}

// Connections that close before asking for a test (linecheck ping --tcp or
// serve checking the port, a scan) are logged once and then counted, not
// one line each: by hand, 1 → the full line, 10 and 100 → a count.
func TestBWListenCountsPortChecksInsteadOfLoggingEach(t *testing.T) {
	var b strings.Builder
	for n := 1; n <= 150; n++ {
		logNoTest(&b, errors.New("127.0.0.1:1: no cookie: EOF (not an iperf3 client?)"), n)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "not an iperf3 client?); further connections that close before a test are counted") ||
		!strings.Contains(lines[1], ": 10 connections closed before a test") || !strings.Contains(lines[2], ": 100 connections closed") {
		t.Fatalf("150 port checks logged as:\n%s", b.String())
	}

	port := freePort(t)
	cmd, out := startLinecheck(t, "bw", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	checks := 0
	waitFor(t, 10*time.Second, "bw --listen to take 5 port checks", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return false
		}
		c.Close()
		checks++
		time.Sleep(50 * time.Millisecond)
		return checks == 5
	})
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if n := strings.Count(out.String(), "not an iperf3 client"); n != 1 {
		t.Errorf("5 port checks: %d full lines, want 1:\n%s", n, out)
	}
}

// On a terminal the status line ("bw: 1/1 s  … Mbit/s", or the busy
// server's "trying again") is cleared before the result is printed: the
// result's first line began on the status line's end. A second test
// against a server still running the first waits and says so. script(1)
// gives the process a terminal.
func TestBWTerminalStatusLineClearedBeforeTheResult(t *testing.T) {
	needTool(t, "script")
	port := bwtest.Server(t)
	hog := bwtest.Occupy(t, port)
	time.AfterFunc(400*time.Millisecond, func() { hog.Close() })
	argv := strings.Join([]string{os.Args[0], "-test.run=^TestHelperLinecheckProcess$"}, " ")
	cmd := exec.Command("script", "-qefc", argv, "/dev/null")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"bw", "-p", fmt.Sprint(port), "-t", "1", "127.0.0.1"}, "\x1f"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bw on a terminal: %v\n%q", err, out)
	}
	s := string(out)
	head := "bw: 127.0.0.1 port"
	i := strings.Index(s, head)
	if i < 0 {
		t.Fatalf("no result in %q", s)
	}
	if !strings.HasSuffix(s[:i], "\r\033[K") {
		t.Errorf("the result starts after %q, want after the status line's clearing \\r\\033[K", s[max(0, i-40):i])
	}
	if !strings.Contains(s[:i], "server busy") || !strings.Contains(s[:i], "trying again in 250ms") {
		t.Errorf("before the result %q: want the busy server's wait on the status line", s[:i])
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/probe"
)

// --stream writes only NDJSON probe records to stdout (readable by
// probe.ReadStream, the format compare replays); the summary goes to stderr.
func TestPingStreamIsPureNDJSON(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw ICMP sockets); CI runs as root")
	}
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	out, code := prRun(t, "ping", "--stream", "-c", "3", "-i", "10ms", "127.0.0.1", "::1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb.String())
	}
	recs, err := probe.ReadStream(strings.NewReader(out), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		if r.Status != probe.StatusOK || r.RTTms == nil || r.Protocol != "icmp" {
			t.Errorf("record %+v", r)
		}
		seen[r.Addr]++
	}
	if len(recs) != 6 || seen["127.0.0.1"] != 3 || seen["::1"] != 3 {
		t.Errorf("%d records %v, want 3 per target", len(recs), seen)
	}
	if !strings.Contains(errb.String(), "127.0.0.1") || !strings.Contains(errb.String(), "recv") {
		t.Errorf("summary not on stderr:\n%s", errb.String())
	}
}

// When --rate cannot keep every target's --interval the schedule stretches
// and stderr says so (TCP to a closed port: no privilege needed, nothing
// leaves the host).
func TestPingSaysWhenTheScheduleStretches(t *testing.T) {
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	_, code := prRun(t, "ping", "--tcp", "9", "-c", "1", "-i", "100ms", "--rate", "10", "--timeout", "100ms",
		"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4")
	// Port 9 is closed: no target replies, exit 1 as fping's.
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	// 4 targets every 100 ms = 40 packets/s > 10: each interval becomes 4/10 s.
	if want := "each target's interval is stretched to 400ms"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, errb.String())
	}
}

// ping --format csv writes loss as the fraction 0..1 (as the JSON does) under
// the header "loss"; the table keeps the percentage. TCP to port 9 on
// loopback, closed: every attempt is refused, loss 1 (no privilege needed,
// nothing leaves the host).
func TestPingCSVLossIsAFraction(t *testing.T) {
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	out, code := prRun(t, "ping", "--tcp", "9", "-c", "2", "-i", "10ms", "--timeout", "200ms", "--format", "csv", "127.0.0.1")
	if code != 1 {
		t.Errorf("exit %d, want 1 (no reply)", code)
	}
	row := csvRow(t, out, 0, "127.0.0.1")
	if row["loss"] != "1" || row["sent"] != "2" || row["recv"] != "0" {
		t.Errorf("csv row %v, want loss 1 of 2 sent\n%s", row, out)
	}
	for k, v := range row {
		if strings.Contains(v, "%") {
			t.Errorf("csv cell %s = %q carries a unit", k, v)
		}
	}
	out, code = prRun(t, "ping", "--tcp", "9", "-c", "1", "--timeout", "200ms", "127.0.0.1")
	if code != 1 || !strings.Contains(out, "100.0%") {
		t.Errorf("table does not show loss 100.0%% (exit %d):\n%s", code, out)
	}
}

// --stream-file replaces FILE whole when the run ends: the records land in a
// temporary file beside it, renamed at the end, and nothing else is left in
// the directory (TCP to a closed loopback port: nothing leaves the host).
func TestPingStreamFileIsReplacedWhole(t *testing.T) {
	dir := t.TempDir()
	name := dir + "/probes.ndjson"
	if err := os.WriteFile(name, []byte("previous run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	testIO.SetErr(&errb)
	defer testIO.SetErr(nil)
	_, code := prRun(t, "ping", "--tcp", "9", "-c", "2", "-i", "10ms", "--timeout", "200ms", "--stream-file", name, "127.0.0.1")
	if code != 1 { // port 9 closed: no reply, fping's exit 1
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := probe.ReadStream(f, name)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
}

// -f FILE and -f - read targets as fping -f does: whitespace-separated,
// # comments, after the arguments; a file with no target is bad usage.
func TestPingReadsTargetsFromAFile(t *testing.T) {
	// One port, open on 127.0.0.1 to .6: each target answers the connect.
	port := testbin.TCPListener(t)
	for i := 2; i <= 6; i++ {
		testbin.TCPListenerOn(t, fmt.Sprintf("127.0.0.%d:%d", i, port))
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "targets.txt")
	os.WriteFile(list, []byte("# office uplinks\n127.0.0.2   # first\n\n127.0.0.3 127.0.0.4\n   # the end\n"), 0o644)
	targets := func(out []byte) []string {
		var doc struct {
			Results []struct {
				Target string `json:"target"`
				Recv   int    `json:"recv"`
			} `json:"results"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var got []string
		for _, r := range doc.Results {
			if r.Recv != 1 {
				t.Errorf("%s: %d replies, want 1", r.Target, r.Recv)
			}
			got = append(got, r.Target)
		}
		return got
	}
	out := runLinecheck(t, "ping", "--tcp", fmt.Sprint(port), "-c", "1", "--format", "json", "-f", list, "127.0.0.1")
	if got, want := strings.Join(targets(out), " "), "127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4"; got != want {
		t.Errorf("targets %q, want %q", got, want)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--tcp", fmt.Sprint(port), "-c", "1", "--format", "json", "-f", "-"}, "\x1f"))
	cmd.Stdin = strings.NewReader("127.0.0.5\n127.0.0.6 # two\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("-f -: %v", err)
	}
	if got, want := strings.Join(targets(out), " "), "127.0.0.5 127.0.0.6"; got != want {
		t.Errorf("-f - targets %q, want %q", got, want)
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing yet\n\n"), 0o644)
	for _, tc := range []struct{ file, want string }{
		{empty, "-f " + empty + ": no targets in it"},
		{filepath.Join(dir, "missing.txt"), "-f " + filepath.Join(dir, "missing.txt") + ": open"},
	} {
		if code, stderr := runLinecheckCode(t, "ping", "--tcp", fmt.Sprint(port), "-c", "1", "-f", tc.file); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("-f %s: exit %d, stderr %q; want 2 and %q", tc.file, code, stderr, tc.want)
		}
	}
}

// -l -Q N: a round of probes lasts N seconds, as fping's -Q period, even
// when its probes are all answered sooner: at -Q 1 -i 1 a round is one probe
// a second. The loop began each round as soon as the last one's reply came,
// thousands of one-probe rounds (and interim summaries) a second.
func TestPingLoopRoundsLastTheirPeriod(t *testing.T) {
	port := loopbackListener(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"ping", "--tcp", port, "-l", "-Q", "1", "-i", "1",
		"--format", "json", "127.0.0.1"}, "\x1f"))
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitFor(t, 30*time.Second, "an interim summary", func() bool { return strings.Contains(stderr.String(), "interim summary") })
	time.Sleep(1500 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit %v\n%s", err, stderr.String())
	}
	// At most one round began in each second the child lived, plus the
	// first: each round is one probe and one summary.
	most := int(time.Since(start).Seconds()) + 1
	var doc struct {
		Results []struct{ Sent int } `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Results) != 1 {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if sent := doc.Results[0].Sent; sent < 1 || sent > most {
		t.Errorf("%d probes sent in %d s of one probe a second", sent, most)
	}
	if n := strings.Count(stderr.String(), "interim summary"); n < 1 || n > most {
		t.Errorf("%d interim summaries in %d s of one a second", n, most)
	}
}

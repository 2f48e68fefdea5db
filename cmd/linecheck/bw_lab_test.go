package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/probe/bw"
)

// The lab: client — r1 — server, with the router shaping (tbf) what it
// forwards both ways: toward the server on link 1 (upload) and toward the
// client on link 0 (download). Shaping at the router drops as a real
// bottleneck does; a tbf on a host's own device would only slow its sockets.
const bwLabRate = 50e6

func bwLab(t *testing.T, v6 bool) *netlab.Lab {
	t.Helper()
	if _, err := os.Stat("/usr/bin/iperf3"); err != nil {
		t.Skip("iperf3 not installed (apt-get install iperf3)")
	}
	cfg := netlab.Config{Prefix: "lcbw", Hops: 1}
	if v6 {
		cfg = netlab.Config{Prefix: "lcbw6", Hops: 1, IPv6: true}
	}
	lab := netlab.UpForTest(t, cfg)
	bwShape(t, lab, bwLabRate)
	return lab
}

func bwShape(t *testing.T, lab *netlab.Lab, bps float64) {
	t.Helper()
	if err := lab.RateEnd(1, false, bps); err != nil {
		t.Fatal(err)
	}
	if err := lab.RateEnd(0, true, bps); err != nil {
		t.Fatal(err)
	}
}

// waitListen waits until TCP port listens in namespace ns.
func waitListen(t *testing.T, lab *netlab.Lab, ns string, port int) {
	t.Helper()
	for i := 0; ; i++ {
		out, _ := lab.Exec(ns, "ss", "-Hltn", fmt.Sprintf("sport = :%d", port)).Output()
		if strings.Contains(string(out), "LISTEN") {
			return
		}
		if i > 100 {
			t.Fatalf("nothing listens on port %d in %s", port, ns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rtExec is lab.Exec of name args at real-time priority (chrt -f 10). The
// shaped-link comparisons run every sender and receiver so: a reader that a
// loaded machine leaves unscheduled for a few milliseconds overflows its
// socket buffer, and a sender that catches up in a burst overflows the tbf
// queue, and either adds loss the link does not make.
func rtExec(lab *netlab.Lab, ns, name string, args ...string) *exec.Cmd {
	return lab.Exec(ns, "chrt", append([]string{"-f", "10", name}, args...)...)
}

// labLinecheck runs linecheck args in the client namespace (fake watch
// clock), at real-time priority (rtExec).
func labLinecheck(t *testing.T, lab *netlab.Lab, ns string, args ...string) []byte {
	t.Helper()
	cmd := rtExec(lab, ns, os.Args[0], "-test.run=^TestHelperBWProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_BW_ARGS="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("linecheck %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// iperf3JSON runs iperf3 -J args in the client namespace at real-time
// priority (rtExec) and returns its report.
func iperf3JSON(t *testing.T, lab *netlab.Lab, args ...string) map[string]any {
	t.Helper()
	out, err := rtExec(lab, lab.Client(), "iperf3", append([]string{"-J"}, args...)...).Output()
	if err != nil {
		t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func jnum(doc map[string]any, path ...string) float64 {
	var v any = doc
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	f, _ := v.(float64)
	return f
}

func within(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(a, b) }

// On a tbf-shaped link with a stock iperf3 -s on the server, linecheck bw
// and iperf3's own client agree (upload, download, UDP loss above the
// rate), and both see the shaped rate; then stock iperf3 -c against
// linecheck bw --listen reports what our server reports.
func TestBWLabShapedLink(t *testing.T) { bwShapedLink(t, false) }

// The same over IPv6 (issue 32): linecheck bw -6 against iperf3 -6 -c,
// both to the server's IPv6 address, and iperf3 -6 -c against linecheck bw
// --listen on that address. The shaped rate is the same; a UDP datagram
// carries 20 bytes more IP header (1462 bytes on the wire for 1400).
func TestBWLabShapedLinkIPv6(t *testing.T) { bwShapedLink(t, true) }

func bwShapedLink(t *testing.T, v6 bool) {
	lab := bwLab(t, v6)
	srv := lab.ServerAddr(v6)
	fam, listen, wire := "-4", "0.0.0.0:5301", 1442.0
	if v6 {
		fam, listen, wire = "-6", "["+srv+"]:5301", 1462
	}
	iperfd := rtExec(lab, lab.Server(), "iperf3", "-s", "-p", "5201")
	if err := iperfd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListen(t, lab, lab.Server(), 5201)

	for _, dir := range []struct {
		name string
		flag []string
	}{{"upload", nil}, {"download", []string{"-R"}}} {
		var ours bw.Result
		args := append([]string{"bw", fam, "-t", "4", "-O", "1", "--format", "json", srv}, dir.flag...)
		if err := json.Unmarshal(labLinecheck(t, lab, lab.Client(), args...), &ours); err != nil {
			t.Fatal(err)
		}
		theirs := iperf3JSON(t, lab, append([]string{fam, "-c", srv, "-t", "4", "-O", "1"}, dir.flag...)...)
		want := jnum(theirs, "end", "sum_received", "bits_per_second")
		got := *ours.Throughput.Mean
		t.Logf("%s: linecheck %.2f Mbit/s, iperf3 %.2f Mbit/s, shaped %.0f", dir.name, got/1e6, want/1e6, bwLabRate/1e6)
		if !within(got, want, 0.04) {
			t.Errorf("%s: linecheck %.2f Mbit/s vs iperf3 %.2f: more than 4%% apart", dir.name, got/1e6, want/1e6)
		}
		// TCP goodput under a 50 Mbit/s tbf: headers take ~4.4% (52 of 1500+14).
		if got < 0.90*bwLabRate || got > 1.01*bwLabRate {
			t.Errorf("%s: %.2f Mbit/s, want just under the shaped %.0f", dir.name, got/1e6, bwLabRate/1e6)
		}
		if ours.Retransmits == nil {
			t.Errorf("%s: retransmits null", dir.name)
		}
	}

	// UDP at 80 Mbit/s into 50: both lose about the share the rates say.
	// On the wire a 1400-byte datagram is 1442 bytes (UDP, IPv4, Ethernet;
	// 1462 with IPv6's 40-byte header), so the link carries 50/(80·1442/1400)
	// of them: loss ≈ 0.393 (0.402 over IPv6), a little less for the bucket
	// and the queue the test fills at first.
	for _, dir := range []struct {
		name string
		flag []string
	}{{"upload", nil}, {"download", []string{"-R"}}} {
		var ours bw.Result
		args := append([]string{"bw", fam, "-u", "-b", "80M", "-l", "1400", "-t", "3", "--format", "json", srv}, dir.flag...)
		if err := json.Unmarshal(labLinecheck(t, lab, lab.Client(), args...), &ours); err != nil {
			t.Fatal(err)
		}
		theirs := iperf3JSON(t, lab, append([]string{fam, "-c", srv, "-u", "-b", "80M", "-l", "1400", "-t", "3"}, dir.flag...)...)
		iLoss := jnum(theirs, "end", "sum", "lost_percent") / 100
		wantLoss := 1 - bwLabRate/(80e6*wire/1400)
		t.Logf("udp %s 80M into 50M: linecheck loss %.3f (%d of %d), iperf3 %.3f, from the rates %.3f", dir.name, *ours.UDP.Loss, *ours.UDP.Lost, ours.UDP.Packets, iLoss, wantLoss)
		if math.Abs(*ours.UDP.Loss-iLoss) > 0.03 || math.Abs(*ours.UDP.Loss-wantLoss) > 0.03 {
			t.Errorf("udp %s loss: linecheck %.3f, iperf3 %.3f, from the rates %.3f", dir.name, *ours.UDP.Loss, iLoss, wantLoss)
		}
		if got := *ours.Throughput.Mean; got < 0.9*bwLabRate || got > 1.02*bwLabRate {
			t.Errorf("udp %s received %.2f Mbit/s, want about the shaped rate", dir.name, got/1e6)
		}
	}

	// Stock iperf3 -c against linecheck bw --listen in the server namespace.
	lc := rtExec(lab, lab.Server(), os.Args[0], "-test.run=^TestHelperBWProcess$")
	lc.Env = append(os.Environ(), "LINECHECK_BW_ARGS="+strings.Join([]string{"bw", "--listen", listen, "--format", "json"}, "\x1f"))
	pr, pw := io.Pipe()
	lc.Stdout = pw
	if err := lc.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bufio.NewReader(pr))
	waitListen(t, lab, lab.Server(), 5301)
	for _, dir := range []struct {
		name string
		flag []string
	}{{"upload", nil}, {"download", []string{"-R"}}} {
		theirs := iperf3JSON(t, lab, append([]string{fam, "-c", srv, "-p", "5301", "-t", "3"}, dir.flag...)...)
		var ours bw.Result
		if err := dec.Decode(&ours); err != nil {
			t.Fatal(err)
		}
		want := jnum(theirs, "end", "sum_received", "bits_per_second")
		t.Logf("iperf3 -c %s against linecheck --listen: iperf3 %.2f Mbit/s, linecheck server %.2f", dir.name, want/1e6, *ours.Throughput.Mean/1e6)
		if ours.Direction != dir.name || !within(*ours.Throughput.Mean, want, 0.01) {
			t.Errorf("%s: linecheck server %s %.2f Mbit/s, iperf3 %.2f", dir.name, ours.Direction, *ours.Throughput.Mean/1e6, want/1e6)
		}
		// Independent of the results exchange: the rate the server saw
		// is the shaped one (iperf3's sent bytes include its socket buffer).
		if got := *ours.Throughput.Mean; got < 0.90*bwLabRate || got > 1.01*bwLabRate {
			t.Errorf("%s: linecheck server %.2f Mbit/s, want just under the shaped %.0f", dir.name, got/1e6, bwLabRate/1e6)
		}
	}
	_ = lc.Process.Kill()
	_ = lc.Wait()
	pw.Close()
}

// A rate cut in the middle of a watch shows in the hourly report: the
// helper's clock puts each test into the next hour, the link goes from 50 to
// 20 Mbit/s between the third and the fourth test, and the report's worst hours are the
// later ones, the oversell about 1 − 20/50 and the verdict oversold.
func TestBWLabWatchSeesARateCut(t *testing.T) {
	lab := bwLab(t, false)
	srv := lab.ServerAddr(false)
	iperfd := lab.Exec(lab.Server(), "iperf3", "-s", "-p", "5201")
	if err := iperfd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListen(t, lab, lab.Server(), 5201)
	path := filepath.Join(t.TempDir(), "bw.ndjson")
	cmd := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperBWProcess$")
	cmd.Env = append(os.Environ(), "LINECHECK_BW_ARGS="+strings.Join([]string{"bw", "--watch", "--journal", path,
		"--every", "4s", "-t", "2", "-O", "0.5", "-i", "0.5", "--reverse", "--watch-cycles", "6",
		"--floor", "50M", "--evening", "3-6", "--format", "json", srv}, "\x1f"))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "three tests journaled", func() bool {
		es, _, err := journal.Read(path)
		return err == nil && len(es) >= 3
	})
	bwShape(t, lab, 20e6)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch: %v\n%s", err, stderr.String())
	}
	var r journal.BWReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(r.Hours) != 6 {
		t.Fatalf("hours %+v", r.Hours)
	}
	for _, h := range r.Hours {
		want := 50e6
		if h.Hour >= 3 {
			want = 20e6
		}
		t.Logf("%02d:00 p5 %.2f p50 %.2f Mbit/s", h.Hour, *h.P5/1e6, *h.P50/1e6)
		if *h.P50 < 0.85*want || *h.P50 > 1.02*want {
			t.Errorf("hour %d: p50 %.2f Mbit/s, want about %.0f", h.Hour, *h.P50/1e6, want/1e6)
		}
	}
	if r.Worst.Hour < 3 || r.Best.Hour >= 3 {
		t.Errorf("worst hour %d, best %d", r.Worst.Hour, r.Best.Hour)
	}
	if math.Abs(*r.Oversell-0.6) > 0.06 || r.Verdict != "oversold" {
		t.Errorf("oversell %.3f verdict %q, want about 0.6 and oversold", *r.Oversell, r.Verdict)
	}
}

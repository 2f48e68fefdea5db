package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/probe/bw"
)

// goWords are what Go's parsers and types put in a message, which a user of
// linecheck cannot act on (issue 35).
var goWords = []string{"strconv.", "bufio.Scanner", "json: cannot unmarshal", "Go struct", "yaml.Node", "route.Hop", "token too long"}

// TestMessages35BadInputSaysWhereAndWhat runs each bad input of issue 35
// and checks the exit code 2, the words of the message and that no Go
// parser or type name is in it.
func TestMessages35BadInputSaysWhereAndWhat(t *testing.T) {
	hop3 := writeFile(t, "trace.json", "{\"schema\": \"linecheck.trace/v1\", \"target\": \"127.0.0.1\",\n \"hops\": [\n  {\"ttl\": 1},\n  {\"ttl\": 2},\n  {\"ttl\": \"3\"}\n]}\n")
	long := writeFile(t, "targets.txt", "127.0.0.1\n"+strings.Repeat("x", 2<<20)+"\n")
	binary := writeFile(t, "asn.tsv", "\x00\x01\x02garbage\xff\xfe\t\x00\x13\t13335\tUS\tX\n"+strings.Repeat("\x8b", 5000)+"\t1.0.0.1\t1\tUS\tX\n")
	targets := writeFile(t, "users.yaml", "targets: []\ntargetz:\n  - {name: lo}\n")
	lo := writeFile(t, "lo.yaml", "targets:\n  - {name: lo, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n")
	qlog := writeFile(t, "q.csv", "")
	probes := writeFile(t, "p.ndjson", `{"schema":"linecheck.probe/v1","seq":1,"status":"ok","rtt_ms":1.5}`+"\n"+`{"schema":"linecheck.probe/v1","seq":"2","status":"ok","rtt_ms":1.5}`+"\n")
	longProbes := writeFile(t, "long.ndjson", strings.Repeat(" ", 2<<20)+"\n")
	cands := candidatesWith(t, "probes: rec/hk-cn2-gia-ping.ndjson", "probes: "+probes)
	longCands := candidatesWith(t, "probes: rec/hk-cn2-gia-ping.ndjson", "probes: "+longProbes)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"int flag", []string{"ping", "-c", "abc", "127.0.0.1"}, []string{`-c, --count "abc": want a whole number such as 10`}},
		{"int flag out of range", []string{"ping", "-c", "99999999999999999999", "127.0.0.1"}, []string{`-c, --count "99999999999999999999": out of range`}},
		{"float flag", []string{"ping", "--rate", "fast", "127.0.0.1"}, []string{`--rate "fast": want a number such as 100`}},
		{"bool flag", []string{"trace", "--samples=maybe", "127.0.0.1"}, []string{`--samples "maybe": want true or false`}},
		{"replay of a wrong type", []string{"trace", "--replay", hop3}, []string{hop3 + `: line 5: hop 3: field "ttl": want a whole number, got text "3"`}},
		{"a line over 1 MiB", []string{"ping", "-f", long, "-c", "1"}, []string{long + `:2: line longer than 1 MiB`}},
		{"binary asn-db", []string{"trace", "--replay", "../../samples/rec/hk-bgp-forward.json", "--asn-db", binary}, []string{binary + `:1: column "range_start": (`, "bytes of binary data, not text) is not an IP address"}},
		{"unknown key of a backtrace target file", []string{"backtrace", "--targets", targets}, []string{targets + `:2: unknown key "targetz"`}},
		{"gpu --tz named as itself", []string{"gpu", "--report", "--query-log", qlog, "--tz", "Mars/Olympus"}, []string{`--tz "Mars/Olympus": not a time zone: use an IANA name`}},
		{"ping deadline with a watch", []string{"ping", "--watch", "-w", "2", "127.0.0.1"}, []string{"-w, --deadline ends one run"}},
		{"ping pattern not hex", []string{"ping", "-p", "xyz", "127.0.0.1"}, []string{`-p, --pattern "xyz": give 1 to 16 bytes as hex digits`}},
		{"ping TTL out of range", []string{"ping", "-t", "300", "127.0.0.1"}, []string{"-t, --ttl 300: use 1..255"}},
		{"recorded probes of a wrong type", []string{"compare", "--offline", cands}, []string{probes + `:2: not a probe record: field "seq": want a whole number, got text "2"`}},
		{"recorded probes with a long line", []string{"compare", "--offline", longCands}, []string{longProbes + `:1: line longer than 1 MiB`}},
		{"backtrace protocol", []string{"backtrace", "--targets", lo, "--proto", "sctp"}, []string{`--proto "sctp": use icmp, udp or tcp`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := lcRun(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%.2000s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%.2000s", w, stderr)
				}
			}
			for _, w := range goWords {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr names Go's %q:\n%.2000s", w, stderr)
				}
			}
			if len(stderr) > 1000 {
				t.Errorf("stderr is %d bytes: the input is echoed", len(stderr))
			}
		})
	}
}

// The demo extracts the samples to a temporary directory; the report names
// its files as the bundled samples, never by that directory (issue 35).
func TestMessages35DemoNamesNoTemporaryDirectory(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		stdout, stderr, code := lcRun(t, "demo", "--format", format)
		if code != 0 {
			t.Fatalf("demo --format %s: exit %d: %s", format, code, stderr)
		}
		if tmp := filepath.Join(os.TempDir(), "linecheck-demo-"); strings.Contains(stdout, tmp) {
			t.Errorf("demo --format %s names its temporary directory %s…", format, tmp)
		}
		if !strings.Contains(stdout, "bundled samples/offers.yaml:17: usage.hours") {
			t.Errorf("demo --format %s does not name the offers file as the bundled samples", format)
		}
	}
}

func TestHabits35MtrReportGroupReadsWAsWide(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"trace", "-rwc", "5", "h"}, []string{"trace", "--wide", "-rc", "5", "h"}},
		{[]string{"trace", "-rw", "h"}, []string{"trace", "--wide", "-r", "h"}},
		{[]string{"trace", "-nrwc", "3", "h"}, []string{"trace", "--wide", "-nrc", "3", "h"}},
		{[]string{"trace", "-w", "2", "h"}, []string{"trace", "-w", "2", "h"}},   // traceroute's -w WAIT
		{[]string{"trace", "-wr", "h"}, []string{"trace", "-wr", "h"}},           // -w first takes "r" as its value: left to pflag
		{[]string{"trace", "-nw", "2", "h"}, []string{"trace", "-nw", "2", "h"}}, // no -r: traceroute's
		{[]string{"trace", "--", "-rwc"}, []string{"trace", "--", "-rwc"}},       // after --, arguments
		{[]string{"ping", "-rwc", "5", "h"}, []string{"ping", "-rwc", "5", "h"}}, // trace only
		{[]string{"trace", "--replay", "f", "-rc", "2"}, []string{"trace", "--replay", "f", "-rc", "2"}},
	}
	for _, c := range cases {
		if got := mtrReportArgs(append([]string(nil), c.in...)); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("mtrReportArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// trace -rwc 2 on loopback (TCP SYN to a listener) runs two cycles: every
// hop was sent 2 probes, and the wide table has no detail block.
func TestHabits35TraceRWC(t *testing.T) {
	port := testbin.TCPListener(t)
	stdout, stderr, code := lcRun(t, "trace", "-rwc", "2", "-i", "0.05", "-T", "-p", strconv.Itoa(port), "127.0.0.1", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Hops []struct {
			Sent int `json:"sent"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Hops) == 0 {
		t.Fatalf("%v: %s", err, stdout)
	}
	for i, h := range doc.Hops {
		if h.Sent != 2 {
			t.Errorf("hop %d sent %d, want 2 (-c 2)", i+1, h.Sent)
		}
	}
	table, stderr, code := lcRun(t, "trace", "-rwc", "1", "-T", "-p", strconv.Itoa(port), "127.0.0.1")
	if code != 0 || strings.Contains(table, "do not fit") {
		t.Errorf("exit %d; want the wide table without a detail block:\n%s%s", code, table, stderr)
	}
}

// ping's iputils habits on loopback: a sniffing raw ICMP socket sees the
// echo requests leave with -t's TTL and -p's pattern after the 12-byte
// marker; -w 1 at -i 0.2 -W 0.2 sends (1 − 0.2) / 0.2 + 1 = 5 probes, and
// -c 3 caps it at 3; -n and --json are accepted (iputils' words).
func TestHabits35PingDeadlineTTLPattern(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		t.Fatalf("a raw ICMP socket to watch loopback (run as root): %v", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200000}); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := lcRun(t, "ping", "-n", "-w", "1", "-i", "0.2", "-W", "0.2", "-t", "7", "-p", "a1b2c3", "-s", "24", "--json", "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Count   int `json:"count"`
		Results []struct {
			Target string `json:"target"`
			Sent   int    `json:"sent"`
			Recv   int    `json:"recv"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if len(doc.Results) != 1 || doc.Results[0].Sent != 5 || doc.Results[0].Recv != 5 || doc.Count != 5 {
		t.Errorf("-w 1 -i 0.2 -W 0.2: %+v, want 5 sent and answered", doc)
	}
	// Echo requests (type 8) of this run: 24 bytes of payload, the pattern
	// from byte 12 on, repeated and cut at the end.
	wantPayload := []byte{0xa1, 0xb2, 0xc3, 0xa1, 0xb2, 0xc3, 0xa1, 0xb2, 0xc3, 0xa1, 0xb2, 0xc3}
	seen := 0
	buf := make([]byte, 2048)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			break // the timeout: everything queued was read
		}
		p := buf[:n]
		ihl := int(p[0]&0x0f) * 4
		if n < ihl+8+24 || p[ihl] != 8 || !bytes.Equal(p[ihl+8+12:ihl+8+24], wantPayload) {
			continue
		}
		seen++
		if p[8] != 7 {
			t.Errorf("echo request with TTL %d, want 7 (-t 7)", p[8])
		}
	}
	if seen != 5 {
		t.Errorf("saw %d echo requests with the pattern, want 5", seen)
	}

	stdout, stderr, code = lcRun(t, "ping", "-w", "1", "-c", "3", "-i", "0.2", "-W", "0.2", "--json", "127.0.0.1")
	if code != 0 || !strings.Contains(stdout, `"sent": 3,`) {
		t.Errorf("-w 1 -c 3: exit %d, want 3 sent:\n%s%s", code, stdout, stderr)
	}
}

// bw -B 127.0.0.2 against a server on 127.0.0.1: the server sees the test
// come from 127.0.0.2; -f K writes the tables in KByte/s (iperf3's -B, -f).
func TestHabits35BWBindAndUnits(t *testing.T) {
	clients := make(chan string, 4)
	srv, err := bw.Listen(bw.ServerConfig{Addr: "127.0.0.1:0", OnResult: func(r *bw.Result, err error) {
		if r != nil {
			clients <- r.Client
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	stdout, stderr, code := lcRun(t, "bw", "-B", "127.0.0.2", "-f", "K", "-t", "0.5", "-i", "0.25", "-q", "-p", strconv.Itoa(srv.Addr().Port), "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "mean KByte/s") || strings.Contains(stdout, "Mbit/s") {
		t.Errorf("-f K: the table is not in KByte/s:\n%s", stdout)
	}
	select {
	case c := <-clients:
		if !strings.HasPrefix(c, "127.0.0.2:") {
			t.Errorf("the server saw the client at %s, want 127.0.0.2 (-B)", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server reported no test")
	}
	for _, bad := range [][]string{{"-B", "eth0"}, {"-f", "x"}} {
		_, stderr, code := lcRun(t, append([]string{"bw", "-t", "1"}, append(bad, "127.0.0.1")...)...)
		if code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("bw %v: exit %d, %s", bad, code, stderr)
		}
	}
}

// ping -n names the row of a name by its address, as iputils' -n prints
// numbers only (the name resolves through the test's fake resolver).
func TestHabits35PingNumeric(t *testing.T) {
	port := strconv.Itoa(testbin.TCPListener(t))
	ctx := context.WithValue(context.Background(), lookupKey{}, lookupFunc(fakeLookup))
	for _, c := range []struct {
		flags []string
		want  string
	}{{nil, "ok.test"}, {[]string{"-n"}, "127.0.0.1"}} {
		args := append([]string{"ping", "--tcp", port, "-c", "1", "--json"}, c.flags...)
		out, errs, code := lcRunCtx(t, ctx, append(args, "ok.test")...)
		var doc report.PingDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
			t.Fatalf("%v: exit %d, %v\n%s%s", c.flags, code, err, out, errs)
		}
		if len(doc.Results) != 1 || doc.Results[0].Target != c.want || doc.Results[0].Addr != "127.0.0.1" {
			t.Errorf("%v: results %+v, want the row named %s", c.flags, doc.Results, c.want)
		}
	}
}

// bw -n 8M (iperf3 -n) asks the server for a byte-limited test (no time)
// and sends 8 MiB over its two streams: the server's start says no time,
// the test ends long before the 10 s a timed test would run, and the
// receiver got at most the 8,388,608 bytes sent (TEST_END may cut off a
// last few in its socket), most of them.
func TestHabits35BWBytes(t *testing.T) {
	starts := make(chan bw.TestParams, 4)
	got := make(chan int64, 4)
	srv, err := bw.Listen(bw.ServerConfig{Addr: "127.0.0.1:0",
		OnStart: func(_ string, p bw.TestParams) { starts <- p },
		OnResult: func(r *bw.Result, err error) {
			if r != nil {
				got <- r.Bytes
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	stdout, stderr, code := lcRun(t, "bw", "-n", "8M", "-P", "2", "-q", "--format", "json", "-p", strconv.Itoa(srv.Addr().Port), "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		DurationS float64 `json:"duration_s"`
		Bytes     int64   `json:"bytes"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if p := <-starts; p.Duration != 0 || p.Streams != 2 {
		t.Errorf("the server started %+v, want a byte-limited test (no time) of 2 streams", p)
	}
	if r.DurationS <= 0 || r.DurationS >= 9 {
		t.Errorf("measured %.3f s: a byte-limited test of 8 MiB on loopback ends long before the 10 s default", r.DurationS)
	}
	const sent = 8 << 20
	if r.Bytes > sent || r.Bytes < sent/2 {
		t.Errorf("the receiver got %d bytes, want at most %d and most of them", r.Bytes, sent)
	}
	if b := <-got; b != r.Bytes {
		t.Errorf("the server counted %d bytes, the client reports %d", b, r.Bytes)
	}
	for _, bad := range [][]string{{"-n", "8M", "-t", "2"}, {"-n", "8M", "-R"}, {"-n", "lots"}, {"-n", "0"}} {
		_, stderr, code := lcRun(t, append(append([]string{"bw"}, bad...), "127.0.0.1")...)
		if code != 2 || !strings.Contains(stderr, "-n") {
			t.Errorf("bw %v: exit %d, %s", bad, code, stderr)
		}
	}
}

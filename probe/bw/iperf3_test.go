package bw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// freePort finds a TCP and UDP port nobody uses on 127.0.0.1 (both, because
// iperf3 puts UDP streams on the control port).
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// listening tells whether something listens on TCP port on 127.0.0.1,
// from /proc/net/tcp (connecting would count as a client to iperf3).
func listening(port int) bool {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	want := fmt.Sprintf("0100007F:%04X", port)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == want && f[3] == "0A" {
			return true
		}
	}
	return false
}

// iperf3Command is the command that runs stock iperf3 (at path) with args;
// as root it runs at real-time priority (chrt -f 10). A UDP reader that a
// loaded machine leaves unscheduled overflows iperf3's socket buffer (the
// default 208 KiB, a tenth of a second at 20 Mbit/s), and a starved sender
// falls behind its rate: either way the test would measure the machine's
// load, not the figures it compares. Our side keeps up by itself: its
// receiver has a 4 MiB buffer and its sender catches up on its schedule.
func iperf3Command(path string, args ...string) *exec.Cmd {
	if chrt, err := exec.LookPath("chrt"); err == nil && os.Geteuid() == 0 {
		return exec.Command(chrt, append([]string{"-f", "10", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// iperf3Server starts a stock `iperf3 -s -1 -J` on 127.0.0.1:port and
// returns a function that waits for its JSON report.
func iperf3Server(t *testing.T, port int) func() map[string]any {
	t.Helper()
	path, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 not installed (apt-get install iperf3)")
	}
	var out, errb bytes.Buffer
	cmd := iperf3Command(path, "-s", "-1", "-J", "-B", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	for i := 0; !listening(port); i++ {
		if i > 100 {
			t.Fatalf("iperf3 -s did not listen: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() map[string]any {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("iperf3 -s did not end")
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("iperf3 -s output: %v\n%s\n%s", err, out.String(), errb.String())
		}
		return doc
	}
}

// num digs a number out of a decoded JSON document by path.
func num(t *testing.T, doc map[string]any, path ...string) float64 {
	t.Helper()
	var v any = doc
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: not an object at %q", path, p)
		}
		v = m[p]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%v: %v is not a number", path, v)
	}
	return f
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// TestClientAgainstStockIperf3 runs our client against iperf3's own server
// and checks our figures against what the server itself reports.
func TestClientAgainstStockIperf3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs iperf3 for seconds")
	}
	cases := []struct {
		name string
		cfg  Config
	}{
		{"tcp upload", Config{Duration: 2 * time.Second, Bitrate: 200e6, Interval: 500 * time.Millisecond}},
		{"tcp download", Config{Duration: 2 * time.Second, Reverse: true, Bitrate: 200e6, Interval: 500 * time.Millisecond}},
		{"tcp bidir 2 streams", Config{Duration: 2 * time.Second, Bidir: true, Parallel: 2, Bitrate: 50e6}},
		{"udp upload", Config{Duration: 2 * time.Second, UDP: true, Bitrate: 20e6}},
		{"udp download omit", Config{Duration: 2 * time.Second, Omit: time.Second, UDP: true, Reverse: true, Bitrate: 20e6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			wait := iperf3Server(t, port)
			cfg := tc.cfg
			cfg.Port, cfg.Percentile = port, nearestRank
			res, err := Run(context.Background(), "127.0.0.1", cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			srv := wait()
			b, _ := json.MarshalIndent(res, "", " ")
			t.Logf("ours: %s", b)
			sb, _ := json.Marshal(srv["end"])
			t.Logf("iperf3 -s end: %s", sb)
			end := srv["end"].(map[string]any)
			if cfg.UDP {
				// For upload the server received; for download it sent.
				if res.UDP == nil || res.UDP.Lost == nil {
					t.Fatalf("no UDP figures: %+v", res.UDP)
				}
				if cfg.Reverse {
					if !near(float64(res.UDP.Packets), num(t, end, "sum_sent", "packets"), 0.02) {
						t.Errorf("packets: ours %d, iperf3 sent %.0f", res.UDP.Packets, num(t, end, "sum_sent", "packets"))
					}
				} else {
					if got, want := float64(res.Bytes), num(t, end, "sum_received", "bytes"); got != want {
						t.Errorf("bytes: ours %.0f, iperf3 server received %.0f", got, want)
					}
					if got, want := float64(*res.UDP.Lost), num(t, end, "sum_received", "lost_packets"); got != want {
						t.Errorf("lost: ours %.0f, iperf3 server %.0f", got, want)
					}
				}
				if !near(*res.Throughput.Mean, cfg.Bitrate, 0.05) {
					t.Errorf("mean %.0f, want the %.0f sent", *res.Throughput.Mean, cfg.Bitrate)
				}
				return
			}
			// The server writes its report before the results exchange, so
			// its receiver lines are its own for upload; for download its
			// sender lines are the oracle (less what was in flight).
			switch {
			case cfg.Bidir:
				up, down := res.ByDirection.Upload, res.ByDirection.Download
				if !near(float64(up.Bytes), num(t, end, "sum_received", "bytes"), 0.001) {
					t.Errorf("upload bytes %d, iperf3 server received %.0f", up.Bytes, num(t, end, "sum_received", "bytes"))
				}
				if !near(float64(down.Bytes), num(t, end, "sum_sent_bidir_reverse", "bytes"), 0.03) {
					t.Errorf("download bytes %d, iperf3 server sent %.0f", down.Bytes, num(t, end, "sum_sent_bidir_reverse", "bytes"))
				}
			case cfg.Reverse:
				if !near(float64(res.Bytes), num(t, end, "sum_sent", "bytes"), 0.03) {
					t.Errorf("bytes %d, iperf3 server sent %.0f", res.Bytes, num(t, end, "sum_sent", "bytes"))
				}
			default:
				if !near(*res.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"), 0.001) {
					t.Errorf("mean %v, iperf3 server's receiver sum %.0f", *res.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"))
				}
			}
			if res.Retransmits == nil {
				t.Errorf("retransmits null")
			}
			if len(res.Intervals) < 2 || res.Throughput.P50 == nil {
				t.Errorf("intervals %d, p50 %v", len(res.Intervals), res.Throughput.P50)
			}
		})
	}
}

// startServer runs our --listen server on an ephemeral loopback port and
// returns it with a channel of its results.
func startServer(t *testing.T) (*Server, chan *Result) {
	srv, results, _ := startServerStarts(t)
	return srv, results
}

// startServerStarts is startServer that also returns a channel that gets
// the parameters of each test as the server starts it.
func startServerStarts(t *testing.T) (*Server, chan *Result, chan TestParams) {
	t.Helper()
	results := make(chan *Result, 4)
	starts := make(chan TestParams, 4)
	srv, err := Listen(ServerConfig{Addr: "127.0.0.1:0", Interval: 500 * time.Millisecond, OnResult: func(r *Result, err error) {
		if err != nil {
			t.Errorf("server: %v", err)
		}
		results <- r
	}, OnStart: func(_ string, p TestParams) { starts <- p }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, results, starts
}

// TestStockIperf3ClientAgainstOurServer runs iperf3 -c against our server:
// both sides must report the same test.
func TestStockIperf3ClientAgainstOurServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs iperf3 for seconds")
	}
	path, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 not installed (apt-get install iperf3)")
	}
	cases := []struct {
		name string
		args []string
	}{
		{"tcp upload", []string{"-b", "300M"}},
		{"tcp download", []string{"-R", "-b", "300M"}},
		{"tcp upload 2 streams omit", []string{"-P", "2", "-O", "1", "-b", "100M"}},
		{"tcp bidir", []string{"--bidir", "-b", "100M"}},
		{"udp upload", []string{"-u", "-b", "20M", "-l", "1400"}},
		{"udp download", []string{"-u", "-b", "20M", "-l", "1400", "-R"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, results := startServer(t)
			args := append([]string{"-c", "127.0.0.1", "-p", fmt.Sprint(srv.Addr().Port), "-t", "2", "-J"}, tc.args...)
			out, err := iperf3Command(path, args...).Output()
			if err != nil {
				t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
			}
			var doc map[string]any
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			var res *Result
			select {
			case res = <-results:
			case <-time.After(5 * time.Second):
				t.Fatal("no server result")
			}
			b, _ := json.Marshal(res)
			t.Logf("ours: %s", b)
			end := doc["end"].(map[string]any)
			sb, _ := json.Marshal(end)
			t.Logf("iperf3 -c end: %s", sb)
			udp := strings.Contains(strings.Join(tc.args, " "), "-u")
			reverse := strings.Contains(strings.Join(tc.args, " "), "-R")
			bidir := strings.Contains(strings.Join(tc.args, " "), "--bidir")
			switch {
			case udp:
				sum := end["sum"].(map[string]any)
				// iperf3's sum is the client's: sender's packets, receiver's loss.
				if got, want := float64(res.UDP.Packets), num(t, end, "sum", "packets"); !near(got, want, 0.01) {
					t.Errorf("packets: ours %v, iperf3 %v", got, want)
				}
				if res.UDP.Lost == nil || float64(*res.UDP.Lost) != num(t, end, "sum", "lost_packets") {
					t.Errorf("lost: ours %v, iperf3 %v", res.UDP.Lost, sum["lost_packets"])
				}
				if !near(*res.Throughput.Mean, 20e6, 0.05) {
					t.Errorf("mean %v, want 20 Mbit/s", *res.Throughput.Mean)
				}
			case bidir:
				if !near(*res.ByDirection.Upload.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"), 0.001) {
					t.Errorf("upload: ours %v, iperf3 %v", *res.ByDirection.Upload.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"))
				}
				// The download is ours to send and iperf3's to receive: the
				// bytes are the same, but iperf3 divides them by its own
				// receiving time, which runs on until the test's end reaches
				// it (33 ms past the 2 s on a 2-core machine beside two CPU
				// burners, 1.6 % of the rate). So the bytes must agree, and
				// each side's rate with its own bytes over its own time.
				down := res.ByDirection.Download
				iBytes, iSecs := num(t, end, "sum_received_bidir_reverse", "bytes"), num(t, end, "sum_received_bidir_reverse", "seconds")
				if !near(float64(down.Bytes), iBytes, 0.001) {
					t.Errorf("download: ours %d bytes, iperf3 received %v", down.Bytes, iBytes)
				}
				if !near(*down.Throughput.Mean, float64(down.Bytes)*8/down.DurationS, 0.001) || down.DurationS > iSecs+0.001 {
					t.Errorf("download: ours %v bit/s over %v s; iperf3 received over %v s", *down.Throughput.Mean, down.DurationS, iSecs)
				}
				if !near(num(t, end, "sum_received_bidir_reverse", "bits_per_second"), iBytes*8/iSecs, 0.001) {
					t.Errorf("iperf3's own reverse sum is not its bytes over its seconds: %v", end["sum_received_bidir_reverse"])
				}
			default:
				if !near(*res.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"), 0.001) {
					t.Errorf("mean: ours %v, iperf3 receiver %v", *res.Throughput.Mean, num(t, end, "sum_received", "bits_per_second"))
				}
				// Independent of the exchange: what one side sent and the other
				// received agree within what was in flight at the end.
				if !near(float64(res.Bytes), num(t, end, "sum_sent", "bytes"), 0.03) {
					t.Errorf("bytes: ours %d, iperf3 sent %v", res.Bytes, num(t, end, "sum_sent", "bytes"))
				}
				if res.Retransmits == nil {
					t.Errorf("retransmits null")
				}
			}
			wantDir := Upload
			if reverse {
				wantDir = Download
			} else if bidir {
				wantDir = Bidir
			}
			if res.Direction != wantDir {
				t.Errorf("direction %s, want %s", res.Direction, wantDir)
			}
		})
	}
}

// TestStockIperf3ClientBesideSilentConnections: issue 37's attack with a
// real client: a connection that never sends its cookie arrives every
// 200 ms (the report had one every 10 s) while `iperf3 -c` runs a 1 s test;
// the test must run and both sides must see data. Bounded: iperf3 is
// killed after 60 s.
func TestStockIperf3ClientBesideSilentConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("runs iperf3 for seconds")
	}
	path, err := exec.LookPath("iperf3")
	if err != nil {
		t.Skip("iperf3 not installed (apt-get install iperf3): the attack is still tested with our client in TestSilentConnectionsDoNotTakeTheServer")
	}
	port, out, _ := hostileServer(t, ServerConfig{CookieWait: time.Second})
	silentConnections(t, port, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := iperf3Command(path, "-c", "127.0.0.1", "-p", fmt.Sprint(port), "-t", "1", "-b", "50M", "-J")
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("iperf3 -c beside silent connections: %v\n%s", err, stdout)
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout, &doc); err != nil {
		t.Fatal(err)
	}
	if got := num(t, doc["end"].(map[string]any), "sum_received", "bytes"); got <= 0 {
		t.Errorf("iperf3 -c: %v bytes received", got)
	}
	for {
		o := waitOutcome(t, out, 30*time.Second, "iperf3 -c's test")
		if errors.Is(o.err, ErrNoClient) {
			continue // a silent connection, dropped after its cookie wait
		}
		if o.err != nil || o.res == nil || o.res.Bytes <= 0 {
			t.Fatalf("server: %v, %+v", o.err, o.res)
		}
		break
	}
}

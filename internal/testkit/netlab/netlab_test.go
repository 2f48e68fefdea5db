package netlab

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The lab is checked here against the real tools (traceroute, mtr, ping,
// hping3) only; linecheck itself is tested against the lab in ./labtest.
// Each test builds its own lab with its own prefix, so they run in parallel.
// Pings that measure the wire's delay run under chrt -f (real-time): on this
// shared 2-core machine an ordinary process can wait tens of milliseconds
// for a CPU, which is the machine's delay, not the wire's.

func TestConfigRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"prefix with uppercase", Config{Prefix: "Lab", Hops: 2}, "prefix"},
		{"prefix too long", Config{Prefix: "abcdefghi", Hops: 2}, "prefix"},
		{"no hops", Config{Prefix: "lcnl", Hops: 0}, "hops 0"},
		{"too many hops", Config{Prefix: "lcnl", Hops: 51}, "hops 51"},
		{"TUN link beyond the server", Config{Prefix: "lcnl", Hops: 2, TUNLink: 3}, "TUN link 3"},
		{"multipath with two hops", Config{Prefix: "lcnl", Hops: 2, Multipath: true}, "at least 3 hops"},
		{"TUN link on the multipath split", Config{Prefix: "lcnl", Hops: 4, Multipath: true, TUNLink: 2}, "multipath split"},
		{"loss above 1", Config{Prefix: "lcnl", Hops: 2, TUNLink: 1, Loss: 1.5}, "loss 1.5"},
		{"jitter larger than delay", Config{Prefix: "lcnl", Hops: 2, TUNLink: 1, Delay: time.Millisecond, Jitter: 2 * time.Millisecond}, "jitter"},
		{"delay without TUN link", Config{Prefix: "lcnl", Hops: 2, Delay: time.Millisecond}, "need a TUN link"},
		{"change without a time", Config{Prefix: "lcnl", Hops: 2, TUNLink: 1, Change: &Change{Loss: 0.1}}, "change: no time"},
		{"change to a loss above 1", Config{Prefix: "lcnl", Hops: 2, TUNLink: 1, Change: &Change{At: time.Now(), Loss: 2}}, "change: loss 2"},
		{"change without TUN link", Config{Prefix: "lcnl", Hops: 2, Change: &Change{At: time.Now()}}, "need a TUN link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Up(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Up(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
			}
		})
	}
}

func TestAddressesFollowTheLinkPlan(t *testing.T) {
	l := &Lab{cfg: Config{Prefix: "x", Hops: 3, Multipath: true}}
	l.plan()
	if got, want := l.RouterAddrs(false), []string{"10.77.0.2", "10.77.1.2", "10.77.2.2", "10.77.3.2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("RouterAddrs(v4) = %v, want %v", got, want)
	}
	if got, want := l.RouterAddrs(true), []string{"fd77::2", "fd77:0:0:1::2", "fd77:0:0:2::2", "fd77:0:0:3::2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("RouterAddrs(v6) = %v, want %v", got, want)
	}
	if got, want := l.HopAddrs(false)[1], []string{"10.77.1.2", "10.77.100.2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("HopAddrs(v4)[1] = %v, want %v", got, want)
	}
	if got, want := l.Namespaces(), []string{"xc", "xr1", "xr2", "xr3", "xs", "xr2b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Namespaces = %v, want %v", got, want)
	}
}

// run runs cmd with a deadline and returns its combined output; a non-zero
// exit fails the test unless allowFail.
func run(t *testing.T, cmd *exec.Cmd, allowFail bool) string {
	t.Helper()
	timer := time.AfterFunc(90*time.Second, func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	if err != nil && !allowFail {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

func tool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed (scripts/test installs it): %v", name, err)
	}
}

func TestTracerouteAndMTRSeeEveryRouter(t *testing.T) {
	t.Parallel()
	tool(t, "traceroute")
	tool(t, "mtr")
	l := UpForTest(t, Config{Prefix: "lcnla", Hops: 5, IPv6: true})
	for _, v6 := range []bool{false, true} {
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		want := l.RouterAddrs(v6)
		for _, mode := range [][]string{{}, {"-I"}, {"-T", "-p", "80"}} {
			args := append([]string{fam, "-n", "-q", "2", "-w", "2"}, mode...)
			out := run(t, l.Exec(l.Client(), "traceroute", append(args, l.ServerAddr(v6))...), false)
			hops, err := TracerouteHops(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hops {
				got = append(got, strings.Join(h, "|"))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("traceroute %v: hops %v, want %v\n%s", args, got, want, out)
			}
		}
		out := run(t, l.Exec(l.Client(), "mtr", fam, "-n", "-r", "-c", "3", "-i", "0.1", "--json", l.ServerAddr(v6)), false)
		hubs, err := MTRReport([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hubs {
			got = append(got, h.Host)
			if h.Loss != 0 {
				t.Errorf("mtr %s: hop %d %s: loss %v%%, want 0 (ICMP rate limiting must be off)", fam, h.TTL, h.Host, h.Loss)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("mtr %s: hops %v, want %v", fam, got, want)
		}
	}
	// No default route anywhere: an address outside the lab is unreachable
	// before any packet leaves (ip route get sends nothing).
	for _, ns := range []string{l.Client(), l.Router(3), l.Server()} {
		for _, dst := range []string{"192.0.2.1", "2001:db8::1"} {
			out := run(t, l.Exec(ns, "ip", "route", "get", dst), true)
			if !strings.Contains(out, "unreachable") {
				t.Errorf("%s: ip route get %s = %q, want unreachable", ns, dst, out)
			}
		}
	}
}

func TestTUNLinkDelaysOnlyTheHopsBehindIt(t *testing.T) {
	t.Parallel()
	l := UpForTest(t, Config{Prefix: "lcnlb", Hops: 3, IPv6: true, TUNLink: 2, Delay: 20 * time.Millisecond})
	realTimeWire(t, l)
	for _, v6 := range []bool{false, true} {
		addrs := l.RouterAddrs(v6) // r1, r2 before link 2; r3 (its far end) and the server behind it
		for i, a := range addrs {
			out := run(t, l.Exec(l.Client(), "chrt", "-f", "10", "ping", "-n", "-c", "20", "-i", "0.02", a), false)
			p, err := PingOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			med := Median(p.RTTs)
			if i < 2 && med > 2 {
				t.Errorf("%s (hop %d, before the TUN link): median RTT %.3f ms, want < 2", a, i+1, med)
			}
			// 0.5 ms of TUN overhead (measured on this machine: a TUN hop
			// costs about that much) plus scheduling noise, plus what the
			// wire itself measured of its lateness (twice its mean: on a VM
			// whose timers run late the median read 22.6–23.9 ms, idle,
			// with the wire 2.5 ms late on average).
			if i >= 2 {
				c, err := l.TUNCounters()
				if err != nil {
					t.Fatal(err)
				}
				if hi := 22.5 + 2*float64(c.LateMean)/1000; med < 20 || med > hi {
					t.Errorf("%s (hop %d, behind the 20 ms link): median RTT %.3f ms, want 20..%.1f (the wire late %d µs on average)", a, i+1, med, hi, c.LateMean)
				}
			}
			if p.Recv != p.Sent {
				t.Errorf("%s: %d of %d received", a, p.Recv, p.Sent)
			}
		}
	}
}

func TestTUNLinkJitterIsUniformAroundTheDelay(t *testing.T) {
	t.Parallel()
	l := UpForTest(t, Config{Prefix: "lcnlj", Hops: 2, TUNLink: 1, Delay: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Seed: 7})
	realTimeWire(t, l)
	out := run(t, l.Exec(l.Client(), "chrt", "-f", "10", "ping", "-n", "-c", "300", "-i", "0.02", l.ServerAddr(false)), false)
	p, err := PingOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	// The delays the wire drew, by hand for a uniform 45..55 ms: none
	// outside it, a mean of 50 ms (± 0.5: three standard errors of 300
	// draws) and a standard deviation of 10/√12 = 2.887 ms.
	t.Logf("wire: %d delays, min %d max %d mean %d sd %d µs; late mean %d max %d µs", c.Delays, c.DelayMin, c.DelayMax, c.DelayMean, c.DelaySD, c.LateMean, c.LateMax)
	if c.Delays < p.Recv || c.DelayMin < 45000 || c.DelayMax > 55000 || c.DelayMean < 49500 || c.DelayMean > 50500 || c.DelaySD < 2600 || c.DelaySD > 3200 {
		t.Errorf("drawn delays: %d, min %d max %d mean %d sd %d µs; want %d or more in 45000..55000, mean ≈50000, sd ≈2887",
			c.Delays, c.DelayMin, c.DelayMax, c.DelayMean, c.DelaySD, p.Recv)
	}
	// What ping sees through the wire: the delay is there (no RTT below
	// 45 ms, the wire never sends early; the median at 50 ms or later) and
	// so is the jitter (an interquartile range of 5 ms, ~0 without it).
	// The wire's late wakeups only add: on a VM whose timers run late (1 ms
	// sleeps overshooting 2.3 ms at the 95th) the median read 52–55 ms and
	// the range 7–8 ms, idle; they are bounded loosely above.
	sort.Float64s(p.RTTs)
	n := len(p.RTTs)
	q := func(f float64) float64 { return p.RTTs[int(math.Ceil(f*float64(n)))-1] }
	med, iqr := Median(p.RTTs), q(0.75)-q(0.25)
	t.Logf("ping: RTT min %.2f p5 %.2f median %.2f p95 %.2f IQR %.2f ms", p.RTTs[0], q(0.05), med, q(0.95), iqr)
	if p.RTTs[0] < 45 || med < 49 || med > 60 || iqr < 4 || iqr > 10 {
		t.Errorf("ping through the wire: RTT min %.2f median %.2f IQR %.2f ms; want min ≥ 45, median 49..60, IQR ≈5", p.RTTs[0], med, iqr)
	}
}

func TestTUNLinkLossAndDuplicates(t *testing.T) {
	t.Parallel()
	l := UpForTest(t, Config{Prefix: "lcnlc", Hops: 2, TUNLink: 1, Loss: 0.1, Dup: 0.2, Seed: 3})
	out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "2000", "-i", "0.002", l.ServerAddr(false)), true)
	p, err := PingOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	loss := 1 - float64(p.Recv)/float64(p.Sent)
	// Binomial sd on 2000 probes: 0.67 points; ±3 points is 4.5 sd.
	if loss < 0.07 || loss > 0.13 {
		t.Errorf("ping loss %.3f, want 0.10 ± 0.03", loss)
	}
	// The wire's own counters are the exact expectation: nothing but ping's
	// echo requests crosses it client→server.
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	if c.In != p.Sent || c.Lost != p.Sent-p.Recv || c.Dup != p.Dups {
		t.Errorf("TUN link counted %+v; ping sent %d, lost %d, duplicates %d", c, p.Sent, p.Sent-p.Recv, p.Dups)
	}
	dupRate := float64(p.Dups) / float64(p.Recv)
	if dupRate < 0.16 || dupRate > 0.24 {
		t.Errorf("ping duplicates %d of %d received = %.3f, want 0.20 ± 0.04", p.Dups, p.Recv, dupRate)
	}
}

func TestLossEveryNthIsExactAndStartsAtItsRouter(t *testing.T) {
	t.Parallel()
	l := UpForTest(t, Config{Prefix: "lcnld", Hops: 3, IPv6: true})
	if err := l.Loss(2, 10, 0); err != nil {
		t.Fatal(err)
	}
	for _, v6 := range []bool{false, true} {
		out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "100", "-i", "0.005", l.ServerAddr(v6)), true)
		p, err := PingOutput(out)
		if err != nil {
			t.Fatal(err)
		}
		if p.Sent != 100 || p.Recv != 90 {
			t.Errorf("v6=%v: ping through r2 with every 10th dropped: %d of %d received, want 90 of 100", v6, p.Recv, p.Sent)
		}
		// ping's TTL 64 arrives at r2 as 63.
		d, err := l.Dropped(2, v6)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, map[int]int{63: 10}) {
			t.Errorf("v6=%v: Dropped(2) = %v, want map[63:10]", v6, d)
		}
		out = run(t, l.Exec(l.Client(), "ping", "-n", "-c", "50", "-i", "0.005", l.RouterAddrs(v6)[0]), false)
		if p, _ := PingOutput(out); p.Recv != 50 {
			t.Errorf("v6=%v: ping r1 (before the lossy router): %d of 50 received", v6, p.Recv)
		}
	}
	// Random: the kernel's own drop counter is the exact expectation.
	if err := l.Loss(2, 0, 10); err != nil {
		t.Fatal(err)
	}
	out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "2000", "-i", "0.002", l.ServerAddr(false)), true)
	p, err := PingOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Dropped(2, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Sent-p.Recv != d[63] {
		t.Errorf("random loss: ping lost %d, nftables dropped %d", p.Sent-p.Recv, d[63])
	}
	if loss := float64(p.Sent-p.Recv) / float64(p.Sent); loss < 0.07 || loss > 0.13 {
		t.Errorf("random loss %.3f over %d probes, want 0.10 ± 0.03", loss, p.Sent)
	}
	if err := l.Loss(2, 0, 0); err != nil {
		t.Fatal(err)
	}
	out = run(t, l.Exec(l.Client(), "ping", "-n", "-c", "50", "-i", "0.005", l.ServerAddr(false)), false)
	if p, _ := PingOutput(out); p.Recv != 50 {
		t.Errorf("after removing the loss: %d of 50 received", p.Recv)
	}
}

func TestICMPRateLimitMakesFalseLossAtOneHop(t *testing.T) {
	t.Parallel()
	tool(t, "mtr")
	l := UpForTest(t, Config{Prefix: "lcnle", Hops: 3})
	mtr := func() []MTRHub {
		out := run(t, l.Exec(l.Client(), "mtr", "-n", "-r", "-c", "40", "-i", "0.05", "--json", l.ServerAddr(false)), false)
		hubs, err := MTRReport([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(hubs) != 4 {
			t.Fatalf("mtr: %d hops, want 4: %+v", len(hubs), hubs)
		}
		return hubs
	}
	if err := l.ICMPRateLimit(2, true); err != nil {
		t.Fatal(err)
	}
	hubs := mtr()
	for i, h := range hubs {
		if i == 1 && h.Loss < 50 {
			t.Errorf("rate-limited hop 2: mtr loss %v%%, want ≥ 50 (1 reply/s after a burst)", h.Loss)
		}
		if i != 1 && h.Loss != 0 {
			t.Errorf("hop %d: mtr loss %v%%, want 0", i+1, h.Loss)
		}
	}
	if err := l.ICMPRateLimit(2, false); err != nil {
		t.Fatal(err)
	}
	for _, h := range mtr() {
		if h.Loss != 0 {
			t.Errorf("rate limiting off again: hop %d loss %v%%, want 0", h.TTL, h.Loss)
		}
	}
}

var hpingFrom = regexp.MustCompile(`ip=([0-9.]+)`)

func TestMultipathSplitsFlowsAndKeepsEachOnOnePath(t *testing.T) {
	t.Parallel()
	tool(t, "traceroute")
	tool(t, "hping3")
	l := UpForTest(t, Config{Prefix: "lcnlf", Hops: 4, IPv6: true, Multipath: true})
	for _, v6 := range []bool{false, true} {
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		// Classic UDP traceroute changes the port with every probe: many
		// flows. Its ports differ from run to run, and all 10 probes of hop 2
		// take one path about once in 512 runs: a run that saw one of the two
		// is repeated (up to 3 runs, a miss once in 10^8), each run must see
		// nothing but the lab's addresses, and the runs together both paths.
		want := l.HopAddrs(v6)
		seen := make([]map[string]bool, len(want))
		for i := range seen {
			seen[i] = map[string]bool{}
		}
		var out string
		for attempt := 1; attempt <= 3; attempt++ {
			out = run(t, l.Exec(l.Client(), "traceroute", fam, "-n", "-q", "10", "-w", "2", l.ServerAddr(v6)), false)
			hops, err := TracerouteHops(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(hops) != len(want) {
				t.Fatalf("traceroute %s -q 10: %d hops, want %d\n%s", fam, len(hops), len(want), out)
			}
			for i := range hops {
				if len(hops[i]) == 0 {
					t.Errorf("traceroute %s -q 10: hop %d silent\n%s", fam, i+1, out)
				}
				for _, a := range hops[i] {
					if !slices.Contains(want[i], a) {
						t.Errorf("traceroute %s -q 10: hop %d: %v, want only %v\n%s", fam, i+1, hops[i], want[i], out)
					}
					seen[i][a] = true
				}
			}
			if t.Failed() || allSeen(seen, want) {
				break
			}
		}
		for i := range want {
			if !allSeen(seen[i:i+1], want[i:i+1]) {
				t.Errorf("traceroute %s -q 10 (3 runs): hop %d saw %v, want all of %v\n%s", fam, i+1, seen[i], want[i], out)
			}
		}
	}
	// One UDP flow (fixed ports, hping3 -k) always takes one path; eight
	// flows use both.
	seen := map[string]bool{}
	for sport := 40000; sport < 40008; sport++ {
		out := run(t, l.Exec(l.Client(), "hping3", "-n", "--udp", "-s", fmt.Sprint(sport), "-k", "-p", "33434",
			"-t", "2", "-c", "6", "-i", "u10000", l.ServerAddr(false)), true)
		addrs := map[string]bool{}
		for _, m := range hpingFrom.FindAllStringSubmatch(out, -1) {
			addrs[m[1]] = true
			seen[m[1]] = true
		}
		if len(addrs) != 1 {
			t.Errorf("UDP flow from port %d: hop 2 answered from %v, want exactly one address\n%s", sport, addrs, out)
		}
	}
	if !seen["10.77.1.2"] || !seen["10.77.100.2"] {
		t.Errorf("8 UDP flows saw hop 2 as %v, want both 10.77.1.2 and 10.77.100.2", seen)
	}
}

// allSeen tells whether seen[i] holds every address of want[i], for every i.
func allSeen(seen []map[string]bool, want [][]string) bool {
	for i, w := range want {
		for _, a := range w {
			if !seen[i][a] {
				return false
			}
		}
	}
	return true
}

func TestUpRemovesLeftoversAndDownRemovesEverything(t *testing.T) {
	t.Parallel()
	RequireRoot(t)
	cfg := Config{Prefix: "lcnlg", Hops: 2, TUNLink: 1}
	crashed, err := Up(cfg) // never torn down: stands for a crashed run
	if err != nil {
		t.Fatal(err)
	}
	oldPID := crashed.tuns[0].cmd.Process.Pid
	l := UpForTest(t, cfg)
	if alive(oldPID) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", oldPID))
		t.Errorf("the previous lab's TUN link (pid %d) still runs: %s", oldPID, b)
	}
	_ = crashed.tuns[0].cmd.Wait() // reap it
	out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "3", "-i", "0.05", l.ServerAddr(false)), false)
	if p, _ := PingOutput(out); p.Recv != 3 {
		t.Errorf("the new lab does not forward: %s", out)
	}
	newPID := l.tuns[0].cmd.Process.Pid
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if alive(newPID) {
		t.Errorf("TUN link pid %d still runs after Down", newPID)
	}
	for _, ns := range l.Namespaces() {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("namespace %s still exists after Down", ns)
		}
	}
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestICMPLossSilencesOneHopOnly(t *testing.T) {
	t.Parallel()
	tool(t, "traceroute")
	tool(t, "mtr")
	l := UpForTest(t, Config{Prefix: "lcnlh", Hops: 3})
	if err := l.ICMPLoss(2, 100); err != nil {
		t.Fatal(err)
	}
	out := run(t, l.Exec(l.Client(), "traceroute", "-n", "-q", "1", "-w", "1", l.ServerAddr(false)), false)
	hops, err := TracerouteHops(out)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"10.77.0.2"}, nil, {"10.77.2.2"}, {"10.77.3.2"}}
	if !reflect.DeepEqual(hops, want) {
		t.Errorf("traceroute with r2 silent: %q, want %q\n%s", hops, want, out)
	}
	if err := l.ICMPLoss(2, 30); err != nil {
		t.Fatal(err)
	}
	out = run(t, l.Exec(l.Client(), "mtr", "-n", "-r", "-c", "100", "-i", "0.01", "--json", l.ServerAddr(false)), false)
	hubs, err := MTRReport([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.ICMPDropped(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hubs) != 4 {
		t.Fatalf("mtr: %+v", hubs)
	}
	for i, h := range hubs {
		want := 0.0
		if i == 1 {
			want = float64(d) // of 100 probes
		}
		if math.Abs(h.Loss-want) > 1e-9 {
			t.Errorf("mtr hop %d: loss %v%%, want %v%% (nftables dropped %d time-exceeded at r2)", i+1, h.Loss, want, d)
		}
	}
}

func TestTUNLinkReorderLetsPacketsOvertake(t *testing.T) {
	t.Parallel()
	l := UpForTest(t, Config{Prefix: "lcnli", Hops: 2, TUNLink: 1, Delay: 20 * time.Millisecond, Reorder: 0.25, Seed: 9})
	out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "200", "-i", "0.002", l.ServerAddr(false)), false)
	p, err := PingOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	// A request sent undelayed overtakes the ≈10 requests queued on the
	// 20 ms wire, so its reply arrives before theirs.
	overtakers := 0
	for i := 1; i < len(p.Seqs); i++ {
		if p.Seqs[i] < p.Seqs[i-1] {
			overtakers++
		}
	}
	if p.Recv != 200 || c.Reordered < 25 || c.Reordered > 75 || overtakers == 0 {
		t.Errorf("received %d of 200, wire reordered %d (want 50 ± 25), replies out of order %d (want > 0)", p.Recv, c.Reordered, overtakers)
	}
	// No delayed packet can come back in under half the wire's delay, so the
	// fast replies are at most the undelayed ones; on a loaded machine (CI
	// runs every package at once) a few undelayed replies wait for the CPU,
	// so at least nine in ten of them must be fast, not all.
	fast := 0
	for _, r := range p.RTTs {
		if r < 10 {
			fast++
		}
	}
	if fast > c.Reordered || fast < c.Reordered*9/10 {
		t.Errorf("%d replies faster than 10 ms on a 20 ms wire, the wire sent %d undelayed (want at most that, and at least 90 %% of it)", fast, c.Reordered)
	}
}

// realTimeWire runs every thread of the lab's userspace wire at real-time
// priority, as the pings that measure it: under load (a CI run's other
// packages beside this one) an ordinary wire woke late now and then, and a
// p99 of 58.8 ms read against the 45..55 ms it draws.
func realTimeWire(t *testing.T, l *Lab) {
	t.Helper()
	if len(l.tuns) == 0 {
		t.Fatal("the lab has no userspace wire running")
	}
	for _, w := range l.tuns {
		if out, err := exec.Command("chrt", "-a", "-f", "-p", "10", strconv.Itoa(w.cmd.Process.Pid)).CombinedOutput(); err != nil {
			t.Fatalf("chrt the wire: %v: %s", err, out)
		}
	}
}

// A lab's namespaces outlive the first `ip netns add` on the machine: that
// command bind-mounts /run/netns over itself when the directory is not a
// mount point yet, and namespaces mounted in it before are hidden (neither
// `ip netns exec` nor Down could reach them: a fresh-boot run of the
// two-vantage dashboard test left four namespaces behind that way). Up
// makes the directory a mount point first, as iproute2 does.
func TestLabSurvivesIPNetnsAdd(t *testing.T) {
	t.Parallel()
	RequireRoot(t)
	l := UpForTest(t, Config{Prefix: "lcnlq", Hops: 2})
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mounted := false
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == "/run/netns" {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("/run/netns is not a mount point after Up:\n%s", mi)
	}
	const extra = "lcnlqx"
	_ = exec.Command("ip", "netns", "del", extra).Run() // a crashed run's
	if out, err := exec.Command("ip", "netns", "add", extra).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v\n%s", extra, err, out)
	}
	defer func() {
		if out, err := exec.Command("ip", "netns", "del", extra).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", extra, err, out)
		}
	}()
	out := run(t, l.Exec(l.Client(), "ping", "-n", "-c", "2", "-i", "0.05", l.ServerAddr(false)), false)
	if p, _ := PingOutput(out); p.Recv != 2 {
		t.Errorf("after ip netns add the lab's client cannot reach the server: %s", out)
	}
	if err := l.Down(); err != nil {
		t.Errorf("Down after ip netns add: %v", err)
	}
	for _, ns := range l.Namespaces() {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("namespace %s still exists after Down", ns)
		}
	}
}

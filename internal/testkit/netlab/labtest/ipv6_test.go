package labtest

import (
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// IPv6 in the lab (issue 32): ping and multipath over the lab's IPv6
// addresses (fd77::/16, inside the test's own namespaces), against the same
// peers as IPv4: iputils ping -6 and fping -6 for ping, scamper tracelb for
// multipath. trace_test.go already runs trace (ICMPv6, UDP, TCP) over IPv6
// against traceroute -6 and mtr -6.

// fpingRTTs parses `fping -C N -q` output (on stderr, one line per target:
// "ADDR : 20.1 20.3 - 20.2", "-" for a probe without reply) and returns the
// round-trip times of the replies and the number of probes without one.
func fpingRTTs(out string) (rtts []float64, lost int, err error) {
	for _, line := range strings.Split(out, "\n") {
		_, times, ok := strings.Cut(line, " : ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(times) {
			if f == "-" {
				lost++
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, 0, err
			}
			rtts = append(rtts, v)
		}
	}
	return rtts, lost, nil
}

// fpingSummary reads the xmt/rcv of `fping -c N -q` ("ADDR : xmt/rcv/%loss
// = 200/180/10%, min/avg/max = …").
var fpingSummary = regexp.MustCompile(`xmt/rcv/%loss = (\d+)/(\d+)/`)

// Behind a 20 ms wire, `linecheck ping -6`, iputils `ping -6` and
// `fping -6` run at the same time on the same IPv6 path: linecheck's median
// RTT is within 0.5 ms of each of theirs; `ping -6 --tcp 8080` (TCP connect
// to an IPv6 listener) reads ping -6's median beside it, at most 2 ms more
// (a connect is one round trip; 20 ms more would be two). Then every 10th packet entering
// router 2 is dropped (nftables, counted per hop limit): 200 probes of
// linecheck lose exactly 20, the ones nftables counted for IPv6 and none
// for IPv4, and fping -6 after it loses exactly 20 of its 200 too.
func TestPingOverIPv6MatchesPingAndFping(t *testing.T) {
	t.Parallel()
	netlab.RequireRoot(t)
	tool(t, "fping")
	l, bin := lab(t, netlab.Config{Prefix: "lcl6p", Hops: 3, IPv6: true, TUNLink: 3, Delay: 20 * time.Millisecond})
	dst := l.ServerAddr(true)
	const n = 200
	// fping 5 waits no longer than its period (-p) for a reply unless -t
	// says otherwise: 10 ms on a 20 ms path read every probe as lost.
	// Same real-time priority for all three: the test compares timestamps,
	// not how long a loaded machine keeps each process off a CPU.
	waitPing := start(l, l.Client(), "chrt", "-f", "10", "ping", "-6", "-n", "-c", itoa(n), "-i", "0.01", dst)
	waitFping := start(l, l.Client(), "chrt", "-f", "10", "fping", "-6", "-q", "-C", itoa(n), "-p", "10", "-t", "2000", dst)
	r := mustRun(t, l, l.Client(), "chrt", "-f", "10", bin, "ping", "-6", "--format", "json", "--count", itoa(n), "--interval", "10ms",
		"--timeout", "2s", "--rate", "1000", dst)
	pr, fr := waitPing(), waitFping()
	if pr.err != nil {
		t.Fatal(pr)
	}
	if fr.err != nil {
		t.Fatal(fr)
	}
	d := parsePing(t, r)
	if len(d.Results) != 1 {
		t.Fatalf("%d results, want 1", len(d.Results))
	}
	res := d.Results[0]
	if res.Addr != dst || res.Sent != n || res.Recv != n || res.Loss != 0 || res.Duplicates != 0 || res.Late != 0 {
		t.Errorf("linecheck ping -6: addr %s sent %d recv %d loss %v dup %d late %d, want %s, %d, %d, 0, 0, 0",
			res.Addr, res.Sent, res.Recv, res.Loss, res.Duplicates, res.Late, dst, n, n)
	}
	p, err := netlab.PingOutput(string(pr.stdout))
	if err != nil {
		t.Fatal(err)
	}
	frtts, flost, err := fpingRTTs(string(fr.stderr))
	if err != nil {
		t.Fatalf("fping output: %v\n%s", err, fr.stderr)
	}
	if p.Recv != n || len(frtts) != n || flost != 0 {
		t.Fatalf("on a lossless path: ping -6 received %d, fping -6 %d (%d lost) of %d", p.Recv, len(frtts), flost, n)
	}
	pm, fm := netlab.Median(p.RTTs), netlab.Median(frtts)
	t.Logf("medians over IPv6 behind 20 ms: linecheck %.3f, ping -6 %.3f, fping -6 %.3f ms", res.RTT.P50, pm, fm)
	if math.Abs(res.RTT.P50-pm) > 0.5 || math.Abs(res.RTT.P50-fm) > 0.5 {
		t.Errorf("median RTT: linecheck %.3f ms, ping -6 %.3f, fping -6 %.3f: want within 0.5 ms of each", res.RTT.P50, pm, fm)
	}
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	if hi := 22 + 2*float64(c.LateMean)/1000; pm < 20 || pm > hi {
		t.Errorf("ping -6 median %.3f ms on a 20 ms wire (late %d µs on average): the lab is off, want 20..%.1f", pm, c.LateMean, hi)
	}

	// TCP connect over IPv6 (an AF_INET6 listener on the server): one
	// round trip, so its median is ping -6's taken beside it.
	srv := l.Exec(l.Server(), "/usr/bin/python3", "-m", "http.server", "--bind", dst, "8080")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	listening := false
	for i := 0; i < 100 && !listening; i++ {
		out, _ := l.Exec(l.Server(), "ss", "-ltnH", "sport = :8080").Output()
		listening = strings.Contains(string(out), "8080")
		time.Sleep(50 * time.Millisecond)
	}
	if !listening {
		t.Fatal("python3 http.server did not listen on [" + dst + "]:8080 in the server namespace")
	}
	waitPing = start(l, l.Client(), "chrt", "-f", "10", "ping", "-6", "-n", "-c", "50", "-i", "0.02", dst)
	tcp := parsePing(t, mustRun(t, l, l.Client(), "chrt", "-f", "10", bin, "ping", "-6", "--tcp", "8080", "--format", "json", "--count", "50",
		"--interval", "20ms", "--timeout", "2s", dst)).Results[0]
	pr = waitPing()
	if pr.err != nil {
		t.Fatal(pr)
	}
	if p, err = netlab.PingOutput(string(pr.stdout)); err != nil || p.Recv != 50 {
		t.Fatalf("ping -6 beside the TCP ping: %v, %d of 50", err, p.Recv)
	}
	// A connect returns to a goroutine woken by the poller, an echo reply
	// is read by a thread waiting on it: the connect read 0.4 ms more in
	// two runs (20.71 and 20.69 against 20.30 ms). It can never read less
	// than the round trip, and not a second round trip's worth more.
	pm = netlab.Median(p.RTTs)
	t.Logf("ping -6 --tcp 8080 median %.3f ms, ping -6 beside it %.3f", tcp.RTT.P50, pm)
	if tcp.Sent != 50 || tcp.Recv != 50 || tcp.RTT.P50 < pm-0.5 || tcp.RTT.P50 > pm+2 {
		t.Errorf("ping -6 --tcp 8080: sent %d recv %d median %.3f ms; ping -6 beside it %.3f: want 50, 50 and %.1f..%.1f",
			tcp.Sent, tcp.Recv, tcp.RTT.P50, pm, pm-0.5, pm+2)
	}

	// The TCP ping's connections end before the loss rule goes in: their
	// last packets toward the server (an ACK, or a RST answering the
	// server's late FIN) would take turns of the rule's counter from the
	// probes below (a run beside 2 burners counted 42 drops for fping's
	// 20 and linecheck's 20). Quiet: the server closed, and its side of
	// every connection gone or in TIME-WAIT (its last packet received).
	_ = srv.Process.Kill()
	_ = srv.Wait()
	quiet := false
	for deadline := time.Now().Add(10 * time.Second); !quiet && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := l.Exec(l.Server(), "ss", "-tanH", "sport = :8080").Output()
		quiet = err == nil
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line != "" && !strings.HasPrefix(line, "TIME-WAIT") {
				quiet = false
			}
		}
	}
	if !quiet {
		t.Fatal("the TCP ping's connections to [" + dst + "]:8080 did not end within 10 s")
	}
	if err := l.Loss(2, 10, 0); err != nil {
		t.Fatal(err)
	}
	dropped := func(v6 bool) int {
		m, err := l.Dropped(2, v6)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, k := range m {
			sum += k
		}
		return sum
	}
	lossy := parsePing(t, mustRun(t, l, l.Client(), bin, "ping", "-6", "--format", "json", "--count", itoa(n), "--interval", "5ms",
		"--timeout", "1s", "--rate", "1000", dst)).Results[0]
	if d6, d4 := dropped(true), dropped(false); lossy.Sent != n || lossy.Recv != n-n/10 || d6 != n/10 || d4 != 0 || math.Abs(lossy.Loss-0.1) > 1e-9 {
		t.Errorf("every 10th dropped at r2: linecheck sent %d recv %d loss %v; nftables dropped %d IPv6, %d IPv4: want %d, %d, 0.1; %d, 0",
			lossy.Sent, lossy.Recv, lossy.Loss, d6, d4, n, n-n/10, n/10)
	}
	fr = mustRun(t, l, l.Client(), "fping", "-6", "-q", "-c", itoa(n), "-p", "5", "-t", "1000", dst)
	m := fpingSummary.FindStringSubmatch(string(fr.stderr))
	if m == nil {
		t.Fatalf("fping -6 -c: no xmt/rcv summary in %q", fr.stderr)
	}
	if m[1] != itoa(n) || m[2] != itoa(n-n/10) || dropped(true) != 2*(n/10) {
		t.Errorf("fping -6 after it: xmt/rcv %s/%s, nftables %d IPv6 drops in all: want %d/%d and %d", m[1], m[2], dropped(true), n, n-n/10, 2*(n/10))
	}
}

// `linecheck trace --multipath -6` on the two-branch and the nested ECMP
// labs over IPv6 (layer-4 hash), by UDP source port, and on the two-branch
// lab also by UDP destination port and by TCP source port: its interfaces
// per TTL and links are the lab's IPv6 paths exactly, every flow it maps is
// where the routers' IPv6 tables send that flow (ip -6 route get with the
// flow's ports), and scamper tracelb -P udp-sport on the same lab, to the
// same IPv6 server, finds nothing linecheck did not (and the same sets when
// it found the whole lab). scamper 20211212 cannot be the peer of the other
// two over IPv6: its tracelb -P udp-dport (and trace -P udp-paris) sends
// and returns nothing (it hung past 60 s on this lab), and -P tcp-sport
// returns at once with 0 probes, where over IPv4 it sends 25 and finds the
// lab; linecheck's udp-dport and tcp-sport flows over IPv6 are checked
// against the kernels.
func TestMultipathOverIPv6MatchesTheKernelAndScamper(t *testing.T) {
	t.Parallel()
	netlab.RequireRoot(t)
	tool(t, "scamper")
	tool(t, "sc_warts2json")
	type proto struct {
		field string   // linecheck's flow_field
		args  []string // linecheck's flags
		lb    string   // tracelb -P ("" when it cannot over IPv6)
	}
	udpSport := proto{"udp-sport", []string{"-U", "--flow-port", "src"}, "udp-sport"}
	for _, tc := range []struct {
		name   string
		cfg    netlab.Config
		protos []proto
	}{
		{"two branches", netlab.Config{Prefix: "lcl6m", Hops: 4, IPv6: true, Topology: netlab.Diamond2, Hash: netlab.HashL4}, []proto{
			udpSport,
			{"udp-dport", []string{"-U"}, ""},
			{"tcp-sport", []string{"-T", "-p", "80"}, ""},
		}},
		{"nested diamond", netlab.Config{Prefix: "lcl6n", Hops: 5, IPv6: true, Topology: netlab.Nested, Hash: netlab.HashL4}, []proto{udpSport}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, bin := mpLab(t, tc.cfg)
			paths := l.Paths(true)
			truthNodes, truthLinks := netlab.Graph(paths)
			for _, p := range tc.protos {
				d, _ := multipathWholeFamily(t, l, bin, true, len(paths), append(p.args, "--confidence", "95", "--timeout", "500ms")...)
				if d.Multipath.FlowField != p.field || d.Multipath.Stopped != "rule" || d.Multipath.ProtocolNote != nil {
					t.Errorf("%v: flow_field %q stopped %q note %v, want %s, rule, no note", p.args, d.Multipath.FlowField, d.Multipath.Stopped, d.Multipath.ProtocolNote, p.field)
				}
				d.checkAgainstOracle(t, l)
				nodes, links := d.graph()
				if !reflect.DeepEqual(nodes, truthNodes) || !reflect.DeepEqual(links, truthLinks) || len(d.Paths) != len(paths) {
					t.Errorf("%v: linecheck %d paths, nodes %v links %v\nthe lab's IPv6 paths %v give %v %v", p.args, len(d.Paths), nodes, links, paths, truthNodes, truthLinks)
				}
				if p.lb == "" {
					continue
				}
				lb, took, err := l.RunTraceLBFamily(true, p.lb, 95, "-W", "15")
				if err != nil {
					t.Fatal(err)
				}
				if lb.Dst != l.ServerAddr(true) {
					t.Errorf("tracelb traced %q, want the lab's IPv6 server %s", lb.Dst, l.ServerAddr(true))
				}
				t.Logf("%s: linecheck %d probes; tracelb %d probes in %v, %d/%d interfaces/links of the lab's %d/%d", p.field,
					d.Multipath.ProbesUsed, lb.Probes, took.Round(time.Millisecond), len(lb.Nodes), len(lb.Links), len(truthNodes), len(truthLinks))
				if len(lb.Nodes) == 0 {
					t.Errorf("tracelb -P %s over IPv6 found no interface: %+v", p.lb, lb)
				}
				for _, n := range lb.Nodes {
					if !slices.Contains(nodes, n) {
						t.Errorf("tracelb -P %s found %v, linecheck did not", p.lb, n)
					}
				}
				for _, k := range lb.Links {
					if !slices.Contains(links, k) {
						t.Errorf("tracelb -P %s found link %v, linecheck did not", p.lb, k)
					}
				}
				if reflect.DeepEqual(lb.Nodes, truthNodes) && reflect.DeepEqual(lb.Links, truthLinks) &&
					(!reflect.DeepEqual(nodes, lb.Nodes) || !reflect.DeepEqual(links, lb.Links)) {
					t.Errorf("tracelb -P %s %v %v, linecheck %v %v: want the same sets", p.lb, lb.Nodes, lb.Links, nodes, links)
				}
			}
			if tc.cfg.Topology != netlab.Diamond2 {
				return
			}
			// ICMPv6 echo flows differ in no field the layer-4 hash reads:
			// -I finds the one path the routers send ICMPv6 on (ip -6 route
			// get ipproto ipv6-icmp), says why it cannot rule out others,
			// and tracelb -P icmp-echo sees that same single path.
			di, _ := multipathFamily(t, l, bin, true, "-I", "--timeout", "500ms")
			want, err := l.FlowPaths([]netlab.Flow{{Proto: "icmp"}}, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(di.Paths) != 1 {
				t.Fatalf("-I over IPv6: %d paths, want 1", len(di.Paths))
			}
			var hops []string
			for _, h := range di.Paths[0].Hops {
				hops = append(hops, h.addr())
			}
			if !reflect.DeepEqual(hops, want[0]) || di.Multipath.FlowField != "icmp" || di.Multipath.ProtocolNote == nil {
				t.Errorf("-I over IPv6: path %v flow_field %q note %v; the kernel routes ICMPv6 on %v: want that path, icmp and a note",
					hops, di.Multipath.FlowField, di.Multipath.ProtocolNote, want[0])
			}
			di.checkAgainstOracle(t, l)
			li, _, err := l.RunTraceLBFamily(true, "icmp-echo", 95, "-W", "15")
			if err != nil {
				t.Fatal(err)
			}
			inodes, ilinks := di.graph()
			if !reflect.DeepEqual(li.Nodes, inodes) || !reflect.DeepEqual(li.Links, ilinks) {
				t.Errorf("tracelb -P icmp-echo over IPv6: %v %v, linecheck -I %v %v: want the same single path", li.Nodes, li.Links, inodes, ilinks)
			}
		})
	}
}

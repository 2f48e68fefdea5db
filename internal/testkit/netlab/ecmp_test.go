package netlab

import (
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The ECMP topologies' plans, by hand: addresses, paths and the routes of
// the two-branch diamond (the ones netlab wrote out one by one before the
// routes were computed from the graph).
func TestECMPPlansByHand(t *testing.T) {
	l := &Lab{cfg: Config{Prefix: "x", Hops: 4, Multipath: true}}
	l.plan()
	want := map[string][]route{
		"r1":  {{2, [][2]int{{1, 2}}}, {3, [][2]int{{1, 2}, {100, 2}}}, {4, [][2]int{{1, 2}, {100, 2}}}, {101, [][2]int{{100, 2}}}},
		"r2":  {{0, [][2]int{{1, 1}}}, {3, [][2]int{{2, 2}}}, {4, [][2]int{{2, 2}}}, {100, [][2]int{{1, 1}}}, {101, [][2]int{{2, 2}}}},
		"r2b": {{0, [][2]int{{100, 1}}}, {1, [][2]int{{100, 1}}}, {2, [][2]int{{101, 2}}}, {3, [][2]int{{101, 2}}}, {4, [][2]int{{101, 2}}}},
		"r3":  {{0, [][2]int{{2, 1}}}, {1, [][2]int{{2, 1}}}, {4, [][2]int{{3, 2}}}, {100, [][2]int{{101, 1}}}},
		"r4":  {{0, [][2]int{{3, 1}}}, {1, [][2]int{{3, 1}}}, {2, [][2]int{{3, 1}}}, {100, [][2]int{{3, 1}}}, {101, [][2]int{{3, 1}}}},
	}
	for short, rs := range want {
		nd, err := l.node(short)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(nd.routes, rs) {
			t.Errorf("%s routes %v, want %v", short, nd.routes, rs)
		}
	}
	if got, want := l.Paths(false), [][]string{
		{"10.77.0.2", "10.77.1.2", "10.77.2.2", "10.77.3.2", "10.77.4.2"},
		{"10.77.0.2", "10.77.100.2", "10.77.2.2", "10.77.3.2", "10.77.4.2"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("diamond2 paths %v, want %v", got, want)
	}

	l = &Lab{cfg: Config{Prefix: "x", Hops: 4, Topology: Diamond3}}
	l.plan()
	if got, want := l.HopAddrs(false)[1], []string{"10.77.1.2", "10.77.100.2", "10.77.102.2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("diamond3 hop 2 %v, want %v", got, want)
	}
	r1, _ := l.node("r1")
	for _, r := range r1.routes {
		if r.subnet == 4 && !reflect.DeepEqual(r.gws, [][2]int{{1, 2}, {100, 2}, {102, 2}}) {
			t.Errorf("diamond3 r1 route to the server's link via %v, want r2, r2b, r2c", r.gws)
		}
	}

	l = &Lab{cfg: Config{Prefix: "x", Hops: 5, Topology: Nested, IPv6: true}}
	l.plan()
	if got, want := l.PathRouters(), [][]string{
		{"r1", "r2", "r3", "r4", "r5", "s"},
		{"r1", "r2b", "r3b", "r4b", "r5", "s"},
		{"r1", "r2b", "r3c", "r4b", "r5", "s"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("nested paths %v, want %v", got, want)
	}
	// r4b answers from its link to r3b (its first way back), r5 from the
	// chain's link 4.
	if got, want := l.Paths(false)[2], []string{"10.77.0.2", "10.77.100.2", "10.77.102.2", "10.77.103.2", "10.77.4.2", "10.77.5.2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("nested path 3 %v, want %v", got, want)
	}
	for _, c := range []struct {
		short  string
		subnet int
		gws    [][2]int
	}{
		{"r1", 5, [][2]int{{1, 2}, {100, 2}}},    // the split
		{"r2b", 5, [][2]int{{101, 2}, {102, 2}}}, // the nested split
		{"r1", 4, [][2]int{{1, 2}}},              // r4–r5 is nearer by the chain
		{"r4b", 0, [][2]int{{103, 1}}},           // back by r3b only
		{"r5", 0, [][2]int{{4, 1}}},              // back by the chain only
	} {
		nd, _ := l.node(c.short)
		i := slices.IndexFunc(nd.routes, func(r route) bool { return r.subnet == c.subnet })
		if i < 0 || !reflect.DeepEqual(nd.routes[i].gws, c.gws) {
			t.Errorf("nested %s route to link %d: %v, want via %v", c.short, c.subnet, nd.routes, c.gws)
		}
	}
	var dep []int
	for _, lk := range l.links {
		if lk.deprecateR {
			dep = append(dep, lk.idx)
		}
	}
	if !reflect.DeepEqual(dep, []int{104, 105}) {
		t.Errorf("nested: deprecated right ends on links %v, want 104 (r4b from r3c) and 105 (r5 from r4b)", dep)
	}
	nodes, links := Graph(l.Paths(false))
	// Per TTL 1, 2, 3, 2, 1, 1 interfaces; 2, 3, 3, 2, 1 links between.
	if len(nodes) != 10 || len(links) != 11 {
		t.Errorf("nested graph: %d nodes %d links, want 10 and 11: %v %v", len(nodes), len(links), nodes, links)
	}
}

func TestECMPConfigRejected(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Prefix: "lcnl", Hops: 4, Topology: Nested}, "at least 5 hops"},
		{Config{Prefix: "lcnl", Hops: 4, Topology: "star"}, "topology \"star\""},
		{Config{Prefix: "lcnl", Hops: 4, Topology: Diamond3, Hash: "l7"}, "hash \"l7\""},
		{Config{Prefix: "lcnl", Hops: 4, Topology: Diamond2, Wires: []Wire{{Into: "r3"}}}, "wire into \"r3\""},
		{Config{Prefix: "lcnl", Hops: 4, Topology: Diamond2, Wires: []Wire{{Into: "r2b", Loss: 2}}}, "loss 2"},
		{Config{Prefix: "lcnl", Hops: 4, Topology: Diamond2, Wires: []Wire{{Into: "r2b", Delay: time.Millisecond, Jitter: time.Second}}}, "jitter"},
		{Config{Prefix: "lcnl", Hops: 4, Topology: Diamond2, Wires: []Wire{{Into: "r2b"}, {Into: "r2b"}}}, "two wires"},
	} {
		if _, err := Up(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Up(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

// Real scamper output (sc_warts2json of a tracelb on the nested lab), read
// by hand: scamper folded the diamond into one link 10.77.0.2 → 10.77.4.2
// of 4 hops ("3 nodes, 2 links"); its probes give 8 interfaces and 9 links
// per TTL. That run's 5 flows through r2b all left by r3c (102.2): r3b
// (101.2) is missing, as is its link.
func TestParseTraceLBExpandsFoldedLinks(t *testing.T) {
	b, err := os.ReadFile("testdata/tracelb-nested.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ParseTraceLB(b)
	if err != nil || len(res) != 1 {
		t.Fatalf("ParseTraceLB: %d results, %v", len(res), err)
	}
	r := res[0]
	if r.Method != "udp-dport" || r.Probes != 41 || r.NodeCount != 3 || r.LinkCount != 2 || r.Confidence != 95 || r.SrcPort != 57140 || r.DstPort != 33435 {
		t.Errorf("header %+v", r)
	}
	wantNodes := []HopAddr{{1, "10.77.0.2"}, {2, "10.77.1.2"}, {2, "10.77.100.2"}, {3, "10.77.102.2"}, {3, "10.77.2.2"},
		{4, "10.77.103.2"}, {4, "10.77.3.2"}, {5, "10.77.4.2"}, {6, "10.77.5.2"}}
	if !reflect.DeepEqual(r.Nodes, wantNodes) {
		t.Errorf("nodes %v\nwant %v", r.Nodes, wantNodes)
	}
	wantLinks := []HopLink{{1, "10.77.0.2", "10.77.1.2"}, {1, "10.77.0.2", "10.77.100.2"},
		{2, "10.77.1.2", "10.77.2.2"}, {2, "10.77.100.2", "10.77.102.2"},
		{3, "10.77.102.2", "10.77.103.2"}, {3, "10.77.2.2", "10.77.3.2"},
		{4, "10.77.103.2", "10.77.4.2"}, {4, "10.77.3.2", "10.77.4.2"}, {5, "10.77.4.2", "10.77.5.2"}}
	if !reflect.DeepEqual(r.Links, wantLinks) {
		t.Errorf("links %v\nwant %v", r.Links, wantLinks)
	}
	// 11 flows at TTLs 2, 3, 4; 6 at TTL 5; 1 at TTL 6 (the first hop's
	// probe is not recorded).
	if len(r.Answers) != 11*3+6+1 {
		t.Errorf("%d answers, want 40", len(r.Answers))
	}
}

// Real dublin-traceroute output (three of its flows on the two-branch lab):
// type and code swapped in the file, swapped back by the parser.
func TestParseDublinSwapsTypeAndCodeBack(t *testing.T) {
	b, err := os.ReadFile("testdata/dublin-diamond2.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDublin(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Flows) != 3 || d.Flows[0].DstPort != 33436 || d.Flows[0].SrcPort != 12345 {
		t.Fatalf("flows %+v", d.Flows)
	}
	f := d.Flows[1] // 33437 crossed r2b
	var addrs []string
	for _, h := range f.Hops {
		addrs = append(addrs, h.Addr)
		want := [2]int{11, 0}
		if h.TTL == 5 {
			want = [2]int{3, 3}
		}
		if [2]int{h.ICMPType, h.ICMPCode} != want {
			t.Errorf("TTL %d: icmp %d/%d, want %d/%d", h.TTL, h.ICMPType, h.ICMPCode, want[0], want[1])
		}
	}
	if want := []string{"10.77.0.2", "10.77.100.2", "10.77.2.2", "10.77.3.2", "10.77.4.2"}; !reflect.DeepEqual(addrs, want) {
		t.Errorf("flow 33437: %v, want %v", addrs, want)
	}
	if _, err := ParseDublin([]byte(`{"flows":{"x":[]}}`)); err == nil || !strings.Contains(err.Error(), `flow key "x"`) {
		t.Errorf("bad key: %v", err)
	}
}

// flowsOf returns scamper's flows (udp-dport: the flow id is the
// destination port) in the order first seen.
func flowsOf(r TraceLB) []Flow {
	var out []Flow
	seen := map[int]bool{}
	for _, a := range r.Answers {
		if !seen[a.Flow] {
			seen[a.Flow] = true
			out = append(out, Flow{Proto: "udp", SrcPort: r.SrcPort, DstPort: a.Flow})
		}
	}
	return out
}

// On each ECMP topology, every probe scamper tracelb sent and got an answer
// to was answered by the router the routers' kernels (`ip route get` with
// the probe's ports, FlowPaths) send that flow to, and scamper saw nothing
// the lab's paths do not hold; it saw all of them in one of three runs
// from fixed source ports (see below). Over IPv6 on the nested lab each hop
// answers only from the lab's addresses of that hop. dublin-traceroute's flows
// on the three-branch diamond follow the kernel's paths too, hop by hop.
func TestECMPLabsAgreeWithScamperDublinAndTheKernel(t *testing.T) {
	t.Parallel()
	RequireRoot(t)
	tool(t, "scamper")
	tool(t, "sc_warts2json")
	for _, tc := range []struct {
		name string
		cfg  Config
		full bool // scamper finds every path (in one of three runs)
	}{
		{"diamond2 custom-field hash", Config{Prefix: "lcnle2", Hops: 4, Topology: Diamond2}, true},
		{"diamond3 policy 1", Config{Prefix: "lcnle3", Hops: 4, Topology: Diamond3, Hash: HashL4}, true},
		{"nested policy 1", Config{Prefix: "lcnlen", Hops: 5, Topology: Nested, Hash: HashL4, IPv6: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := UpForTest(t, tc.cfg)
			truthNodes, truthLinks := Graph(l.Paths(false))
			// The kernels hash with a seed drawn per namespace, so a fixed
			// source port does not make tracelb's flows land the same way on
			// every lab, and tracelb's stopping rule misses a next hop by
			// design (at 95 % it missed the third branch of the diamond in 2
			// of 8 runs; 99 % is asked for here to make that rarer). A run
			// that misses is run again from another source port; three
			// misses in a row fail.
			sports := []string{"40000", "41000", "42000"}
			for attempt, sport := range sports {
				r, took, err := l.RunTraceLB("udp-dport", 99, "-W", "15", "-s", sport)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("tracelb -c 99 -s %s: %d probes, %v, %d nodes %d links (scamper's count %d/%d)", sport, r.Probes, took.Round(time.Millisecond), len(r.Nodes), len(r.Links), r.NodeCount, r.LinkCount)
				paths, err := l.FlowPaths(flowsOf(r), false)
				if err != nil {
					t.Fatal(err)
				}
				byFlow := map[int][]string{}
				for i, f := range flowsOf(r) {
					byFlow[f.DstPort] = paths[i]
				}
				for _, a := range r.Answers {
					p := byFlow[a.Flow]
					if a.TTL > len(p) || p[a.TTL-1] != a.Addr {
						t.Errorf("flow %d TTL %d: scamper saw %s, the kernel's path is %v", a.Flow, a.TTL, a.Addr, p)
					}
				}
				for _, n := range r.Nodes {
					if !slices.Contains(truthNodes, n) {
						t.Errorf("scamper node %v is on no path of the lab %v", n, l.Paths(false))
					}
				}
				for _, k := range r.Links {
					if !slices.Contains(truthLinks, k) {
						t.Errorf("scamper link %v is on no path of the lab %v", k, l.Paths(false))
					}
				}
				if !tc.full || (reflect.DeepEqual(r.Nodes, truthNodes) && reflect.DeepEqual(r.Links, truthLinks)) {
					break
				}
				if attempt == len(sports)-1 {
					t.Errorf("scamper missed a path in %d runs: found nodes %v links %v, the lab has %v %v", len(sports), r.Nodes, r.Links, truthNodes, truthLinks)
				} else {
					t.Logf("scamper found nodes %v links %v of %v %v (an allowed miss); once more", r.Nodes, r.Links, truthNodes, truthLinks)
				}
			}
			if tc.cfg.IPv6 {
				// Over IPv6 too each router answers from one address (a merge
				// router's other upstream addresses are deprecated).
				out := run(t, l.Exec(l.Client(), "traceroute", "-6", "-n", "-q", "6", "-w", "1", l.ServerAddr(true)), false)
				hops, err := TracerouteHops(out)
				if err != nil {
					t.Fatal(err)
				}
				want := l.HopAddrs(true)
				if len(hops) != len(want) {
					t.Fatalf("traceroute -6: %d hops, want %d\n%s", len(hops), len(want), out)
				}
				for i := range hops {
					for _, a := range hops[i] {
						if !slices.Contains(want[i], a) {
							t.Errorf("traceroute -6 hop %d: %v, want only %v\n%s", i+1, hops[i], want[i], out)
						}
					}
				}
			}
			if tc.cfg.Topology != Diamond3 {
				return
			}
			tool(t, "dublin-traceroute")
			d, err := l.RunDublin(8, 6)
			if err != nil {
				t.Fatal(err)
			}
			var flows []Flow
			for _, f := range d.Flows {
				flows = append(flows, Flow{"udp", f.SrcPort, f.DstPort})
			}
			dpaths, err := l.FlowPaths(flows, false)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i, f := range d.Flows {
				for _, h := range f.Hops {
					if h.Addr == "" || h.TTL > len(dpaths[i]) {
						continue
					}
					seen[h.Addr] = true
					if h.Addr != dpaths[i][h.TTL-1] {
						t.Errorf("dublin flow %d TTL %d: %s, the kernel's path is %v", f.DstPort, h.TTL, h.Addr, dpaths[i])
					}
				}
			}
			if len(d.Flows) != 8 || len(seen) < 5 {
				t.Errorf("dublin-traceroute: %d flows answered from %v: want 8 flows over at least two branches", len(d.Flows), seen)
			}
		})
	}
}

var msRE = regexp.MustCompile(`([0-9.]+) ms`)

// A wire into each branch of the diamond (r2: 20 ms; r2b: 40 ms and 5 %
// loss): each UDP flow (fixed ports, hping3 -k) to the server shows the
// delay of the branch the kernel's route names for it, and only the flows
// over r2b lose probes (every loss the wire counted was one of theirs).
// The lab hashes header fields (HashFields): traceroute sends from a
// connected UDP socket whose random socket hash policy 1 (HashL4) would
// follow instead of the ports, so its probes would spread over both
// branches (seen: medians of 30 ms).
func TestWiresDelayAndDropPerBranch(t *testing.T) {
	t.Parallel()
	tool(t, "traceroute")
	l := UpForTest(t, Config{Prefix: "lcnlw", Hops: 4, Topology: Diamond2, Wires: []Wire{
		{Into: "r2", Delay: 20 * time.Millisecond},
		{Into: "r2b", Delay: 40 * time.Millisecond, Loss: 0.05, Seed: 7},
	}})
	realTimeWire(t, l)
	var flows []Flow
	for sport := 41000; sport < 41006; sport++ {
		flows = append(flows, Flow{"udp", sport, 33434})
	}
	paths, err := l.FlowPaths(flows, false)
	if err != nil {
		t.Fatal(err)
	}
	r2b, _ := l.NodeAddr("r2b", false)
	const count, runs = 10, 3 // traceroute sends at most 10 probes per hop
	sentB, recvB, branches := 0, 0, map[bool]bool{}
	for i, f := range flows {
		// The server is hop 5: -f 5 -m 5 probes it only, count probes one
		// at a time.
		var rtts []float64
		for range runs {
			out := run(t, l.Exec(l.Client(), "chrt", "-f", "10", "traceroute", "-n", "-U", "-p", strconv.Itoa(f.DstPort), "--sport="+strconv.Itoa(f.SrcPort),
				"-f", "5", "-m", "5", "-N", "1", "-q", strconv.Itoa(count), "-w", "1", l.ServerAddr(false)), false)
			for _, m := range msRE.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseFloat(m[1], 64)
				rtts = append(rtts, v)
			}
		}
		viaB := paths[i][1] == r2b
		branches[viaB] = true
		want := 20.0
		if viaB {
			want = 40
			sentB += count * runs
			recvB += len(rtts)
		} else if len(rtts) != count*runs {
			t.Errorf("flow %v over r2: %d of %d answered, want all", f, len(rtts), count*runs)
		}
		if med := Median(rtts); math.Abs(med-want) > 3 {
			t.Errorf("flow %v over %s: median RTT %.2f ms of %d, want %.0f ± 3", f, paths[i][1], med, len(rtts), want)
		}
	}
	if len(branches) != 2 {
		t.Fatalf("flows %v all take one branch: want both", paths)
	}
	c, err := l.WireCounters("r2b")
	if err != nil {
		t.Fatal(err)
	}
	if c.Lost == 0 || sentB-recvB != c.Lost {
		t.Errorf("flows over r2b lost %d of %d, the wire dropped %d: want the same, more than 0", sentB-recvB, sentB, c.Lost)
	}
	if a, err := l.WireCounters("r2"); err != nil || a.Lost != 0 {
		t.Errorf("wire into r2: %+v %v, want no loss", a, err)
	}
}

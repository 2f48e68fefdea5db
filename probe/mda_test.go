package probe_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// topoFake is a simulated network: from the source ("src") each node
// hands a flow to one of its next hops by a hash of (seed, node, flow),
// as an ECMP router hashes the 5-tuple; a perPacket node picks anew for
// every packet; a silent node forwards but never answers. The target
// answers as the destination.
type topoFake struct {
	mu      sync.Mutex
	next    map[string][]string
	perPkt  map[string]bool
	silent  map[string]bool
	dst     string
	seed    uint64
	rnd     *rand.Rand
	queue   []probe.TraceReply
	wake    chan struct{}
	sends   []probe.TraceProbe
	perFlow map[int]int // probes per flow
	// loss is the chance that a packet on the wire into a node is
	// dropped, each way (a probe that reaches the node or passes it, and
	// the reply of one that did).
	loss map[string]float64
}

func newTopo(dst string, seed uint64, links ...string) *topoFake {
	f := &topoFake{next: map[string][]string{}, perPkt: map[string]bool{}, silent: map[string]bool{}, dst: dst,
		seed: seed, rnd: rand.New(rand.NewPCG(seed, 7)), wake: make(chan struct{}, 1), perFlow: map[int]int{}}
	// "a>b,c" is a with next hops b and c.
	for _, l := range links {
		from, to, _ := strings.Cut(l, ">")
		f.next[from] = strings.Split(to, ",")
	}
	return f
}

// hop is where flow goes after node at its n-th packet.
func (f *topoFake) hop(node string, flow int) string {
	nx := f.next[node]
	if len(nx) == 1 {
		return nx[0]
	}
	if f.perPkt[node] {
		return nx[f.rnd.IntN(len(nx))]
	}
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], f.seed)
	binary.BigEndian.PutUint64(b[8:], uint64(flow))
	h.Write(b[:])
	h.Write([]byte(node))
	// FNV's low bits follow the last byte's: mix them (splitmix64's
	// finaliser) so that two nodes hash a flow independently.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return nx[x%uint64(len(nx))]
}

func (f *topoFake) Send(p probe.TraceProbe) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends = append(f.sends, p)
	f.perFlow[p.Flow]++
	now := time.Now()
	cur := "src"
	var wires []float64
	for ttl := 1; ttl <= p.TTL; ttl++ {
		cur = f.hop(cur, p.Flow)
		if l := f.loss[cur]; l > 0 {
			wires = append(wires, l)
		}
		if cur == f.dst {
			break
		}
		if len(f.next[cur]) == 0 {
			return now, nil // a dead end: nothing answers
		}
	}
	if f.silent[cur] {
		return now, nil
	}
	for _, l := range wires {
		// There and back: two draws, the second only when the first
		// passed (the seeds of the loss tests replay this order).
		lost := f.rnd.Float64() < l
		if !lost {
			lost = f.rnd.Float64() < l
		}
		if lost {
			return now, nil
		}
	}
	f.queue = append(f.queue, probe.TraceReply{Key: p.Key, From: netip.MustParseAddr(cur), At: now.Add(time.Millisecond), Dest: cur == f.dst})
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return now, nil
}

func (f *topoFake) Receive(ctx context.Context) (probe.TraceReply, error) {
	for {
		f.mu.Lock()
		if len(f.queue) > 0 {
			r := f.queue[0]
			f.queue = f.queue[1:]
			f.mu.Unlock()
			return r, nil
		}
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return probe.TraceReply{}, ctx.Err()
		case <-f.wake:
		}
	}
}

func (f *topoFake) Close() error          { return nil }
func (f *topoFake) Mode() probe.TraceMode { return probe.ModeRaw }

func mdaCfg(conf int) probe.MultipathConfig {
	return probe.MultipathConfig{TraceConfig: probe.TraceConfig{Proto: probe.UDP, Timeout: 30 * time.Millisecond, Rate: 1e6, MaxTTL: 12},
		Confidence: conf}
}

func runMDA(t *testing.T, f *topoFake, cfg probe.MultipathConfig) *probe.MultipathRun {
	t.Helper()
	run, err := probe.MultipathWithDriver(context.Background(), f, f.dst, netip.MustParseAddr(f.dst), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cycles := 0
	if run.Cycles != nil {
		cycles = len(run.Cycles.Results)
	}
	if run.ProbesUsed != len(f.sends)-cycles {
		t.Errorf("probes used %d, the driver saw %d", run.ProbesUsed, len(f.sends))
	}
	return run
}

// nodeSet is "ttl addr" of every node, sorted ("*" for silent).
func nodeSet(run *probe.MultipathRun) []string {
	var out []string
	for _, n := range run.Nodes {
		out = append(out, fmt.Sprintf("%d %s", n.TTL, star(n.Addr)))
	}
	sort.Strings(out)
	return out
}

func linkSet(run *probe.MultipathRun) []string {
	var out []string
	for _, l := range run.Links {
		out = append(out, fmt.Sprintf("%d %s>%s", l.TTL, star(l.From), star(l.To)))
	}
	sort.Strings(out)
	return out
}

func star(a string) string {
	if a == "" {
		return "*"
	}
	return a
}

func pathSet(run *probe.MultipathRun) []string {
	var out []string
	for _, p := range run.Paths {
		var hs []string
		for _, h := range p.Hops {
			if h.PerPacket {
				hs = append(hs, "{"+strings.Join(h.Addrs, ",")+"}")
			} else {
				hs = append(hs, star(h.Addr))
			}
		}
		out = append(out, strings.Join(hs, " "))
	}
	sort.Strings(out)
	return out
}

func TestMDAStopMatchesThePublishedTable(t *testing.T) {
	// The table scamper's tracelb publishes (and libparistraceroute
	// copies), K = 2..99; index 0 and 1 unused.
	want := map[int][]int{
		95: {0, 0, 6, 11, 16, 21, 27, 33, 38, 44, 51, 57, 63, 70, 76, 83, 90, 96, 103, 110, 117, 124, 131, 138, 145, 152, 159, 167, 174, 181, 189, 196, 203, 211, 218, 226, 233, 241, 248, 256, 264, 271, 279, 287, 294, 302, 310, 318, 326, 333, 341, 349, 357, 365, 373, 381, 389, 397, 405, 413, 421, 429, 437, 445, 453, 462, 470, 478, 486, 494, 502, 511, 519, 527, 535, 544, 552, 560, 569, 577, 585, 594, 602, 610, 619, 627, 635, 644, 652, 661, 669, 678, 686, 695, 703, 712, 720, 729, 737, 746},
		99: {0, 0, 8, 15, 21, 28, 36, 43, 51, 58, 66, 74, 82, 90, 98, 106, 115, 123, 132, 140, 149, 157, 166, 175, 183, 192, 201, 210, 219, 228, 237, 246, 255, 264, 273, 282, 291, 300, 309, 319, 328, 337, 347, 356, 365, 375, 384, 393, 403, 412, 422, 431, 441, 450, 460, 470, 479, 489, 499, 508, 518, 528, 537, 547, 557, 566, 576, 586, 596, 606, 616, 625, 635, 645, 655, 665, 675, 685, 695, 705, 715, 725, 735, 745, 755, 765, 775, 785, 795, 805, 815, 825, 835, 845, 855, 866, 876, 886, 896, 906},
	}
	for conf, tab := range want {
		for k := 2; k < len(tab); k++ {
			if got := probe.MDAStop(k, conf); got != tab[k] {
				t.Errorf("n_%d at %d%%: %d, the published table says %d", k, conf, got, tab[k])
			}
		}
	}
	// By hand for K = 2: 2·2⁻ⁿ ≤ 0.05 first at n = 6 (0.031; n = 5: 0.0625),
	// ≤ 0.01 first at n = 8 (0.0078; n = 7: 0.0156).
	if probe.MDAStop(1, 95) != 6 || probe.MDAStop(2, 99) != 8 {
		t.Errorf("n_2: %d at 95%%, %d at 99%%; want 6 and 8", probe.MDAStop(1, 95), probe.MDAStop(2, 99))
	}
}

func TestMultipathChainUsesExactlyTheStoppingRule(t *testing.T) {
	// Four hops, no balancer: each TTL needs n_2 flows through the one
	// node before it, and nothing more (no branch: no per-packet check,
	// every flow inferred along the chain).
	for _, conf := range []int{95, 99} {
		f := newTopo("10.0.0.4", 1, "src>10.0.0.1", "10.0.0.1>10.0.0.2", "10.0.0.2>10.0.0.3", "10.0.0.3>10.0.0.4")
		run := runMDA(t, f, mdaCfg(conf))
		// One flow finds the first hop (the source's gateway), n_2 rule out a
		// second next hop at TTLs 2 and 3, and one flow finds the target
		// behind 10.0.0.3 (tracelb's shortcuts).
		if want := 1 + 2*probe.MDAStop(2, conf) + 1; run.ProbesUsed != want {
			t.Errorf("%d%%: %d probes, want 1 + 2·n_2 + 1 = %d", conf, run.ProbesUsed, want)
		}
		if got := pathSet(run); !slices.Equal(got, []string{"10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4"}) {
			t.Errorf("%d%%: paths %v", conf, got)
		}
		if !run.Reached || run.Stopped != probe.StoppedRule || len(run.PerPacket) != 0 {
			t.Errorf("%d%%: reached %v stopped %q per-packet %v", conf, run.Reached, run.Stopped, run.PerPacket)
		}
		if len(run.Paths[0].Flows) != probe.MDAStop(2, conf) {
			t.Errorf("%d%%: %d flows on the path, want n_2 = %d", conf, len(run.Paths[0].Flows), probe.MDAStop(2, conf))
		}
	}
}

// checkRule asserts the stopping rule at every node of the simulation
// that answered: the flows the simulation sends through it that were
// probed one TTL further number at least n_{k+1}, k the next hops found.
func checkRule(t *testing.T, f *topoFake, run *probe.MultipathRun, conf int) {
	t.Helper()
	type nk struct {
		ttl  int
		addr string
	}
	seen := map[nk]map[int]bool{}
	succ := map[nk]map[string]bool{}
	for _, r := range run.Results {
		if r.TTL < 2 {
			continue
		}
		cur := "src"
		for range r.TTL - 1 {
			cur = f.hop(cur, r.Flow)
		}
		k := nk{r.TTL - 1, cur}
		if seen[k] == nil {
			seen[k], succ[k] = map[int]bool{}, map[string]bool{}
		}
		seen[k][r.Flow] = true
		if r.Addr != "" {
			succ[k][r.Addr] = true
		}
	}
	meets := map[nk]int{}
	for k, s := range succ {
		for a := range s {
			meets[nk{k.ttl + 1, a}]++
		}
	}
	for _, n := range run.Nodes {
		k := nk{n.TTL, n.Addr}
		if n.Addr == "" || n.Addr == f.dst || n.PerPacket || f.perPkt[n.Addr] {
			continue
		}
		need := probe.MDAStop(len(succ[k])+1, conf)
		for a := range succ[k] {
			// The target behind a node, or a node where two branches
			// meet, as its only next hop: one flow (tracelb's shortcuts).
			if len(succ[k]) == 1 && (a == f.dst || meets[nk{n.TTL + 1, a}] > 1) {
				need = 1
			}
		}
		if len(seen[k]) < need {
			t.Errorf("node %s at TTL %d: %d of its flows probed at TTL %d with %d next hops, the rule asks %d",
				n.Addr, n.TTL, len(seen[k]), n.TTL+1, len(succ[k]), need)
		}
	}
}

func TestMultipathFindsEveryBranchOfTheSimulatedTopologies(t *testing.T) {
	cases := []struct {
		name  string
		dst   string
		links []string
		pp    []string
		sil   []string
		nodes []string
		lnks  []string
		paths []string
	}{
		{name: "two-way diamond", dst: "10.0.0.9",
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3", "10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 10.0.1.1", "2 10.0.2.1", "3 10.0.0.3", "4 10.0.0.9"},
			lnks:  []string{"1 10.0.0.1>10.0.1.1", "1 10.0.0.1>10.0.2.1", "2 10.0.1.1>10.0.0.3", "2 10.0.2.1>10.0.0.3", "3 10.0.0.3>10.0.0.9"},
			paths: []string{"10.0.0.1 10.0.1.1 10.0.0.3 10.0.0.9", "10.0.0.1 10.0.2.1 10.0.0.3 10.0.0.9"}},
		{name: "three-way diamond", dst: "10.0.0.9",
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1,10.0.3.1", "10.0.1.1>10.0.0.9", "10.0.2.1>10.0.0.9", "10.0.3.1>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 10.0.1.1", "2 10.0.2.1", "2 10.0.3.1", "3 10.0.0.9"},
			lnks:  []string{"1 10.0.0.1>10.0.1.1", "1 10.0.0.1>10.0.2.1", "1 10.0.0.1>10.0.3.1", "2 10.0.1.1>10.0.0.9", "2 10.0.2.1>10.0.0.9", "2 10.0.3.1>10.0.0.9"},
			paths: []string{"10.0.0.1 10.0.1.1 10.0.0.9", "10.0.0.1 10.0.2.1 10.0.0.9", "10.0.0.1 10.0.3.1 10.0.0.9"}},
		{name: "nested diamonds", dst: "10.0.0.9",
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3", "10.0.2.1>10.0.0.3",
				"10.0.0.3>10.0.4.1,10.0.5.1", "10.0.4.1>10.0.0.9", "10.0.5.1>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 10.0.1.1", "2 10.0.2.1", "3 10.0.0.3", "4 10.0.4.1", "4 10.0.5.1", "5 10.0.0.9"},
			lnks: []string{"1 10.0.0.1>10.0.1.1", "1 10.0.0.1>10.0.2.1", "2 10.0.1.1>10.0.0.3", "2 10.0.2.1>10.0.0.3",
				"3 10.0.0.3>10.0.4.1", "3 10.0.0.3>10.0.5.1", "4 10.0.4.1>10.0.0.9", "4 10.0.5.1>10.0.0.9"},
			paths: []string{"10.0.0.1 10.0.1.1 10.0.0.3 10.0.4.1 10.0.0.9", "10.0.0.1 10.0.1.1 10.0.0.3 10.0.5.1 10.0.0.9",
				"10.0.0.1 10.0.2.1 10.0.0.3 10.0.4.1 10.0.0.9", "10.0.0.1 10.0.2.1 10.0.0.3 10.0.5.1 10.0.0.9"}},
		{name: "unequal next hops and lengths", dst: "10.0.0.9",
			// 10.0.1.1 splits again three ways; 10.0.2.1 goes straight on:
			// its path is one TTL shorter.
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.3.1,10.0.3.2,10.0.3.3",
				"10.0.3.1>10.0.0.9", "10.0.3.2>10.0.0.9", "10.0.3.3>10.0.0.9", "10.0.2.1>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 10.0.1.1", "2 10.0.2.1", "3 10.0.0.9", "3 10.0.3.1", "3 10.0.3.2", "3 10.0.3.3", "4 10.0.0.9"},
			lnks: []string{"1 10.0.0.1>10.0.1.1", "1 10.0.0.1>10.0.2.1", "2 10.0.1.1>10.0.3.1", "2 10.0.1.1>10.0.3.2", "2 10.0.1.1>10.0.3.3",
				"2 10.0.2.1>10.0.0.9", "3 10.0.3.1>10.0.0.9", "3 10.0.3.2>10.0.0.9", "3 10.0.3.3>10.0.0.9"},
			paths: []string{"10.0.0.1 10.0.1.1 10.0.3.1 10.0.0.9", "10.0.0.1 10.0.1.1 10.0.3.2 10.0.0.9",
				"10.0.0.1 10.0.1.1 10.0.3.3 10.0.0.9", "10.0.0.1 10.0.2.1 10.0.0.9"}},
		{name: "silent branch", dst: "10.0.0.9", sil: []string{"10.0.2.1"},
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3", "10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 *", "2 10.0.1.1", "3 10.0.0.3", "4 10.0.0.9"},
			lnks:  []string{"1 10.0.0.1>*", "1 10.0.0.1>10.0.1.1", "2 *>10.0.0.3", "2 10.0.1.1>10.0.0.3", "3 10.0.0.3>10.0.0.9"},
			paths: []string{"10.0.0.1 * 10.0.0.3 10.0.0.9", "10.0.0.1 10.0.1.1 10.0.0.3 10.0.0.9"}},
		{name: "per-packet balancer", dst: "10.0.0.9", pp: []string{"10.0.0.1"},
			links: []string{"src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3", "10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9"},
			nodes: []string{"1 10.0.0.1", "2 10.0.1.1", "2 10.0.2.1", "3 10.0.0.3", "4 10.0.0.9"},
			lnks:  []string{"1 10.0.0.1>10.0.1.1", "1 10.0.0.1>10.0.2.1", "2 10.0.1.1>10.0.0.3", "2 10.0.2.1>10.0.0.3", "3 10.0.0.3>10.0.0.9"},
			// One path: which branch a flow took says nothing.
			paths: []string{"10.0.0.1 {10.0.1.1,10.0.2.1} 10.0.0.3 10.0.0.9"}},
	}
	for _, c := range cases {
		for _, conf := range []int{95, 99} {
			t.Run(fmt.Sprintf("%s/%d", c.name, conf), func(t *testing.T) {
				// A seed where no branch is missed: the miss rate has its own test.
				f := newTopo(c.dst, 3, c.links...)
				for _, n := range c.pp {
					f.perPkt[n] = true
				}
				for _, n := range c.sil {
					f.silent[n] = true
				}
				run := runMDA(t, f, mdaCfg(conf))
				t.Logf("%d probes, %d flows", run.ProbesUsed, len(run.Flows))
				if got := nodeSet(run); !slices.Equal(got, c.nodes) {
					t.Errorf("nodes %v\nwant  %v", got, c.nodes)
				}
				if got := linkSet(run); !slices.Equal(got, c.lnks) {
					t.Errorf("links %v\nwant  %v", got, c.lnks)
				}
				if got := pathSet(run); !slices.Equal(got, c.paths) {
					t.Errorf("paths %v\nwant  %v", got, c.paths)
				}
				if (len(run.PerPacket) > 0) != (len(c.pp) > 0) {
					t.Errorf("per-packet %v, want it iff the topology has a per-packet balancer", run.PerPacket)
				}
				checkRule(t, f, run, conf)
				checkFlowMap(t, f, run)
			})
		}
	}
}

// checkFlowMap asserts that every flow of a path takes that path in the
// simulation (per-flow hops only).
func checkFlowMap(t *testing.T, f *topoFake, run *probe.MultipathRun) {
	t.Helper()
	for i, p := range run.Paths {
		for _, fl := range p.Flows {
			cur := "src"
			for _, h := range p.Hops {
				cur = f.hop(cur, fl)
				if !h.PerPacket && h.Addr != "" && h.Addr != cur {
					t.Errorf("path %d flow %d: TTL %d is %s in the simulation, %s in the path", i+1, fl, h.TTL, cur, h.Addr)
					break
				}
			}
		}
	}
}

// truthErrors lists every node and link of run that one of its flows does
// not take in the simulation (per-flow hops only; silent answers aside).
func truthErrors(f *topoFake, run *probe.MultipathRun) []string {
	at := func(flow, ttl int) string {
		cur := "src"
		for range ttl {
			cur = f.hop(cur, flow)
			if cur == f.dst {
				break
			}
		}
		return cur
	}
	var out []string
	for _, n := range run.Nodes {
		if n.Addr == "" || n.PerPacket {
			continue
		}
		for _, fl := range n.Flows {
			if got := at(fl, n.TTL); got != n.Addr {
				out = append(out, fmt.Sprintf("node %d %s has flow %d, which is at %s", n.TTL, n.Addr, fl, got))
			}
		}
	}
	for _, l := range run.Links {
		for _, fl := range l.Flows {
			a, b := at(fl, l.TTL), at(fl, l.TTL+1)
			if l.From != "" && l.From != a || l.To != "" && l.To != b {
				out = append(out, fmt.Sprintf("link %d %s>%s has flow %d, which goes %s>%s", l.TTL, star(l.From), star(l.To), fl, a, b))
			}
		}
	}
	return out
}

func TestMultipathMissRateIsWithinTheRulesBound(t *testing.T) {
	// 200 runs of the two-way diamond, each with other flow hashes (as
	// other starting ports would give). A run misses a branch when the n_2
	// flows through 10.0.0.1 all hash to one side: 2·2⁻⁶ = 3.1 % at 95 %,
	// 2·2⁻⁸ = 0.8 % at 99 %; the rule promises at most 5 % and 1 %. The
	// test allows the promise plus three binomial standard deviations over
	// 200 runs: 5 %: 10 + 3·√(200·0.05·0.95) = 19.2 → 19 runs; 1 %:
	// 2 + 3·√(200·0.01·0.99) = 6.2 → 6 runs. A correct rule fails it with
	// probability below 10⁻⁴.
	for _, c := range []struct{ conf, allowed int }{{95, 19}, {99, 6}} {
		missed := 0
		for seed := range uint64(200) {
			f := newTopo("10.0.0.9", 1000+seed, "src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3",
				"10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9")
			run, err := probe.MultipathWithDriver(context.Background(), f, f.dst, netip.MustParseAddr(f.dst), mdaCfg(c.conf))
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Paths) < 2 {
				missed++
			}
		}
		t.Logf("%d%%: %d of 200 runs missed a branch", c.conf, missed)
		if missed > c.allowed {
			t.Errorf("%d%%: %d of 200 runs missed a branch; the rule's bound allows %d", c.conf, missed, c.allowed)
		}
	}
}

func TestMultipathStopsAtMaxProbes(t *testing.T) {
	f := newTopo("10.0.0.9", 5, "src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1,10.0.3.1", "10.0.1.1>10.0.0.9", "10.0.2.1>10.0.0.9", "10.0.3.1>10.0.0.9")
	cfg := mdaCfg(95)
	cfg.MaxProbes = 10
	run := runMDA(t, f, cfg)
	if run.Stopped != probe.StoppedMaxProbes || run.ProbesUsed != 10 {
		t.Errorf("stopped %q after %d probes, want max-probes after 10", run.Stopped, run.ProbesUsed)
	}
}

func TestMultipathGivesUpAfterThreeSilentTTLs(t *testing.T) {
	f := newTopo("10.0.0.9", 5, "src>10.0.0.1", "10.0.0.1>10.0.0.2", "10.0.0.2>10.0.0.3", "10.0.0.3>10.0.0.4", "10.0.0.4>10.0.0.9")
	for _, n := range []string{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.9"} {
		f.silent[n] = true
	}
	run := runMDA(t, f, mdaCfg(95))
	if run.Reached {
		t.Error("reached a silent target")
	}
	// TTL 1: one flow; TTL 2: one flow first, then the other 5 of n_2,
	// each sent twice (two attempts); TTLs 3 and 4 the same.
	if want := 1 + 3*2*6; run.ProbesUsed != want {
		t.Errorf("%d probes, want %d", run.ProbesUsed, want)
	}
}

func TestMultipathCyclesProbeEachPathsOwnFlow(t *testing.T) {
	f := newTopo("10.0.0.9", 3, "src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.9", "10.0.2.1>10.0.3.1", "10.0.3.1>10.0.0.9")
	cfg := mdaCfg(95)
	cfg.PathCycles = 3
	cfg.Interval = time.Millisecond
	run := runMDA(t, f, cfg)
	if run.Cycles == nil || len(run.Paths) != 2 {
		t.Fatalf("cycles %v, paths %v", run.Cycles, pathSet(run))
	}
	for i, p := range run.Paths {
		got := map[int]string{}
		n := 0
		last := p.Hops[len(p.Hops)-1].TTL
		for _, r := range run.Cycles.Results {
			// The first cycle sends every TTL before a reply is read:
			// the shorter path's probes past its target are left out.
			if r.Flow == i && r.TTL <= last {
				got[r.TTL] = r.Addr
				n++
			}
		}
		// Three cycles of every TTL up to the path's own destination.
		if n != 3*len(p.Hops) {
			t.Errorf("path %d: %d probes, want 3·%d", i+1, n, len(p.Hops))
		}
		for _, h := range p.Hops {
			if got[h.TTL] != h.Addr {
				t.Errorf("path %d TTL %d: cycles saw %s, the path is %s", i+1, h.TTL, got[h.TTL], h.Addr)
			}
		}
	}
}

func TestMultipathCountsThePerPacketCheckApart(t *testing.T) {
	// One two-way split (10.0.0.1 over 10.0.1.1 and 10.0.2.1, meeting at
	// 10.0.0.3): the per-packet check re-sends one flow of 10.0.0.1 until it
	// has n_2 answers at TTL 2, n_2 − 1 probes (its first answer was the
	// discovery's); no other node has two next hops. The chain shows none.
	for _, conf := range []int{95, 99} {
		f := newTopo("10.0.0.9", 1, "src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3", "10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9")
		run := runMDA(t, f, mdaCfg(conf))
		if want := probe.MDAStop(2, conf) - 1; run.PerPacketProbes != want {
			t.Errorf("%d%%: %d per-packet probes, want n_2 − 1 = %d", conf, run.PerPacketProbes, want)
		}
		if run.PerPacketProbes >= run.ProbesUsed {
			t.Errorf("%d%%: per-packet %d of %d probes", conf, run.PerPacketProbes, run.ProbesUsed)
		}
		c := runMDA(t, newTopo("10.0.0.4", 1, "src>10.0.0.1", "10.0.0.1>10.0.0.2", "10.0.0.2>10.0.0.4"), mdaCfg(conf))
		if c.PerPacketProbes != 0 {
			t.Errorf("%d%%: chain: %d per-packet probes, want 0", conf, c.PerPacketProbes)
		}
	}
}

func TestMultipathUnderLossPlacesEveryFlowOnTheNodesItTakes(t *testing.T) {
	// Issue 35: the lab's diamond with 5 % loss each way on the wire into
	// one branch, replayed at the seeds of 3,000 where today's walk went
	// wrong. In each, the n_1 flows at TTL 2 all hashed to 10.0.2.1 (the
	// rule's miss, 1 in 32 at 95 %), then a flow's two probes through the
	// lossy branch at TTL 3 (or 4) were lost: its silence counted as a
	// second next hop, the rule asked for n_2 flows, and the new flows,
	// probed behind the TTL taken to have one node, were inferred to pass
	// 10.0.2.1 while some passed 10.0.1.1.
	for _, seed := range []uint64{502, 1754, 2169, 2238} {
		f := newTopo("10.0.0.9", seed, "src>10.0.0.1", "10.0.0.1>10.0.1.1,10.0.2.1", "10.0.1.1>10.0.0.3",
			"10.0.2.1>10.0.0.3", "10.0.0.3>10.0.0.9")
		f.loss = map[string]float64{"10.0.2.1": 0.05}
		run := runMDA(t, f, mdaCfg(95))
		if errs := truthErrors(f, run); len(errs) > 0 {
			t.Errorf("seed %d: %s", seed, strings.Join(errs, "; "))
		}
	}
}

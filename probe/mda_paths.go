package probe

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// flowSeq is one flow's interface per TTL (index TTL − FirstTTL), as
// answered or inferred; known[i] false where neither.
type flowSeq struct {
	addr  []string
	known []bool
}

// answers is every interface that answered flow at ttl, or [""] when it
// was probed and never answered; nil when never probed.
func (m *mdaRun) answers(ttl, flow int) []string {
	a := m.ans[ttl][flow]
	if len(a) == 0 {
		return nil
	}
	if d := distinct(a); len(d) > 0 {
		return d
	}
	return []string{""}
}

type linkKey struct {
	ttl      int
	from, to string
}

// walk is the run's links and every flow's sequence as the answers so
// far give them (links, then sequences over them, both from one soleTTLs).
func (m *mdaRun) walk() (map[linkKey][]int, []flowSeq) {
	sole := m.soleTTLs()
	links := m.links(sole)
	return links, m.sequences(links, sole)
}

// links are the observed links: flow f answered from at ttl and to at
// ttl+1, with the flows that showed each. A TTL with one interface that
// every flow passes (sole, soleTTLs) stands for an answer there: a flow
// probed only behind it still shows which of that interface's next hops it
// took.
func (m *mdaRun) links(sole map[int]string) map[linkKey][]int {
	out := map[linkKey][]int{}
	for t := m.tc.FirstTTL; t < m.lastTTL; t++ {
		for f := 0; f < m.flows; f++ {
			from := m.answers(t, f)
			if from == nil && sole[t] != "" {
				if d, ok := m.destAt[f]; !ok || d > t {
					from = []string{sole[t]}
				}
			}
			for _, a := range from {
				if a == m.dst {
					continue
				}
				for _, b := range m.answers(t+1, f) {
					k := linkKey{t, a, b}
					out[k] = append(out[k], f)
				}
			}
		}
	}
	return out
}

// soleTTLs are the TTLs the walk has left behind with one interface (no
// silence, not the target): every flow passes it, the rule ruled out a
// second.
func (m *mdaRun) soleTTLs() map[int]string {
	sole := map[int]string{}
	for t := m.tc.FirstTTL; t < m.lastTTL; t++ {
		seen := map[string]bool{}
		for f := 0; f < m.flows; f++ {
			if a, ok := m.answer(t, f); ok {
				seen[a] = true
			}
		}
		if len(seen) == 1 {
			for a := range seen {
				if a != "" && a != m.dst {
					sole[t] = a
				}
			}
		}
	}
	return sole
}

// sequences answers and infers every flow's interfaces: a TTL it was not
// probed at is its node's only successor (after the TTL before) or only
// predecessor (before the TTL after) among the observed links. After a
// node that balances per packet, the first of its next hops stands for
// all of them (the path key groups them, pathKey). sole is soleTTLs.
func (m *mdaRun) sequences(links map[linkKey][]int, sole map[int]string) []flowSeq {
	n := m.lastTTL - m.tc.FirstTTL + 1
	succ, pred := map[nodeKey][]string{}, map[nodeKey][]string{}
	for _, k := range sortedLinks(links) {
		succ[nodeKey{k.ttl, k.from}] = append(succ[nodeKey{k.ttl, k.from}], k.to)
		pred[nodeKey{k.ttl + 1, k.to}] = append(pred[nodeKey{k.ttl + 1, k.to}], k.from)
	}
	seqs := make([]flowSeq, m.flows)
	for f := range seqs {
		s := flowSeq{addr: make([]string, n), known: make([]bool, n)}
		for i := range n {
			s.addr[i], s.known[i] = m.answer(m.tc.FirstTTL+i, f)
		}
		for changed := true; changed; {
			changed = false
			for i := range n {
				if s.known[i] {
					continue
				}
				t := m.tc.FirstTTL + i
				if a := sole[t]; a != "" && !slices.Contains(s.addr[:i], m.dst) {
					s.addr[i], s.known[i], changed = a, true, true
					continue
				}
				if i > 0 && s.known[i-1] && s.addr[i-1] != m.dst {
					if nx := succ[nodeKey{t - 1, s.addr[i-1]}]; len(nx) == 1 || len(nx) > 1 && m.ppFrom[nodeKey{t - 1, s.addr[i-1]}] {
						s.addr[i], s.known[i], changed = nx[0], true, true
						continue
					}
				}
				if i+1 < n && s.known[i+1] {
					if pv := pred[nodeKey{t + 1, s.addr[i+1]}]; len(pv) == 1 {
						s.addr[i], s.known[i], changed = pv[0], true, true
					}
				}
			}
		}
		seqs[f] = s
	}
	return seqs
}

// end is the last index of s that belongs to the flow: where it reached
// the target, else the last TTL probed.
func (m *mdaRun) end(s flowSeq) int {
	for i, a := range s.addr {
		if s.known[i] && a == m.dst {
			return i
		}
	}
	return len(s.addr) - 1
}

// whole tells whether every TTL of s up to its end is known.
func (m *mdaRun) whole(s flowSeq) bool {
	return !slices.Contains(s.known[:m.end(s)+1], false)
}

// complete probes the TTLs no answer or inference gives of every flow
// (the probes allowing): a nested diamond's flows are known at the second
// split only, and which way each went at the first says which of the
// combinations it takes. Each path then has flows of its own to measure,
// and the flow map rests on answers and on the links found (a next hop the
// rule missed can still mislabel the flows inferred through it).
func (m *mdaRun) complete(ctx context.Context) error {
	for range 4 {
		if m.stopped == StoppedMaxProbes {
			return nil
		}
		var batch []mdaSend
		_, seqs := m.walk()
		for f, s := range seqs {
			for i := 0; i <= m.end(s); i++ {
				if !s.known[i] {
					batch = append(batch, mdaSend{m.tc.FirstTTL + i, f})
				}
			}
		}
		if len(batch) == 0 {
			return nil
		}
		if err := m.run(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// pathHops is s's path: its interfaces, where a per-packet balancer's
// next hops count as one (all of them, Addrs).
func (m *mdaRun) pathHops(s flowSeq, succ map[nodeKey][]string) []MultipathHop {
	var hops []MultipathHop
	for i := 0; i <= m.end(s); i++ {
		t := m.tc.FirstTTL + i
		h := MultipathHop{TTL: t, Addr: s.addr[i]}
		if i > 0 && m.ppFrom[nodeKey{t - 1, s.addr[i-1]}] {
			h.PerPacket, h.Addrs = true, succ[nodeKey{t - 1, s.addr[i-1]}]
			h.Addr = h.Addrs[0]
		}
		hops = append(hops, h)
	}
	return hops
}

// result is the run as it stands: flows, nodes, links, per-packet
// balancers and paths.
func (m *mdaRun) result(target string, addr netip.Addr, start time.Time) *MultipathRun {
	run := &MultipathRun{Target: target, Addr: addr, Protocol: m.tc.Proto, Port: m.tc.Port, Mode: m.drv.Mode(),
		FlowField: flowFieldOf(m.tc), FirstTTL: m.tc.FirstTTL, Confidence: m.cfg.Confidence, MaxProbes: m.cfg.MaxProbes,
		ProbesUsed: m.used, PerPacketProbes: m.ppUsed, Stopped: m.stopped, Start: start, Results: m.results, Counts: m.counts}
	namer, _ := m.drv.(FlowNamer)
	for f := 0; f < m.flows; f++ {
		fi := FlowIdent{ID: f}
		if namer != nil {
			fi = namer.FlowIdent(f)
		}
		run.Flows = append(run.Flows, fi)
	}
	_, run.Reached = m.minDest()
	observed, seqs := m.walk()
	// The links of the report: the observed ones and those the flows'
	// sequences give (a flow that passed the only interface of a TTL).
	links := map[linkKey][]int{}
	for k, fs := range observed {
		links[k] = slices.Clone(fs)
	}
	for f, s := range seqs {
		for i := 0; i < m.end(s); i++ {
			if !s.known[i] || !s.known[i+1] {
				continue
			}
			k := linkKey{m.tc.FirstTTL + i, s.addr[i], s.addr[i+1]}
			if !slices.Contains(links[k], f) {
				links[k] = append(links[k], f)
			}
		}
	}
	for k := range links {
		slices.Sort(links[k])
	}
	succ := map[nodeKey][]string{}
	for _, k := range sortedLinks(links) {
		run.Links = append(run.Links, MultipathLink{TTL: k.ttl, From: k.from, To: k.to, Flows: links[k]})
		succ[nodeKey{k.ttl, k.from}] = append(succ[nodeKey{k.ttl, k.from}], k.to)
	}
	for t := m.tc.FirstTTL; t <= m.lastTTL; t++ {
		nodes := map[string][]int{}
		pp := map[string]bool{}
		for f := 0; f < m.flows; f++ {
			as := m.answers(t, f)
			for _, a := range as {
				nodes[a] = append(nodes[a], f)
				if b, ok := m.answer(t-1, f); ok && m.ppFrom[nodeKey{t - 1, b}] {
					pp[a] = true
				}
			}
			if len(as) > 1 {
				run.PerPacket = append(run.PerPacket, PerPacketLB{TTL: t, Flow: f, Addrs: as})
			}
		}
		for _, a := range sortedKeys(nodes) {
			run.Nodes = append(run.Nodes, MultipathNode{TTL: t, Addr: a, Flows: nodes[a], PerPacket: pp[a], Dest: a == m.dst})
		}
	}
	byKey := map[string]int{}
	for f, s := range seqs {
		if !m.whole(s) {
			continue
		}
		hops := m.pathHops(s, succ)
		var key []string
		for _, h := range hops {
			key = append(key, h.Addr+"|"+strings.Join(h.Addrs, ","))
		}
		k := strings.Join(key, " ")
		i, ok := byKey[k]
		if !ok {
			i = len(run.Paths)
			byKey[k] = i
			last := hops[len(hops)-1]
			run.Paths = append(run.Paths, MultipathPath{Hops: hops, Reached: last.Addr == m.dst})
		}
		run.Paths[i].Flows = append(run.Paths[i].Flows, f)
	}
	return run
}

func (m *mdaRun) minDest() (int, bool) {
	lo, ok := 0, false
	for _, d := range m.destAt {
		if !ok || d < lo {
			lo, ok = d, true
		}
	}
	return lo, ok
}

// flowFieldOf is the header field tc's flows differ in (its protocol's).
func flowFieldOf(tc TraceConfig) FlowField { return traceProtoOf(tc.Proto).flowField(tc) }

func sortedLinks(l map[linkKey][]int) []linkKey {
	ks := make([]linkKey, 0, len(l))
	for k := range l {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b linkKey) int {
		if a.ttl != b.ttl {
			return a.ttl - b.ttl
		}
		if c := strings.Compare(a.from, b.from); c != 0 {
			return c
		}
		return strings.Compare(a.to, b.to)
	})
	return ks
}

// MaxPathCycles is how many paths get per-path cycles: a trace probes
// at most 64 flows.
const MaxPathCycles = 64

// pathCycles probes each path's first flow cycles times (TraceWithDriver
// on drv, its flow i mapped to path i's flow), each flow up to its own
// destination TTL.
func pathCycles(ctx context.Context, drv Driver, target string, addr netip.Addr, tc TraceConfig, cycles int, paths []MultipathPath) (*TraceRun, error) {
	paths = paths[:min(len(paths), MaxPathCycles)]
	fm := &flowMap{Driver: drv}
	last := tc.FirstTTL
	for _, p := range paths {
		fm.flows = append(fm.flows, p.Flows[0])
		last = max(last, p.Hops[len(p.Hops)-1].TTL)
	}
	c := tc
	c.Flows, c.Cycles, c.MaxTTL, c.perFlowDest = len(paths), cycles, last, true
	return TraceWithDriver(ctx, fm, target, addr, c, nil)
}

// flowMap sends flow i of a trace as flow flows[i] of the driver.
type flowMap struct {
	Driver
	flows []int
}

func (f *flowMap) Send(p TraceProbe) (time.Time, error) {
	p.Flow = f.flows[p.Flow]
	return f.Driver.Send(p)
}

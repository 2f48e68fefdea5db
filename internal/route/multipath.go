package route

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// Multipath is what trace --multipath found: the "multipath" object of a
// linecheck.trace/v1 document (docs/multipath.md). Flow ids everywhere in
// the document (nodes, links, paths, responders) are Flows[].Flow.
type Multipath struct {
	Confidence int `json:"confidence"`
	MaxProbes  int `json:"max_probes"`
	ProbesUsed int `json:"probes_used"`
	// PerPacketProbes is the part of ProbesUsed the per-packet check sent;
	// null in a document written before the field (replayed).
	PerPacketProbes *int `json:"per_packet_probes"`
	// Stopped is "rule" (the stopping rule ended every node), "max-probes"
	// or "interrupted".
	Stopped   string          `json:"stopped"`
	FlowField string          `json:"flow_field"`
	Flows     []MultipathFlow `json:"flows"`
	Nodes     []MultipathNode `json:"nodes"`
	PerPacket []PerPacket     `json:"per_packet"`
	// ProtocolNote says what the protocol cannot see (ICMP on a router that
	// hashes ports).
	ProtocolNote string `json:"protocol_note,omitempty"`
	// Cycles is how many cycles each path's own flow was probed (--cycles);
	// 0: the paths carry no statistics.
	Cycles int `json:"cycles"`
	// Summary is the line class over every path: one class on all, or which
	// path differs and where it leaves the others.
	Summary string `json:"summary,omitempty"`
}

// MultipathFlow is one flow sent: its id and the header fields it had.
type MultipathFlow struct {
	Flow    int    `json:"flow"`
	Proto   string `json:"proto"`
	SrcPort int    `json:"src_port,omitempty"`
	DstPort int    `json:"dst_port,omitempty"`
}

// MultipathNode is one interface at one TTL ("" for flows that got no
// reply there) and the flows it answered.
type MultipathNode struct {
	TTL     int    `json:"ttl"`
	Address string `json:"address"`
	Flows   []int  `json:"flows"`
	// PerPacket: the router before it balances per packet, so its flows say
	// nothing about where a flow goes.
	PerPacket bool `json:"per_packet"`
}

// PerPacket is one flow that answered from several interfaces at one TTL.
type PerPacket struct {
	TTL       int      `json:"ttl"`
	Flow      int      `json:"flow"`
	Addresses []string `json:"addresses"`
}

// Link is From at TTL to To at TTL+1, with the flows that showed it.
type Link struct {
	TTL   int    `json:"ttl"`
	From  string `json:"from"`
	To    string `json:"to"`
	Flows []int  `json:"flows"`
}

// Path is one distinct sequence of interfaces and the flows that take it.
type Path struct {
	Path  int   `json:"path"`
	Flows []int `json:"flows"`
	// Share is the path's flows over the flows of every path (0..1).
	Share      float64   `json:"share"`
	Reached    bool      `json:"reached"`
	Hops       []PathHop `json:"hops"`
	LineClass  string    `json:"line_class"`
	Confidence string    `json:"confidence"`
	Evidence   []string  `json:"evidence"`
}

// PathHop is one TTL of a path: its interface and, with --cycles, the
// statistics of the path's own flow there (null when not measured).
type PathHop struct {
	TTL     int    `json:"ttl"`
	Address string `json:"address"`
	// PerPacket: the router before spreads packets over Addresses.
	PerPacket bool            `json:"per_packet,omitempty"`
	Addresses []string        `json:"addresses,omitempty"`
	ASN       int             `json:"asn,omitempty"`
	ASName    string          `json:"as_name,omitempty"`
	Carrier   string          `json:"carrier,omitempty"`
	Sent      *int            `json:"sent"`
	Recv      *int            `json:"recv"`
	LossPct   *float64        `json:"loss_pct"`
	RTT       *stats.RTTStats `json:"rtt_ms"`
	Jitter    *stats.Jitter   `json:"jitter_ms"`
	// LastMs is the path's last reply at this TTL (mtr's Last), when the
	// cycles' replies are kept (a live run; not in a recording without
	// samples).
	LastMs *float64     `json:"last_ms,omitempty"`
	Flags  []string     `json:"flags,omitempty"`
	MPLS   []probe.MPLS `json:"mpls,omitempty"`
}

// ICMPNote is the protocol note of an ICMP multipath trace.
const ICMPNote = "ICMP probes of different flows differ only in their checksum: a router that hashes ports (layer 4) spreads " +
	"UDP and TCP flows but may send every ICMP echo one way, so one path over ICMP does not rule out others; try -U or -T"

// BuildMultipath makes the linecheck.trace/v1 document of a multipath
// discovery (source "live"): the usual hops from every discovery probe
// (responders list their flows by id), the multipath object, the links
// and the paths, each with its hops' statistics from its own flow when
// run.Cycles is set.
func BuildMultipath(run *probe.MultipathRun) *Trace {
	id := func(f int) int { return run.Flows[f].ID }
	ids := func(fs []int) []int {
		out := make([]int, len(fs))
		for i, f := range fs {
			out[i] = id(f)
		}
		return out
	}
	hops, reached := BuildHops(run.Results)
	for i := range hops {
		for j := range hops[i].Responders {
			hops[i].Responders[j].Flows = ids(hops[i].Responders[j].Flows)
		}
	}
	tr := &Trace{Schema: TraceSchema, Target: run.Target, Addr: run.Addr.String(), Protocol: run.Protocol, Port: run.Port,
		Mode: run.Mode, Reached: reached || run.Reached, Source: "live", Start: run.Start.UTC().Format(time.RFC3339),
		Foreign: run.Counts.Foreign, Hops: hops}
	m := &Multipath{Confidence: run.Confidence, MaxProbes: run.MaxProbes, ProbesUsed: run.ProbesUsed, PerPacketProbes: new(run.PerPacketProbes), Stopped: run.Stopped,
		FlowField: string(run.FlowField), Flows: []MultipathFlow{}, Nodes: []MultipathNode{}, PerPacket: []PerPacket{}}
	if run.Protocol == probe.ICMP {
		m.ProtocolNote = ICMPNote
	}
	for _, f := range run.Flows {
		m.Flows = append(m.Flows, MultipathFlow{Flow: f.ID, Proto: string(run.Protocol), SrcPort: f.SrcPort, DstPort: f.DstPort})
	}
	for _, n := range run.Nodes {
		m.Nodes = append(m.Nodes, MultipathNode{TTL: n.TTL, Address: n.Addr, Flows: ids(n.Flows), PerPacket: n.PerPacket})
	}
	for _, p := range run.PerPacket {
		m.PerPacket = append(m.PerPacket, PerPacket{TTL: p.TTL, Flow: id(p.Flow), Addresses: p.Addrs})
	}
	tr.Multipath = m
	tr.Links = []Link{}
	for _, l := range run.Links {
		tr.Links = append(tr.Links, Link{TTL: l.TTL, From: l.From, To: l.To, Flows: ids(l.Flows)})
	}
	total := 0
	for _, p := range run.Paths {
		total += len(p.Flows)
	}
	tr.Paths = []Path{}
	for i, p := range run.Paths {
		path := Path{Path: i + 1, Flows: ids(p.Flows), Reached: p.Reached, Evidence: []string{}}
		if total > 0 {
			path.Share = float64(len(p.Flows)) / float64(total)
		}
		var measured map[int]Hop
		if run.Cycles != nil && i < probe.MaxPathCycles {
			m.Cycles = cyclesOf(run.Cycles)
			measured = pathStats(run.Cycles, i)
		}
		for _, h := range p.Hops {
			ph := PathHop{TTL: h.TTL, Address: h.Addr, PerPacket: h.PerPacket, Addresses: h.Addrs}
			if mh, ok := measured[h.TTL]; ok {
				fillPathStats(&ph, mh)
			}
			path.Hops = append(path.Hops, ph)
		}
		tr.Paths = append(tr.Paths, path)
	}
	return tr
}

// cyclesOf is how many cycles a per-path run made (the most probes any
// flow sent at one TTL).
func cyclesOf(run *probe.TraceRun) int {
	n := map[[2]int]int{}
	most := 0
	for _, r := range run.Results {
		k := [2]int{r.Flow, r.TTL}
		n[k]++
		most = max(most, n[k])
	}
	return most
}

// pathStats is path i's hops by TTL from the per-path cycles (BuildHops
// over its own flow's probes: the statistics plain trace gives).
func pathStats(run *probe.TraceRun, i int) map[int]Hop {
	var rs []probe.ProbeResult
	for _, r := range run.Results {
		if r.Flow == i {
			rs = append(rs, r)
		}
	}
	hops, _ := BuildHops(rs)
	out := map[int]Hop{}
	for _, h := range hops {
		out[h.TTL] = h
	}
	return out
}

// fillPathStats copies a measured hop's figures into a path hop: the
// responder that is the path's interface (the first when it is silent in
// the discovery, or per packet).
func fillPathStats(ph *PathHop, h Hop) {
	sent, loss := h.Sent, h.Loss*100
	ph.Sent, ph.LossPct, ph.Flags = &sent, &loss, h.Flags
	recv := 0
	var r *Responder
	for j := range h.Responders {
		recv += h.Responders[j].Recv
		if h.Responders[j].Addr == ph.Address || r == nil {
			r = &h.Responders[j]
		}
	}
	ph.Recv = &recv
	if r == nil || r.Recv == 0 {
		return
	}
	if ph.Address == "" {
		ph.Address = r.Addr
	}
	rtt, jit := r.RTT, r.Jitter
	ph.RTT, ph.MPLS = &rtt, r.MPLS
	if n := len(r.Samples); n > 0 {
		ph.LastMs = new(r.Samples[n-1])
	}
	if r.Recv > 1 {
		ph.Jitter = &jit
	}
}

// pathTrace is path p as a trace of its own (one responder per hop), for
// the line-class rules and the AS lookups.
func pathTrace(t *Trace, p Path) *Trace {
	sub := &Trace{Schema: TraceSchema, Target: t.Target, Addr: t.Addr, Protocol: t.Protocol, Reached: p.Reached}
	for _, h := range p.Hops {
		hop := Hop{TTL: h.TTL, Flags: []string{}, Responders: []Responder{}}
		if h.Sent != nil {
			hop.Sent = *h.Sent
		}
		if h.Address != "" {
			hop.Responders = append(hop.Responders, Responder{Addr: h.Address, Recv: 1})
		}
		sub.Hops = append(sub.Hops, hop)
	}
	return sub
}

// annotatePaths names every path hop's network (Annotate on the path's
// own hops), classifies the paths with ClassifyPaths and writes the
// every-path summary. The route holds a class only as far as every path
// does: its class is the weakest path's, not the union of all paths' hops
// (which would read CN2 and 202.97 together as cn2-gt).
func annotatePaths(t *Trace, db ASNDB) {
	if t.Multipath == nil || len(t.Paths) == 0 {
		return
	}
	for i := range t.Paths {
		p := &t.Paths[i]
		sub := pathTrace(t, *p)
		Annotate(sub, db)
		for j := range p.Hops {
			h := &p.Hops[j]
			h.ASN, h.ASName, h.Carrier = 0, "", ""
			for _, sh := range sub.Hops {
				if sh.TTL == h.TTL && len(sh.Responders) > 0 {
					r := sh.Responders[0]
					h.ASN, h.ASName, h.Carrier = r.ASN, r.ASName, r.Carrier
				}
			}
		}
	}
	pc := ClassifyPaths(t, PathHopsOf(t), db)
	var weakest *LineEvidence
	for i, c := range pc.Paths {
		p := &t.Paths[i]
		p.LineClass, p.Confidence, p.Evidence = c.LineClass, "", []string{}
		if e := c.Evidence; e != nil {
			p.Confidence = e.Confidence
			p.Evidence = append(p.Evidence, e.Rule)
			for _, eh := range e.Hops {
				p.Evidence = append(p.Evidence, fmt.Sprintf("TTL %d %s %s", eh.TTL, eh.Addr, eh.Carrier))
			}
			p.Evidence = append(p.Evidence, e.Notes...)
			if weakest == nil && c.LineClass == pc.Weakest {
				weakest = e
			}
		}
	}
	t.Multipath.Summary = pc.Summary
	if weakest != nil {
		ev := *weakest
		ev.Rule = fmt.Sprintf("the weakest of %d path(s): %s", len(t.Paths), ev.Rule)
		ev.Notes = append([]string{"every path: " + pc.Summary}, ev.Notes...)
		t.LineClass, t.LineEvidence = pc.Weakest, &ev
	}
}

// checkMultipath validates a replayed document's multipath parts: every
// flow id they name is one of multipath.flows, TTLs are positive and in
// order within a path, shares and losses are fractions and percentages.
func checkMultipath(t *Trace, name string) error {
	if t.Multipath == nil {
		if len(t.Paths) > 0 || len(t.Links) > 0 {
			return fmt.Errorf("%s: paths or links without a \"multipath\" object: not a trace --multipath document", name)
		}
		return nil
	}
	known := map[int]bool{}
	for _, f := range t.Multipath.Flows {
		known[f.Flow] = true
	}
	flows := func(where string, fs []int) error {
		for _, f := range fs {
			if !known[f] {
				return fmt.Errorf("%s: %s: flow %d is not in multipath.flows", name, where, f)
			}
		}
		return nil
	}
	for i, n := range t.Multipath.Nodes {
		if n.TTL < 1 {
			return fmt.Errorf("%s: multipath.nodes[%d].ttl: %d is not a TTL", name, i, n.TTL)
		}
		if err := flows(fmt.Sprintf("multipath.nodes[%d].flows", i), n.Flows); err != nil {
			return err
		}
	}
	for i, l := range t.Links {
		if l.TTL < 1 {
			return fmt.Errorf("%s: links[%d].ttl: %d is not a TTL", name, i, l.TTL)
		}
		if err := flows(fmt.Sprintf("links[%d].flows", i), l.Flows); err != nil {
			return err
		}
	}
	for i, p := range t.Paths {
		if err := flows(fmt.Sprintf("paths[%d].flows", i), p.Flows); err != nil {
			return err
		}
		if p.Share < 0 || p.Share > 1 || math.IsNaN(p.Share) {
			return fmt.Errorf("%s: paths[%d].share: %g is not a fraction 0..1", name, i, p.Share)
		}
		prev := 0
		for j, h := range p.Hops {
			if h.TTL <= prev {
				return fmt.Errorf("%s: paths[%d].hops[%d].ttl: %d is not above the previous TTL %d", name, i, j, h.TTL, prev)
			}
			prev = h.TTL
			if h.LossPct != nil && (*h.LossPct < 0 || *h.LossPct > 100 || math.IsNaN(*h.LossPct)) {
				return fmt.Errorf("%s: paths[%d].hops[%d].loss_pct: %g is not a percentage 0..100", name, i, j, *h.LossPct)
			}
		}
		if p.Hops == nil {
			t.Paths[i].Hops = []PathHop{}
		}
		if p.Evidence == nil {
			t.Paths[i].Evidence = []string{}
		}
	}
	if !slices.IsSortedFunc(t.Paths, func(a, b Path) int { return a.Path - b.Path }) {
		return fmt.Errorf("%s: paths: not in path order", name)
	}
	return nil
}

// maskMultipath masks c's multipath parts as HopMask.Trace masks its hops:
// every interface at TTL 1..N (nodes, per-packet entries, links' ends,
// path hops) reads Hidden, path hops there lose their names, and the free
// text (evidence, summary) loses what only masked hops carried. c's
// slices are copies: the trace it came from keeps its addresses.
func (m HopMask) maskMultipath(c *Trace) {
	if c.Multipath == nil {
		return
	}
	addr := func(ttl int, a string) string {
		if m.Hides(ttl) && a != "" {
			return Hidden
		}
		return a
	}
	mp := *c.Multipath
	mp.Nodes = slices.Clone(mp.Nodes)
	for i := range mp.Nodes {
		mp.Nodes[i].Address = addr(mp.Nodes[i].TTL, mp.Nodes[i].Address)
	}
	mp.PerPacket = slices.Clone(mp.PerPacket)
	for i, p := range mp.PerPacket {
		as := make([]string, len(p.Addresses))
		for j, a := range p.Addresses {
			as[j] = addr(p.TTL, a)
		}
		mp.PerPacket[i].Addresses = as
	}
	mp.Summary = m.Text(mp.Summary)
	c.Multipath = &mp
	links := slices.Clone(c.Links)
	for i, l := range links {
		links[i].From, links[i].To = addr(l.TTL, l.From), addr(l.TTL+1, l.To)
	}
	c.Links = links
	paths := slices.Clone(c.Paths)
	for i, p := range paths {
		hops := slices.Clone(p.Hops)
		for j, h := range hops {
			if !m.Hides(h.TTL) {
				continue
			}
			h.Address = addr(h.TTL, h.Address)
			if len(h.Addresses) > 0 {
				h.Addresses = slices.Repeat([]string{Hidden}, len(h.Addresses))
			}
			h.ASN, h.ASName, h.Carrier = 0, "", ""
			hops[j] = h
		}
		ev := make([]string, len(p.Evidence))
		for j, e := range p.Evidence {
			ev[j] = m.Text(e)
		}
		paths[i].Hops, paths[i].Evidence = hops, ev
	}
	c.Paths = paths
}

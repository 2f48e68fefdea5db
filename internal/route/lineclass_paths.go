package route

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// PathHops is one path of a multipath trace as ClassifyPaths reads it: its
// number (1-based, as the trace document numbers paths), the flows that
// took it, and its hops in TTL order ("*" TTLs as hops without responders).
type PathHops struct {
	Path  int
	Flows []int
	Hops  []Hop
}

// PathClass is the line class of one path.
type PathClass struct {
	Path      int
	Flows     []int
	LineClass string
	Evidence  *LineEvidence
}

// PathDeparture says where a path whose class differs from the reference
// class leaves the reference path.
type PathDeparture struct {
	Path      int
	Flows     []int
	LineClass string
	// Reference is the path it is compared with (the first path of the
	// reference class).
	Reference int
	// TTL is where it leaves: the first TTL at which it answers from a
	// network the reference path never answers from, else the first
	// evidence hop at or after the TTL where its addresses part from the
	// reference path's, else that TTL; 0 when no TTL tells them apart.
	TTL int
	// Enters names the network it answers from at TTL ("ChinaNet
	// backbone"), Addr the address; both "" when only the addresses part.
	Enters, Addr string
}

// PathClasses is ClassifyPaths' answer: every path's class and what they
// have in common.
type PathClasses struct {
	Paths []PathClass
	// Every is the class every path has; "" when they differ or there is
	// no path.
	Every string
	// Reference is the class most paths have (ties to the better-ranked
	// class); the paths of another class are listed in Differs.
	Reference string
	// Weakest is the lowest-ranked class of any path (LineClassRank): what
	// the unluckiest flow gets. "" when there is no path.
	Weakest string
	Differs []PathDeparture
	// Summary says it in one line: "cn2-gia on every path (3 paths)", or
	// which path differs and where it leaves ("path 2 of 3 (flows 33436,
	// 33439) enters the ChinaNet backbone at TTL 7 (202.97.50.1): cn2-gt,
	// not cn2-gia as paths 1, 3").
	Summary string
}

// ClassifyPaths gives each path of a multipath trace its line class
// (Classify on the path's own hops, with t's target: t may be nil) and says
// whether the class holds on every path; when it does not, it names each
// path of another class, its flows, and the TTL where it leaves the
// reference path (issue 21: a load-balanced line may carry most flows on
// CN2 GIA and the rest on 202.97).
func ClassifyPaths(t *Trace, paths []PathHops, db ASNDB) PathClasses {
	var out PathClasses
	if len(paths) == 0 {
		out.Summary = "no paths to classify"
		return out
	}
	cs := make([]*classification, len(paths))
	for i, p := range paths {
		class, c := classify(pathHopsTrace(t, p), db)
		if n, ok := db.(*Names); ok && n != nil && n.Off {
			for j := range c.ev.Hops {
				c.ev.Hops[j].ASSource = ""
			}
		}
		cs[i] = c
		out.Paths = append(out.Paths, PathClass{Path: p.Path, Flows: p.Flows, LineClass: class, Evidence: c.ev})
	}
	out.Reference = referenceClass(out.Paths)
	out.Weakest = out.Paths[0].LineClass
	for _, p := range out.Paths {
		if LineClassRank(p.LineClass) < LineClassRank(out.Weakest) {
			out.Weakest = p.LineClass
		}
	}
	ref := -1
	for i, p := range out.Paths {
		if p.LineClass == out.Reference && ref < 0 {
			ref = i
		}
	}
	var same []string
	for i, p := range out.Paths {
		if p.LineClass == out.Reference {
			same = append(same, strconv.Itoa(p.Path))
			continue
		}
		d := departure(paths[i], cs[i], paths[ref], cs[ref])
		d.LineClass = p.LineClass
		out.Differs = append(out.Differs, d)
	}
	if len(out.Differs) == 0 {
		out.Every = out.Reference
		out.Summary = fmt.Sprintf("%s on every path (%s)", out.Reference, countOf(len(paths), "path"))
		return out
	}
	var parts []string
	for _, d := range out.Differs {
		parts = append(parts, d.words(len(paths), out.Reference, same))
	}
	out.Summary = strings.Join(parts, "; ")
	return out
}

// pathHopsTrace is the trace of one path: t's target and protocol with the
// path's hops; it reached the target when its last hop answered from it or
// is flagged "destination".
func pathHopsTrace(t *Trace, p PathHops) *Trace {
	pt := &Trace{Schema: TraceSchema, Hops: p.Hops}
	if t != nil {
		pt.Target, pt.Addr, pt.Protocol = t.Target, t.Addr, t.Protocol
	}
	if len(p.Hops) > 0 && pt.Addr != "" {
		for _, r := range p.Hops[len(p.Hops)-1].Responders {
			if r.Addr == pt.Addr {
				pt.Reached = true
			}
		}
	}
	return pt
}

// referenceClass is the class most paths have; a tie goes to the
// better-ranked class (the line sold is the better one; the paths that fall
// short of it are the ones to name), then to the lower path number.
func referenceClass(paths []PathClass) string {
	count := map[string]int{}
	first := map[string]int{}
	for i, p := range paths {
		if _, ok := count[p.LineClass]; !ok {
			first[p.LineClass] = i
		}
		count[p.LineClass]++
	}
	classes := make([]string, 0, len(count))
	for c := range count {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(a, b int) bool {
		ca, cb := classes[a], classes[b]
		if count[ca] != count[cb] {
			return count[ca] > count[cb]
		}
		if LineClassRank(ca) != LineClassRank(cb) {
			return LineClassRank(ca) > LineClassRank(cb)
		}
		return first[ca] < first[cb]
	})
	return classes[0]
}

// networkLabel names the network of a carrier hop: the carrier, and
// "backbone" for its backbone ranges (the ChinaNet backbone, 202.97, is
// what tells GT from GIA, not ChinaNet as such).
func networkLabel(c Carrier) string {
	if c.Backbone && c.Class == ClassChinaNet {
		return c.Name + " backbone"
	}
	return c.Name
}

// departure finds where path p (classified as pc) leaves the reference
// path r (classified as rc).
func departure(p PathHops, pc *classification, r PathHops, rc *classification) PathDeparture {
	d := PathDeparture{Path: p.Path, Flows: p.Flows, Reference: r.Path}
	refNets := map[string]bool{}
	for _, e := range rc.seq {
		refNets[networkLabel(e.c)] = true
	}
	for _, e := range pc.seq {
		if !refNets[networkLabel(e.c)] {
			d.TTL, d.Enters, d.Addr = e.ttl, networkLabel(e.c), e.addr
			return d
		}
	}
	part := partingTTL(p.Hops, r.Hops)
	if part == 0 {
		return d
	}
	d.TTL = part
	for _, e := range pc.seq {
		if e.ttl < part {
			continue
		}
		for _, h := range pc.ev.Hops {
			if h.TTL == e.ttl && h.Addr == e.addr {
				d.TTL, d.Enters, d.Addr = e.ttl, networkLabel(e.c), e.addr
				return d
			}
		}
	}
	return d
}

// partingTTL is the first TTL at which both paths answered and no address
// answered on both; 0 when there is none.
func partingTTL(a, b []Hop) int {
	addrs := func(hs []Hop) map[int]map[string]bool {
		m := map[int]map[string]bool{}
		for _, h := range hs {
			for _, r := range h.Responders {
				if _, err := netip.ParseAddr(r.Addr); err != nil {
					continue
				}
				if m[h.TTL] == nil {
					m[h.TTL] = map[string]bool{}
				}
				m[h.TTL][r.Addr] = true
			}
		}
		return m
	}
	am, bm := addrs(a), addrs(b)
	var ttls []int
	for ttl := range am {
		if bm[ttl] != nil {
			ttls = append(ttls, ttl)
		}
	}
	sort.Ints(ttls)
	for _, ttl := range ttls {
		shared := false
		for x := range am[ttl] {
			shared = shared || bm[ttl][x]
		}
		if !shared {
			return ttl
		}
	}
	return 0
}

// Where says where the path leaves the reference path: "enters the
// ChinaNet backbone at TTL 7 (202.97.50.1)", "leaves path 1 at TTL 7", or
// "answers from the same addresses as path 1".
func (d PathDeparture) Where() string {
	switch {
	case d.Enters != "":
		return fmt.Sprintf("enters %s at TTL %d (%s)", articled(d.Enters), d.TTL, d.Addr)
	case d.TTL > 0:
		return fmt.Sprintf("leaves path %d at TTL %d", d.Reference, d.TTL)
	}
	return fmt.Sprintf("answers from the same addresses as path %d", d.Reference)
}

// words is the departure as a summary phrase.
func (d PathDeparture) words(total int, refClass string, refPaths []string) string {
	s := fmt.Sprintf("path %d of %d (%s) %s", d.Path, total, FlowsPhrase(d.Flows), d.Where())
	which := "path"
	if len(refPaths) > 1 {
		which = "paths"
	}
	return s + fmt.Sprintf(": %s, not %s as %s %s", d.LineClass, refClass, which, strings.Join(refPaths, ", "))
}

// articled puts "the" before a backbone's name ("the ChinaNet backbone").
func articled(net string) string {
	if strings.HasSuffix(net, " backbone") {
		return "the " + net
	}
	return net
}

// FlowsPhrase words a path's flow list: "flow 33436", "flows 33436,
// 33439", the first eight and a count beyond that; "no flows" when empty.
func FlowsPhrase(flows []int) string {
	switch len(flows) {
	case 0:
		return "no flows"
	case 1:
		return "flow " + strconv.Itoa(flows[0])
	}
	const shown = 8
	var ws []string
	for i, f := range flows {
		if i == shown {
			ws = append(ws, fmt.Sprintf("… %d more", len(flows)-shown))
			break
		}
		ws = append(ws, strconv.Itoa(f))
	}
	return "flows " + strings.Join(ws, ", ")
}

func countOf(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// PathHopsOf is the paths of a multipath trace document (trace
// --multipath: t.Paths) as ClassifyPaths reads them: one responder per
// TTL, every interface of a per-packet hop; a TTL the discovery probed
// without an answer is silent (sent, no responder). nil for a trace
// without paths.
func PathHopsOf(t *Trace) []PathHops {
	if t == nil || len(t.Paths) == 0 {
		return nil
	}
	out := make([]PathHops, 0, len(t.Paths))
	for _, p := range t.Paths {
		ph := PathHops{Path: p.Path, Flows: p.Flows}
		for i, h := range p.Hops {
			hop := Hop{TTL: h.TTL, Sent: 1, Flags: []string{}, Responders: []Responder{}}
			if h.Sent != nil && *h.Sent > 0 {
				hop.Sent = *h.Sent
			}
			addrs := h.Addresses
			if len(addrs) == 0 && h.Address != "" {
				addrs = []string{h.Address}
			}
			for _, a := range addrs {
				hop.Responders = append(hop.Responders, Responder{Addr: a, Recv: 1, Carrier: h.Carrier})
			}
			if p.Reached && i == len(p.Hops)-1 {
				hop.Flags = append(hop.Flags, "destination")
			}
			ph.Hops = append(ph.Hops, hop)
		}
		out = append(out, ph)
	}
	return out
}

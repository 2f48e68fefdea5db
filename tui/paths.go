package tui

import (
	"fmt"

	"github.com/linecheck/linecheck/internal/route"
)

// RoutePath is one path of a multipath trace (trace --multipath) as the
// route screen shows it: its flows, share and line class, and its hops
// with the statistics of its own flow where they were measured (--cycles).
type RoutePath struct {
	Path, Of   int
	Flows      []int
	Share      float64
	LineClass  string
	Confidence string
	Rule       string
	Hops       []route.Hop
}

// pathsOf is the paths of a multipath trace document; nil for a plain
// trace. summary is the document's line over every path.
func pathsOf(t route.Trace) (paths []RoutePath, summary string) {
	for _, p := range t.Paths {
		rp := RoutePath{Path: p.Path, Of: len(t.Paths), Flows: p.Flows, Share: p.Share, LineClass: p.LineClass,
			Confidence: p.Confidence, Hops: pathHops(p)}
		if len(p.Evidence) > 0 {
			rp.Rule = p.Evidence[0]
		}
		paths = append(paths, rp)
	}
	if t.Multipath != nil {
		summary = t.Multipath.Summary
	}
	return paths, summary
}

// pathHops turns a path's hops into trace hops for the hop table: one
// responder (the path's interface; every interface of a per-packet hop)
// with the path's own statistics, none where they were not measured.
func pathHops(p route.Path) []route.Hop {
	hops := make([]route.Hop, 0, len(p.Hops))
	for i, h := range p.Hops {
		hop := route.Hop{TTL: h.TTL, Flags: append([]string{}, h.Flags...), Responders: []route.Responder{}}
		if h.Sent != nil {
			hop.Sent = *h.Sent
		}
		if h.LossPct != nil {
			hop.Loss = *h.LossPct / 100
		}
		if p.Reached && i == len(p.Hops)-1 {
			hop.Flags = append(hop.Flags, "destination")
		}
		addrs := h.Addresses
		if len(addrs) == 0 && h.Address != "" {
			addrs = []string{h.Address}
		}
		for j, a := range addrs {
			r := route.Responder{Addr: a, ASN: h.ASN, ASName: h.ASName, Carrier: h.Carrier}
			if j == 0 {
				if h.Recv != nil {
					r.Recv = *h.Recv
				}
				if h.RTT != nil {
					r.RTT = *h.RTT
				}
				if h.Jitter != nil {
					r.Jitter = *h.Jitter
				}
				if h.LastMs != nil {
					r.Samples = []float64{*h.LastMs}
				}
				r.MPLS = h.MPLS
			}
			hop.Responders = append(hop.Responders, r)
		}
		hops = append(hops, hop)
	}
	return hops
}

// withPath is r as the route screen shows it with path m.path chosen (f):
// the path's hops and class in place of the route's, and a note for the
// subtitle saying which path it is and how to switch; r itself (and a
// note counting the paths) when m.path is 0 or r has no paths.
func (m *Model) withPath(r *Route) (*Route, string) {
	if r == nil || len(r.Paths) == 0 {
		return r, ""
	}
	n := m.path % (len(r.Paths) + 1)
	if n == 0 {
		// Every path's hops as traced: their SNT counts the discovery's
		// probes too, a path's own view only its flow's cycles.
		return r, fmt.Sprintf(" · f: paths (%d) · every path, SNT with discovery", len(r.Paths))
	}
	p := r.Paths[n-1]
	shown := *r
	shown.Hops, shown.LineClass, shown.Confidence, shown.Rule = p.Hops, p.LineClass, p.Confidence, p.Rule
	// The route's notes and AS path are of every path's hops together.
	shown.Notes, shown.ASPath, shown.Paths = nil, "", nil
	return &shown, fmt.Sprintf(" · path %d of %d (%s, %.0f%% of flows) · f: next path", p.Path, p.Of, route.FlowsPhrase(p.Flows), p.Share*100)
}

// nextPath shows the route's next path (f): every path's hops as traced,
// then path 1, 2 … and round again.
func (m *Model) nextPath() {
	r := m.baseRoute(m.current())
	if r == nil || len(r.Paths) == 0 {
		return
	}
	m.path = (m.path%(len(r.Paths)+1) + 1) % (len(r.Paths) + 1)
	m.scroll, m.hop = 0, -1
}

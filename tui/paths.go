package tui

import "github.com/linecheck/linecheck/internal/route"

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

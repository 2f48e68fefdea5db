package exporter

import (
	"hash/fnv"
	"sort"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
)

// pathState is a target's current route as its traces drew it: the address
// that answered at each TTL ("" for a TTL that stayed silent in every trace
// since the path was last seen to change).
type pathState struct {
	addrs []string
}

// hopAddrs are the addresses of a trace's hops, one per TTL: the responder
// with the most replies ("" when none answered).
func hopAddrs(tr *route.Trace) []string {
	out := make([]string, len(tr.Hops))
	for i, h := range tr.Hops {
		best := -1
		for _, r := range h.Responders {
			if r.Recv > best && r.Addr != "" {
				out[i], best = r.Addr, r.Recv
			}
		}
	}
	return out
}

// multipathAddrs is a multipath trace's paths as one address sequence for
// pathState: each path's interfaces in TTL order ("" silent), the paths
// sorted by their addresses and parted by "|", so that another number of
// paths, a path of another length or an interface answered by another
// address is a change, and the order the discovery listed them in is not.
func multipathAddrs(tr *route.Trace) []string {
	paths := make([][]string, len(tr.Paths))
	for i, p := range tr.Paths {
		for _, h := range p.Hops {
			paths[i] = append(paths[i], h.Address)
		}
	}
	sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], ",") < strings.Join(paths[j], ",") })
	var out []string
	for i, p := range paths {
		if i > 0 {
			out = append(out, "|")
		}
		out = append(out, p...)
	}
	return out
}

// next folds a new trace's addresses into the path. It tells whether the
// path changed: a different hop count, or a TTL answered by another address
// in both traces. A TTL silent in one of them is no change — a hop that
// rate-limits its ICMP answers one trace in two — and keeps the address it
// had, so the identity stays put while the route does.
func (p *pathState) next(addrs []string) (changed bool) {
	if p.addrs == nil {
		p.addrs = addrs
		return false
	}
	if len(addrs) != len(p.addrs) {
		p.addrs = addrs
		return true
	}
	for i, a := range addrs {
		if a != "" && p.addrs[i] != "" && a != p.addrs[i] {
			p.addrs = addrs
			return true
		}
	}
	merged := make([]string, len(addrs))
	for i, a := range addrs {
		if a == "" {
			a = p.addrs[i]
		}
		merged[i] = a
	}
	p.addrs = merged
	return false
}

// id is the path's identity: FNV-1a (32 bits, exact in a float64) of its
// addresses in TTL order, "*" for a silent TTL.
func (p *pathState) id() uint32 {
	h := fnv.New32a()
	parts := make([]string, len(p.addrs))
	for i, a := range p.addrs {
		if a == "" {
			a = "*"
		}
		parts[i] = a
	}
	h.Write([]byte(strings.Join(parts, ",")))
	return h.Sum32()
}

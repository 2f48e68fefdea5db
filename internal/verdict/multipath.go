package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// PathLine is the line class of one path of a multipath trace, as compare
// judges it (RouteQuality.Paths).
type PathLine struct {
	// Direction is "forward" or "return": the trace the path is of.
	Direction string `json:"direction"`
	// Path is the path's number in its trace, Of how many paths it has.
	Path int `json:"path"`
	Of   int `json:"of"`
	// Flows are the flow ids that took it (the trace's multipath.flows).
	Flows []int `json:"flows"`
	// Share is the path's share of the explored flows (0..1); absent when
	// the trace does not say.
	Share      *float64 `json:"share,omitempty"`
	LineClass  string   `json:"line_class"`
	Confidence string   `json:"confidence"`
	// Leaves says where the path leaves the path of the class most paths
	// have ("enters the ChinaNet backbone at TTL 7 (202.97.50.1)"), when
	// its class differs.
	Leaves string `json:"leaves,omitempty"`
	// Hops are the path's interfaces per TTL (Addr "" for a silent TTL).
	Hops []PathLineHop `json:"hops"`
}

// PathLineHop is one TTL of a path: its address and carrier.
type PathLineHop struct {
	TTL     int    `json:"ttl"`
	Addr    string `json:"addr"`
	Carrier string `json:"carrier,omitempty"`
}

// Name is the path as a report names it: "forward path 2 of 3 (flows
// 33436, 33439)".
func (p PathLine) Name() string {
	return fmt.Sprintf("%s path %d of %d (%s)", p.Direction, p.Path, p.Of, route.FlowsPhrase(p.Flows))
}

// pathLines classifies the paths of one direction's multipath trace
// (route.ClassifyPaths) into PathLines, with the summary line; nil when t
// has no paths. shares gives each path's share by number (may be nil).
func pathLines(direction string, t *route.Trace, paths []route.PathHops, shares map[int]float64, db route.ASNDB) ([]PathLine, string) {
	if len(paths) == 0 {
		return nil, ""
	}
	pc := route.ClassifyPaths(t, paths, db)
	leaves := map[int]string{}
	for _, d := range pc.Differs {
		leaves[d.Path] = d.Where()
	}
	var out []PathLine
	for i, p := range pc.Paths {
		pl := PathLine{Direction: direction, Path: p.Path, Of: len(pc.Paths), Flows: p.Flows, LineClass: p.LineClass,
			Leaves: leaves[p.Path], Hops: []PathLineHop{}}
		if pl.Flows == nil {
			pl.Flows = []int{}
		}
		if p.Evidence != nil {
			pl.Confidence = p.Evidence.Confidence
		}
		if s, ok := shares[p.Path]; ok {
			pl.Share = &s
		}
		for _, h := range paths[i].Hops {
			ph := PathLineHop{TTL: h.TTL}
			if len(h.Responders) > 0 {
				ph.Addr, ph.Carrier = h.Responders[0].Addr, h.Responders[0].Carrier
			}
			pl.Hops = append(pl.Hops, ph)
		}
		out = append(out, pl)
	}
	return out, direction + ": " + pc.Summary
}

// checkPathClasses makes the line_class check c hold only if every path's
// class is allowed; the note names each path that fails and where it
// leaves the others, and the measured class is the first failing path's.
func checkPathClasses(c *Check, allowed []string, paths []PathLine) {
	if len(paths) == 0 {
		return
	}
	var failed []string
	for _, p := range paths {
		if slices.Contains(allowed, p.LineClass) {
			continue
		}
		if len(failed) == 0 {
			c.Measured = p.LineClass
		}
		w := p.Name() + " is " + p.LineClass
		if p.Leaves != "" {
			w += ": " + p.Leaves
		}
		failed = append(failed, w)
	}
	var note string
	if len(failed) > 0 {
		c.Pass = false
		note = "must hold on every path: " + strings.Join(failed, "; ")
	} else {
		note = fmt.Sprintf("holds on every path (%d)", len(paths))
	}
	if c.Note != "" {
		note += "; " + c.Note
	}
	c.Note = note
}

// multipathRoutes is the per-path line class of the candidate's multipath
// traces, forward then return (route.ClassifyPaths with db), with a
// warning when the candidate asks for multipath and neither trace has
// paths.
func multipathRoutes(c *candidates.Candidate, fwd, ret *route.Trace, db route.ASNDB) (lines []PathLine, summary []string, warnings []string) {
	for _, d := range []struct {
		name string
		t    *route.Trace
	}{{"forward", fwd}, {"return", ret}} {
		if d.t == nil || len(d.t.Paths) == 0 {
			continue
		}
		shares := map[int]float64{}
		for _, p := range d.t.Paths {
			shares[p.Path] = p.Share
		}
		ls, s := pathLines(d.name, d.t, route.PathHopsOf(d.t), shares, db)
		lines, summary = append(lines, ls...), append(summary, s)
	}
	if c.Multipath && len(lines) == 0 {
		warnings = append(warnings, "multipath: neither the forward nor the return trace is a multipath one (trace --multipath): the line class is judged on one path")
	}
	return lines, summary, warnings
}

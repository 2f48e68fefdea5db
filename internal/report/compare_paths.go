package report

import (
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
)

// comparePathsTable is the line class of every path of the candidates'
// multipath traces, with each direction's every-path summary as notes; ok
// is false when no candidate has a multipath trace.
func comparePathsTable(r *compare.Result, c compareCells) (Table, bool) {
	t := Table{
		Title:   "Paths (multipath: sla.line_classes must hold on every path)",
		Headers: []string{"candidate", "direction", "path", "of", "flows", "share", "line class", "confidence", "leaves", "hops"},
		Align:   "llrrlrllll",
		Movable: []string{"hops", "leaves"},
	}
	found := false
	for _, e := range r.Candidates {
		for _, p := range e.Route.Paths {
			found = true
			share := "-"
			if p.Share != nil {
				share = c.pct(*p.Share)
			}
			var hops []string
			for _, h := range p.Hops {
				a := h.Addr
				if a == "" {
					a = "*"
				}
				hops = append(hops, strconv.Itoa(h.TTL)+":"+a)
			}
			// Every flow id in the CSV; the first few, and how many more, to read.
			flows := strings.TrimPrefix(strings.TrimPrefix(route.FlowsPhrase(p.Flows), "flows "), "flow ")
			if !c.notes {
				ids := make([]string, len(p.Flows))
				for i, f := range p.Flows {
					ids[i] = strconv.Itoa(f)
				}
				flows = strings.Join(ids, " ")
			}
			t.Rows = append(t.Rows, []string{e.Name, p.Direction, strconv.Itoa(p.Path), strconv.Itoa(p.Of), flows, share,
				dashIfEmpty(p.LineClass), dashIfEmpty(p.Confidence), dashIfEmpty(p.Leaves), strings.Join(hops, " ")})
		}
		if c.notes {
			for _, s := range e.Route.PathsSummary {
				t.Notes = append(t.Notes, e.Name+": "+s)
			}
		}
	}
	if len(t.Notes) > 0 {
		t.Notes = append(append([]string(nil), c.blank...), t.Notes...)
	}
	return t, found
}

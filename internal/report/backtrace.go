package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
)

// BacktraceTable renders a linecheck.backtrace/v1 document as one row per
// target: carrier, city, line class, confidence, the evidence in one phrase,
// RTT p50/p95 and loss to the destination, and whether it was reached. A
// figure without data is "-". format is the output format (csv keeps loss
// as a fraction, the others print a percentage).
func BacktraceTable(d *route.BacktraceDoc, format Format) Table {
	t := Table{
		Title:   fmt.Sprintf("backtrace from %s: %d target(s)", d.Vantage, len(d.Results)),
		Headers: []string{"target", "carrier", "city", "addr", "line class", "confidence", "evidence", "p50 ms", "p95 ms", "loss", "reached", "as path"},
		Align:   "lllllllrrrll",
		Movable: []string{"as path", "evidence"},
	}
	reached := 0
	for _, r := range d.Results {
		state := "no"
		if r.Reached {
			state = "yes"
			reached++
		}
		path := "-"
		if r.Trace != nil {
			p := r.Trace.ASPath
			if p == nil {
				// A recording made before AS paths: its hops still carry their ASNs.
				p = route.ASPath(r.Trace)
			}
			if len(p) > 0 {
				path = route.ASPathText(p)
			}
		}
		t.Rows = append(t.Rows, []string{r.Name, r.Carrier, r.City, r.Addr, r.LineClass, r.Confidence,
			r.EvidencePhrase(), msOrDash(r.RTT.P50), msOrDash(r.RTT.P95), lossOrDash(format, r.Loss), state, path})
	}
	if n := route.HiddenHopsNote(d.HiddenHops); n != "" {
		t.Notes = append(t.Notes, n)
		// The CSV has no notes: a column says it there.
		if format.Machine() {
			t.Headers, t.Align = append(t.Headers, "hidden_hops"), t.Align+"r"
			for i := range t.Rows {
				t.Rows[i] = append(t.Rows[i], strconv.Itoa(d.HiddenHops))
			}
		}
	}
	t.Notes = append(t.Notes, backtracePathNotes(d)...)
	t.Notes = append(t.Notes, fmt.Sprintf("%d of %d reached; RTT and loss are the destination's own (nearest-rank percentiles); - = no data", reached, len(d.Results)))
	t.Notes = append(t.Notes, "line class from the route's long haul (docs/route.md); the full trace per target is in --format json")
	if a := d.ASNData; a != nil {
		t.Notes = append(t.Notes, fmt.Sprintf("as path: the networks the route crosses, (ttl N) where each begins; dataset %s (%s): %s",
			a.Snapshot, a.Origin, a.Attribution))
	}
	return t
}

// BacktraceTargetsTable lists a target set (backtrace --list).
func BacktraceTargetsTable(title string, ts []route.BacktraceTarget) Table {
	t := Table{Title: title, Headers: []string{"target", "carrier", "city", "addr", "source"}}
	for _, x := range ts {
		src := x.Source
		if src == "" {
			src = "-"
		}
		t.Rows = append(t.Rows, []string{x.Name, x.Carrier, x.City, x.Addr, src})
	}
	return t
}

func msOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	switch {
	case *v >= 100:
		return strconv.FormatFloat(*v, 'f', 1, 64)
	case *v >= 10:
		return strconv.FormatFloat(*v, 'f', 2, 64)
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func lossOrDash(format Format, v *float64) string {
	if v == nil {
		return "-"
	}
	if format.Machine() {
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

// backtracePathNotes lists the paths of every target traced with
// --multipath: flows, share, class and hops, then what holds on every path.
// A target's line class in the table is its weakest path's.
func backtracePathNotes(d *route.BacktraceDoc) []string {
	var notes []string
	for _, r := range d.Results {
		if r.Trace == nil || len(r.Trace.Paths) == 0 {
			continue
		}
		for _, p := range r.Trace.Paths {
			var hops []string
			for _, h := range p.Hops {
				a := h.Address
				if a == "" {
					a = "*"
				}
				hops = append(hops, a)
			}
			notes = append(notes, fmt.Sprintf("%s path %d of %d (%s; %.1f%% of flows): %s, hops %s", r.Name, p.Path, len(r.Trace.Paths),
				route.FlowsPhrase(p.Flows), p.Share*100, dashIfEmpty(p.LineClass), strings.Join(hops, " ")))
		}
		if m := r.Trace.Multipath; m != nil && m.Summary != "" {
			notes = append(notes, r.Name+" every path: "+m.Summary)
		}
	}
	return notes
}

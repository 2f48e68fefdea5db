package report

import (
	"strconv"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// compareRoutesSeenTable lists each distinct route (AS path and line class)
// of the traces taken over the days of a trial (recorded.forward or return
// as a list of files or a trace --watch journal; issue 30), with when it was
// first and last seen in the users' zone and how many traces took it; ok is
// false when no candidate has such traces.
func compareRoutesSeenTable(r *compare.Result, format Format) (Table, bool) {
	zone := "UTC"
	if r.SLA.Zone != nil {
		zone = r.SLA.Zone.String()
	}
	t := Table{
		Title:   "Routes seen over the days (" + zone + "): sla.line_classes must hold on every trace",
		Headers: []string{"candidate", "direction", "line class", "as path", "first", "last", "traces"},
		Align:   "llllllr",
		Movable: []string{"as path"},
	}
	stamp := func(at *time.Time) string {
		switch {
		case at == nil:
			return "-"
		case format.Machine():
			return at.Format(time.RFC3339)
		}
		return at.Format("2006-01-02 15:04")
	}
	if format.Machine() {
		// Tidy: the count alone, the untimed traces a column of their own.
		t.Headers, t.Align = append(t.Headers, "untimed"), t.Align+"r"
	}
	for _, e := range r.Candidates {
		for _, s := range e.Route.RoutesSeen {
			row := []string{e.Name, s.Direction, s.LineClass, dashIfEmpty(s.ASPath), stamp(s.First), stamp(s.Last), seenCount(s)}
			if format.Machine() {
				row = append(row[:6], strconv.Itoa(s.Count), strconv.Itoa(s.Untimed))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

// seenCount is a route's number of traces, with how many carry no time.
func seenCount(s verdict.SeenRoute) string {
	n := strconv.Itoa(s.Count)
	if s.Untimed > 0 {
		n += " (" + strconv.Itoa(s.Untimed) + " untimed)"
	}
	return n
}

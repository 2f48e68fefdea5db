package tui

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// A multipath forward trace on the route screen: the subtitle counts the
// paths and the head says what holds on every path; f shows path 1 (its
// own hops and class), then path 2, then every path's hops again; the help
// screen lists f.
func TestRouteScreenSwitchesBetweenPaths(t *testing.T) {
	tr, err := route.ReadTraceFile("../samples/rec/hk-multipath-forward.json")
	if err != nil {
		t.Fatal(err)
	}
	route.Annotate(tr, nil)
	if len(tr.Paths) != 2 || tr.Paths[0].LineClass == tr.Paths[1].LineClass {
		t.Fatalf("recording: %d paths, classes %s %s", len(tr.Paths), tr.Paths[0].LineClass, tr.Paths[1].LineClass)
	}
	// The path's last reply at its last TTL (a live run keeps it): the
	// LAST column shows it, not "-".
	last := &tr.Paths[0].Hops[len(tr.Paths[0].Hops)-1]
	last.LastMs = new(77.7)
	m := fixtureModel(t, 140, 40)
	m = step(t, m, TraceMsg{Candidate: "hk-cn2-gia", Direction: "forward", Trace: *tr})
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	v := plain(m)
	if !strings.Contains(v, "f: paths (2) · every path, SNT with discovery") || !strings.Contains(v, "every path: ") ||
		!strings.Contains(v, "59.43.182.198") || !strings.Contains(v, "202.97.34.17") {
		t.Fatalf("every path's hops:\n%s", v)
	}
	m = press(t, m, "f")
	v = plain(m)
	if !strings.Contains(v, "path 1 of 2 (flows 33434, 33436, 33437, 33439, 67% of flows) · f: next path") ||
		!strings.Contains(v, "line "+tr.Paths[0].LineClass) || !strings.Contains(v, "59.43.182.198") || strings.Contains(v, "202.97.34.17") {
		t.Fatalf("path 1:\n%s", v)
	}
	if !strings.Contains(v, "77.7") {
		t.Errorf("path 1: no LAST 77.7 at TTL %d:\n%s", last.TTL, v)
	}
	m = press(t, m, "f")
	v = plain(m)
	if !strings.Contains(v, "path 2 of 2 (flows 33435, 33438, 33% of flows)") ||
		!strings.Contains(v, "line "+tr.Paths[1].LineClass) || !strings.Contains(v, "202.97.34.17") || strings.Contains(v, "59.43.182.198") {
		t.Fatalf("path 2:\n%s", v)
	}
	m = press(t, m, "f")
	if v = plain(m); !strings.Contains(v, "f: paths (2)") {
		t.Fatalf("round again:\n%s", v)
	}
	if v = plain(press(t, m, "?")); !strings.Contains(v, "v w n f") || !strings.Contains(v, "f: next path") {
		t.Errorf("help lacks f:\n%s", v)
	}
}

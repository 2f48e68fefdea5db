package tui

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// The route screen shows an MTU column, with each hop's MTU, for a route
// whose path MTU was measured (trace --mtu), and none otherwise.
func TestRouteScreenShowsTheMTUColumnWhenMeasured(t *testing.T) {
	m := fixtureModel(t, 140, 40)
	without := plain(press(t, m, "enter"))
	if strings.Contains(without, " MTU") {
		t.Fatalf("route screen without an MTU search shows an MTU column:\n%s", without)
	}
	tr := FixtureTraces()[0]
	tr.Trace.Hops = append([]route.Hop(nil), tr.Trace.Hops...)
	for i := range tr.Trace.Hops {
		tr.Trace.Hops[i].MTU = 1500
		if tr.Trace.Hops[i].TTL >= 4 {
			tr.Trace.Hops[i].MTU = 1400
		}
	}
	tr.Trace.MTU = &route.PathMTU{PathMTU: 1400, Start: 1500, Drops: []route.MTUDrop{{TTL: 4, MTU: 1400}}}
	m = step(t, m, UpdatesMsg{tr})
	with := plain(press(t, m, "enter"))
	if !strings.Contains(with, " MTU") {
		t.Fatalf("no MTU column after a measured path MTU:\n%s", with)
	}
	var n1500, n1400 int
	for _, l := range strings.Split(with, "\n") {
		f := strings.Fields(l)
		for _, x := range f {
			switch x {
			case "1500":
				n1500++
			case "1400":
				n1400++
			}
		}
	}
	if n1500 != 3 || n1400 != 5 {
		t.Errorf("MTU cells: %d × 1500 and %d × 1400, want 3 and 5 (hops 1-3, 4-8):\n%s", n1500, n1400, with)
	}
}

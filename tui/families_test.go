package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// A dual-stack row keeps each address family's forward route by the
// family of the traced address: the IPv6 trace does not replace the IPv4
// one, the route screen lists both, and the row's class is the weaker
// (compare's rule: the candidate's route is its worse family's).
func TestDualStackRowKeepsEachFamilysRoute(t *testing.T) {
	snap := Snapshot{Tracing: true, Candidates: []Candidate{{Name: "dual", Target: "127.0.0.1 icmp", family: "ipv4"}}}
	m := NewLoaded(context.Background(), &Feed{Snapshot: snap}, snap, Options{Width: 100, Height: 40, NoColor: true})
	trace := func(addr, class, path string) route.Trace {
		return route.Trace{Target: addr, Addr: addr, Reached: true, LineClass: class,
			ASPath: []route.ASHop{{ASN: 4809, Name: path, TTL: 2}},
			Hops:   []route.Hop{{TTL: 1, Sent: 1, Responders: []route.Responder{{Addr: addr, Recv: 1}}}}}
	}
	m = step(t, m, TraceMsg{Candidate: "dual", Direction: "forward", Trace: trace("127.0.0.1", route.LineCN2GIA, "CN2")})
	m = step(t, m, TraceMsg{Candidate: "dual", Direction: "forward", Trace: trace("::1", route.LineChinaNet163, "ChinaNet")})
	c := m.find("dual")
	if c.Forward == nil || c.Forward.Target != "127.0.0.1" || c.FamilyRoutes["ipv6"] == nil || c.FamilyRoutes["ipv6"].Target != "::1" {
		t.Fatalf("forward %+v, family routes %+v: want the IPv4 route as forward and the IPv6 one under ipv6", c.Forward, c.FamilyRoutes)
	}
	if c.LineClass != route.LineChinaNet163 {
		t.Errorf("row class %q, want chinanet-163 (the weaker family)", c.LineClass)
	}
	screen := plain(press(t, m, "enter"))
	for _, want := range []string{"ipv4 forward: cn2-gia", "ipv6 forward: chinanet-163"} {
		if !strings.Contains(screen, want) {
			t.Errorf("route screen lacks %q:\n%s", want, screen)
		}
	}
	// A later IPv4 trace keeps the weaker class.
	m = step(t, m, TraceMsg{Candidate: "dual", Direction: "forward", Trace: trace("127.0.0.1", route.LineCN2GIA, "CN2")})
	if c := m.find("dual"); c.LineClass != route.LineChinaNet163 {
		t.Errorf("after another IPv4 trace the row class is %q, want chinanet-163", c.LineClass)
	}
}

package verdict

import (
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

func hopsTrace(addr string, hops ...string) *route.Trace {
	tr := &route.Trace{Target: addr, Addr: addr, Reached: true}
	for i, h := range append(hops, addr) {
		tr.Hops = append(tr.Hops, route.Hop{TTL: i + 1, Sent: 1, Responders: []route.Responder{{Addr: h, Recv: 1}}})
	}
	return tr
}

// A recorded forward file of several traces holding both families (one
// IPv4 trace through CN2's 59.43/16, one IPv6 trace inside ChinaNet's
// 240e::/16) gives each family its own class; the candidate's route is the
// weaker (163), and without sla.families the SLA is the old single check
// on it. A single-family candidate gets no families at all.
func TestRecordedForwardOfBothFamilies(t *testing.T) {
	v4 := hopsTrace("127.0.0.1", "59.43.16.165", "59.43.183.54")
	v6 := hopsTrace("::1", "240e:0:10::1", "240e:0:20::1", "240e:0:30::1")
	f := &candidates.File{SLA: candidates.SLA{LineClasses: []string{route.LineCN2GIA}}}
	c := &candidates.Candidate{Name: "dual", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "::1", Protocol: "icmp"}}}
	m := &Measurement{Forward: v4, ForwardVantages: []*route.Trace{v4, v6},
		Targets: []TargetResult{{Target: c.Targets[0]}, {Target: c.Targets[1]}}}
	e := Evaluate(f, c, m, nil)
	if len(e.Families) != 2 || e.Families[0].Route.LineClass != route.LineCN2GIA || e.Families[1].Route.LineClass != route.LineChinaNet163 {
		t.Fatalf("families %+v", e.Families)
	}
	if e.Route.LineClass != route.LineChinaNet163 || e.Route.Forward != v6 {
		t.Errorf("route %s (forward %v), want the weaker family's: chinanet-163 over the IPv6 trace", e.Route.LineClass, e.Route.Forward)
	}
	if e.SLA.Pass || len(e.SLA.Checks) != 1 || e.SLA.Checks[0].Family != "" || e.SLA.Checks[0].Measured != route.LineChinaNet163 {
		t.Errorf("sla %+v, want one failing line_class check on the route", e.SLA)
	}
	one := &candidates.Candidate{Name: "v4", Targets: c.Targets[:1]}
	if e := Evaluate(f, one, &Measurement{Forward: v4, Targets: m.Targets[:1]}, nil); e.Families != nil || !e.SLA.Pass {
		t.Errorf("single family: families %+v, sla pass %v; want none and a pass", e.Families, e.SLA.Pass)
	}
}

// sla.families naming IPv6 first on an IPv4-only candidate: IPv6 fails no
// data, and the route stays IPv4's (the empty family does not blank it).
func TestEmptyFamilyDoesNotBlankTheRoute(t *testing.T) {
	v4 := hopsTrace("127.0.0.1", "59.43.16.165", "59.43.183.54")
	f := &candidates.File{SLA: candidates.SLA{LineClasses: []string{route.LineCN2GIA}, Families: []string{"ipv6", "ipv4"}}}
	c := &candidates.Candidate{Name: "v4", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}
	e := Evaluate(f, c, &Measurement{Forward: v4, Targets: []TargetResult{{Target: c.Targets[0], Sent: 5, Recv: 5}}}, nil)
	if len(e.Families) != 2 || e.Route.LineClass != route.LineCN2GIA || e.Route.Forward != v4 {
		t.Fatalf("families %d, route %s: want IPv4's cn2-gia route", len(e.Families), e.Route.LineClass)
	}
	if e.SLA.Pass || Failures(e.SLA.Checks)[0] != "line_class on ipv6" {
		t.Errorf("sla %+v: want line_class on ipv6 failing", e.SLA)
	}
}

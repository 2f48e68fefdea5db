package verdict

import (
	"maps"
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

// EvaluateLive judges sla.families by Evaluate's rule (issue 32): before
// a live probe the recording's families stand and give Evaluate's checks
// one for one; once probed, each family's figures are its own targets'
// (TargetFamilies: a live surface names its targets "127.0.0.1 icmp") and
// its class its own traces': IPv6 losing half its probes fails loss on
// ipv6 (0.5 > 0.05) and line_class on ipv6 (163), IPv4 passes both.
func TestEvaluateLiveJudgesFamiliesAsEvaluate(t *testing.T) {
	v4 := hopsTrace("127.0.0.1", "59.43.16.165", "59.43.183.54")
	v6 := hopsTrace("::1", "240e:0:10::1", "240e:0:20::1", "240e:0:30::1")
	loss := 0.05
	f := &candidates.File{SLA: candidates.SLA{LineClasses: []string{route.LineCN2GIA}, Loss: &loss, Families: []string{"ipv4", "ipv6"}}}
	c := &candidates.Candidate{Name: "dual", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "::1", Protocol: "icmp"}}}
	m := &Measurement{Forward: v4, FamilyForward: map[string]*route.Trace{"ipv6": v6},
		Targets: []TargetResult{{Target: c.Targets[0], Sent: 10, Recv: 10}, {Target: c.Targets[1], Sent: 10, Recv: 10}}}
	e := Evaluate(f, c, m, nil)
	label := func(v Verdict) map[string]bool {
		out := map[string]bool{}
		for _, ch := range v.Checks {
			out[ch.Label()] = ch.Pass
		}
		return out
	}
	fams := []LiveFamily{{Family: "ipv4", Forward: v4}, {Family: "ipv6", Forward: v6}}
	rec := EvaluateLive(f.SLA, LiveRoute{Recorded: e.Route, RecordedFamilies: e.Families, Families: fams,
		LineClass: e.Route.LineClass, Direction: e.Route.Direction, Targets: []TargetResult{{}, {}}})
	want := map[string]bool{"loss on ipv4": true, "line_class on ipv4": true, "loss on ipv6": true, "line_class on ipv6": false}
	if got := label(e.SLA); !maps.Equal(got, want) {
		t.Fatalf("Evaluate's checks %v, want %v", got, want)
	}
	if got := label(rec.SLA); !maps.Equal(got, want) || len(rec.Families) != 2 {
		t.Errorf("before a live probe: checks %v (families %d), want Evaluate's %v", got, len(rec.Families), want)
	}
	live := EvaluateLive(f.SLA, LiveRoute{Families: fams, TargetFamilies: []string{"ipv4", "ipv6"}, LineClass: route.LineChinaNet163, Direction: "forward",
		Targets: []TargetResult{{Target: candidates.Target{Addr: "127.0.0.1 icmp"}, Sent: 10, Recv: 10, Loss: 0},
			{Target: candidates.Target{Addr: "::1 icmp"}, Sent: 10, Recv: 5, Loss: 0.5}}})
	want["loss on ipv6"] = false
	if got := label(live.SLA); !maps.Equal(got, want) || live.SLA.Pass {
		t.Errorf("live: checks %v pass %v, want %v and a failure", got, live.SLA.Pass, want)
	}
	for _, ch := range live.SLA.Checks {
		if v, ok := ch.Measured.(float64); ch.Label() == "loss on ipv6" && (!ok || v != 0.5) {
			t.Errorf("loss on ipv6 measured %v, want 0.5 (5 of 10 lost)", ch.Measured)
		}
	}
}

package exporter

import (
	"math"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// v6Trace is a forward IPv6 route that stays in ChinaNet's one IPv6 prefix
// (240e::/16, AS4134, in the bundled carrier table) before the server:
// ordinary 163, decided on the AS alone (there is no 202.97 on IPv6).
func v6Trace(t *testing.T) *route.Trace {
	t.Helper()
	tr := &route.Trace{Reached: true, Target: "::1", Addr: "::1"}
	for i, a := range []string{"240e:0:10::1", "240e:0:20::1", "240e:0:30::1", "::1"} {
		tr.Hops = append(tr.Hops, route.Hop{TTL: i + 1, Sent: 1, Responders: []route.Responder{{Addr: a, Recv: 1}}})
	}
	route.Annotate(tr, nil)
	if tr.LineClass != route.LineChinaNet163 {
		t.Fatalf("the test route classifies %q, want %s", tr.LineClass, route.LineChinaNet163)
	}
	return tr
}

// serve carries the address family as a key: a dual-stack candidate's
// families each get their line class, loss and RTT series with a family
// label, and under sla.families each family's checks are their own series
// (ipv4's and ipv6's line_class do not overwrite each other); the
// candidate's verdict fails on ipv6's class.
func TestServeCarriesTheFamilyAsALabel(t *testing.T) {
	e := New(nil)
	v4, v6 := tgt("d", "127.0.0.1"), tgt("d", "::1")
	e.SetTargets([]Target{v4, v6}, time.Now())
	e.SetSLA(candidates.SLA{LineClasses: []string{route.LineCN2GIA}, Families: []string{"ipv4", "ipv6"}}, nil)
	e.ObservePing(v4, PingOutcome{Sent: 10, Recv: 10, RTTms: []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 6}})
	e.ObservePing(v6, PingOutcome{Sent: 10, Recv: 9, RTTms: []float64{8, 8, 8, 8, 8, 8, 8, 8, 9}})
	// Before any trace, each family's class has no data.
	for _, fam := range []string{"ipv4", "ipv6"} {
		if m := metric(t, e, "linecheck_sla_family_check_nodata", map[string]string{"candidate": "d", "family": fam, "check": verdict.CheckLineClass}); m == nil {
			t.Errorf("%s line_class before any trace: no nodata series", fam)
		}
	}
	e.ObserveTrace(v4, cn2Trace(t), nil)
	e.ObserveTrace(v6, v6Trace(t), nil)
	for fam, want := range map[string]float64{"ipv4": 1, "ipv6": 0} {
		m := metric(t, e, "linecheck_sla_family_check_pass", map[string]string{"candidate": "d", "family": fam, "check": verdict.CheckLineClass})
		if m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("%s line_class pass %v, want %v", fam, m, want)
		}
	}
	for fam, class := range map[string]string{"ipv4": route.LineCN2GIA, "ipv6": route.LineChinaNet163} {
		if m := metric(t, e, "linecheck_candidate_family_line_class_info", map[string]string{"candidate": "d", "family": fam, "direction": "forward", "line_class": class}); m == nil {
			t.Errorf("no %s forward %s class series", fam, class)
		}
	}
	if m := metric(t, e, "linecheck_candidate_family_loss_ratio", map[string]string{"candidate": "d", "family": "ipv6"}); m == nil || math.Abs(m.GetGauge().GetValue()-0.1) > 1e-9 {
		t.Errorf("ipv6 loss %v, want 0.1 (1 of 10)", m)
	}
	if m := metric(t, e, "linecheck_candidate_family_rtt_seconds", map[string]string{"candidate": "d", "family": "ipv4", "stat": "p95"}); m == nil || m.GetGauge().GetValue() != 0.006 {
		t.Errorf("ipv4 p95 %v, want 0.006 s", m)
	}
	if m := metric(t, e, "linecheck_sla_pass", map[string]string{"candidate": "d"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Errorf("linecheck_sla_pass %v, want 0 (ipv6 rides 163)", m)
	}
	if m := metric(t, e, "linecheck_candidate_line_class_info", map[string]string{"candidate": "d", "direction": "route", "line_class": route.LineChinaNet163}); m == nil {
		t.Error("the candidate's route class is not its worse family's (chinanet-163)")
	}
}

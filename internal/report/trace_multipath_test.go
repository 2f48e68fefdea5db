package report

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// The discovery probes most new flows only behind a branch router, so
// fewer flows answer from it than pass it: the diamonds say both, and a
// note says what the second figure is. A node whose flows all answered
// keeps the one figure.
func TestDiamondsCountFlowsThatPassAnInterfaceWithoutAnswering(t *testing.T) {
	hops := func(mid string) []route.PathHop {
		return []route.PathHop{{TTL: 1, Address: "10.77.0.2"}, {TTL: 2, Address: mid}, {TTL: 3, Address: "10.77.4.2"}}
	}
	tr := &route.Trace{Schema: route.TraceSchema, Target: "10.77.4.2", Addr: "10.77.4.2", Reached: true,
		Multipath: &route.Multipath{Confidence: 95, FlowField: "udp-dport", ProbesUsed: 20, Stopped: "rule",
			Nodes: []route.MultipathNode{
				{TTL: 1, Address: "10.77.0.2", Flows: []int{0}},
				{TTL: 2, Address: "10.77.1.2", Flows: []int{1, 2, 3}},
				{TTL: 2, Address: "10.77.100.2", Flows: []int{4, 5}},
				{TTL: 3, Address: "10.77.4.2", Flows: []int{1}},
			}},
		Links: []route.Link{{TTL: 1, From: "10.77.0.2", To: "10.77.1.2"}, {TTL: 1, From: "10.77.0.2", To: "10.77.100.2"},
			{TTL: 2, From: "10.77.1.2", To: "10.77.4.2"}, {TTL: 2, From: "10.77.100.2", To: "10.77.4.2"}},
		Paths: []route.Path{
			{Path: 1, Flows: []int{1, 2, 3}, Share: 0.3, Reached: true, Hops: hops("10.77.1.2")},
			{Path: 2, Flows: []int{4, 5, 6, 7, 8, 9, 10}, Share: 0.7, Reached: true, Hops: hops("10.77.100.2")},
		}}
	var b strings.Builder
	for _, tb := range multipathTables(tr, TraceView{}) {
		b.WriteString(tb.Title + "\n")
		for _, r := range tb.Rows {
			b.WriteString(strings.Join(r, " | ") + "\n")
		}
		b.WriteString(strings.Join(tb.Notes, "\n") + "\n")
	}
	out := b.String()
	// 10.77.100.2: flows 4 and 5 answered there; path 2's seven flows pass
	// it. 10.77.1.2: its three flows are path 1's three.
	for _, want := range []string{"10.77.100.2 (2; 7 on paths)", "10.77.1.2 (3)", "(n; m on paths) = n flows answered"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// TTL 1 and 3 are on every path: 10 flows pass them, 1 answered at each.
	if !strings.Contains(out, "10.77.0.2 (1; 10 on paths)") {
		t.Errorf("TTL 1: want 1 answered, 10 on paths:\n%s", out)
	}
}

// Responders never looked up are named once per TTL, however many
// load-balanced interfaces a TTL has, and a run of TTLs of one kind is one
// range: hand-written from the hops below.
func TestASNotesNameEachUnlookedTTLOnceAndRunsAsRanges(t *testing.T) {
	rs := func(kind string, n int) []route.Responder {
		out := make([]route.Responder, n)
		for i := range out {
			out[i] = route.Responder{ASSource: kind}
		}
		return out
	}
	tr := &route.Trace{Hops: []route.Hop{
		{TTL: 1, Responders: rs("private", 1)},
		{TTL: 2, Responders: rs("private", 3)},
		{TTL: 3, Responders: rs("cgnat", 2)},
		{TTL: 4, Responders: rs(route.SourceNone, 1)},
		{TTL: 5, Responders: rs("documentation", 1)},
		{TTL: 6, Responders: append(rs("documentation", 2), rs("private", 1)...)},
	}}
	want := "  not looked up (private, CGNAT or reserved ranges): TTL 1-2 private, 3 cgnat, 5-6 documentation, 6 private"
	notes := ASNotes(tr)
	if len(notes) < 2 || notes[1] != want {
		t.Errorf("notes %q\nwant line %q", notes, want)
	}
}

// A discovery the rule stopped says what the rule leaves open and how to
// narrow it; one that did not finish says only that it did not.
func TestMultipathNotesSayWhatTheRuleLeavesOpen(t *testing.T) {
	notes := func(conf int, stopped string) string {
		tr := &route.Trace{Schema: route.TraceSchema, Target: "10.77.4.2", Addr: "10.77.4.2",
			Multipath: &route.Multipath{Confidence: conf, FlowField: "udp-dport", Stopped: stopped}}
		return strings.Join(multipathNotes(tr), "\n")
	}
	if n := notes(95, "rule"); !strings.Contains(n, "would have shown with 95% probability") || !strings.Contains(n, "--confidence 99") {
		t.Errorf("95 %%, stopped by the rule:\n%s", n)
	}
	if n := notes(99, "rule"); !strings.Contains(n, "with 99% probability") || strings.Contains(n, "--confidence 99") {
		t.Errorf("99 %%, stopped by the rule: no advice to raise it to 99:\n%s", n)
	}
	if n := notes(95, "max-probes"); strings.Contains(n, "probability") || !strings.Contains(n, "did not finish") {
		t.Errorf("stopped at --max-probes:\n%s", n)
	}
}

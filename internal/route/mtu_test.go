package route

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/linecheck/linecheck/probe"
)

// A search that drops 1500 → 1400 at TTL 3 (named by TTL 2's router) and
// 1400 → 1280 at TTL 4 by trying sizes, with TTL 5 silent at any size:
// each hop gets its size, the drops are listed once each, a silent TTL has
// none.
func TestAddMTUListsEachDropOnce(t *testing.T) {
	r2 := netip.MustParseAddr("10.77.1.2")
	run := &probe.MTURun{Start: 1500, Cached: 1400, PathMTU: 1280, Hops: []probe.MTUHop{
		{TTL: 1, MTU: 1500}, {TTL: 2, MTU: 1500}, {TTL: 3, MTU: 1400, ReportedBy: r2}, {TTL: 4, MTU: 1280, Probed: true},
		{TTL: 5}, {TTL: 6, MTU: 1280, Dest: true},
	}}
	tr := &Trace{}
	for ttl := 1; ttl <= 6; ttl++ {
		tr.Hops = append(tr.Hops, Hop{TTL: ttl})
	}
	AddMTU(tr, run)
	var got []int
	for _, h := range tr.Hops {
		got = append(got, h.MTU)
	}
	if want := []int{1500, 1500, 1400, 1280, 0, 1280}; !reflect.DeepEqual(got, want) {
		t.Errorf("hop MTUs %v, want %v", got, want)
	}
	want := &PathMTU{PathMTU: 1280, Start: 1500, Cached: 1400, Drops: []MTUDrop{
		{TTL: 3, MTU: 1400, ReportedBy: "10.77.1.2"}, {TTL: 4, MTU: 1280, Probed: true}}}
	if !reflect.DeepEqual(tr.MTU, want) {
		t.Errorf("mtu %+v, want %+v", tr.MTU, want)
	}
}

// Two flows over two ECMP branches, one of them at 1400 from TTL 3: the
// document's figures and the mtu column are flow 0's, and each flow lists
// its own source port, path MTU and drops. One flow lists no flows.
func TestAddMTUFlowsListsEachFlow(t *testing.T) {
	rb := netip.MustParseAddr("10.77.100.2")
	wide := &probe.MTURun{Start: 1500, PathMTU: 1500, SourcePort: 40000, Hops: []probe.MTUHop{
		{TTL: 1, MTU: 1500}, {TTL: 2, MTU: 1500}, {TTL: 3, MTU: 1500, Dest: true}}}
	narrow := &probe.MTURun{Start: 1500, PathMTU: 1400, SourcePort: 40001, Hops: []probe.MTUHop{
		{TTL: 1, MTU: 1500}, {TTL: 2, MTU: 1500}, {TTL: 3, MTU: 1400, ReportedBy: rb, Dest: true}}}
	doc := func() *Trace { return &Trace{Hops: []Hop{{TTL: 1}, {TTL: 2}, {TTL: 3}}} }
	tr := doc()
	AddMTUFlows(tr, []*probe.MTURun{wide, narrow})
	want := &PathMTU{PathMTU: 1500, Start: 1500, Drops: []MTUDrop{}, Flows: []MTUFlow{
		{Flow: 0, SourcePort: 40000, PathMTU: 1500, Drops: []MTUDrop{}},
		{Flow: 1, SourcePort: 40001, PathMTU: 1400, Drops: []MTUDrop{{TTL: 3, MTU: 1400, ReportedBy: "10.77.100.2"}}},
	}}
	if !reflect.DeepEqual(tr.MTU, want) {
		t.Errorf("mtu %+v, want %+v", tr.MTU, want)
	}
	if tr.Hops[2].MTU != 1500 {
		t.Errorf("hop 3 mtu_bytes %d, want flow 0's 1500", tr.Hops[2].MTU)
	}
	tr = doc()
	AddMTUFlows(tr, []*probe.MTURun{narrow})
	if tr.MTU.Flows != nil || tr.MTU.PathMTU != 1400 {
		t.Errorf("one flow: mtu %+v, want flow 0's figures and no flows", tr.MTU)
	}
}

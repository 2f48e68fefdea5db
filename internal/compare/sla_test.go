package compare

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

func ptr(x float64) *float64 { return &x }

var testSLA = candidates.SLA{RTTP95ms: ptr(60), Loss: ptr(0.005), JitterMs: ptr(5), LineClasses: []string{"cn2-gia", "cu-9929", "cmin2"}, MaxStretch: ptr(2.0)}

func checkByName(v verdict.Verdict, name string) (verdict.Check, bool) {
	for _, c := range v.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return verdict.Check{}, false
}

// mtuProber is a fakeProber that also answers path MTU searches.
type mtuProber struct {
	fakeProber
	asked []netip.Addr
}

func (p *mtuProber) PathMTU(_ context.Context, addr netip.Addr, _ probe.MTUConfig) (*probe.MTURun, error) {
	p.asked = append(p.asked, addr)
	return &probe.MTURun{Addr: addr, Start: 1500, PathMTU: 1400, Hops: []probe.MTUHop{{TTL: 1, MTU: 1400, Dest: true}}}, nil
}

// With sla.min_path_mtu a live run searches the path MTU after the forward
// trace, toward the traced address, and the route quality carries it;
// without it nothing is searched.
func TestLiveRunSearchesThePathMTUWhenTheSLAAsks(t *testing.T) {
	c := &candidates.Candidate{Name: "lo", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}
	for _, want := range []bool{false, true} {
		p := &mtuProber{}
		opt := Options{TraceCycles: 1, Timeout: time.Second, Prober: p, PathMTU: want}
		opt.defaults()
		m := &verdict.Measurement{}
		if err := liveRoutes(context.Background(), c, m, opt); err != nil {
			t.Fatal(err)
		}
		if m.Forward == nil {
			t.Fatal("no forward trace")
		}
		got := m.Forward.MTU != nil && m.Forward.MTU.PathMTU == 1400 && len(p.asked) == 1 && p.asked[0].String() == "127.0.0.1"
		if got != want || (!want && (m.Forward.MTU != nil || len(p.asked) != 0)) {
			t.Errorf("PathMTU %v: asked %v, forward mtu %+v", want, p.asked, m.Forward.MTU)
		}
	}
}

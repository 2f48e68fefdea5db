package verdict

import (
	"testing"

	"github.com/linecheck/linecheck/internal/route"
)

// With several ping vantages on one carrier, the users get the nearest
// one's figures (Shenzhen users: Guangzhou, ~105 km, not Shanghai, ~1200
// km; Shanghai users: the Shanghai one, same city); a vantage that sent no
// probe (a failed run) and one on another carrier are passed over.
func TestCarrierPingsTakeTheNearestVantage(t *testing.T) {
	v := func(city, carrier string) *route.Vantage {
		return &route.Vantage{Platform: "ripe-atlas", ID: city, City: city, UserCarrier: carrier}
	}
	pv := []PingVantage{
		{Vantage: v("Shanghai", "telecom"), Result: TargetResult{Sent: 10, Recv: 10}},
		{Vantage: v("Guangzhou", "telecom"), Result: TargetResult{Sent: 8, Recv: 8}},
		{Vantage: v("Shenzhen", "telecom"), Result: TargetResult{}},
		{Vantage: v("Shenzhen", "unicom"), Result: TargetResult{Sent: 5, Recv: 5}},
	}
	routes := []route.UserRoute{{Carrier: "telecom", City: "Shenzhen"}, {Carrier: "telecom", City: "Shanghai"}, {Carrier: "mobile", City: "Shenzhen"}}
	carrierPings(routes, pv)
	for i, want := range []int{8, 10, -1} {
		p := routes[i].Ping
		switch {
		case want < 0 && p != nil:
			t.Errorf("route %d: %+v, want none", i, p)
		case want >= 0 && (p == nil || p.Sent != want):
			t.Errorf("route %d: %+v, want the vantage that sent %d", i, p, want)
		}
	}
}

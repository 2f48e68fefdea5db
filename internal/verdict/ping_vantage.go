package verdict

import "github.com/linecheck/linecheck/internal/route"

// PingVantage is one vantage of a ping result file (RIPE Atlas, Globalping)
// and its probes' figures toward the candidate's target it pinged.
type PingVantage struct {
	Vantage *route.Vantage
	Result  TargetResult
}

// carrierPings gives each user route the figures of the ping vantage on
// its carrier nearest to its users (route.NearestVantageOf, the rule of the
// forward traces); a route whose carrier has no vantage keeps Ping nil. The
// vantages are annotated (Evaluate).
func carrierPings(routes []route.UserRoute, pv []PingVantage) {
	if len(pv) == 0 {
		return
	}
	vs := make([]*route.Vantage, len(pv))
	for i := range pv {
		if pv[i].Result.Sent > 0 {
			vs[i] = pv[i].Vantage
		}
	}
	for i := range routes {
		k := route.NearestVantageOf(vs, routes[i].Carrier, routes[i].City)
		if k < 0 {
			continue
		}
		r := pv[k].Result
		p := &route.CarrierPing{Vantage: pv[k].Vantage.Label(), Sent: r.Sent}
		loss := r.Loss
		p.Loss = &loss
		if r.Recv > 0 {
			p50, p95 := r.RTT.P50, r.RTT.P95
			p.RTTP50Ms, p.RTTP95Ms = &p50, &p95
		}
		routes[i].Ping = p
	}
}

package report

import (
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
)

// carrierPingHeaders are the three-network table's columns of the ping
// vantage on each carrier (route.UserRoute.Ping).
var carrierPingHeaders = []string{"ping p50", "ping p95", "ping loss", "ping vantage"}

// hasCarrierPing tells whether a ping vantage measured any candidate for
// some user carrier.
func hasCarrierPing(r *compare.Result) bool {
	for _, e := range r.Candidates {
		for _, c := range e.Route.Carriers {
			if c.Ping != nil {
				return true
			}
		}
	}
	return false
}

// carrierPingCells are the cells of carrierPingHeaders: "-" for a carrier
// without a vantage and for a figure without data.
func carrierPingCells(p *route.CarrierPing) []string {
	if p == nil {
		return []string{"-", "-", "-", "-"}
	}
	ms := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmtMs1(*x)
	}
	return []string{ms(p.RTTP50Ms), ms(p.RTTP95Ms), optLossText(p.Loss), p.Vantage}
}

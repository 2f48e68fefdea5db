package report

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The three-network table gains the ping vantage's columns when a carrier
// has one, "-" for a carrier without; without any vantage it keeps its nine
// columns (the bundled three-network report is unchanged).
func TestCarriersTablePingColumns(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	ev := &verdict.Evaluation{Name: "us"}
	ev.Route.Carriers = []route.UserRoute{
		{Carrier: "telecom", City: "Shanghai", Ping: &route.CarrierPing{Vantage: "globalping result 1", Sent: 6, RTTP50Ms: f(178.9), RTTP95Ms: f(250.6), Loss: f(0.25)}},
		{Carrier: "mobile", City: "Guangzhou"},
	}
	r := &compare.Result{Candidates: []*verdict.Evaluation{ev}}
	tb, ok := carriersTable(r, Format("text"))
	if !ok || len(tb.Headers) != 13 || tb.Headers[12] != "ping vantage" {
		t.Fatalf("headers %q", tb.Headers)
	}
	if got := strings.Join(tb.Rows[0][9:], " "); got != "178.9 250.6 25.0% globalping result 1" {
		t.Errorf("telecom ping cells %q", got)
	}
	if got := strings.Join(tb.Rows[1][9:], " "); got != "- - - -" {
		t.Errorf("mobile ping cells %q", got)
	}
	ev.Route.Carriers[0].Ping = nil
	if tb, _ := carriersTable(r, Format("text")); len(tb.Headers) != 9 || len(tb.Rows[0]) != 9 {
		t.Errorf("no vantage: headers %q", tb.Headers)
	}
}

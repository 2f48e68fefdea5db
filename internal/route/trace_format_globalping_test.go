package route

import (
	"slices"
	"strings"
	"testing"
)

// Globalping measurements read as the oracle reads them; the vantages and
// the figures below are read off testdata/vantage/globalping-*.json.
func TestReadGlobalping(t *testing.T) {
	ts := checkAgainstOracle(t, "testdata/vantage/globalping-mtr-two.json")
	if len(ts) != 2 {
		t.Fatalf("%d traces, want 2", len(ts))
	}
	v := ts[0].Vantage
	if v.Platform != "globalping" || v.ID != "1" || v.Measurement != "TestMtr0000000001" || v.ASN != 4134 || v.ASSource != VantageSourceFormat ||
		v.City != "Shanghai" || v.Country != "CN" || v.Network != "China Telecom" {
		t.Errorf("vantage 1 %+v", v)
	}
	if v := ts[1].Vantage; v.ID != "2" || v.ASN != 4837 || v.City != "Beijing" {
		t.Errorf("vantage 2 %+v", v)
	}
	a := ts[0]
	if a.Target != "130.94.10.1" || a.Addr != "130.94.10.1" || !a.Reached || a.Source != "globalping" {
		t.Errorf("trace 1 %+v", a)
	}
	// hop 2: no address, stats.total 3: all lost. hop 3: 2 of 3.
	if h := a.Hops[1]; h.Sent != 3 || h.Loss != 1 || len(h.Responders) != 0 {
		t.Errorf("hop 2 %+v", h)
	}
	if h := a.Hops[2]; h.Sent != 3 || math3(h.Loss) != 0.333 || h.Responders[0].ASN != 4134 || h.Responders[0].RTT.Avg != 31 {
		t.Errorf("hop 3 %+v", h)
	}
	Annotate(a, nil)
	if a.Vantage.Carrier != "ChinaNet" {
		t.Errorf("carrier of AS4134: %q", a.Vantage.Carrier)
	}

	tr := checkAgainstOracle(t, "testdata/vantage/globalping-traceroute.json")[0]
	// Two timings at the hops that answered: two probes per hop, so a null
	// hop and one without an address lost both, and hop 4 one of two.
	if tr.Hops[2].Sent != 2 || tr.Hops[2].Loss != 1 || tr.Hops[3].Loss != 0.5 || !tr.Reached || tr.Target != "example.invalid" {
		t.Errorf("traceroute %+v", tr.Hops)
	}
	if !slices.Contains(tr.Hops[4].Flags, FlagDestination) {
		t.Errorf("last hop flags %v", tr.Hops[4].Flags)
	}
}

// A malformed measurement names the file, the result and the field.
func TestReadGlobalpingErrors(t *testing.T) {
	const p = `"probe":{"asn":4134,"city":"Shanghai"}`
	tests := []struct{ name, in, want string }{
		{"ping", `{"type":"ping","results":[]}`, `f.json: Globalping measurement: type: "ping" is neither traceroute nor mtr`},
		{"rtt text", `{"type":"traceroute","results":[{` + p + `,"result":{"hops":[{"resolvedAddress":"101.80.0.1","timings":[{"rtt":"1"}]}]}}]}`, `f.json: Globalping measurement: line 1:`},
		{"mtr without stats", `{"type":"mtr","results":[{` + p + `,"result":{"hops":[]}},{` + p + `,"result":{"hops":[{"resolvedAddress":"101.80.0.1","timings":[]}]}}]}`, `f.json: Globalping results[1].result.hops[0].stats.total: missing`},
		{"timings beyond total", `{"type":"mtr","results":[{` + p + `,"result":{"hops":[{"resolvedAddress":"101.80.0.1","timings":[{"rtt":1},{"rtt":2}],"stats":{"total":1}}]}}]}`, `results[0].result.hops[0].timings: 2 replies to 1 probes`},
		{"bad address", `{"type":"traceroute","results":[{` + p + `,"result":{"hops":[{"resolvedAddress":"gw","timings":[]}]}}]}`, `results[0].result.hops[0].resolvedAddress: "gw" is not an IP address`},
		{"no result", `{"type":"traceroute","results":[{` + p + `}]}`, `results[0].result: missing`},
		{"protocol", `{"type":"mtr","measurementOptions":{"protocol":"SCTP"},"results":[]}`, `measurementOptions.protocol: "SCTP"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTraces(strings.NewReader(tc.in), "f.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

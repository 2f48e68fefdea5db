package route

import (
	"strings"
	"testing"
)

// NextTrace's --json read as the oracle reads it: RTTs in nanoseconds,
// the TTL from the attempts.
func TestReadNextTrace(t *testing.T) {
	tr := checkAgainstOracle(t, "testdata/vantage/nexttrace.json")[0]
	if tr.Source != "nexttrace" || tr.Target != "130.94.10.1" || !tr.Reached || tr.Vantage == nil || tr.Vantage.Platform != "nexttrace" {
		t.Errorf("trace %+v", tr)
	}
	// TTL 3: 30125000 and 29875000 ns, one attempt failed.
	if h := tr.Hops[2]; h.Sent != 3 || math3(h.Loss) != 0.333 || h.Responders[0].RTT.Avg != 30 || h.Responders[0].ASN != 4134 {
		t.Errorf("hop 3 %+v", h)
	}
	// TTL 4: two addresses (ECMP), so no one AS is given to the hop.
	if h := tr.Hops[3]; len(h.Responders) != 2 || h.Responders[0].Recv != 2 || h.Responders[0].ASN != 0 {
		t.Errorf("hop 4 %+v", h)
	}
}

func TestReadNextTraceErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no TTL", `{"Hops":[[{"Success":true,"Address":{"IP":"1.0.0.1"},"RTT":1}]]}`, `f.json: NextTrace --json: Hops[0][0].TTL: missing`},
		{"TTL down", `{"Hops":[[{"TTL":2}],[{"TTL":1}]]}`, `Hops[1][0].TTL: 1 is not a TTL above 2`},
		{"mixed TTLs", `{"Hops":[[{"TTL":1},{"TTL":2}]]}`, `Hops[0][1].TTL: 2 in the group of TTL 1`},
		{"bad IP", `{"Hops":[[{"TTL":1,"Success":true,"Address":{"IP":"x"},"RTT":5}]]}`, `Hops[0][0].Address.IP: "x" is not an IP address`},
		{"RTT text", `{"Hops":[[{"TTL":1,"RTT":"5ms"}]]}`, `f.json: NextTrace --json: line 1:`},
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

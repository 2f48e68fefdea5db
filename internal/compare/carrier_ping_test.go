package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// Each user carrier gets the figures of the ping vantage on its carrier
// (internal/pingfile/testdata/globalping-ping.json, by hand: AS4134
// Shanghai answered 178.4, 179.1, 250.6, 178.9 of 6 probes, so nearest-rank
// p50 = 2nd of 4 sorted = 178.9, p95 = 4th = 250.6, loss 2/6; AS4837
// Beijing answered 160.2, 161.0, 160.7, 159.9, 160.4, 160.1 of 6 (the 7th
// timing is a duplicate), so p50 = 3rd of 6 = 160.2, p95 = 6th = 161.0,
// loss 0; the AS9808 Guangzhou run failed: no probe, so mobile has none).
// The target's own figures still pool every vantage: 12 probes, 2 lost.
func TestCarrierTableHasEachCarriersPingVantage(t *testing.T) {
	ping, err := filepath.Abs("../pingfile/testdata/globalping-ping.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `users: [{city: Shanghai, carrier: telecom}, {city: Tianjin, carrier: unicom}, {city: Guangzhou, carrier: mobile}, {city: Shanghai, carrier: other}]
candidates:
  - name: us
    targets: [{addr: 130.94.10.1, protocol: icmp}]
    recorded: {probes: PING}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(yml, "PING", ping, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &f.Candidates[0]
	m, err := Replay(c)
	if err != nil {
		t.Fatal(err)
	}
	e := verdict.Evaluate(f, c, m, nil)
	if tr := e.Targets[0]; tr.Sent != 12 || tr.Recv != 10 {
		t.Errorf("pooled target: sent %d recv %d, want 12, 10", tr.Sent, tr.Recv)
	}
	want := []struct {
		carrier, vantage string
		sent             int
		p50, p95, loss   float64
	}{
		{"telecom", "Shanghai", 6, 178.9, 250.6, 2.0 / 6},
		{"unicom", "Beijing", 6, 160.2, 161.0, 0},
		{"mobile", "", 0, 0, 0, 0},
		{"other", "", 0, 0, 0, 0},
	}
	cs := e.Route.Carriers
	if len(cs) != len(want) {
		t.Fatalf("carriers %+v", cs)
	}
	for i, w := range want {
		p := cs[i].Ping
		if w.vantage == "" {
			if p != nil {
				t.Errorf("%s: no vantage of the carrier pinged, got %+v", w.carrier, p)
			}
			continue
		}
		if p == nil || !strings.Contains(p.Vantage, w.vantage) || p.Sent != w.sent || p.RTTP50Ms == nil || p.RTTP95Ms == nil || p.Loss == nil {
			t.Fatalf("%s: ping %+v", w.carrier, p)
		}
		if *p.RTTP50Ms != w.p50 || *p.RTTP95Ms != w.p95 || abs(*p.Loss-w.loss) > 1e-9 {
			t.Errorf("%s: p50 %v p95 %v loss %v, want %v %v %v", w.carrier, *p.RTTP50Ms, *p.RTTP95Ms, *p.Loss, w.p50, w.p95, w.loss)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

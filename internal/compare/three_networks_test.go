package compare

import (
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The bundled three-network scenario loads and gives the per-carrier view the
// sample backtraces were designed with (samples/rec/README.md).
func TestBundledThreeNetworksScenario(t *testing.T) {
	f, err := candidates.Load("../../samples/three-networks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{
		"hk-cn2-gia": {"cn2-gia", "cn2-gia", "cmi"},
		"hk-bgp":     {"chinanet-163", "cu-4837", "cmi"},
	}
	for i := range f.Candidates {
		c := &f.Candidates[i]
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		m, err := Replay(c)
		if err != nil {
			t.Fatal(err)
		}
		e := verdict.Evaluate(f, c, m, nil)
		if len(e.Route.Carriers) != 3 {
			t.Fatalf("%s: %+v", c.Name, e.Route.Carriers)
		}
		for j, cr := range e.Route.Carriers {
			if cr.Return != w[j] {
				t.Errorf("%s %s: return %s, want %s", c.Name, cr.Carrier, cr.Return, w[j])
			}
		}
	}
}

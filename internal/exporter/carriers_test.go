package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
)

// The proof in serve: recorded.forward's vantages (three carriers'
// published forward routes, internal/route/testdata/vantage/README.md:
// Shanghai Telecom over CN2 GIA, Linyi Unicom into 9929, Wuxi Mobile over
// CMIN2) are read at load, and linecheck_carrier_line_class_info gives each
// carrier's users that class forward, beside the return class of the
// backtrace sample (GIA toward Telecom and Unicom, CMI toward Mobile), the
// same route.carriers compare shows. Serve read only recorded.return and bw.
func TestServeExportsEachCarriersClassPerDirection(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := filepath.Abs("../route/testdata/vantage/atlas-three-carriers.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `users: [{city: Shanghai, carrier: telecom}, {city: Beijing, carrier: unicom}, {city: Guangzhou, carrier: mobile}]
candidates:
  - name: hk
    targets: [{addr: 127.0.0.1, protocol: icmp}]
    recorded: {forward: FWD, return: REC/hk-cn2-gia-backtrace.json}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(strings.NewReplacer("REC", rec, "FWD", fwd).Replace(yml)), 0o644); err != nil {
		t.Fatal(err)
	}
	conf, err := LoadConfig(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db, err := compare.LoadHopNames("", false, nil) // as serve loads them: the probes' AS
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil)
	e.SetHopNames(db)
	e.SetConfig(conf, time.Now())
	want := []struct{ carrier, city, dir, class string }{
		{"telecom", "Shanghai", "forward", "cn2-gia"}, {"telecom", "Shanghai", "return", "cn2-gia"},
		{"unicom", "Beijing", "forward", "cu-9929"}, {"unicom", "Beijing", "return", "cn2-gia"},
		{"mobile", "Guangzhou", "forward", "cmin2"}, {"mobile", "Guangzhou", "return", "cmi"},
	}
	for _, w := range want {
		labels := map[string]string{"candidate": "hk", "carrier": w.carrier, "city": w.city, "direction": w.dir}
		m := metric(t, e, "linecheck_carrier_line_class_info", labels)
		if m == nil || m.GetGauge().GetValue() != 1 {
			t.Errorf("%+v: no series", w)
			continue
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == "line_class" && l.GetValue() != w.class {
				t.Errorf("%+v: line_class %q", w, l.GetValue())
			}
		}
	}
	// The series are compare's route.carriers, as /compare.json gives them.
	r := e.Report(time.Now())
	if len(r.Candidates) != 1 || len(r.Candidates[0].Route.Carriers) != 3 {
		t.Fatalf("/compare: %d candidates, want hk with 3 carriers", len(r.Candidates))
	}
	for _, c := range r.Candidates {
		for i, u := range c.Route.Carriers {
			if u.Forward != want[2*i].class || u.Return != want[2*i+1].class {
				t.Errorf("/compare carrier %d: %+v", i, u)
			}
		}
	}
}

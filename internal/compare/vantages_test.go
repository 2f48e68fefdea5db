package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// recorded.forward may be a file of several vantages (here a Globalping
// measurement from AS4134 Shanghai and AS4837 Beijing): each fills the
// forward class of its carrier's users, and line_classes_by_carrier judges
// it. The Shanghai probe crosses 202.97.12.1 (ChinaNet backbone: chinanet-163),
// the Beijing probe 219.158.3.1 (Unicom 4837 backbone: cu-4837); there is no
// mobile vantage. The return classes are the backtrace sample's (see
// TestCarrierViewFromABacktraceRecording).
func TestCarrierForwardFromAMultiVantageRecording(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := filepath.Abs("../route/testdata/vantage/globalping-mtr-two.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `vantage: {city: Hangzhou}
users: [{city: Shanghai, carrier: telecom}, {city: Tianjin, carrier: unicom}, {city: Shenzhen, carrier: mobile}]
sla: {line_classes_by_carrier: {telecom: [cn2-gia], unicom: [cu-9929, cn2-gia], mobile: [cmin2, cmi]}}
candidates:
  - name: hk
    targets: [{addr: 192.0.2.10, protocol: icmp}]
    recorded: {forward: FWD, return: REC/hk-cn2-gia-backtrace.json, probes: REC/hk-cn2-gia-ping.ndjson}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(strings.NewReplacer("REC", rec, "FWD", fwd).Replace(yml)), 0o644)
	f, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &f.Candidates[0]
	m, err := Replay(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ForwardVantages) != 2 || !strings.Contains(strings.Join(m.Warnings, "\n"), "recorded.forward holds 2 vantages (1, 2)") {
		t.Errorf("vantages %d, warnings %q", len(m.ForwardVantages), m.Warnings)
	}
	e := verdict.Evaluate(f, c, m, nil)
	want := []struct{ carrier, fwd, ret string }{
		{"telecom", "chinanet-163", "cn2-gia"},
		{"unicom", "cu-4837", "cn2-gia"},
		{"mobile", "", "cmi"},
	}
	cs := e.Route.Carriers
	if len(cs) != len(want) {
		t.Fatalf("carriers %+v", cs)
	}
	for i, w := range want {
		if c := cs[i]; c.Carrier != w.carrier || c.Forward != w.fwd || c.Return != w.ret {
			t.Errorf("carrier %d: %+v, want %+v", i, c, w)
		}
	}
	checks := map[string]verdict.Check{}
	for _, ch := range e.SLA.Checks {
		checks[ch.Name] = ch
	}
	if ch := checks["line_class:unicom"]; ch.Pass || ch.Measured != "forward cu-4837, return cn2-gia" {
		t.Errorf("unicom check %+v", ch)
	}
	if ch := checks["line_class:mobile"]; !ch.Pass {
		t.Errorf("mobile check %+v", ch)
	}
}

// The proof: a multi-vantage file built from three carriers'
// published forward routes (internal/route/testdata/vantage/README.md:
// Shanghai Telecom → Sharon HK over CN2 GIA, Linyi Unicom into 9929, Wuxi
// Mobile → Sharon HK over CMIN2) gives each carrier's users the class its
// route has, beside the return classes of the backtrace sample (GIA toward
// Telecom and Unicom, CMI toward Mobile: samples/rec/README.md).
func TestCarrierForwardFromThreeCarriersPublishedRoutes(t *testing.T) {
	f, c := threeCarriersFile(t)
	m, err := Replay(c)
	if err != nil {
		t.Fatal(err)
	}
	// The probes' AS comes from the bundled IP-to-AS data, as compare
	// loads it (Atlas results carry no AS).
	db, err := LoadHopNames("", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := verdict.Evaluate(f, c, m, db)
	want := []struct{ carrier, fwd, ret string }{
		{"telecom", "cn2-gia", "cn2-gia"},
		{"unicom", "cu-9929", "cn2-gia"},
		{"mobile", "cmin2", "cmi"},
	}
	cs := e.Route.Carriers
	if len(cs) != len(want) {
		t.Fatalf("carriers %+v", cs)
	}
	for i, w := range want {
		if c := cs[i]; c.Carrier != w.carrier || c.Forward != w.fwd || c.Return != w.ret {
			t.Errorf("carrier %d: %+v, want %+v", i, c, w)
		}
	}
}

// threeCarriersFile is a candidates file whose one candidate records the
// three carriers' forward routes (atlas-three-carriers.json) and the
// backtrace sample, for users of each carrier.
func threeCarriersFile(t *testing.T) (*candidates.File, *candidates.Candidate) {
	t.Helper()
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := filepath.Abs("../route/testdata/vantage/atlas-three-carriers.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `vantage: {city: Hangzhou}
users: [{city: Shanghai, carrier: telecom}, {city: Beijing, carrier: unicom}, {city: Guangzhou, carrier: mobile}]
candidates:
  - name: hk
    targets: [{addr: 192.0.2.10, protocol: icmp}]
    recorded: {forward: FWD, return: REC/hk-cn2-gia-backtrace.json, probes: REC/hk-cn2-gia-ping.ndjson}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(strings.NewReplacer("REC", rec, "FWD", fwd).Replace(yml)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, &f.Candidates[0]
}

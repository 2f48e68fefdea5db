package compare

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// A candidate whose recorded.return is a backtrace document: each user is
// matched to the route of their carrier, sla.line_classes_by_carrier is
// checked per carrier in the directions measured. Expected values come from
// the sample backtraces' design (samples/rec/README.md): from hk-cn2-gia,
// cn2-gia toward Telecom, the GIA tri-network hand-off (cn2-gia) toward Unicom,
// CMI toward Mobile; the forward sample from a Shanghai Telecom line is GIA.
func TestCarrierViewFromABacktraceRecording(t *testing.T) {
	rec, err := filepath.Abs("../../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	yml := `vantage: {city: Shanghai, carrier: telecom}
users: [{city: Shanghai, carrier: telecom}, {city: Tianjin, carrier: unicom}, {city: Shenzhen, carrier: mobile}, {city: Chengdu}]
sla: {line_classes_by_carrier: {telecom: [cn2-gia], unicom: [cu-9929, cn2-gia], mobile: [cmin2]}}
candidates:
  - name: hk-cn2-gia
    targets: [{addr: 192.0.2.10, protocol: icmp}]
    recorded: {forward: REC/hk-cn2-gia-forward.json, return: REC/hk-cn2-gia-backtrace.json, probes: REC/hk-cn2-gia-ping.ndjson}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(strings.ReplaceAll(yml, "REC", rec)), 0o644)
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
	cs := e.Route.Carriers
	if len(cs) != 3 {
		t.Fatalf("carriers %+v: want the three users that name a carrier", cs)
	}
	want := []struct{ carrier, fwd, ret, target string }{
		{"telecom", "cn2-gia", "cn2-gia", "sh-telecom"},
		{"unicom", "", "cn2-gia", "bj-unicom"},
		{"mobile", "", "cmi", "gz-mobile"},
	}
	for i, w := range want {
		if c := cs[i]; c.Carrier != w.carrier || c.Forward != w.fwd || c.Return != w.ret || c.ReturnTarget != w.target {
			t.Errorf("carrier %d: %+v, want %+v", i, c, w)
		}
	}
	checks := map[string]verdict.Check{}
	for _, ch := range e.SLA.Checks {
		checks[ch.Name] = ch
	}
	if ch := checks["line_class:telecom"]; !ch.Pass || ch.Measured != "forward cn2-gia, return cn2-gia" {
		t.Errorf("telecom check %+v", ch)
	}
	if ch := checks["line_class:unicom"]; !ch.Pass || !strings.Contains(ch.Note, "return path only") {
		t.Errorf("unicom check %+v", ch)
	}
	if ch := checks["line_class:mobile"]; ch.Pass || ch.Measured != "return cmi" {
		t.Errorf("mobile check %+v", ch)
	}
	if e.SLA.Pass {
		t.Error("the SLA passed with CMI toward Mobile users")
	}
	// The candidate's single return class is the route toward the first user.
	if e.Route.ReturnClass != "cn2-gia" || e.Route.Direction != "both" {
		t.Errorf("route %+v", e.Route)
	}
}

func TestUsersCarrierAndSLAByCarrierAreValidated(t *testing.T) {
	for _, c := range []struct{ yml, want string }{
		{"users: [{city: Shanghai, carrier: cmcc}]\n", `users[0].carrier: "cmcc"`},
		{"sla: {line_classes_by_carrier: {telekom: [cn2-gia]}}\n", `sla.line_classes_by_carrier: "telekom"`},
		{"sla: {line_classes_by_carrier: {mobile: [gold]}}\n", `sla.line_classes_by_carrier.mobile: "gold"`},
		{"sla: {line_classes_by_carrier: {mobile: []}}\n", `sla.line_classes_by_carrier.mobile: empty`},
	} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(path, []byte(c.yml+"candidates:\n  - name: a\n    targets: [{addr: 192.0.2.1, protocol: icmp}]\n"), 0o644)
		_, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yml, err, c.want)
		}
	}
}

// Live, compare traces the forward route only: without recorded.return the
// candidate's warnings say the return path cannot be traced from here and
// point at backtrace; with a backtrace recording the per-carrier view is there.
func TestLiveSaysTheReturnPathNeedsBacktrace(t *testing.T) {
	rec, _ := filepath.Abs("../../samples/rec")
	c := &candidates.Candidate{Name: "lo", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}
	m := &verdict.Measurement{}
	opt := Options{TraceCycles: 1, Timeout: time.Second, Prober: &fakeProber{}}
	opt.defaults()
	if err := liveRoutes(context.Background(), c, m, opt); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(m.Warnings, "; "); !strings.Contains(w, "cannot be traced from here") || !strings.Contains(w, "linecheck backtrace") {
		t.Errorf("warnings %q", w)
	}
	c.Recorded.Return = filepath.Join(rec, "hk-bgp-backtrace.json")
	m = &verdict.Measurement{}
	if err := liveRoutes(context.Background(), c, m, opt); err != nil {
		t.Fatal(err)
	}
	if m.ReturnBacktrace == nil || len(m.ReturnBacktrace.Results) != 3 || m.Forward == nil {
		t.Errorf("measurement %+v", m)
	}
}

package compare

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// Compare over a recorded multipath trace (the diamond2 ECMP lab, traced
// with trace --multipath -U): with a prefix table that makes one branch
// CN2 and the other the ChinaNet backbone, path 1 over r2b is
// chinanet-163 and path 2 over r2 cn2-gia, so line_class fails and names
// path 1 and where it leaves path 2. With both branches CN2 it holds on
// every path.
func TestCompareJudgesLineClassOnEveryRecordedPath(t *testing.T) {
	rec, err := filepath.Abs("testdata/multipath/diamond2-udp.json")
	if err != nil {
		t.Fatal(err)
	}
	offers, _ := filepath.Abs("../../samples/offers.yaml")
	doc := strings.NewReplacer("REC", rec, "OFFERS", offers).Replace(`vantage: {city: Shanghai}
candidates:
  - name: lab-diamond
    region: {city: Hong Kong}
    targets: [{addr: 10.77.4.2, protocol: icmp}]
    recorded: {forward: REC}
    offer: hk-cn2
    multipath: true
offers: OFFERS
traffic: {monthly_gb: 1000, peak_mbps: 100, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: {line_classes: [cn2-gia]}
`)
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	run := func(table string) *verdict.Evaluation {
		t.Helper()
		tbl, err := route.LoadPrefixTable(table)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), f, Options{Offline: true, NoASN: true, PrefixTable: tbl})
		if err != nil {
			t.Fatal(err)
		}
		return r.Candidates[0]
	}

	e := run("testdata/multipath/branches.tsv")
	q := e.Route
	// The route's own class is its weakest path's (route.Annotate).
	if q.LineClass != "chinanet-163" {
		t.Errorf("the route: %s, want chinanet-163 (%+v)", q.LineClass, q.Evidence)
	}
	if len(q.Paths) != 2 || q.Paths[0].LineClass != "chinanet-163" || q.Paths[1].LineClass != "cn2-gia" {
		t.Fatalf("paths %+v", q.Paths)
	}
	if q.Paths[0].Leaves != "enters the ChinaNet backbone at TTL 2 (10.77.100.2)" {
		t.Errorf("path 1 leaves %q", q.Paths[0].Leaves)
	}
	ck, _ := checkByName(e.SLA, verdict.CheckLineClass)
	want := "must hold on every path: forward path 1 of 2 (flows 33434, 33437, 33439, 33442, 33443, 33446) is chinanet-163: enters the ChinaNet backbone at TTL 2 (10.77.100.2)"
	if ck.Pass || e.SLA.Pass || ck.Measured != "chinanet-163" || !strings.Contains(ck.Note, want) {
		t.Errorf("line_class check %+v, want a failure noting %q", ck, want)
	}
	if len(q.PathsSummary) != 1 || !strings.HasPrefix(q.PathsSummary[0], "forward: path 1 of 2 (") {
		t.Errorf("summary %q", q.PathsSummary)
	}

	both := filepath.Join(t.TempDir(), "both.tsv")
	b, _ := os.ReadFile("testdata/multipath/branches.tsv")
	os.WriteFile(both, []byte(strings.Replace(string(b), "10.77.100.0/24\t4134\tChinaNet\tchinanet", "10.77.100.0/24\t4809\tCN2\tcn2", 1)), 0o644)
	e = run(both)
	ck, _ = checkByName(e.SLA, verdict.CheckLineClass)
	if !ck.Pass || !strings.HasPrefix(ck.Note, "holds on every path (2); line class validated on the forward path only") {
		t.Errorf("both branches CN2: %+v", ck)
	}
	if s := e.Route.PathsSummary; len(s) != 1 || s[0] != "forward: cn2-gia on every path (2 paths)" {
		t.Errorf("summary %q", s)
	}
}

// multipathProber is fakeProber that also answers multipath discoveries
// with the recorded diamond2 document, noting the config it was asked for.
type multipathProber struct {
	fakeProber
	cfgs []probe.MultipathConfig
}

func (p *multipathProber) Multipath(ctx context.Context, addr string, cfg probe.MultipathConfig) (*route.Trace, error) {
	p.cfgs = append(p.cfgs, cfg)
	return route.ReadTraceFile("testdata/multipath/diamond2-udp.json")
}

// Live, a candidate with multipath: true is traced with multipath
// discovery (UDP flows by destination port toward an ICMP target, the
// trace cycles as per-path cycles) instead of one trace; a prober that
// cannot makes it a warning and one trace.
func TestLiveMultipathCandidateRunsTheDiscovery(t *testing.T) {
	c := &candidates.Candidate{Name: "lab", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}, Multipath: true}
	mp := &multipathProber{}
	opt := Options{TraceCycles: 4, Timeout: time.Second, Prober: mp}
	opt.defaults()
	m := &verdict.Measurement{}
	if err := liveRoutes(context.Background(), c, m, opt); err != nil {
		t.Fatal(err)
	}
	if len(mp.cfgs) != 1 || mp.runs != 0 {
		t.Fatalf("multipath runs %d, plain traces %d", len(mp.cfgs), mp.runs)
	}
	cfg := mp.cfgs[0]
	if cfg.Proto != probe.UDP || !cfg.FlowDstPort || cfg.Port != 33434 || cfg.Confidence != 95 || cfg.MaxProbes != 3000 || cfg.PathCycles != 4 {
		t.Errorf("config %+v", cfg)
	}
	if m.Forward == nil || len(m.Forward.Paths) != 2 || m.Forward.Source != "live" {
		t.Fatalf("forward %+v", m.Forward)
	}
	tcp := &candidates.Candidate{Name: "lab", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "tcp", Port: 443}}, Multipath: true}
	if err := liveRoutes(context.Background(), tcp, &verdict.Measurement{}, opt); err != nil {
		t.Fatal(err)
	}
	if cfg := mp.cfgs[1]; cfg.Proto != probe.TCP || cfg.Port != 443 || cfg.FlowDstPort {
		t.Errorf("tcp config %+v", cfg)
	}

	opt.Prober = &fakeProber{}
	m = &verdict.Measurement{}
	if err := liveRoutes(context.Background(), c, m, opt); err != nil {
		t.Fatal(err)
	}
	if m.Forward == nil || len(m.Forward.Paths) != 0 || !strings.Contains(strings.Join(m.Warnings, "; "), "cannot run a multipath discovery") {
		t.Errorf("without multipath: forward %+v, warnings %q", m.Forward, m.Warnings)
	}
}

// multipath: is a boolean; anything else is an error naming the line.
func TestMultipathKey(t *testing.T) {
	base := `candidates:
  - name: a
    targets: [{addr: 127.0.0.1}]
    multipath: VALUE
`
	f, err := candidates.ParseWith([]byte(strings.Replace(base, "VALUE", "true", 1)), "c.yaml", candidates.LoadOptions{TargetsOnly: true})
	if err != nil || !f.Candidates[0].Multipath {
		t.Fatalf("multipath: true: %v %+v", err, f)
	}
	_, err = candidates.ParseWith([]byte(strings.Replace(base, "VALUE", "sometimes", 1)), "c.yaml", candidates.LoadOptions{TargetsOnly: true})
	if err == nil || !strings.Contains(err.Error(), "c.yaml:4") {
		t.Errorf("multipath: sometimes: %v", err)
	}
}

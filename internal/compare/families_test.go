package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// dualStackProber answers without sending anything: every probe of an IPv4
// target in 30 ms and of an IPv6 one in 45 ms, and traces a CN2 GIA route
// toward an IPv4 address and an ordinary 163 route toward an IPv6 one (the
// common dual-stack case of issue 32). The IPv4 hops are published CN2
// routers (route/testdata/public-routes.txt: 59.43.16.165, 59.43.183.54);
// the IPv6 ones lie in real prefixes of the bundled AS data (ChinaNet
// AS4134 240e::/16, HE AS6939 2001:470::/32; route/testdata/ipv6-routes.txt).
type dualStackProber struct{ traced []string }

func (p *dualStackProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, _ func(probe.Record)) ([]probe.SweepResult, error) {
	out := make([]probe.SweepResult, len(ts))
	for k, t := range ts {
		rtt := 30.0
		if t.Addr.Is6() {
			rtt = 45
		}
		for i := 0; i < cfg.Count; i++ {
			out[k].Sent++
			out[k].Recv++
			out[k].RTTs = append(out[k].RTTs, rtt+float64(i%3))
		}
	}
	return out, nil
}

func (p *dualStackProber) Trace(_ context.Context, addr string, cfg probe.TraceConfig, on func(*route.Trace)) error {
	p.traced = append(p.traced, addr)
	hops := []string{"192.168.1.1", "59.43.16.165", "59.43.183.54", addr}
	if strings.Contains(addr, ":") {
		hops = []string{"240e:0:10::1", "240e:0:20::1", "240e:0:30::1", "2001:470:0:1::1", addr}
	}
	tr := &route.Trace{Schema: route.TraceSchema, Target: addr, Addr: addr, Protocol: cfg.Proto, Reached: true}
	for i, h := range hops {
		tr.Hops = append(tr.Hops, route.Hop{TTL: i + 1, Sent: cfg.Cycles, Responders: []route.Responder{{Addr: h, Recv: cfg.Cycles}}})
	}
	on(tr)
	return nil
}

const dualOffers = `offers:
  - name: hk
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 100, price: "1000"}
`

// runDual runs a live compare of one dual-stack candidate (127.0.0.1 and
// ::1) under the SLA given, through the fake prober.
func runDual(t *testing.T, sla string, targets string) (*compare.Result, *dualStackProber) {
	t.Helper()
	dir := t.TempDir()
	c := `vantage: {city: Shanghai}
candidates:
  - name: dual
    region: {city: Hong Kong}
    targets: ` + targets + `
    offer: hk
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
sla: ` + sla + "\n"
	for name, body := range map[string]string{"c.yaml": c, "offers.yaml": dualOffers} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := candidates.LoadWith(filepath.Join(dir, "c.yaml"), candidates.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := &dualStackProber{}
	r, err := compare.Run(t.Context(), f, compare.Options{Prober: p, Count: 10, Interval: time.Millisecond, Timeout: time.Second, TraceCycles: 2,
		Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return r, p
}

const dualTargets = `[{addr: 127.0.0.1, protocol: icmp}, {addr: "::1", protocol: icmp}]`

// A dual-stack candidate is traced and judged per family: IPv4 rides CN2
// GIA, IPv6 the ordinary 163 line. The report shows both side by side in
// every format, the candidate's route is the worse family's, and with
// sla.families [ipv4, ipv6] and line_classes [cn2-gia] it fails, naming
// ipv6 (IPv4 passes on its own).
func TestDualStackCandidateJudgedPerFamily(t *testing.T) {
	r, p := runDual(t, `{line_classes: [cn2-gia], rtt_p95_ms: 100, families: [ipv4, ipv6]}`, dualTargets)
	if len(p.traced) != 2 || p.traced[0] != "127.0.0.1" || p.traced[1] != "::1" {
		t.Fatalf("traced %v, want 127.0.0.1 then ::1 (one route target per family)", p.traced)
	}
	e := r.Candidates[0]
	if len(e.Families) != 2 {
		t.Fatalf("families %+v, want ipv4 and ipv6", e.Families)
	}
	v4, v6 := e.Families[0], e.Families[1]
	if v4.Family != "ipv4" || v4.Route.LineClass != route.LineCN2GIA || v6.Family != "ipv6" || v6.Route.LineClass != route.LineChinaNet163 {
		t.Fatalf("families %s %s, %s %s; want ipv4 cn2-gia, ipv6 chinanet-163", v4.Family, v4.Route.LineClass, v6.Family, v6.Route.LineClass)
	}
	// Each family's figures are its own targets' (30–32 ms, 45–47 ms:
	// nearest-rank p95 of 10 probes is the 10th, the largest).
	if v4.Route.RTT.P95 != 32 || v6.Route.RTT.P95 != 47 || v4.Route.Sent != 10 || v6.Route.Sent != 10 {
		t.Errorf("p95 %v / %v, sent %d / %d; want 32 / 47, 10 / 10", v4.Route.RTT.P95, v6.Route.RTT.P95, v4.Route.Sent, v6.Route.Sent)
	}
	if e.Route.LineClass != route.LineChinaNet163 || e.Route.RTT.P95 != 47 {
		t.Errorf("route %s p95 %v, want the worse family's class (chinanet-163) and the worst p95 (47)", e.Route.LineClass, e.Route.RTT.P95)
	}
	if v4.SLA == nil || !v4.SLA.Pass || v6.SLA == nil || v6.SLA.Pass || e.Passes() {
		t.Fatalf("ipv4 sla %+v, ipv6 sla %+v, candidate passes %v; want ipv4 pass, ipv6 and the candidate fail", v4.SLA, v6.SLA, e.Passes())
	}
	if fails := strings.Join(verdict.Failures(e.SLA.Checks), ", "); r.Recommended != "" || fails != "line_class on ipv6" {
		t.Errorf("failures %q (recommended %q): want no recommendation and line_class on ipv6 alone", fails, r.Recommended)
	}

	doc := report.CompareReport{Result: r}
	for _, f := range []report.Format{report.FormatTable, report.FormatMarkdown, report.FormatHTML} {
		var b bytes.Buffer
		if err := report.Render(&b, doc, f, report.Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"Address families", "ipv4", "ipv6", "cn2-gia", "chinanet-163", "line_class on ipv6"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q", f, want)
			}
		}
		if f == report.FormatTable {
			fams := out[strings.Index(out, "Address families"):]
			row6 := lineWith(fams, "dual", "ipv6", "chinanet-163")
			row4 := lineWith(fams, "dual", "ipv4", "cn2-gia")
			if !strings.Contains(row6, "FAIL") || !strings.Contains(row6, "47.0") || !strings.Contains(row4, "pass") || !strings.Contains(row4, "32.0") {
				t.Errorf("family rows:\n%s\n%s\nwant ipv4 cn2-gia 32.0 pass, ipv6 chinanet-163 47.0 FAIL\n%s", row4, row6, out)
			}
		}
	}
	var b bytes.Buffer
	if err := report.Render(&b, doc, report.FormatJSON, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var js struct {
		SLA struct {
			Families []string `json:"families"`
		} `json:"sla"`
		Candidates []struct {
			Families []struct {
				Family    string `json:"family"`
				LineClass string `json:"line_class"`
				Loss      *float64
				RTT       struct {
					P95 *float64 `json:"p95"`
				} `json:"rtt_ms"`
				SLA struct {
					Pass   bool `json:"pass"`
					Checks []struct {
						Name   string `json:"name"`
						Family string `json:"family"`
						Pass   bool   `json:"pass"`
					} `json:"checks"`
				} `json:"sla"`
			} `json:"families"`
			SLA struct {
				Checks []struct {
					Name   string `json:"name"`
					Family string `json:"family"`
					Pass   bool   `json:"pass"`
				} `json:"checks"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(b.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	fs := js.Candidates[0].Families
	if strings.Join(js.SLA.Families, ",") != "ipv4,ipv6" || len(fs) != 2 || fs[0].Family != "ipv4" || fs[0].LineClass != "cn2-gia" || fs[1].LineClass != "chinanet-163" ||
		fs[1].RTT.P95 == nil || *fs[1].RTT.P95 != 47 || fs[1].Loss == nil || *fs[1].Loss != 0 || !fs[0].SLA.Pass || fs[1].SLA.Pass {
		t.Errorf("json families %+v (sla.families %v)", fs, js.SLA.Families)
	}
	failed := ""
	for _, c := range js.Candidates[0].SLA.Checks {
		if !c.Pass {
			failed += c.Name + "@" + c.Family + " "
		}
	}
	if failed != "line_class@ipv6 " {
		t.Errorf("failed checks %q, want only line_class@ipv6", failed)
	}
}

// sla.families [ipv4, ipv6] on a candidate with IPv4 targets only: IPv6
// has no data and fails, never passes by default; without sla.families the
// same candidate passes as it did before (one family, no families block).
func TestSLAFamiliesWithoutAnIPv6TargetFailsNoData(t *testing.T) {
	v4only := `[{addr: 127.0.0.1, protocol: icmp}]`
	r, _ := runDual(t, `{line_classes: [cn2-gia], rtt_p95_ms: 100, families: [ipv4, ipv6]}`, v4only)
	e := r.Candidates[0]
	if e.Passes() || len(e.Families) != 2 || e.Families[1].Family != "ipv6" || e.Families[1].SLA == nil || e.Families[1].SLA.Pass {
		t.Fatalf("passes %v, families %+v; want ipv6 failing", e.Passes(), e.Families)
	}
	for _, c := range e.Families[1].SLA.Checks {
		if c.Pass || !strings.HasPrefix(c.Note, "no data") || c.Family != "ipv6" {
			t.Errorf("ipv6 check %+v: want a no-data failure", c)
		}
	}
	if !e.Families[0].SLA.Pass {
		t.Errorf("ipv4 %+v: want a pass", e.Families[0].SLA)
	}
	// The family without anything measured does not blank the route.
	if e.Route.LineClass != route.LineCN2GIA || e.Route.Forward == nil {
		t.Errorf("route %s (forward %v), want IPv4's cn2-gia route kept", e.Route.LineClass, e.Route.Forward)
	}
	r, _ = runDual(t, `{line_classes: [cn2-gia], rtt_p95_ms: 100}`, v4only)
	if e := r.Candidates[0]; !e.Passes() || e.Families != nil {
		t.Errorf("without sla.families: passes %v, families %+v; want a pass and no families", e.Passes(), e.Families)
	}
}

// lineWith is the first line of s holding every one of parts.
func lineWith(s string, parts ...string) string {
	for _, l := range strings.Split(s, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return l
		}
	}
	return ""
}

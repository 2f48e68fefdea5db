package main

// The deployment of docs/scaleout.md run in a lab: two serve instances in
// two network namespaces (two vantage points), each probing the lab's
// server across its own routers, and one real Prometheus in the server's
// namespace that scrapes both over the lab's links with the scrape config
// shipped in deploy/prometheus/prometheus.yml. The dashboard's vantage
// variable must list both vantages, and every panel's query must return
// series of both.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// The lab of this test:
//
//	lcvlc (vantage 1, 10.77.0.1) — lcvlr1 — lcvlr2 — lcvls (server 10.77.2.2, Prometheus)
//	                                           |
//	                          lcvlb (vantage 2, 10.77.60.1; lcvlr2 is 10.77.60.2)
//
// netlab builds the chain; the test adds the second client namespace lcvlb
// on a link of its own to lcvlr2. From vantage 1 the server is hop 3 (r1,
// r2, server), from vantage 2 hop 2 (r2, server).
const (
	vlabPrefix  = "lcvl"
	vlabSecond  = vlabPrefix + "b" // not a name netlab uses (c, s, rN)
	vlabLink    = 60               // 10.77.60.0/24: lcvlb .1, lcvlr2 .2
	vlabProm    = 19090            // Prometheus in the server namespace
	vlabServe   = 9427             // serve in each client namespace
	vlabBWFirst = 5301             // one bw server per vantage: 5301, 5302
)

// vlabExcused are the dashboard queries (panel title/refId, as
// dashboardQueries names them) that this lab cannot give data for both
// vantages, each with the reason. Every other panel query must return data
// for each vantage. An entry that names no query of the dashboard fails the
// test, so the list cannot outlive its panel.
var vlabExcused = map[string]string{}

// TestDashboardOnTwoVantagesInLab: see the file comment.
func TestDashboardOnTwoVantagesInLab(t *testing.T) {
	netlab.RequireRoot(t)
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not installed (Debian package prometheus; scripts/test installs it as root)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed (Debian package curl; scripts/test installs it as root): the test reads Prometheus inside the lab with it")
	}
	d := loadDashboard(t)
	for k := range vlabExcused {
		if panels, _ := dashboardQueries(d); panels[k] == "" {
			t.Errorf("vlabExcused names %q, which is no panel query of the dashboard: remove it", k)
		}
	}

	lab := netlab.UpForTest(t, netlab.Config{Prefix: vlabPrefix, Hops: 2})
	second := addSecondClient(t, lab)
	// Both vantages' throughput tests cross link 2; shaped, they cost the
	// machine little and cannot starve the probes.
	if err := lab.Rate(2, 50e6); err != nil {
		t.Fatal(err)
	}
	server := lab.ServerAddr(false)
	dir := t.TempDir()

	vantages := []struct {
		ns, listen, city string
		hops             float64 // the server's hop number from there
	}{
		{lab.Client(), fmt.Sprintf("%s:%d", lab.ClientAddr(false), vlabServe), "Shanghai", 3},
		{vlabSecond, fmt.Sprintf("%s:%d", second, vlabServe), "Guangzhou", 2},
	}
	listens := []string{vantages[0].listen, vantages[1].listen}
	promCfg, names := vlabPrometheusConfig(t, listens)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(promCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	startInNS(t, lab, lab.Server(), "prometheus", nil, promBin, "--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), fmt.Sprintf("--web.listen-address=0.0.0.0:%d", vlabProm), "--log.level=warn")

	// The bundled price sheets and the first three days of the bundled
	// October traffic log (no addresses in either): a month recorded in part,
	// so that the cost, 95th and projected-bill panels have figures to show.
	samples, err := filepath.Abs(filepath.Join("..", "..", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	traffic := filepath.Join(dir, "traffic.csv")
	writeTrafficDays(t, filepath.Join(samples, "traffic", "2026-10.csv"), traffic, 3)
	for i, v := range vantages {
		port := vlabBWFirst + i
		startInNS(t, lab, lab.Server(), fmt.Sprintf("bw server %d", port), []string{"bw", "--listen", fmt.Sprintf("0.0.0.0:%d", port)}, os.Args[0])
		cands := filepath.Join(dir, fmt.Sprintf("candidates-%d.yaml", i))
		os.WriteFile(cands, []byte(fmt.Sprintf("vantage: {city: %s}\n"+
			"candidates:\n"+
			"  - name: dc\n    region: {city: Hong Kong}\n"+
			"    targets: [{addr: %s}, {addr: %s, protocol: tcp, port: %d}]\n"+
			"    bandwidth_test: {addr: %s, port: %d}\n"+
			"    offer: hk-cn2\n"+
			"offers: %s\n"+
			"traffic: {log: %s}\n"+
			"sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, min_throughput_mbps: 1}\n",
			v.city, server, server, vlabProm, server, port, filepath.Join(samples, "offers.yaml"), traffic)), 0o644)
		startInNS(t, lab, v.ns, "serve "+names[i], []string{"serve", "--config", cands, "--listen", v.listen,
			"--count", "5", "--interval", "100ms", "--timeout", "2s", "--trace-every", "1", "--max-ttl", "4",
			"--bw-every", "3s", "--bw-time", "1s"}, os.Args[0])
	}

	base := fmt.Sprintf("http://127.0.0.1:%d", vlabProm)
	get := func(t *testing.T, u string) []byte {
		t.Helper()
		out, err := lab.Exec(lab.Server(), "curl", "-sS", "--max-time", "5", u).Output()
		if err != nil {
			t.Fatalf("curl %s in %s: %v", u, lab.Server(), err)
		}
		return out
	}
	query := func(q string) []map[string]string {
		var out []map[string]string
		for _, s := range promQueryWith(t, get, base, q) {
			out = append(out, s.Metric)
		}
		return out
	}
	waitFor(t, 30*time.Second, "Prometheus to be ready in "+lab.Server(), func() bool {
		out, err := lab.Exec(lab.Server(), "curl", "-sS", "--max-time", "2", base+"/-/ready").Output()
		return err == nil && strings.Contains(string(out), "Ready")
	})

	// Every panel, each vantage selected alone and both together: wait
	// until all have data (the throughput tests come every 3 s, rates need
	// two scrapes), then report what is still missing.
	var gaps []string
	start := time.Now()
	for deadline := start.Add(60 * time.Second); ; time.Sleep(time.Second) {
		gaps = vantageGaps(d, query, names, vlabExcused)
		if len(gaps) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(gaps) == 0 {
		t.Logf("every panel query had data for vantages %v after %v", names, time.Since(start).Round(time.Second))
	}
	for _, g := range gaps {
		t.Error(g)
	}

	// The variables, read as Grafana reads them (label values of the
	// variable's selector).
	values := func(n string) []string {
		sel, label, ok := d.variable(n)
		if !ok {
			t.Fatalf("no label_values variable %s", n)
		}
		body := get(t, base+"/api/v1/label/"+label+"/values?match[]="+url.QueryEscape(queryOf(sel, map[string]string{"vantage": ".*", "candidate": ".*", "target": ".*"})))
		var r struct {
			Data []string `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("label values of %s: %v %s", label, err, body)
		}
		return r.Data
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, c := range []struct {
		name string
		want []string
	}{
		{"vantage", sorted},
		{"candidate", []string{"dc"}},
		{"target", []string{server, fmt.Sprintf("%s:%d", server, vlabProm)}},
	} {
		if got := values(c.name); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("variable %s lists %v, want %v", c.name, got, c.want)
		}
	}

	// The two series are the two vantage points', not one seen twice: the
	// server is as many hops away as the lab's plan puts it from each.
	for i, v := range vantages {
		q := fmt.Sprintf(`linecheck_hops{vantage=%q,candidate="dc",target=%q}`, names[i], server)
		hops := promQueryWith(t, get, base, q)
		if len(hops) != 1 || hops[0].Value != v.hops {
			t.Errorf("%s: %+v, want one series of %v hops (from %s)", q, hops, v.hops, v.ns)
		}
		q = fmt.Sprintf(`linecheck_hop_loss_ratio{vantage=%q,candidate="dc",target=%q}`, names[i], server)
		if ttls := promQueryWith(t, get, base, q); float64(len(ttls)) != v.hops {
			t.Errorf("%s: %d series (one per TTL), want %v", q, len(ttls), v.hops)
		}
	}
	_, annotations := dashboardQueries(d)
	for _, expr := range annotations {
		query(queryOf(expr, map[string]string{"vantage": ".*", "candidate": ".*", "target": ".*"})) // runs; a change need not have happened
	}
}

// vantageGaps runs every panel query of d once per vantage selected alone
// and once with every vantage (Grafana's All, .*), and says what lacks data:
// a vantage whose selection returns nothing, or, where the query keeps the
// vantage label, a vantage missing from the All result. Queries in excused
// are skipped.
func vantageGaps(d dashboard, query func(string) []map[string]string, vantages []string, excused map[string]string) []string {
	panels, _ := dashboardQueries(d)
	keys := make([]string, 0, len(panels))
	for k := range panels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var gaps []string
	for _, where := range keys {
		if excused[where] != "" {
			continue
		}
		expr := panels[where]
		for _, v := range vantages {
			q := queryOf(expr, map[string]string{"vantage": v, "candidate": ".*", "target": ".*"})
			if len(query(q)) == 0 {
				gaps = append(gaps, fmt.Sprintf("%s with vantage %s: no data\n%s", where, v, q))
			}
		}
		q := queryOf(expr, map[string]string{"vantage": ".*", "candidate": ".*", "target": ".*"})
		seen, labelled := map[string]bool{}, false
		for _, m := range query(q) {
			if vt, ok := m["vantage"]; ok {
				labelled = true
				seen[vt] = true
			}
		}
		for _, v := range vantages {
			if labelled && !seen[v] {
				gaps = append(gaps, fmt.Sprintf("%s with every vantage: no series of %s (series of %v)\n%s", where, v, seen, q))
			}
		}
	}
	return gaps
}

// writeTrafficDays writes the header and the first days days of the
// traffic log src to dst.
func writeTrafficDays(t *testing.T, src, dst string, days int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	var first time.Time
	var out strings.Builder
	out.WriteString(lines[0])
	for _, l := range lines[1:] {
		ts, _, _ := strings.Cut(l, ",")
		at, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			continue
		}
		if first.IsZero() {
			first = at
		}
		if at.Sub(first) >= time.Duration(days)*24*time.Hour {
			break
		}
		out.WriteString(l)
	}
	if err := os.WriteFile(dst, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// vlabPrometheusConfig is deploy/prometheus/prometheus.yml for the lab: its
// linecheck scrape config's static configs, in their order, get the targets
// listens (one each; the shipped vantages beyond them are left out, so no
// name of the example is ever looked up), the scrape and evaluation
// intervals become 1 s and the rule file its absolute path. Everything else
// is the shipped file's. It returns the config and the vantage labels the
// shipped file gives the targets.
func vlabPrometheusConfig(t *testing.T, listens []string) (string, []string) {
	t.Helper()
	src := filepath.Join(deployDir, "prometheus", "prometheus.yml")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	fast := func(m map[string]any) {
		m["scrape_interval"] = "1s"
		if _, ok := m["scrape_timeout"]; ok {
			m["scrape_timeout"] = "1s"
		}
		if _, ok := m["evaluation_interval"]; ok {
			m["evaluation_interval"] = "1s"
		}
	}
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
		cfg["global"] = global
	}
	fast(global)
	global["evaluation_interval"] = "1s"
	rules, _ := cfg["rule_files"].([]any)
	for i, r := range rules {
		s, _ := r.(string)
		if !filepath.IsAbs(s) {
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(src), s))
			if err != nil {
				t.Fatal(err)
			}
			rules[i] = abs
		}
	}
	var names []string
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		job, _ := j.(map[string]any)
		if job["job_name"] != "linecheck" {
			continue
		}
		fast(job)
		statics, _ := job["static_configs"].([]any)
		if len(statics) < len(listens) {
			t.Fatalf("%s: %d static configs in job linecheck, want at least %d (one per vantage)", src, len(statics), len(listens))
		}
		statics = statics[:len(listens)]
		for i, s := range statics {
			sc, _ := s.(map[string]any)
			labels, _ := sc["labels"].(map[string]any)
			v, _ := labels["vantage"].(string)
			if v == "" {
				t.Fatalf("%s: static config %d of job linecheck has no vantage label", src, i+1)
			}
			names = append(names, v)
			sc["targets"] = []any{listens[i]}
		}
		job["static_configs"] = statics
	}
	if names == nil {
		t.Fatalf("%s: no scrape config of job linecheck", src)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), names
}

// addSecondClient adds the namespace vlabSecond with a link of its own to
// lab's last router (see the lab plan above) and returns its address. It
// removes what a crashed run left, and deletes the namespace at cleanup.
func addSecondClient(t *testing.T, lab *netlab.Lab) string {
	t.Helper()
	r2 := lab.Router(lab.Config().Hops)
	me, gw := fmt.Sprintf("10.77.%d.1", vlabLink), fmt.Sprintf("10.77.%d.2", vlabLink)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	_ = exec.Command("ip", "netns", "del", vlabSecond).Run() // a crashed run's
	ip("netns", "add", vlabSecond)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", vlabSecond).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", vlabSecond, err, out)
		}
	})
	ifA, ifB := fmt.Sprintf("v%da", vlabLink), fmt.Sprintf("v%db", vlabLink)
	ip("-n", vlabSecond, "link", "set", "lo", "up")
	ip("link", "add", "name", ifA, "netns", vlabSecond, "type", "veth", "peer", "name", ifB, "netns", r2)
	ip("-n", vlabSecond, "addr", "add", me+"/24", "dev", ifA)
	ip("-n", r2, "addr", "add", gw+"/24", "dev", ifB)
	ip("-n", vlabSecond, "link", "set", ifA, "up")
	ip("-n", r2, "link", "set", ifB, "up")
	// Like the lab's own client: the lab's addresses only, no default route.
	ip("-n", vlabSecond, "route", "add", "10.77.0.0/16", "via", gw)
	for k := 1; k < lab.Config().Hops; k++ {
		ip("-n", lab.Router(k), "route", "add", fmt.Sprintf("10.77.%d.0/24", vlabLink), "via", fmt.Sprintf("10.77.%d.2", k))
	}
	// The new link carries packets once both ends are up: until then a
	// ping is lost, and serve's first cycle would be too.
	waitFor(t, 10*time.Second, "the server to answer "+vlabSecond, func() bool {
		return lab.Exec(vlabSecond, "ping", "-n", "-q", "-c", "1", "-W", "1", lab.ServerAddr(false)).Run() == nil
	})
	return me
}

// startInNS starts bin (with args; a linecheck command when cmdArgs is set,
// through the test binary's helper) inside namespace ns, and stops it by
// PID at cleanup (SIGTERM, then SIGKILL after 10 s), logging its output
// when the test failed.
func startInNS(t *testing.T, lab *netlab.Lab, ns, what string, cmdArgs []string, bin string, args ...string) {
	t.Helper()
	if cmdArgs != nil {
		args = append([]string{"-test.run=^TestHelperLinecheckProcess$"}, args...)
	}
	cmd := lab.Exec(ns, bin, args...)
	if cmdArgs != nil {
		cmd.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join(cmdArgs, "\x1f"))
	}
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s in %s: %v", what, ns, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s in %s:\n%s", what, ns, log.String())
		}
	})
}

package main

// Tests of the deployment bundle (deploy/): the Grafana dashboard's
// structure, every query of it checked by promtool and run against a real
// Prometheus that scrapes two serve instances labelled as two vantage
// points, and the rules' unit tests fed with the metric names a running
// serve really exports.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
)

var deployDir = filepath.Join("..", "..", "deploy")

// dashboard is the part of Grafana's dashboard JSON model the tests read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string `json:"name"`
			Expr       string `json:"expr"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"list"`
	} `json:"annotations"`
	Panels []struct {
		ID          int    `json:"id"`
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		GridPos     *struct {
			X, Y, W, H int
		} `json:"gridPos"`
		Datasource *struct {
			Type, UID string
		} `json:"datasource"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "grafana", "linecheck.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana/linecheck.json: %v", err)
	}
	return d
}

// varQuery is a query variable's PromQL: label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.+), *(\w+)\)$`)

func (d dashboard) variable(name string) (selector, label string, ok bool) {
	for _, v := range d.Templating.List {
		if v.Name != name {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			return "", "", false
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			return "", "", false
		}
		return m[1], m[2], true
	}
	return "", "", false
}

// The documented structure (deploy/README.md): unique panel ids; every
// panel placed on the 24-column grid; every panel but text ones has the
// dashboard's datasource variable and targets whose refIds are unique and
// whose expr is set; the variables datasource, vantage, candidate and
// target exist, the three label variables are label_values queries, and
// each is used by a panel; no query names a variable that does not exist;
// a text panel says why it has no query.
func TestDashboardStructure(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("uid %q title %q: both are needed to import and link the dashboard", d.UID, d.Title)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, n := range []string{"datasource", "vantage", "candidate", "target"} {
		if !vars[n] {
			t.Errorf("no variable %q", n)
		}
	}
	for _, n := range []string{"vantage", "candidate", "target"} {
		if _, label, ok := d.variable(n); !ok || label != n {
			t.Errorf("variable %s: want label_values(…, %s), got label %q", n, n, label)
		}
	}
	builtin := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	ref := regexp.MustCompile(`\$\{?(\w+)\}?`)
	used := map[string]bool{}
	check := func(where, expr string) {
		if strings.TrimSpace(expr) == "" {
			t.Errorf("%s: empty expr", where)
		}
		for _, m := range ref.FindAllStringSubmatch(expr, -1) {
			used[m[1]] = true
			if !vars[m[1]] && !builtin[m[1]] {
				t.Errorf("%s: $%s is no variable of the dashboard", where, m[1])
			}
		}
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if p.ID == 0 || ids[p.ID] != "" {
			t.Errorf("%s: id missing or also %q's", where, ids[p.ID])
		}
		ids[p.ID] = p.Title
		if g := p.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("%s: gridPos %+v off the 24-column grid", where, g)
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("%s: a title and a description are needed", where)
		}
		if p.Type == "text" {
			if len(p.Targets) != 0 || !strings.Contains(p.Description, "Not available") {
				t.Errorf("%s: a text panel stands for a figure serve does not export yet and says so", where)
			}
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Datasource.Type != "prometheus" {
			t.Errorf("%s: datasource %+v, want prometheus ${datasource}", where, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no targets", where)
		}
		refs := map[string]bool{}
		for _, q := range p.Targets {
			if q.RefID == "" || refs[q.RefID] {
				t.Errorf("%s: refId %q missing or repeated", where, q.RefID)
			}
			refs[q.RefID] = true
			check(where, q.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Datasource == nil || a.Datasource.UID != "${datasource}" {
			t.Errorf("annotation %q: no datasource", a.Name)
		}
		check("annotation "+a.Name, a.Expr)
	}
	for _, n := range []string{"vantage", "candidate", "target"} {
		if !used[n] {
			t.Errorf("variable %s is used by no query", n)
		}
	}
}

// queryOf is a dashboard query made PromQL: the variables given, Grafana's
// intervals as fixed durations (the test scrapes every second).
func queryOf(expr string, vals map[string]string) string {
	r := strings.NewReplacer("$__rate_interval", "10s", "$__interval", "2s", "$__range", "1m")
	expr = r.Replace(expr)
	for k, v := range vals {
		expr = strings.ReplaceAll(expr, "${"+k+"}", v)
		expr = strings.ReplaceAll(expr, "$"+k, v)
	}
	return expr
}

// dashboardQueries are every panel's and annotation's query, by where
// they are.
func dashboardQueries(d dashboard) (panels, annotations map[string]string) {
	panels, annotations = map[string]string{}, map[string]string{}
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			panels[fmt.Sprintf("%s/%s", p.Title, q.RefID)] = q.Expr
		}
	}
	for _, a := range d.Annotations.List {
		annotations[a.Name] = a.Expr
	}
	return panels, annotations
}

// Every dashboard query, written as a recording rule, passes promtool.
func TestDashboardQueriesPassPromtool(t *testing.T) {
	promtool := needTool(t, "promtool")
	d := loadDashboard(t)
	panels, annotations := dashboardQueries(d)
	var rules []map[string]string
	all := map[string]string{}
	for k, v := range panels {
		all[k] = v
	}
	for k, v := range annotations {
		all[k] = v
	}
	for _, n := range []string{"vantage", "candidate", "target"} {
		sel, _, _ := d.variable(n)
		all["variable "+n] = sel
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d:x", i),
			"expr": queryOf(all[k], map[string]string{"vantage": "a", "candidate": ".*", "target": ".*", "datasource": "x"})})
	}
	b, _ := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	f := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	os.WriteFile(f, b, 0o644)
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's %d queries: %v\n%s\n%s", len(rules), err, out, b)
	}
}

// metricNames are the metric names (histograms by their family name) of a
// Prometheus text exposition.
func metricNames(body string) map[string]bool {
	names := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			names[f[2]] = true
		}
	}
	return names
}

// seriesName is the metric name of a promtool input series; a histogram's
// _bucket, _sum and _count series are of their family.
func seriesName(s string, families map[string]bool) string {
	n := s
	if i := strings.IndexByte(n, '{'); i >= 0 {
		n = n[:i]
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if strings.HasSuffix(n, suf) && families[strings.TrimSuffix(n, suf)] {
			return strings.TrimSuffix(n, suf)
		}
	}
	return n
}

// twoVantages runs two serve instances (vantage a and b) on loopback, each
// with a TCP target that accepts, 127.0.0.1 by ICMP, traces every cycle, an
// SLA block, a throughput test against our bw server, the bundled offers
// priced on ten days of the bundled traffic log, beside a second candidate
// without a throughput test (its min_throughput_mbps has no data), and one
// real Prometheus that scrapes both with labels {vantage: …}, as
// deploy/prometheus/prometheus.yml does. It returns Prometheus' URL and
// serve a's /metrics.
func twoVantages(t *testing.T) (string, string) {
	t.Helper()
	var listens []string
	offers, traffic := partialTraffic(t)
	for _, v := range []string{"a", "b"} {
		port, _ := countingListener(t)
		cfg := filepath.Join(t.TempDir(), "candidates.yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("candidates:\n"+
			"  - name: lo\n    targets: [{addr: 127.0.0.1}, {addr: 127.0.0.1, protocol: tcp, port: %d}]\n"+
			"    bandwidth_test: {addr: 127.0.0.1, port: %d}\n"+
			"    offer: hk-cn2\n    what_if: [hk-cn2-gb]\n"+
			// No throughput test: its min_throughput_mbps has no data for good.
			"  - name: untested\n    targets: [{addr: 127.0.0.1}]\n"+
			"offers: %s\ntraffic: {log: %s}\n"+
			"sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, min_throughput_mbps: 1}\n", port, bwtest.Server(t), offers, traffic)), 0o644)
		_, _, listen := startServe(t, "--config", cfg, "--count", "5", "--interval", "100ms", "--trace-every", "1",
			"--max-ttl", "4", "--bw-every", "3s", "--bw-time", "1s")
		listens = append(listens, listen)
		_ = v
	}
	rules, _ := filepath.Abs(filepath.Join(deployDir, "prometheus", "linecheck.rules.yml"))
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: linecheck
    static_configs:
      - targets: [%q]
        labels: {vantage: a}
      - targets: [%q]
        labels: {vantage: b}
`, rules, listens[0], listens[1])
	base := startPrometheus(t, cfg, "")
	// Data of every kind from both: throughput (a test every 3 s), traces,
	// jitter, SLA gauges, and several scrapes for the rates.
	missing := ""
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last missing from Prometheus: %s", missing)
		}
	})
	waitFor(t, 90*time.Second, "both vantages' throughput, hops, jitter and SLA series in Prometheus", func() bool {
		for _, q := range []string{"linecheck_throughput_bits_per_second", "linecheck_hops", "linecheck_jitter_seconds",
			"linecheck_sla_check_pass", "linecheck_hop_loss_ratio", `rate(linecheck_probes_sent_total[10s]) > 0`,
			"linecheck_sla_pass", `linecheck_candidate_throughput_bits_per_second{stat="p5"}`, "linecheck_hop_rtt_seconds",
			"linecheck_projected_monthly_cost", "linecheck_sla_check_nodata"} {
			if got := promVector(t, base, "count by (vantage) ("+q+")"); len(got) != 2 {
				missing = fmt.Sprintf("%s: %v", q, got)
				return false
			}
		}
		return true
	})
	_, body := get(t, "http://"+listens[0]+"/metrics")
	return base, body
}

// partialTraffic is the bundled offers file and the first ten days of the
// bundled October traffic log (a month to date: the projected bill and the
// 95th so far have figures), as absolute paths.
func partialTraffic(t *testing.T) (offers, traffic string) {
	t.Helper()
	samples, err := filepath.Abs(filepath.Join("..", "..", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(samples, "traffic", "2026-10.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	traffic = filepath.Join(t.TempDir(), "2026-10-first-10-days.csv")
	if err := os.WriteFile(traffic, []byte(strings.Join(lines[:1+10*288], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(samples, "offers.yaml"), traffic
}

// promVector runs an instant query and returns the result's label sets.
func promVector(t *testing.T, base, q string) []map[string]string {
	t.Helper()
	_, body := get(t, base+"/api/v1/query?query="+url.QueryEscape(q))
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, r.Error, body)
	}
	out := make([]map[string]string, len(r.Data.Result))
	for i, x := range r.Data.Result {
		out[i] = x.Metric
	}
	return out
}

// One Prometheus scrapes two serve instances labelled vantage a and b: the
// dashboard's vantage variable lists both, candidate and target list what
// the files hold, and every panel's query returns data for each vantage
// when that vantage is selected (and, where the query keeps the vantage
// label, series of both with All selected). The annotations' queries run.
// Then the rules' unit tests: every metric name their input series use is
// one serve exports (read from serve's /metrics, so a renamed metric
// fails here), and promtool checks and tests the rules.
func TestDashboardQueriesOnTwoVantages(t *testing.T) {
	needTool(t, "promtool")
	if os.Geteuid() != 0 {
		t.Skip("traces (hop panels) need raw sockets: run as root")
	}
	d := loadDashboard(t)
	base, metrics := twoVantages(t)

	values := func(sel, label string) []string {
		_, body := get(t, base+"/api/v1/label/"+label+"/values?match[]="+url.QueryEscape(sel))
		var r struct {
			Data []string `json:"data"`
		}
		json.Unmarshal([]byte(body), &r)
		return r.Data
	}
	all := map[string]string{"vantage": ".*", "candidate": ".*", "target": ".*"}
	want := map[string][]string{"vantage": {"a", "b"}, "candidate": {"lo", "untested"}}
	for _, n := range []string{"vantage", "candidate", "target"} {
		sel, label, _ := d.variable(n)
		got := values(queryOf(sel, all), label)
		if w, ok := want[n]; ok && strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("variable %s lists %v, want %v", n, got, w)
		}
		if n == "target" && len(got) != 3 {
			t.Errorf("variable target lists %v, want 127.0.0.1 and each serve's 127.0.0.1:PORT", got)
		}
	}

	// The hour-of-day panel's subquery steps (2 s apart here) need two
	// scrapes inside the rate window after the wait: a few seconds more.
	query := func(q string) []map[string]string { return promVector(t, base, q) }
	gaps := vantageGaps(d, query, []string{"a", "b"}, nil)
	for deadline := time.Now().Add(30 * time.Second); len(gaps) > 0 && time.Now().Before(deadline); time.Sleep(time.Second) {
		gaps = vantageGaps(d, query, []string{"a", "b"}, nil)
	}
	for _, g := range gaps {
		t.Error(g)
	}
	_, annotations := dashboardQueries(d)
	for where, expr := range annotations {
		promVector(t, base, queryOf(expr, all)) // runs; a change need not have happened
		_ = where
	}

	// The rules' unit tests speak serve's metric names.
	families := metricNames(metrics)
	families["up"] = true // Prometheus' own
	b, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "tests", "linecheck.rules.test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rt struct {
		Tests []struct {
			InputSeries []struct {
				Series string `yaml:"series"`
			} `yaml:"input_series"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &rt); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tc := range rt.Tests {
		for _, s := range tc.InputSeries {
			n++
			if name := seriesName(s.Series, families); !families[name] {
				t.Errorf("rules test input series %s: serve exports no %s", s.Series, name)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d input series in the rules test", n)
	}
	// And every metric the rules themselves read.
	rb, _ := os.ReadFile(filepath.Join(deployDir, "prometheus", "linecheck.rules.yml"))
	for _, m := range regexp.MustCompile(`\b(linecheck_[a-z_]+)`).FindAllString(string(rb), -1) {
		if !families[seriesName(m, families)] {
			t.Errorf("rule reads %s, which serve does not export", m)
		}
	}
}

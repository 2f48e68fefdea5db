package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

func TestBacktraceListsBundledTargetsWithSources(t *testing.T) {
	out, code := prRun(t, "backtrace", "--list", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var doc struct {
		Targets []route.BacktraceTarget `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	carriers := map[string]int{}
	for _, x := range doc.Targets {
		carriers[x.Carrier]++
		if x.Source == "" || x.City == "" || x.Addr == "" {
			t.Errorf("incomplete bundled target %+v", x)
		}
	}
	if carriers["telecom"] < 3 || carriers["unicom"] < 3 || carriers["mobile"] < 3 {
		t.Errorf("carriers %v: want Telecom, Unicom and Mobile in ≥3 cities each", carriers)
	}
	table, code := prRun(t, "backtrace", "--list")
	if code != 0 || !strings.Contains(table, "Shanghai Telecom") || !strings.Contains(table, "source") {
		t.Errorf("exit %d\n%s", code, table)
	}
}

// Without --targets and without a terminal (as in every test), backtrace
// refuses before it opens any socket: the bundled set is never probed by us.
func TestBacktraceRefusesBundledTargetsWithoutATerminal(t *testing.T) {
	out, code := prRun(t, "backtrace", "--cycles", "1")
	if code != 2 || out != "" {
		t.Fatalf("exit %d, output %q: want exit 2 and nothing written", code, out)
	}
}

func TestBacktraceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		args []string
	}{
		{[]string{"--targets", write("carrier.yaml", "targets:\n  - {name: a, carrier: telekom, city: X, addr: 127.0.0.1}\n")}},
		{[]string{"--targets", write("addr.yaml", "targets:\n  - {name: a, carrier: telecom, city: X, addr: example.com}\n")}},
		{[]string{"--targets", write("empty.yaml", "")}},
		{[]string{"--targets", write("field.yaml", "targets:\n  - {name: a, carrier: telecom, city: X, addr: 127.0.0.1, port: 1}\n")}},
		{[]string{"--targets", filepath.Join(dir, "missing.yaml")}},
		{[]string{"--targets", write("ok.yaml", "targets:\n  - {name: a, carrier: telecom, city: X, addr: 127.0.0.1}\n"), "--format", "xml"}},
		{[]string{"--targets", filepath.Join(dir, "ok.yaml"), "--prefix-table", write("bad.tsv", "10.0.0.0/8\tx\n")}},
		{[]string{"--targets", filepath.Join(dir, "ok.yaml"), "--rate", "0"}},
	}
	for _, c := range cases {
		out, code := prRun(t, append([]string{"backtrace"}, c.args...)...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, output %q; want 2 and nothing", c.args, code, out)
		}
	}
	if _, err := route.LoadTargets(filepath.Join(dir, "carrier.yaml")); err == nil ||
		!strings.Contains(err.Error(), "carrier.yaml:2") || !strings.Contains(err.Error(), "telecom, unicom, mobile or other") {
		t.Errorf("error %v: want file:line and the allowed carriers", err)
	}
}

// Two loopback targets, traced at once: one row each, the JSON has exactly
// the linecheck.backtrace/v1 keys and a full trace per target.
func TestBacktraceLoopbackJSON(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs raw or ICMP datagram sockets")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "lo.yaml")
	os.WriteFile(p, []byte("targets:\n  - {name: lo1, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n"+
		"  - {name: lo2, carrier: mobile, city: Guangzhou, addr: 127.0.0.2}\n"), 0o644)
	out, code := prRun(t, "backtrace", "--targets", p, "--cycles", "3", "--interval", "50ms",
		"--vantage", "lab-server", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if keys := sortedKeys(raw); strings.Join(keys, ",") != "asn_data,results,schema,vantage" {
		t.Errorf("top-level keys %v", keys)
	}
	var results []map[string]json.RawMessage
	json.Unmarshal(raw["results"], &results)
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	want := "addr,carrier,city,confidence,line_class,loss,name,reached,rtt_ms,rule,trace"
	for _, r := range results {
		if keys := sortedKeys(r); strings.Join(keys, ",") != want {
			t.Errorf("result keys %v, want %s", keys, want)
		}
	}
	doc, err := route.ParseBacktrace("out", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range doc.Results {
		if !r.Reached || r.Trace == nil || r.Trace.Schema != route.TraceSchema || r.RTT.P50 == nil || r.Loss == nil || *r.Loss != 0 {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if doc.Vantage != "lab-server" || doc.Results[1].Carrier != "mobile" || doc.Results[1].City != "Guangzhou" {
		t.Errorf("doc %+v", doc)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// --prefix-table reaches the other commands too: replayed, the same route
// turns from chinanet-163 into cn2-gia when the operator's table says its
// backbone hops are CN2, and back without the flag.
func TestPrefixTableOnTrace(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "op.tsv")
	os.WriteFile(tbl, []byte("202.97.0.0/16\t4809\tCN2\tcn2\tyes\tbackbone\toperator test row\n"), 0o644)
	replay := "../../samples/rec/hk-bgp-forward.json"
	class := func(args ...string) string {
		out, code := prRun(t, append([]string{"trace", "--replay", replay, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		var tr route.Trace
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatal(err)
		}
		return tr.LineClass
	}
	if c := class(); c != route.LineChinaNet163 {
		t.Fatalf("without the table: %s", c)
	}
	if c := class("--prefix-table", tbl); c != route.LineCN2GIA {
		t.Errorf("with the table: %s", c)
	}
	if c := class(); c != route.LineChinaNet163 {
		t.Errorf("the table outlived its run: %s", c)
	}
	// compare takes it as a value too (compare.Options.PrefixTable): the
	// bundled scenario's hk-bgp, chinanet-163 on its own, turns cn2-gia.
	cls := func(args ...string) string {
		out, code := prRun(t, append([]string{"compare", "--offline", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("compare exit %d\n%s", code, out)
		}
		var doc struct {
			Candidates []struct {
				Name  string `json:"name"`
				Route struct {
					LineClass string `json:"line_class"`
				} `json:"route"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range doc.Candidates {
			if e.Name == "hk-bgp" {
				return e.Route.LineClass
			}
		}
		t.Fatalf("no hk-bgp in %s", out)
		return ""
	}
	if c := cls("../../samples/candidates.yaml"); c != route.LineChinaNet163 {
		t.Fatalf("compare without the table: hk-bgp %s", c)
	}
	if c := cls("--prefix-table", tbl, "../../samples/candidates.yaml"); c != route.LineCN2GIA {
		t.Errorf("compare with the table: hk-bgp %s", c)
	}
	if c := cls("../../samples/candidates.yaml"); c != route.LineChinaNet163 {
		t.Errorf("compare: the table outlived its run: hk-bgp %s", c)
	}
}

// serve --targets: a backtrace target list's return routes are traced
// continuously and linecheck_line_class_info carries the users' carrier and
// city (loopback targets stand in for the carriers' endpoints).
func TestServeBacktraceTargetsLabelCarrierAndCity(t *testing.T) {
	needICMP(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "users.yaml")
	os.WriteFile(p, []byte("targets:\n  - {name: lo-ct, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n"+
		"  - {name: lo-cu, carrier: unicom, city: Beijing, addr: 127.0.0.2}\n"), 0o644)
	_, _, listen := startServe(t, "--targets", p, "--count", "3", "--interval", "20ms",
		"--timeout", "1s", "--trace-every", "1")
	metrics := scrapeUntil(t, listen, "line class series of both backtrace targets", func(m string) bool {
		return strings.Count(m, "linecheck_line_class_info{") >= 2
	})
	for _, want := range []string{
		`linecheck_line_class_info{candidate="backtrace",carrier="telecom",city="Shanghai",line_class="unknown",protocol="icmp",target="127.0.0.1"} 1`,
		`linecheck_line_class_info{candidate="backtrace",carrier="unicom",city="Beijing",line_class="unknown",protocol="icmp",target="127.0.0.2"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %s in\n%s", want, grepLines(metrics, "linecheck_line_class_info"))
		}
	}
}

// serve --targets --targets-proto tcp: the target list is pinged and traced
// with TCP to the port given (a listener on loopback answers the SYNs), and
// every series carries protocol="tcp" and target="addr:port".
func TestServeBacktraceTargetsOverTCP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("TCP traces need raw sockets (root)")
	}
	port := testbin.TCPListener(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "users.yaml")
	os.WriteFile(p, []byte("targets:\n  - {name: lo-ct, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n"), 0o644)
	_, _, listen := startServe(t, "--targets", p, "--targets-proto", "tcp", "--targets-port", fmt.Sprint(port),
		"--count", "3", "--interval", "20ms", "--timeout", "1s", "--trace-every", "1")
	target := fmt.Sprintf("127.0.0.1:%d", port)
	metrics := scrapeUntil(t, listen, "a line class series and received TCP probes", func(m string) bool {
		return strings.Contains(m, "linecheck_line_class_info{") &&
			strings.Contains(m, `linecheck_probes_received_total{candidate="backtrace",protocol="tcp",target="`+target+`"} `)
	})
	want := `linecheck_line_class_info{candidate="backtrace",carrier="telecom",city="Shanghai",line_class="unknown",protocol="tcp",target="` + target + `"} 1`
	if !strings.Contains(metrics, want) {
		t.Errorf("no %s in\n%s", want, grepLines(metrics, "linecheck_line_class_info"))
	}
	if strings.Contains(metrics, `protocol="icmp"`) {
		t.Errorf("an icmp series with --targets-proto tcp:\n%s", grepLines(metrics, `protocol="icmp"`))
	}
}

// --targets-proto and --targets-port are checked before anything runs.
func TestServeTargetsProtoRefusals(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "users.yaml")
	os.WriteFile(p, []byte("targets:\n  - {name: lo, carrier: telecom, city: Shanghai, addr: 127.0.0.1}\n"), 0o644)
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("candidates:\n  - name: a\n    targets: [{addr: 127.0.0.1}]\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--targets", p, "--targets-proto", "udp"}, `--targets-proto "udp": use icmp or tcp`},
		{[]string{"--targets", p, "--targets-proto", "sctp"}, `--targets-proto "sctp": use icmp or tcp`},
		{[]string{"--targets", p, "--targets-proto", "tcp", "--targets-port", "0"}, "--targets-port 0: not a port number"},
		{[]string{"--targets", p, "--targets-port", "443"}, "--targets-port applies to --targets-proto tcp"},
		{[]string{"--config", cfg, "--targets-proto", "tcp"}, "apply to --targets FILE, which is not given"},
	} {
		code, stderr := runLinecheckCode(t, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// scrapeUntil scrapes serve's /metrics at listen until ok holds (at most
// 20 s) and returns that scrape.
func scrapeUntil(t *testing.T, listen, what string, ok func(metrics string) bool) string {
	t.Helper()
	var metrics string
	waitFor(t, 20*time.Second, what, func() bool {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		metrics = string(b)
		return ok(metrics)
	})
	return metrics
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

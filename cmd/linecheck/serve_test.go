package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// needPrometheus returns the path of the Debian prometheus binary; as root
// (CI) it must be there, otherwise the test skips.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("%s missing (Debian package prometheus); scripts/test installs it", name)
		}
		t.Skipf("%s not installed and not root", name)
	}
	return p
}

// startPrometheus runs a real Prometheus on its own loopback port and data
// directory with config (YAML) and extra flags; t.Cleanup stops it by PID.
// It returns the base URL once /-/ready answers.
func startPrometheus(t *testing.T, config string, dataDir string, extra ...string) string {
	t.Helper()
	bin := needTool(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	// Prometheus takes no port 0, so a free port is picked first; another
	// test's listener can take it while Prometheus starts. Prometheus then
	// exits saying so, and it is started again on another port.
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		args := append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + dataDir,
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn"}, extra...)
		cmd := exec.Command(bin, args...)
		logf, _ := os.Create(filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt)))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
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
			logf.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("prometheus log:\n%s", b)
			}
		})
		if promReady(t, base, exited, logf.Name(), attempt < 3) {
			return base
		}
	}
}

// promReady waits until the Prometheus at base answers /-/ready (true). It
// returns false when the process exited because its port was taken and
// retry allows another try; any other exit, or 30 s, fails t.
func promReady(t *testing.T, base string, exited <-chan struct{}, logPath string, retry bool) bool {
	t.Helper()
	// Until Prometheus has bound the port, something else may hold it and
	// never answer: every check has a timeout of its own.
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			if retry && strings.Contains(string(b), "address already in use") {
				return false
			}
			t.Fatalf("prometheus exited before it was ready:\n%s", b)
		default:
		}
		if resp, err := client.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return true
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out after 30s waiting for prometheus /-/ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// promSample is one element of an instant-query vector.
type promSample struct {
	Metric map[string]string
	Value  float64
}

// httpGet fetches a URL from this test's network namespace.
func httpGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body
}

// promQuery runs an instant query and returns the vector.
func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	return promQueryWith(t, httpGet, base, q)
}

// promQueryWith is promQuery with the HTTP GET done by get (e.g. curl inside
// a lab namespace).
func promQueryWith(t *testing.T, get func(*testing.T, string) []byte, base, q string) []promSample {
	t.Helper()
	body := get(t, base+"/api/v1/query?query="+url.QueryEscape(q))
	var r struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s", q, err, body)
	}
	var out []promSample
	for _, x := range r.Data.Result {
		var s string
		json.Unmarshal(x.Value[1], &s)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %s", q, x.Value[1])
		}
		out = append(out, promSample{x.Metric, v})
	}
	return out
}

func byTarget(ss []promSample) map[string]float64 {
	m := map[string]float64{}
	for _, s := range ss {
		m[s.Metric["protocol"]+" "+s.Metric["target"]] = s.Value
	}
	return m
}

// A real Prometheus scrapes `linecheck serve` probing 127.0.0.1 (ICMP, and TCP
// connect to a listener of this test) every second; what it stores is read
// back through its HTTP API and checked against what loopback must give.
func TestServeScrapedByRealPrometheus(t *testing.T) {
	needICMP(t)
	tcpPort := testbin.TCPListener(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "candidates.yaml")
	cfg := fmt.Sprintf(`candidates:
  - name: loopback
    provider: this machine
    targets:
      - {addr: 127.0.0.1, protocol: icmp}
      - {addr: 127.0.0.1, protocol: tcp, port: %d}
  - name: loopback-b
    targets: [{addr: 127.0.0.2}]
`, tcpPort)
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	serve, serveLog, listen := startServe(t, "--config", cfgPath,
		"--count", "5", "--interval", "20ms", "--timeout", "2s", "--trace-every", "1")
	waitFor(t, 20*time.Second, "serve /-/healthy", func() bool {
		resp, err := http.Get("http://" + listen + "/-/healthy")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})

	prom := startPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}
scrape_configs:
  - job_name: linecheck
    static_configs: [{targets: ["%s"]}]
`, listen), "")

	var first map[string]float64
	waitFor(t, 30*time.Second, "linecheck_probes_sent_total > 0 for three targets in Prometheus", func() bool {
		first = byTarget(promQuery(t, prom, `linecheck_probes_sent_total{job="linecheck"} > 0`))
		return len(first) == 3
	})
	if len(promQuery(t, prom, `up{job="linecheck"} == 1`)) != 1 {
		t.Fatal("scrape target not up")
	}
	// The counter grows between scrapes.
	waitFor(t, 20*time.Second, "sent counters to grow", func() bool {
		now := byTarget(promQuery(t, prom, `linecheck_probes_sent_total`))
		for k, v := range first {
			if now[k] <= v {
				return false
			}
		}
		return true
	})
	// Loopback loses nothing: received == sent in every stored scrape of the
	// last minute, and the histogram counted every received reply.
	for _, q := range []string{
		`max_over_time((linecheck_probes_sent_total - linecheck_probes_received_total)[1m:1s])`,
		`max_over_time(abs(linecheck_rtt_seconds_count - linecheck_probes_received_total)[1m:1s])`,
		`linecheck_probes_late_total + linecheck_probes_duplicate_total + linecheck_probe_errors_total`,
	} {
		res := promQuery(t, prom, q)
		if len(res) != 3 {
			t.Fatalf("%s: %d series, want 3: %+v", q, len(res), res)
		}
		for _, s := range res {
			if s.Value != 0 {
				t.Errorf("%s = %v for %v, want 0", q, s.Value, s.Metric)
			}
		}
	}
	// Every loopback RTT is below 1 s: the +Inf bucket equals the le=1 bucket.
	inf := byTarget(promQuery(t, prom, `linecheck_rtt_seconds_bucket{le="+Inf"}`))
	le1 := byTarget(promQuery(t, prom, `linecheck_rtt_seconds_bucket{le=~"1|1.0"}`))
	if len(inf) != 3 || len(le1) != 3 {
		t.Fatalf("buckets +Inf %v, le=1 %v", inf, le1)
	}
	for k := range inf {
		if inf[k] != le1[k] || inf[k] == 0 {
			t.Errorf("%s: +Inf bucket %v, le=1 bucket %v", k, inf[k], le1[k])
		}
	}
	labels := promQuery(t, prom, `linecheck_probes_received_total{candidate="loopback",protocol="tcp"}`)
	if len(labels) != 1 || labels[0].Metric["target"] != fmt.Sprintf("127.0.0.1:%d", tcpPort) {
		t.Errorf("tcp series %+v", labels)
	}
	// A loss ratio in PromQL, as docs/scaleout.md writes it, is 0 here.
	for _, s := range promQuery(t, prom, `1 - increase(linecheck_probes_received_total[30s]) / increase(linecheck_probes_sent_total[30s])`) {
		if s.Value != 0 {
			t.Errorf("loss ratio %v for %v", s.Value, s.Metric)
		}
	}

	// SIGHUP reload: loopback-b leaves, its series go from /metrics.
	os.WriteFile(cfgPath, []byte(strings.Replace(cfg, "  - name: loopback-b\n    targets: [{addr: 127.0.0.2}]\n", "", 1)), 0o644)
	serve.Process.Signal(syscall.SIGHUP)
	waitFor(t, 10*time.Second, "reload to drop loopback-b from /metrics", func() bool {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return !strings.Contains(string(b), `candidate="loopback-b"`) && strings.Contains(string(b), `candidate="loopback"`)
	})
	// Graceful shutdown on SIGTERM: exit 0.
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, serveLog)
	}
	if !strings.Contains(serveLog.String(), "stopped") {
		t.Errorf("serve log: %s", serveLog)
	}
}

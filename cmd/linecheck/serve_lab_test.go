package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// serve probes a target across a real 2-router lab, and a real Prometheus
// in the lab's client namespace scrapes it. Independent expectations: the
// server is hop 3 (2 routers + the server), nothing is lost on a clean lab,
// and the histogram counted every reply.
func TestServeScrapedInLab(t *testing.T) {
	netlab.RequireRoot(t)
	promBin := needTool(t, "prometheus")
	needTool(t, "curl")
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcsrv", Hops: 2})
	server := lab.ServerAddr(false)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "candidates.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`candidates:
  - name: lab-server
    targets: [{addr: %s, protocol: icmp}]
  - name: loopback
    targets: [{addr: 127.0.0.1}]
`, server)), 0o644)

	// Ports inside the client namespace: its loopback is empty, any will do.
	listen := "127.0.0.1:19427"
	promAddr := "127.0.0.1:19090"
	get := func(t *testing.T, u string) []byte {
		t.Helper()
		out, err := lab.Exec(lab.Client(), "curl", "-sS", "--max-time", "5", u).Output()
		if err != nil {
			t.Fatalf("curl %s in %s: %v", u, lab.Client(), err)
		}
		return out
	}

	serve := lab.Exec(lab.Client(), os.Args[0], "-test.run=^TestHelperLinecheckProcess$")
	serve.Env = append(os.Environ(), "LINECHECK_HELPER_ARGS="+strings.Join([]string{"serve", "--config", cfgPath,
		"--listen", listen, "--count", "5", "--interval", "20ms", "--timeout", "2s", "--trace-every", "1"}, "\x1f"))
	serveLog := startLogged(t, serve) // read by the failure log below while serve may still be writing it

	promCfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(promCfg, []byte(fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: linecheck
    static_configs: [{targets: ["%s"], labels: {vantage: lab-client}}]
`, listen)), 0o644)
	prom := lab.Exec(lab.Client(), promBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promLog strings.Builder
	prom.Stderr = &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		prom.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { prom.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			prom.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus:\n%s\nserve:\n%s", promLog.String(), serveLog.String())
		}
	})
	base := "http://" + promAddr
	waitFor(t, 40*time.Second, "hops of the lab target in Prometheus", func() bool {
		out, err := lab.Exec(lab.Client(), "curl", "-sS", "--max-time", "2", base+"/-/ready").Output()
		if err != nil || !strings.Contains(string(out), "Ready") {
			return false
		}
		return len(promQueryWith(t, get, base, `linecheck_hops{candidate="lab-server"}`)) == 1 &&
			len(promQueryWith(t, get, base, `linecheck_probes_received_total{candidate="lab-server"} > 10`)) == 1
	})
	hops := promQueryWith(t, get, base, `linecheck_hops{candidate="lab-server"}`)
	if hops[0].Value != 3 || hops[0].Metric["vantage"] != "lab-client" || hops[0].Metric["target"] != server {
		t.Errorf("hops %+v, want 3 for %s", hops, server)
	}
	if ttl := promQueryWith(t, get, base, `linecheck_hop_loss_ratio{candidate="lab-server"}`); len(ttl) != 3 {
		t.Errorf("hop loss series %+v, want ttl 1..3", ttl)
	}
	for _, q := range []string{
		`linecheck_probes_sent_total - linecheck_probes_received_total`,
		`linecheck_rtt_seconds_count - linecheck_probes_received_total`,
		`linecheck_probe_errors_total`,
	} {
		res := promQueryWith(t, get, base, q)
		if len(res) != 2 {
			t.Fatalf("%s: %d series, want 2", q, len(res))
		}
		for _, s := range res {
			if s.Value != 0 {
				t.Errorf("%s = %v for %v", q, s.Value, s.Metric)
			}
		}
	}
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, serveLog.String())
	}
}

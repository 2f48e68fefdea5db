package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// exitCode returns the process exit code of a finished command's error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

const labOffers = `offers:
  - name: near-offer
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 100, price: "1000"}
  - name: far-offer
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 100, price: "100"}
`

// TestLiveCompareOnLab runs the built binary inside the client namespace of a
// two-router lab whose server link adds 30 ms: a candidate on router 1
// (answers in well under a millisecond) must pass an RTT SLA of 10 ms, the
// server (ICMP and a TCP port with a listener) must fail it with an RTT near
// the configured delay. Nothing leaves the lab's 10.77.0.0/16.
func TestLiveCompareOnLab(t *testing.T) {
	netlab.RequireRoot(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 (the TCP listener in the server namespace) is missing")
	}
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lccmp", Hops: 2, TUNLink: 2, Delay: 30 * time.Millisecond})
	bin := testbin.Linecheck(t)
	server, router1 := lab.ServerAddr(false), lab.RouterAddrs(false)[0]

	listener := lab.Exec(lab.Server(), "/usr/bin/python3", "-c", fmt.Sprintf(`
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("%s", 8443)); s.listen(64)
while True:
    c, _ = s.accept(); c.close()
`, server))
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Process.Kill(); _ = listener.Wait() })
	// Wait for the listener from inside the client namespace (through the lab).
	ready := false
	for range 50 {
		probe := lab.Exec(lab.Client(), "/usr/bin/python3", "-c", fmt.Sprintf(`import socket; socket.create_connection(("%s", 8443), 1).close()`, server))
		if probe.Run() == nil {
			ready = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !ready {
		t.Fatal("TCP listener in the server namespace never accepted")
	}

	yaml := fmt.Sprintf(`vantage: {city: Shanghai}
candidates:
  - name: far
    region: {city: Shanghai}
    targets:
      - {addr: %[1]s, protocol: icmp}
      - {addr: %[1]s, protocol: tcp, port: 8443}
    offer: far-offer
  - name: near
    region: {city: Shanghai}
    targets: [{addr: %[2]s}]
    offer: near-offer
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 10, loss: 0.05}
`, server, router1)
	dir := writeFiles(t, map[string]string{"c.yaml": yaml, "offers.yaml": labOffers})
	cfile := filepath.Join(dir, "c.yaml")

	run := func(args ...string) ([]byte, string, int) {
		cmd := lab.Exec(lab.Client(), bin, append([]string{"compare", "--count", "10", "--interval", "50ms", "--timeout", "1s"}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return out, stderr.String(), exitCode(err)
	}
	out, stderr, code := run("--format", "json", cfile)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (one candidate passes)\nstderr: %s\nstdout: %s", code, stderr, out)
	}
	var doc struct {
		Schema     string   `json:"schema"`
		Mode       string   `json:"mode"`
		Ranking    []string `json:"ranking"`
		Recommend  string   `json:"recommended"`
		Candidates []struct {
			Name     string   `json:"name"`
			Warnings []string `json:"warnings"`
			Route    struct {
				RTT  struct{ P50, P95 float64 } `json:"rtt_ms"`
				Loss float64                    `json:"loss"`
			} `json:"route"`
			Targets []struct {
				Addr     string                `json:"addr"`
				Protocol string                `json:"protocol"`
				Sent     int                   `json:"sent"`
				Recv     int                   `json:"recv"`
				Loss     float64               `json:"loss"`
				RTT      struct{ P50 float64 } `json:"rtt_ms"`
			} `json:"targets"`
			SLA struct {
				Pass bool `json:"pass"`
			} `json:"sla"`
			Monthly struct {
				Total     string                  `json:"total"`
				Currency  string                  `json:"currency"`
				Converted struct{ Amount string } `json:"converted"`
			} `json:"monthly"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Schema != Schema || doc.Mode != "live" {
		t.Errorf("schema %q mode %q", doc.Schema, doc.Mode)
	}
	if strings.Join(doc.Ranking, ",") != "near,far" || doc.Recommend != "near" {
		t.Errorf("ranking %v recommended %q, want [near far] near", doc.Ranking, doc.Recommend)
	}
	for _, c := range doc.Candidates {
		for _, w := range c.Warnings {
			if strings.Contains(w, "forward trace") {
				t.Errorf("%s: %s", c.Name, w)
			}
		}
		for _, tg := range c.Targets {
			if tg.Sent != 10 || tg.Recv != 10 || tg.Loss != 0 {
				t.Errorf("%s %s %s: sent %d recv %d loss %v, want 10/10/0 on a clean lab path", c.Name, tg.Addr, tg.Protocol, tg.Sent, tg.Recv, tg.Loss)
			}
			if net.ParseIP(tg.Addr) == nil || !strings.HasPrefix(tg.Addr, "10.77.") {
				t.Errorf("probed %s outside the lab", tg.Addr)
			}
		}
		switch c.Name {
		case "far":
			// The TUN link adds 30 ms one way on client→server packets only.
			for _, tg := range c.Targets {
				if tg.RTT.P50 < 29 || tg.RTT.P50 > 60 {
					t.Errorf("far %s p50 %.2f ms, want about the 30 ms injected", tg.Protocol, tg.RTT.P50)
				}
			}
			if c.SLA.Pass {
				t.Error("far passed an RTT SLA of 10 ms")
			}
			// 100 USD × 7.10 = 710.00 CNY.
			if c.Monthly.Total != "100.00" || c.Monthly.Currency != "USD" || c.Monthly.Converted.Amount != "710.00" {
				t.Errorf("far monthly %+v, want 100.00 USD = 710.00 CNY", c.Monthly)
			}
		case "near":
			if c.Route.RTT.P95 > 10 || !c.SLA.Pass {
				t.Errorf("near p95 %.3f ms pass %v, want < 10 ms and pass", c.Route.RTT.P95, c.SLA.Pass)
			}
		}
	}

	if _, stderr, code := run("--strict", cfile); code != 1 {
		t.Errorf("--strict with one failing candidate: exit %d, want 1 (%s)", code, stderr)
	}
	strictSLA := strings.Replace(yaml, "rtt_p95_ms: 10", "rtt_p95_ms: 0.001", 1)
	if err := os.WriteFile(cfile, []byte(strictSLA), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(cfile); code != 1 {
		t.Errorf("no candidate passing: exit %d, want 1 (%s)", code, stderr)
	}
	doc2 := strings.Replace(yaml, "{addr: "+router1+"}", "{addr: 192.0.2.1}", 1)
	if err := os.WriteFile(cfile, []byte(doc2), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(cfile); code != 2 || !strings.Contains(stderr, "documentation address") {
		t.Errorf("documentation target live: exit %d, want 2 with a refusal (%s)", code, stderr)
	}
}

package labtest

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// `linecheck compare` live over IPv6 (issue 32): a candidates file whose
// targets are the lab's IPv6 addresses, run in the client namespace of a
// four-router lab whose last link adds 30 ms. The candidate on router 1
// (well under a millisecond) passes an RTT SLA of 10 ms and is recommended;
// the server, probed by ICMPv6 echo and by TCP connect to a listener on its
// IPv6 address, fails it with an RTT near the 30 ms wire, 10 of 10 each. A
// --prefix-table that makes links 1–3 CN2 backbone and link 4 a ChinaNet
// Shanghai access range (fd77:0:0:N::/64 as lab stand-ins) gives the
// server's forward route the class cn2-gia, as it gives the same table on
// IPv4 addresses (TestMultipathLineClassPerPath): the IPv6 forward trace
// reached the classifier hop by hop. Nothing is probed outside fd77::/16.
func TestCompareLiveOverIPv6(t *testing.T) {
	t.Parallel()
	netlab.RequireRoot(t)
	tool(t, "python3")
	l, bin := lab(t, netlab.Config{Prefix: "lcl6c", Hops: 4, IPv6: true, TUNLink: 4, Delay: 30 * time.Millisecond})
	server, router1 := l.ServerAddr(true), l.RouterAddrs(true)[0]
	labNet := netip.MustParsePrefix("fd77::/16")

	listener := l.Exec(l.Server(), "/usr/bin/python3", "-c", fmt.Sprintf(`
import socket
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("%s", 8443)); s.listen(64)
while True:
    c, _ = s.accept(); c.close()
`, server))
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Process.Kill(); _ = listener.Wait() })
	listening := false
	for i := 0; i < 100 && !listening; i++ {
		out, _ := l.Exec(l.Server(), "ss", "-ltnH", "sport = :8443").Output()
		listening = strings.Contains(string(out), "8443")
		time.Sleep(50 * time.Millisecond)
	}
	if !listening {
		t.Fatal("the IPv6 listener did not listen on 8443 in the server namespace")
	}

	dir := t.TempDir()
	files := map[string]string{
		"c.yaml": fmt.Sprintf(`vantage: {city: Shanghai}
candidates:
  - name: far
    region: {city: Shanghai}
    targets:
      - {addr: '%[1]s', protocol: icmp}
      - {addr: '%[1]s', protocol: tcp, port: 8443}
    offer: far-offer
  - name: near
    region: {city: Shanghai}
    targets: [{addr: '%[2]s'}]
    offer: near-offer
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
fx: {base: CNY, USD: 7.10}
sla: {rtt_p95_ms: 10, loss: 0.05}
`, server, router1),
		"offers.yaml": `offers:
  - name: near-offer
    currency: CNY
    bandwidth: {scheme: fixed, port_mbps: 100, price: "1000"}
  - name: far-offer
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 100, price: "100"}
`,
		"lab6.tsv": "fd77:0:0:1::/64\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for a CN2 backbone range\n" +
			"fd77:0:0:2::/64\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for a CN2 backbone range\n" +
			"fd77:0:0:3::/64\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in for a CN2 backbone range\n" +
			"fd77:0:0:4::/64\t4812\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in for a Shanghai Telecom access range\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := mustRun(t, l, l.Client(), bin, "compare", "--format", "json", "--count", "10", "--interval", "50ms", "--timeout", "1s",
		"--prefix-table", filepath.Join(dir, "lab6.tsv"), filepath.Join(dir, "c.yaml"))
	var doc struct {
		Mode       string   `json:"mode"`
		Ranking    []string `json:"ranking"`
		Recommend  string   `json:"recommended"`
		Candidates []struct {
			Name     string   `json:"name"`
			Warnings []string `json:"warnings"`
			Route    struct {
				LineClass    string `json:"line_class"`
				ForwardClass string `json:"forward_class"`
			} `json:"route"`
			Targets []struct {
				Addr     string  `json:"addr"`
				Protocol string  `json:"protocol"`
				Sent     int     `json:"sent"`
				Recv     int     `json:"recv"`
				Loss     float64 `json:"loss"`
				RTT      struct {
					P50 float64 `json:"p50"`
					P95 float64 `json:"p95"`
				} `json:"rtt_ms"`
			} `json:"targets"`
			SLA struct {
				Pass bool `json:"pass"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(r.stdout, &doc); err != nil {
		t.Fatalf("compare JSON: %v\n%s", err, r)
	}
	if doc.Mode != "live" || strings.Join(doc.Ranking, ",") != "near,far" || doc.Recommend != "near" {
		t.Errorf("mode %q ranking %v recommended %q, want live, [near far], near", doc.Mode, doc.Ranking, doc.Recommend)
	}
	if len(doc.Candidates) != 2 {
		t.Fatalf("%d candidates, want 2\n%s", len(doc.Candidates), r)
	}
	c, err := l.TUNCounters()
	if err != nil {
		t.Fatal(err)
	}
	hi := 32 + 2*float64(c.LateMean)/1000
	for _, cand := range doc.Candidates {
		for _, w := range cand.Warnings {
			if strings.Contains(w, "forward trace") {
				t.Errorf("%s: %s", cand.Name, w)
			}
		}
		want := map[string]int{"far": 2, "near": 1}[cand.Name]
		if len(cand.Targets) != want {
			t.Errorf("%s: %d targets, want %d", cand.Name, len(cand.Targets), want)
		}
		for _, tg := range cand.Targets {
			a, err := netip.ParseAddr(tg.Addr)
			if err != nil || !a.Is6() || !labNet.Contains(a) {
				t.Errorf("%s: target %q is not an IPv6 address of the lab", cand.Name, tg.Addr)
			}
			if tg.Sent != 10 || tg.Recv != 10 || tg.Loss != 0 {
				t.Errorf("%s %s %s: sent %d recv %d loss %v, want 10/10/0 on a clean lab path", cand.Name, tg.Addr, tg.Protocol, tg.Sent, tg.Recv, tg.Loss)
			}
			switch cand.Name {
			case "far":
				// The wire delays client→server packets by 30 ms (plus its
				// own timer lateness); a TCP connect is one round trip.
				if tg.RTT.P50 < 30 || tg.RTT.P50 > hi {
					t.Errorf("far %s p50 %.2f ms, want 30..%.1f (the 30 ms wire, late %d µs on average)", tg.Protocol, tg.RTT.P50, hi, c.LateMean)
				}
			case "near":
				if tg.RTT.P95 > 10 {
					t.Errorf("near p95 %.3f ms, want under 10", tg.RTT.P95)
				}
			}
		}
		switch cand.Name {
		case "far":
			if cand.SLA.Pass || cand.Route.ForwardClass != "cn2-gia" || cand.Route.LineClass != "cn2-gia" {
				t.Errorf("far: SLA pass %v, forward class %q, line class %q: want fail (30 ms > 10), cn2-gia, cn2-gia",
					cand.SLA.Pass, cand.Route.ForwardClass, cand.Route.LineClass)
			}
		case "near":
			// Router 1 answers from link 0, which the table leaves out.
			if !cand.SLA.Pass || cand.Route.ForwardClass != "unknown" {
				t.Errorf("near: SLA pass %v, forward class %q: want pass and unknown", cand.SLA.Pass, cand.Route.ForwardClass)
			}
		}
	}
}

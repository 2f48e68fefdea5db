package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// TestServeJudgesSLAWindowsOnLab is serve's half of issue 30's lab test
// (compare's is internal/compare's TestLiveCompareJudgesSLAWindowsOnLab):
// the lab's server link is clean until a minute boundary M, when its wire
// switches to +80 ms and 30 % loss (netlab.Change). The built binary runs
// `serve` in the client namespace with two SLA windows in UTC (the host's
// zone does not matter), "before" [M−1 min, M) and "degraded" [M, M+1 min),
// and is scraped after M+1 min: /metrics must say the server's candidate
// passes "before" and fails "degraded" on measured loss and p95
// (linecheck_sla_pass{window}, linecheck_sla_window_check_pass{check,
// window}, no _nodata), and /compare's windows give the figures, within
// wide bounds (0 % against 30 %, +0 against +80 ms) that hold beside CPU
// burners. A candidate on router 1, in front of the wire, passes both.
//
// The flags that make a minute's window practical: serve adds a cycle
// (--count probes, --interval apart) to the window its end falls in, and
// a cycle ends --timeout after its last send (later when a probe is
// lost), so a cycle must be short beside the window: --count 5
// --interval 200ms --timeout 1s is a cycle of 1 to 2 s, 150 to 300
// probes a minute (about 130 were measured in the degraded minute beside
// other tests, with --timeout 2s). --window sets only the "all" window;
// an SLA window's occurrence keeps (⌈length / --window⌉ + 1) ×
// (--window/--interval + --count) probes, more than a minute's. Nothing
// leaves 10.77.0.0/16 and the namespaces' own loopback.
func TestServeJudgesSLAWindowsOnLab(t *testing.T) {
	netlab.RequireRoot(t)
	if testing.Short() {
		t.Skip("about two minutes of live probes")
	}
	needTool(t, "curl")
	bin := testbin.Linecheck(t) // built before the clock is read
	change := time.Now().UTC().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	before, after := change.Add(-time.Minute), change.Add(time.Minute)
	lab := netlab.UpForTest(t, netlab.Config{Prefix: "lcsvw", Hops: 2, TUNLink: 2,
		Change: &netlab.Change{At: change, Delay: 80 * time.Millisecond, Loss: 0.3}})
	server, router1 := lab.ServerAddr(false), lab.RouterAddrs(false)[0]

	hm := func(t time.Time) string { return t.Format("15:04") }
	cfg := filepath.Join(t.TempDir(), "candidates.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`candidates:
  - name: far
    targets: [{addr: %s, protocol: icmp}]
  - name: near
    targets: [{addr: %s, protocol: icmp}]
sla:
  rtt_p95_ms: 50
  loss: 0.05
  windows:
    before: {from: "%s", to: "%s", tz: UTC}
    degraded: {from: "%s", to: "%s", tz: UTC}
`, server, router1, hm(before), hm(change), hm(change), hm(after))), 0o644); err != nil {
		t.Fatal(err)
	}

	// The client namespace's loopback is its own: any port will do.
	listen := "127.0.0.1:19428"
	serve := lab.Exec(lab.Client(), bin, "serve", "--config", cfg, "--listen", listen,
		"--count", "5", "--interval", "200ms", "--timeout", "1s", "--trace-every", "0")
	serveLog := startLogged(t, serve)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve:\n%s", serveLog.String())
		}
	})
	curl := func(path string) ([]byte, error) {
		return lab.Exec(lab.Client(), "curl", "-sS", "--fail", "--max-time", "5", "http://"+listen+path).Output()
	}

	// Scrape once the degraded window has ended and a cycle past it has
	// been judged (the windows are then the last occurrences, not the
	// current ones).
	time.Sleep(time.Until(after.Add(5 * time.Second)))
	var metrics map[string]float64
	waitFor(t, 30*time.Second, "linecheck_sla_pass of both windows", func() bool {
		out, err := curl("/metrics")
		if err != nil {
			return false
		}
		metrics = scrapeSeries(string(out))
		_, b := metrics[`linecheck_sla_pass{candidate="far",window="before"}`]
		_, d := metrics[`linecheck_sla_pass{candidate="far",window="degraded"}`]
		return b && d
	})
	want := map[string]float64{
		`linecheck_sla_pass{candidate="far",window="before"}`:                                   1,
		`linecheck_sla_pass{candidate="far",window="degraded"}`:                                 0,
		`linecheck_sla_pass{candidate="near",window="before"}`:                                  1,
		`linecheck_sla_pass{candidate="near",window="degraded"}`:                                1,
		`linecheck_sla_window_check_pass{candidate="far",check="loss",window="before"}`:         1,
		`linecheck_sla_window_check_pass{candidate="far",check="rtt_p95_ms",window="before"}`:   1,
		`linecheck_sla_window_check_pass{candidate="far",check="loss",window="degraded"}`:       0,
		`linecheck_sla_window_check_pass{candidate="far",check="rtt_p95_ms",window="degraded"}`: 0,
	}
	for k, v := range want {
		if got, ok := metrics[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// Measured, not missing: no check of either window is "no data".
	for k, v := range metrics {
		if strings.HasPrefix(k, "linecheck_sla_window_check_nodata{") && v != 0 &&
			(strings.Contains(k, `window="before"`) || strings.Contains(k, `window="degraded"`)) {
			t.Errorf("%s = %v: a window without data", k, v)
		}
	}

	// The figures behind the verdict, from the same evaluation.
	out, err := curl("/compare?format=json")
	if err != nil {
		t.Fatalf("/compare: %v", err)
	}
	type window struct {
		Name   string   `json:"name"`
		Hours  string   `json:"hours"`
		Sent   int      `json:"sent"`
		Loss   float64  `json:"loss"`
		RTTP95 *float64 `json:"rtt_p95_ms"`
		Pass   bool     `json:"pass"`
	}
	var doc struct {
		Candidates []struct {
			Name    string   `json:"name"`
			Windows []window `json:"windows"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	hours := map[string]string{
		"before":   hm(before) + "–" + hm(change) + " UTC",
		"degraded": hm(change) + "–" + hm(after) + " UTC",
	}
	rtt := func(w window) float64 {
		if w.RTTP95 == nil {
			return math.Inf(1)
		}
		return *w.RTTP95
	}
	for _, c := range doc.Candidates {
		ws := map[string]window{}
		for _, w := range c.Windows {
			ws[w.Name] = w
		}
		for name, h := range hours {
			// At most 5 probes a second; at least 20 in "before" (serve
			// started ≥ 30 s before M less the lab's start) and 90 in
			// "degraded" (a cycle of 5 in at most 3.3 s, though lossy).
			w, ok := ws[name]
			if minSent := map[string]int{"before": 20, "degraded": 90}[name]; !ok || w.Hours != h || w.Sent < minSent || w.Sent > 310 {
				t.Errorf("%s %s: %+v, want hours %q and %d..310 probes", c.Name, name, w, h, minSent)
			}
		}
		b, d := ws["before"], ws["degraded"]
		t.Logf("%s: before sent %d loss %.3f p95 %.1f ms; degraded sent %d loss %.3f p95 %.1f ms", c.Name, b.Sent, b.Loss, rtt(b), d.Sent, d.Loss, rtt(d))
		switch c.Name {
		case "near":
			if !b.Pass || !d.Pass || b.Loss > 0.05 || d.Loss > 0.05 {
				t.Errorf("near: before %+v degraded %+v, want both passing", b, d)
			}
		case "far":
			if !b.Pass || b.Loss > 0.05 || rtt(b) >= 50 {
				t.Errorf("far before: %+v, want pass, loss <= 5 %%, p95 < 50 ms", b)
			}
			// 30 % loss over ≥ 90 probes (3 σ is 14.5 points), 80 ms more one way.
			if d.Pass || d.Loss < 0.15 || d.Loss > 0.45 || rtt(d) < 80 {
				t.Errorf("far degraded: %+v, want fail, loss 15..45 %%, p95 >= 80 ms", d)
			}
		default:
			t.Errorf("unexpected candidate %q", c.Name)
		}
	}
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
}

// scrapeSeries reads a Prometheus text exposition into series → value,
// each series written as name{labels} with the labels sorted by name (as
// the exposition writes them).
func scrapeSeries(text string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

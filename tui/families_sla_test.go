package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// familyProber answers without sending anything: every probe of an IPv4
// target in 30 ms and of an IPv6 one in 45 ms, and traces a CN2 GIA route
// toward an IPv4 address and an ordinary 163 route toward an IPv6 one
// (issue 32's common dual-stack case). The IPv4 hops are published CN2
// routers (route/testdata/public-routes.txt), the IPv6 ones lie in
// ChinaNet's AS4134 240e::/16 and HE's 2001:470::/32 (the bundled AS
// data): replayed as data, never probed.
type familyProber struct{ start time.Time }

func (p familyProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, on func(probe.Record)) ([]probe.SweepResult, error) {
	out := make([]probe.SweepResult, len(ts))
	for i := 0; i < cfg.Count && ctx.Err() == nil; i++ {
		for k, t := range ts {
			rtt := 30.0
			if t.Addr.Is6() {
				rtt = 45
			}
			out[k].Sent++
			out[k].Recv++
			out[k].RTTs = append(out[k].RTTs, rtt)
			if on != nil {
				on(probe.Record{Time: p.start.Add(time.Duration(i) * time.Second), Target: t.Name, Addr: t.Addr.String(),
					Protocol: probe.ICMP, Seq: i, Status: probe.StatusOK, RTTms: &rtt})
			}
		}
	}
	return out, ctx.Err()
}

func (familyProber) Trace(_ context.Context, addr string, cfg probe.TraceConfig, on func(*route.Trace)) error {
	hops := []string{"192.168.1.1", "59.43.16.165", "59.43.183.54", addr}
	if strings.Contains(addr, ":") {
		hops = []string{"240e:0:10::1", "240e:0:20::1", "240e:0:30::1", "2001:470:0:1::1", addr}
	}
	tr := &route.Trace{Schema: route.TraceSchema, Target: addr, Addr: addr, Protocol: cfg.Proto, Reached: true}
	for i, h := range hops {
		tr.Hops = append(tr.Hops, route.Hop{TTL: i + 1, Sent: 1, Responders: []route.Responder{{Addr: h, Recv: 1}}})
	}
	on(tr)
	return nil
}

// The live TUI judges sla.families as compare does (issue 32): a
// dual-stack candidate (127.0.0.1 and ::1) whose IPv4 route is CN2 GIA
// and IPv6 route ordinary 163, under line_classes [cn2-gia] and
// sla.families [ipv4, ipv6], fails on line_class on ipv6 alone, in
// compare's live run and in the TUI's live feed over the same fake
// prober; the overview's SLA cell names the family and the detail line
// its check. Before, the TUI judged the row's one class (the weaker,
// 163) without a family: its cell said FAIL and no check named ipv6.
func TestLiveTUIJudgesSLAFamiliesAsCompare(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"c.yaml": `vantage: {city: Shanghai}
candidates:
  - name: dual
    region: {city: Hong Kong}
    targets: [{addr: 127.0.0.1, protocol: icmp}, {addr: "::1", protocol: icmp}]
    offer: hk
offers: offers.yaml
traffic: {monthly_gb: 1000, peak_mbps: 50, shape: flat, period: 2026-10}
sla: {line_classes: [cn2-gia], rtt_p95_ms: 100, families: [ipv4, ipv6]}
`,
		"offers.yaml": "offers:\n  - name: hk\n    currency: CNY\n    bandwidth: {scheme: fixed, port_mbps: 100, price: \"1000\"}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "c.yaml")
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const probes = 12

	// What the test expects of both, by the SLA's own terms: IPv4's
	// CN2 GIA passes line_classes [cn2-gia], IPv6's 163 does not; each
	// family's p95 is its own targets' (30 and 45 ms), under 100 ms.
	want := []string{"line_class on ipv4 cn2-gia pass", "line_class on ipv6 chinanet-163 FAIL", "rtt_p95_ms on ipv4 30 pass", "rtt_p95_ms on ipv6 45 pass"}
	checks := func(v verdict.Verdict) []string {
		var out []string
		for _, c := range v.Checks {
			if c.Window != "" && c.Window != verdict.WindowAll {
				continue
			}
			out = append(out, fmt.Sprintf("%s %v %s", c.Label(), c.Measured, map[bool]string{true: "pass", false: "FAIL"}[c.Pass]))
		}
		slices.Sort(out)
		return out
	}

	f, err := candidates.LoadWith(path, candidates.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := compare.Run(t.Context(), f, compare.Options{Prober: familyProber{start: now}, Count: probes, Interval: time.Millisecond,
		Timeout: time.Second, TraceCycles: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := checks(r.Candidates[0].SLA); !slices.Equal(got, want) {
		t.Fatalf("compare's checks %q, want %q", got, want)
	}

	tf, err := candidates.LoadWith(path, LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromCompare(tf, FeedOptions{Now: now, Live: engine.Options{Prober: familyProber{start: now},
		Count: probes, Interval: time.Millisecond, Timeout: time.Second, TraceInterval: time.Hour, NoBW: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var msgs UpdatesMsg
	records, traced := map[string]int{}, map[string]bool{}
	emit := func(msg tea.Msg) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, msg)
		switch m := msg.(type) {
		case ProbeMsg:
			records[m.Record.Addr]++
		case TraceMsg:
			traced[m.Trace.Addr] = true
		case FeedErrMsg:
			t.Errorf("feed: %v", m.Err)
		}
		if records["127.0.0.1"] >= probes && records["::1"] >= probes && traced["127.0.0.1"] && traced["::1"] {
			cancel()
		}
	}
	runFeeders(ctx, feed.Live, emit)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("the live feed gave records %v and traces %v: want %d probes of each target and a trace of each family", records, traced, probes)
	}
	m := NewLoaded(context.Background(), nil, feed.Snapshot, Options{Width: 120, Height: 30, NoColor: true})
	m = step(t, m, msgs)
	c := m.find("dual")
	if got := checks(c.SLA); !slices.Equal(got, want) {
		t.Errorf("the TUI's checks %q, want compare's %q", got, want)
	}
	if c.SLA.Pass {
		t.Error("the TUI passes the candidate that compare fails on ipv6")
	}
	row := ""
	for _, l := range strings.Split(plain(m), "\n") {
		if strings.Contains(l, "dual ") && strings.Contains(l, "FAIL") {
			row = l
		}
	}
	if !strings.Contains(row, "FAIL ipv6") {
		t.Errorf("the overview's SLA cell does not name ipv6: %q\n%s", row, plain(m))
	}
	if testing.Verbose() {
		t.Log(plain(m))
	}
	if frame := plain(m); !strings.Contains(frame, "class on ipv6 chinanet-163") {
		t.Errorf("the detail line does not name the failing family's check (class on ipv6 chinanet-163):\n%s", frame)
	}
}

package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/testkit/testbin/bwtest"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// pingOnly pings for real (TCP connect to a listener of the test) and
// traces nothing: the run waits, as a trace that has not finished its
// first cycle does, so no raw socket is needed.
type pingOnly struct{ engine.Sender }

func (pingOnly) Trace(ctx context.Context, _ string, _ probe.TraceConfig, _ func(*route.Trace)) error {
	<-ctx.Done()
	return ctx.Err()
}

// The live TUI runs each candidate's bandwidth_test, as live compare does:
// against our iperf3-protocol server on loopback the row shows "test…"
// and the status line says it measures, then THRU shows the p5 in Mbit/s,
// the min_throughput_mbps check passes a low threshold (and fails an
// impossible one, the same messages applied under another SLA), oversell
// says it needs a journal, and the cost screen says what was carried of the
// port sold. A server that refuses gives a warning and "-".
func TestLiveTUIRunsTheBandwidthTest(t *testing.T) {
	samples, err := filepath.Abs("../samples")
	if err != nil {
		t.Fatal(err)
	}
	bwPort, tcp, shut := bwtest.Server(t), testbin.TCPListener(t), testbin.ClosedPort(t)
	yaml := fmt.Sprintf(`candidates:
  - name: lo
    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]
    bandwidth_test: {addr: 127.0.0.1, port: %d}
    offer: hk-cn2
  - name: shut
    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]
    bandwidth_test: {addr: 127.0.0.1, port: %d}
    offer: hk-bgp
offers: %s/offers.yaml
traffic: {log: %s/traffic/2026-10.csv}
fx: {base: CNY, USD: 7.10}
sla: {min_throughput_mbps: 1, max_oversell: 0.2}
`, tcp, bwPort, tcp, shut, samples, samples)
	path := filepath.Join(t.TempDir(), "lo.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.LoadWith(path, LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromCompare(f, FeedOptions{Now: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC),
		Live: engine.Options{Count: 2, Interval: 50 * time.Millisecond, BWTime: time.Second, Prober: pingOnly{}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := Options{Width: 160, Height: 30, NoColor: true}
	m := NewLoaded(ctx, feed, feed.Snapshot, opts)
	if !strings.Contains(plain(m), "THRU") {
		t.Fatalf("no THRU column before the first test:\n%s", plain(m))
	}
	var seen []Msg // every message, for the model under the impossible SLA
	started, done := map[string]bool{}, map[string]bool{}
	for !done["lo"] || !done["shut"] {
		if ctx.Err() != nil {
			t.Fatalf("the throughput tests did not both end (started %v, done %v)", started, done)
		}
		msg := feed.Next(ctx)
		batch, ok := msg.(UpdatesMsg)
		if !ok {
			batch = UpdatesMsg{msg}
		}
		for _, u := range batch {
			seen = append(seen, u)
			m = step(t, m, u)
			m.inflight = false
			switch u := u.(type) {
			case FeedErrMsg:
				t.Fatalf("feed error: %v", u.Err)
			case ThroughputStartMsg:
				started[u.Candidate] = true
				screen := plain(m)
				if cell := thruCell(t, screen, u.Candidate); cell != "test…" {
					t.Errorf("THRU of %s while its test runs: %q\n%s", u.Candidate, cell, screen)
				}
				if !strings.Contains(screen, "measuring throughput of "+u.Candidate+": download 1s") {
					t.Errorf("the status line does not say %s is measured:\n%s", u.Candidate, screen)
				}
			case ThroughputMsg:
				done[u.Candidate] = true
				if !started[u.Candidate] {
					t.Errorf("%s: an outcome before its start", u.Candidate)
				}
				if u.Candidate == "shut" && !strings.Contains(m.renderStatus(160), "shut: throughput test:") {
					t.Errorf("no warning for the refusing server: %q", m.renderStatus(160))
				}
			}
		}
	}
	screen := plain(m)
	lo := m.Candidate("lo")
	if lo.Throughput == nil || lo.Throughput.P5 == nil || lo.Throughput.Error != "" {
		t.Fatalf("lo: throughput %+v", lo.Throughput)
	}
	p5 := *lo.Throughput.P5 / 1e6
	if cell := thruCell(t, screen, "lo"); cell != strconv.FormatFloat(p5, 'f', 0, 64) || p5 < 1 {
		t.Errorf("THRU of lo %q, p5 %.1f Mbit/s:\n%s", cell, p5, screen)
	}
	if cell := thruCell(t, screen, "shut"); cell != "-" {
		t.Errorf("THRU of shut %q, want -:\n%s", cell, screen)
	}
	check := func(c *Candidate, name string) verdict.Check {
		for _, ch := range c.SLA.Checks {
			if ch.Name == name {
				return ch
			}
		}
		t.Fatalf("%s: no %s check in %+v", c.Name, name, c.SLA.Checks)
		return verdict.Check{}
	}
	if ch := check(lo, verdict.CheckMinThroughput); !ch.Pass || checkRequired(ch) != "≥ 1 Mbps" {
		t.Errorf("lo: %+v, want a pass of ≥ 1 Mbps", ch)
	}
	if ch := check(lo, verdict.CheckMaxOversell); ch.Pass || !strings.Contains(ch.Note, "bw --watch --journal") {
		t.Errorf("lo: %+v, want a fail that says oversell needs a journal", ch)
	}
	if ch := check(m.Candidate("shut"), verdict.CheckMinThroughput); ch.Pass || checkMeasured(ch) != "no data" ||
		!strings.Contains(ch.Note, "the throughput test failed") {
		t.Errorf("shut: %+v, want no data: the test failed", ch)
	}
	// The cost screen of lo (the top row: the other has no figure).
	for m.Selected() != "lo" {
		m = press(t, m, "j")
	}
	cost := plain(press(t, m, "c"))
	if !strings.Contains(cost, "carried p5 ") || !strings.Contains(cost, "Mbit/s (download) of the 1000.0 Mbit/s port sold") {
		t.Errorf("the cost screen lacks the carried line:\n%s", cost)
	}
	// The same messages under an impossible threshold: the check fails.
	snap := feed.Snapshot
	impossible := 1e9
	snap.SLA.MinThroughputMbps = &impossible
	m2 := NewLoaded(ctx, nil, snap, opts)
	for _, u := range seen {
		m2 = step(t, m2, u)
	}
	if ch := check(m2.Candidate("lo"), verdict.CheckMinThroughput); ch.Pass || checkMeasured(ch) == "no data" {
		t.Errorf("lo at ≥ 1e9 Mbps: %+v, want a measured fail", ch)
	}
}

// thruCell is the THRU cell of a candidate's row.
func thruCell(t *testing.T, screen, name string) string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	col := -1
	for _, l := range lines {
		if i := strings.Index(l, "THRU"); i >= 0 && strings.Contains(l, "CANDIDATE") {
			col = len([]rune(l[:i+len("THRU")]))
			break
		}
	}
	if col < 0 {
		t.Fatalf("no THRU column:\n%s", screen)
	}
	for _, l := range lines {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "›")); len(f) > 0 && f[0] == name {
			r := []rune(l)
			if len(r) < col {
				break
			}
			// The cell is right-aligned and ends under the header's end.
			fields := strings.Fields(string(r[:col]))
			return fields[len(fields)-1]
		}
	}
	t.Fatalf("no row of %s:\n%s", name, screen)
	return ""
}

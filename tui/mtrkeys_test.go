package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// selectRow moves the cursor to the candidate called name.
func selectRow(t *testing.T, m Model, name string) Model {
	t.Helper()
	for m.Selected() != name {
		before := m.Selected()
		m = press(t, m, "down")
		if m.Selected() == before {
			for m.Selected() != name {
				before = m.Selected()
				m = press(t, m, "up")
				if m.Selected() == before {
					t.Fatalf("no row %s: %v", name, m.Order())
				}
			}
		}
	}
	return m
}

// r resets the probe statistics, as in mtr: the status line counts 0
// probes and the rows wait for fresh records; the routes stay.
func TestResetKeyStartsTheStatisticsAfresh(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	if v := plain(m); !strings.Contains(v, "40 probes") {
		t.Fatalf("fixture has no probes:\n%s", v)
	}
	m = press(t, m, "r")
	v := plain(m)
	if !strings.Contains(v, "0 probes 0 lost") {
		t.Errorf("after r:\n%s", v)
	}
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	if v := plain(m); !strings.Contains(v, "59.43.130.1") || !strings.Contains(v, "RTT chart: waiting") {
		t.Errorf("route after r:\n%s", v)
	}
}

// n names the hops of a live route by reverse DNS (from the injected
// resolver), and turns it off again; a recorded route is never looked up.
func TestNamesKeyOnLiveRoutesOnly(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	names := rdns.New(func(ctx context.Context, addr string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		asked[addr]++
		return []string{"hop-" + strings.ReplaceAll(addr, ".", "-") + ".test."}, nil
	})
	feed := FixtureFeed(1)
	m := NewLoaded(context.Background(), feed, FixtureSnapshot(), Options{Width: 100, Height: 30, NoColor: true, Names: names})
	tr := FixtureTraces()[0] // hk-cn2-gia forward, as recorded
	m = step(t, m, tr)
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	_ = plain(m)
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("a recorded route was looked up: %v", asked)
	}
	mu.Unlock()

	tr.Trace.Source = "live"
	m.done = true // the feed's next batch is not this test's: only the names command runs
	nm, cmd := m.Update(tr)
	m = nm.(Model)
	_ = plain(m) // the view reads the cache only: it starts no lookup
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("the view started lookups: %v", asked)
	}
	mu.Unlock()
	// The lookups run in the command Update returned (with the feed's).
	if cmd == nil {
		t.Fatal("no command for the live route's names")
	}
	var named bool
	for _, msg := range runCmd(cmd) {
		if _, ok := msg.(NamesMsg); ok {
			named = true
			m = step(t, m, msg)
		}
	}
	if !named {
		t.Fatal("the names command brought no NamesMsg")
	}
	v := plain(m)
	if !strings.Contains(v, "hop-10-0-0-1.test") || !strings.Contains(v, "n: show addresses") {
		t.Errorf("live route without names:\n%s", v)
	}
	m = press(t, m, "n")
	if v := plain(m); strings.Contains(v, "hop-10-0-0-1.test") || !strings.Contains(v, "59.43.130.1") || !strings.Contains(v, "n: show names") {
		t.Errorf("n did not turn the names off:\n%s", v)
	}
	mu.Lock()
	defer mu.Unlock()
	for a, n := range asked {
		if n != 1 {
			t.Errorf("%s looked up %d times", a, n)
		}
	}
}

// Costs priced under what-if settings of the cost view are labelled so on
// the overview, and the label goes when the settings are back to the offers'.
func TestOverviewSaysWhenCostsAreWhatIf(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	if v := plain(m); strings.Contains(v, "what-if") {
		t.Fatalf("what-if label without what-if:\n%s", v)
	}
	m = press(t, m, "c", "m", "+")
	m = press(t, m, "esc")
	v := plain(m)
	if !strings.Contains(v, "what-if MONTHLY: 95th ") || !strings.Contains(v, "traffic ×") {
		t.Errorf("overview after m and +:\n%s", v)
	}
	if got := whatIfText(CostOptions{Scale: 1}); got != "" {
		t.Errorf("defaults: %q", got)
	}
	if got := whatIfText(CostOptions{Method: "cacti", Direction: "sum", Scale: 2}); got != "95th cacti · direction sum · traffic ×2" {
		t.Errorf("%q", got)
	}
}

// A candidate with a few seconds of probes is warming up: its SLA is
// pending ("wait"), never a verdict, and it is not marked cheapest.
func TestWarmingUpCandidateIsPending(t *testing.T) {
	m := NewLoaded(context.Background(), FixtureFeed(1), FixtureSnapshot(), Options{Width: 100, Height: 30, NoColor: true})
	var msgs UpdatesMsg
	for _, r := range FixtureRecords("hk-cn2-gia")[:3] {
		msgs = append(msgs, ProbeMsg{Candidate: "hk-cn2-gia", Record: r})
	}
	m = step(t, m, msgs)
	m = selectRow(t, m, "hk-cn2-gia")
	v := plain(m)
	var row string
	for _, l := range strings.Split(v, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›"), "hk-cn2-gia ") && row == "" {
			row = l
		}
	}
	if !strings.Contains(row, " wait ") || strings.Contains(row, "pass") || strings.Contains(row, "169,820*") {
		t.Errorf("row %q: want SLA wait, no verdict, not cheapest", row)
	}
	if !strings.Contains(v, "SLA pending: warming up, 3 of 10 probes") || !strings.Contains(v, "wait = SLA pending") {
		t.Errorf("overview:\n%s", v)
	}
	for _, r := range FixtureRecords("hk-cn2-gia")[3:] {
		m = step(t, m, ProbeMsg{Candidate: "hk-cn2-gia", Record: r})
	}
	if v := plain(m); strings.Contains(v, "SLA pending") {
		t.Errorf("still pending after 10 probes:\n%s", v)
	}
}

// ↑↓ on the route screen select a hop, and the chart shows that hop's RTT
// over the trace snapshots received, not only the destination's probes.
func TestRouteScreenChartsTheSelectedHop(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	tr := FixtureTraces()[0] // hk-cn2-gia forward; hop 4 is 59.43.130.1
	for k, last := range []float64{3.1, 9.5, 4.2} {
		rec := FixtureRecords("hk-cn2-gia")[0]
		rec.Time = FixtureStart().Add(time.Duration(20+k) * time.Second)
		m = step(t, m, ProbeMsg{Candidate: "hk-cn2-gia", Record: rec})
		tr.Trace.Hops = append([]route.Hop(nil), tr.Trace.Hops...)
		h := tr.Trace.Hops[3]
		h.Responders = append([]route.Responder(nil), h.Responders...)
		h.Responders[0].Samples = []float64{last}
		tr.Trace.Hops[3] = h
		m = step(t, m, tr)
	}
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	if v := plain(m); !strings.Contains(v, "RTT to hk-cn2-gia") {
		t.Fatalf("the route screen does not start on the destination's chart:\n%s", v)
	}
	m = press(t, m, "down", "down", "down", "down")
	v := plain(m)
	if !strings.Contains(v, "RTT at hop 4 (59.43.130.1, ms), last 3 traces 09:00:20–09:00:22 UTC") || !strings.Contains(v, "›   4 59.43.130.1") {
		t.Errorf("hop 4 selected:\n%s", v)
	}
}

// A line too long for the terminal is cut between words, never inside one.
func TestLineCutsBetweenWords(t *testing.T) {
	s := " 95th nearest-rank: rank 8470 of 8915 samples"
	if got := line(s, 24); got != " 95th nearest-rank: …" {
		t.Errorf("%q", got)
	}
	if got := line(s, 200); got != s {
		t.Errorf("a fitting line changed: %q", got)
	}
	if got := wrapLines("a bb ccc dddd eeeee", 9, 2, " ", " "); len(got) != 2 || got[0] != "a bb ccc" || got[1] != " dddd …" {
		t.Errorf("%q", got)
	}
}

// The cost view writes billing's byte counts in units.
func TestCostRuleVolumesInUnits(t *testing.T) {
	if got := volumeUnits("volume out: 50321534393 bytes (1000-based GB)"); got != "volume out: 50.32 GB (1000-based GB)" {
		t.Errorf("%q", got)
	}
	if got := volumeUnits("600 Mbps, commit 500"); got != "600 Mbps, commit 500" {
		t.Errorf("%q", got)
	}
}

// The cost chart of an offer billed on the 95th of in+out (the sample's
// hk-bgp) draws the sum and its one 95th line, not in and out.
func TestCostChartOfASumOfferDrawsTheSum(t *testing.T) {
	m, _ := offlineSampleModel(t, "../samples/candidates.yaml")
	m = press(t, selectRow(t, m, "hk-bgp"), "c")
	v := plain(m)
	if !strings.Contains(v, "⣿ sum") || strings.Contains(v, "⣿ in") || !strings.Contains(v, "95th sum") {
		t.Errorf("hk-bgp cost chart:\n%s", v)
	}
	m = press(t, selectRow(t, press(t, m, "esc"), "hk-cn2-gia"), "c")
	if v := plain(m); !strings.Contains(v, "⣿ in") || !strings.Contains(v, "95th out") {
		t.Errorf("hk-cn2-gia (greater) cost chart:\n%s", v)
	}
}

// runCmd runs a command and, for a batch, each of its commands, returning
// the messages.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// The route screen's chart draws one target (the candidate's first) while
// the overview aggregates every target (the worst of them): with a second
// target it names the one it draws.
func TestRouteChartNamesItsTargetBesideOthers(t *testing.T) {
	m := fixtureModel(t, 120, 30)
	base := FixtureRecords("hk-cn2-gia")[0]
	for k := range 3 {
		rec := base
		rec.Time = FixtureStart().Add(time.Duration(20+k) * time.Second)
		m = step(t, m, ProbeMsg{Candidate: "hk-cn2-gia", Record: rec})
		tcp := rec
		tcp.Protocol, tcp.Port = probe.TCP, 443
		m = step(t, m, ProbeMsg{Candidate: "hk-cn2-gia", Record: tcp})
	}
	m = press(t, selectRow(t, m, "hk-cn2-gia"), "enter")
	want := "RTT to hk-cn2-gia " + targetKey(base) + " (ms)"
	if v := plain(m); !strings.Contains(v, want) {
		t.Fatalf("want %q on the route screen:\n%s", want, v)
	}
}

package tui

import (
	"context"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

func TestSortKeysReorderRows(t *testing.T) {
	// Expected orders worked out by hand from the fixture (testdata/FIXTURE.md).
	m := fixtureModel(t, 100, 30)
	// Unsorted, the rows are in compare's ranking order: hk-cn2-gia passes;
	// the others fail, all measured, so by monthly cost: la-cu9929 147,055.20
	// < hk-bgp 147,580 < tokyo-ntt 150,892.80.
	if got, want := m.Order(), []string{"hk-cn2-gia", "la-cu9929", "hk-bgp", "tokyo-ntt"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ranking order = %v, want %v", got, want)
	}
	steps := []struct {
		key  string
		col  string
		want []string
	}{
		{"s", "name", []string{"hk-bgp", "hk-cn2-gia", "la-cu9929", "tokyo-ntt"}},
		{"s", "line", []string{"hk-bgp", "hk-cn2-gia", "la-cu9929", "tokyo-ntt"}}, // chinanet-163 < cn2-gia < cu-9929 < transit
		{"s", "rtt", []string{"hk-cn2-gia", "tokyo-ntt", "hk-bgp", "la-cu9929"}},  // p95 26 < 50 < 61 < 140
		{"i", "rtt", []string{"la-cu9929", "hk-bgp", "tokyo-ntt", "hk-cn2-gia"}},
		{"s", "jitter", []string{"tokyo-ntt", "hk-cn2-gia", "la-cu9929", "hk-bgp"}},  // 0.57 < 0.81 < 1.51 < 4.21
		{"s", "loss", []string{"hk-cn2-gia", "la-cu9929", "tokyo-ntt", "hk-bgp"}},    // 0,0,0 (ranking order), 20 %
		{"s", "stretch", []string{"la-cu9929", "hk-cn2-gia", "tokyo-ntt", "hk-bgp"}}, // 1.25 < 1.79 < 2.66 < 2.85
		{"s", "sla", []string{"hk-cn2-gia", "la-cu9929", "hk-bgp", "tokyo-ntt"}},
		{"s", "monthly", []string{"la-cu9929", "hk-bgp", "tokyo-ntt", "hk-cn2-gia"}}, // 147,055.20 < 147,580 < 150,892.80 < 169,820
		{"S", "sla", []string{"hk-cn2-gia", "la-cu9929", "hk-bgp", "tokyo-ntt"}},
	}
	for _, s := range steps {
		m = press(t, m, s.key)
		if m.sortCol != s.col {
			t.Fatalf("after %q sort column = %q, want %q", s.key, m.sortCol, s.col)
		}
		if got := m.Order(); !reflect.DeepEqual(got, s.want) {
			t.Errorf("after %q (sort %s) order = %v, want %v", s.key, s.col, got, s.want)
		}
	}
}

func TestNavigationKeys(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	m = press(t, m, "down", "down")
	if m.Selected() != "hk-bgp" {
		t.Errorf("selected after ↓↓ = %s, want hk-bgp", m.Selected())
	}
	m = press(t, m, "up")
	if m.Selected() != "la-cu9929" {
		t.Errorf("selected after ↑ = %s, want la-cu9929", m.Selected())
	}
	cases := []struct {
		keys []string
		want Screen
	}{
		{[]string{"enter"}, ScreenRoute},
		{[]string{"enter", "esc"}, ScreenOverview},
		{[]string{"c"}, ScreenCost},
		{[]string{"tab"}, ScreenCost},
		{[]string{"c", "esc"}, ScreenOverview},
		{[]string{"?"}, ScreenHelp},
		{[]string{"?", "esc"}, ScreenOverview},
		{[]string{"enter", "?"}, ScreenHelp},
		{[]string{"enter", "?", "esc"}, ScreenRoute},
		{[]string{"enter", "?", "?"}, ScreenRoute},
		{[]string{"enter", "c"}, ScreenCost},
	}
	for _, c := range cases {
		if got := press(t, m, c.keys...).Screen(); got != c.want {
			t.Errorf("keys %v: screen %v, want %v", c.keys, got, c.want)
		}
	}
	if !contains(plain(press(t, m, "enter")), "la-cu9929") {
		t.Error("route screen does not show the selected candidate")
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestQuitFromEveryScreen(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	for _, screen := range [][]string{nil, {"enter"}, {"c"}, {"?"}, {"enter", "?"}} {
		for _, q := range []string{"q", "ctrl+c"} {
			_, cmd := press(t, m, screen...).Update(keyMsg(q))
			if cmd == nil {
				t.Fatalf("%v then %s: no command", screen, q)
			}
			if _, ok := cmd().(tea.QuitMsg); !ok {
				t.Errorf("%v then %s: command does not quit", screen, q)
			}
		}
	}
}

// runCost executes the command a cost key returned and feeds its message back.
func runCost(t *testing.T, m Model, key string) Model {
	t.Helper()
	nm, cmd := m.Update(keyMsg(key))
	m = nm.(Model)
	if cmd == nil {
		t.Fatalf("key %q returned no command", key)
	}
	msg, ok := cmd().(CostMsg)
	if !ok {
		t.Fatalf("key %q: command did not produce a CostMsg", key)
	}
	if msg.Opts != m.CostOptions() {
		t.Fatalf("key %q: CostMsg for %+v, model at %+v", key, msg.Opts, m.CostOptions())
	}
	return step(t, m, msg)
}

func offered(c *Candidate) SchemeCost {
	for _, s := range c.Cost.Schemes {
		if s.Offered {
			return s
		}
	}
	return SchemeCost{}
}

func TestCostKeysRecompute(t *testing.T) {
	m := press(t, fixtureModel(t, 100, 30), "c")
	// hk-cn2-gia: commit 500 Mbps × 60 + overage × 90 on the 95th; items 130,820.
	steps := []struct {
		key          string
		opts         CostOptions
		p95, total   string
		screenSubstr string
	}{
		{"m", CostOptions{Method: "nearest-rank", Scale: 1}, "39000.00", "169820.00", "95th method nearest-rank"},
		{"+", CostOptions{Method: "nearest-rank", Scale: 1.25}, "52500.00", "183320.00", "traffic ×1.25"}, // 750 Mbps: 30,000 + 250×90
		{"d", CostOptions{Method: "nearest-rank", Direction: "greater", Scale: 1.25}, "52500.00", "183320.00", "direction greater"},
		{"d", CostOptions{Method: "nearest-rank", Direction: "max", Scale: 1.25}, "52500.00", "183320.00", "direction max"},
		{"d", CostOptions{Method: "nearest-rank", Direction: "sum", Scale: 1.25}, "69375.00", "200195.00", "direction sum"}, // 937.5: 30,000 + 437.5×90
		{"0", CostOptions{Method: "nearest-rank", Direction: "sum", Scale: 1}, "52500.00", "183320.00", "traffic ×1"},       // 750
		{"d", CostOptions{Method: "nearest-rank", Direction: "in", Scale: 1}, "30000.00", "160820.00", "direction in"},      // 150 < commit
		{"-", CostOptions{Method: "nearest-rank", Direction: "in", Scale: 0.75}, "30000.00", "160820.00", "traffic ×0.75"},
		{"M", CostOptions{Direction: "in", Scale: 0.75}, "30000.00", "160820.00", "95th method per offer"},
	}
	for _, s := range steps {
		m = runCost(t, m, s.key)
		if m.CostOptions() != s.opts {
			t.Fatalf("after %q options = %+v, want %+v", s.key, m.CostOptions(), s.opts)
		}
		c := m.Candidate("hk-cn2-gia")
		if got := offered(c).Amount.Text(); got != s.p95 {
			t.Errorf("after %q p95 charge = %s, want %s", s.key, got, s.p95)
		}
		if got := c.Cost.Total.Text(); got != s.total {
			t.Errorf("after %q total = %s, want %s", s.key, got, s.total)
		}
		if !contains(plain(m), s.screenSubstr) {
			t.Errorf("after %q the cost screen does not say %q", s.key, s.screenSubstr)
		}
	}
}

func TestStaleCostResultIgnored(t *testing.T) {
	m := press(t, fixtureModel(t, 100, 30), "c")
	nm, first := m.Update(keyMsg("+"))
	m = nm.(Model)
	nm, _ = m.Update(keyMsg("+"))
	m = nm.(Model)
	m = step(t, m, first()) // the ×1.25 result arrives after the user asked for ×1.5
	if got := m.Candidate("hk-cn2-gia").Cost.Total.Text(); got != "169820.00" {
		t.Errorf("a superseded result was applied: total %s", got)
	}
	if !m.costPending {
		t.Error("still waiting for the ×1.5 result, but not pending")
	}
}

// fakeSource counts Next calls and returns one probe per call.
type fakeSource struct{ next int }

func (f *fakeSource) Load(context.Context) (Snapshot, error) { return FixtureSnapshot(), nil }
func (f *fakeSource) Next(context.Context) tea.Msg {
	f.next++
	return UpdatesMsg{ProbeMsg{Candidate: "hk-cn2-gia", Record: FixtureRecords("hk-cn2-gia")[0]}}
}
func (f *fakeSource) Cost(_ context.Context, o CostOptions) (map[string]Cost, error) {
	return FixtureCosts(o), nil
}

func TestPauseStopsAndResumesTheFeed(t *testing.T) {
	src := &fakeSource{}
	m := NewLoaded(context.Background(), src, FixtureSnapshot(), Options{Width: 100, Height: 30, NoColor: true})
	cmd := m.Init()
	m.inflight = true
	m = step(t, m, cmd())
	nm, next := m.Update(keyMsg("space"))
	m = nm.(Model)
	if !m.Paused() || next != nil {
		t.Fatalf("space: paused=%v, cmd=%v; want paused and no new request (one is in flight)", m.Paused(), next != nil)
	}
	nm, next = m.Update(next0(src))
	m = nm.(Model)
	if next != nil {
		t.Error("an update arriving while paused asked for more")
	}
	if !contains(plain(m), "PAUSED") {
		t.Error("status line does not say PAUSED")
	}
	nm, next = m.Update(keyMsg("p"))
	m = nm.(Model)
	if m.Paused() || next == nil {
		t.Fatal("p did not resume the feed")
	}
	before := src.next
	next()
	if src.next != before+1 {
		t.Error("resume command did not call Next")
	}
}

func next0(src *fakeSource) tea.Msg { return src.Next(context.Background()) }

func TestResizeChangesFrame(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	m = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	checkFrame(t, plain(m), 80, 24)
	m = step(t, m, tea.WindowSizeMsg{Width: 60, Height: 15})
	checkFrame(t, plain(m), 60, 15)
}

func TestLiveStatsAgainstHand(t *testing.T) {
	// Hand computation (testdata/FIXTURE.md) and stats.Summarize as a second
	// oracle. jit is the window's mean |D| (what JIT and the SLA show), now
	// RFC 3550's running value.
	cases := []struct {
		name                    string
		p50, p95, min, jit, now float64
		loss                    float64
	}{
		{"hk-cn2-gia", 23, 26, 22, 16.0 / 9, 0.80860, 0},
		{"hk-bgp", 44, 61, 35, 80.0 / 7, 4.21478, 0.2},
		{"tokyo-ntt", 48, 50, 47, 12.0 / 9, 0.56633, 0},
		{"la-cu9929", 132, 140, 131, 31.0 / 9, 1.51153, 0},
	}
	for _, c := range cases {
		var s LiveStats
		var rtts []float64
		for _, r := range FixtureRecords(c.name) {
			s.applyRecord(r)
			if r.RTTms != nil {
				rtts = append(rtts, *r.RTTms)
			}
		}
		s.settle()
		if s.P50 != c.p50 || s.P95 != c.p95 || s.MinRTT != c.min || math.Abs(s.Jitter-c.jit) > 1e-9 ||
			math.Abs(s.J.RFC3550-c.now) > 1e-4 || s.Loss() != c.loss || math.Abs(s.result("").Loss-c.loss) > 1e-12 {
			t.Errorf("%s: p50 %v p95 %v min %v jitter %.5f now %.5f loss %v; want %v %v %v %.5f %.5f %v",
				c.name, s.P50, s.P95, s.MinRTT, s.Jitter, s.J.RFC3550, s.Loss(), c.p50, c.p95, c.min, c.jit, c.now, c.loss)
		}
		st, j := stats.Summarize(rtts)
		if st.P50 != s.P50 || st.P95 != s.P95 || math.Abs(j.MeanAbs-s.Jitter) > 1e-9 || math.Abs(j.RFC3550-s.J.RFC3550) > 1e-9 {
			t.Errorf("%s: disagrees with stats.Summarize: %+v %+v", c.name, st, j)
		}
	}
}

func TestDuplicateAndLateCountedApart(t *testing.T) {
	var s LiveStats
	rtt := 10.0
	for _, st := range []probe.Status{probe.StatusOK, probe.StatusDup, probe.StatusLate, probe.StatusLost, probe.StatusOK} {
		s.applyRecord(probe.Record{Status: st, RTTms: &rtt, Time: FixtureStart()})
	}
	if s.Sent != 4 || s.Recv != 2 || s.Dup != 1 || s.Late != 1 || s.Lost != 1 {
		t.Errorf("counts %+v", s)
	}
	if s.Loss() != 0.5 {
		t.Errorf("loss %v, want 0.5 (lost + late of 4 finished probes)", s.Loss())
	}
}

func TestRateLimitedHopIsExplained(t *testing.T) {
	frame := plain(press(t, fixtureModel(t, 100, 30), "enter"))
	for _, want := range []string{"RL", "loss at hop 5 does not carry on: ICMP rate limiting, not forwarding loss"} {
		if !contains(frame, want) {
			t.Errorf("route screen lacks %q", want)
		}
	}
}

func TestMemoryBoundedOverLongRun(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	m := fixtureModel(t, 100, 30)
	rtt := 20.0
	batch := make(UpdatesMsg, 100)
	feed := func(from, to int) {
		for i := from; i < to; i += len(batch) {
			for j := range batch {
				k := i + j
				rec := probe.Record{Time: FixtureStart().Add(time.Duration(k) * time.Millisecond), Addr: "203.0.113.10",
					Protocol: "icmp", Seq: k, Status: probe.StatusOK, RTTms: &rtt}
				if k%97 == 0 {
					rec.Status, rec.RTTms = probe.StatusLost, nil
				}
				batch[j] = ProbeMsg{Candidate: "hk-cn2-gia", Record: rec}
				rec2 := rec
				rec2.Protocol, rec2.Port = "tcp", 443 // a second target of the same candidate
				if j%2 == 0 {
					batch[j] = ProbeMsg{Candidate: "hk-cn2-gia", Record: rec2}
				}
			}
			m = step(t, m, batch)
			m.inflight = false
			_ = m.Render
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	feed(0, n/10)
	h1 := heap()
	feed(n/10, n)
	h2 := heap()
	c := m.Candidate("hk-cn2-gia")
	if c.Stats.History.Len() != HistorySize || c.Stats.History.Cap() != HistorySize {
		t.Errorf("ring holds %d of %d, want %d", c.Stats.History.Len(), c.Stats.History.Cap(), HistorySize)
	}
	if cap(c.Stats.scratch) != HistorySize {
		t.Errorf("scratch grew to %d", cap(c.Stats.scratch))
	}
	if len(c.Others) != 1 {
		t.Errorf("%d other targets, want 1", len(c.Others))
	}
	if c.Stats.Sent < n/4 {
		t.Errorf("only %d probes counted", c.Stats.Sent)
	}
	growth := int64(h2) - int64(h1)
	t.Logf("%d probe messages: heap %d → %d bytes (%+d)", n, h1, h2, growth)
	if growth > 512<<10 {
		t.Errorf("heap grew by %d bytes between %d and %d messages: not bounded", growth, n/10, n)
	}
}

func TestScrollingKeepsSelectionVisible(t *testing.T) {
	m := benchModel(t, 100, 30) // 50 candidates, 30 hops each
	for i := 0; i < 40; i++ {
		m = press(t, m, "down")
	}
	want := m.Order()[40]
	if m.Selected() != want {
		t.Fatalf("selected %s after 40 × ↓, want row 41 %s", m.Selected(), want)
	}
	frame := plain(m)
	checkFrame(t, frame, 100, 30)
	if !contains(frame, "› "+want[:9]) { // the name column cuts it with …
		t.Errorf("the selected row scrolled out of view:\n%s", frame)
	}
	m = press(t, m, "enter")
	if !contains(plain(m), "    1 198.51.100.1") {
		t.Error("route view does not start at hop 1")
	}
	// ↓ moves the hop cursor (its RTT is charted); the list scrolls to
	// keep it in view.
	for range 20 {
		m = press(t, m, "down")
	}
	frame = plain(m)
	if contains(frame, "    1 198.51.100.1") || !contains(frame, "›  20 198.51.100.20") || !contains(frame, "more hops") ||
		!contains(frame, "RTT at hop 20") {
		t.Errorf("↓×20 in the route view did not move the cursor to hop 20 and scroll:\n%s", frame)
	}
	if !contains(frame, "RL loss at hop 7 does not carry on") {
		t.Errorf("the rate-limit note is missing:\n%s", frame)
	}
}

// TestDeadTargetShowsDashAndRanksLast: a candidate whose probes are all
// lost shows "-" for RTT and jitter (absent, not 0 and not "waiting"),
// fails every measured check for want of data, and ranks after the
// measured candidates although its offer is the cheapest.
func TestDeadTargetShowsDashAndRanksLast(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	var msgs UpdatesMsg
	for i := 0; i < 10; i++ {
		msgs = append(msgs, ProbeMsg{Candidate: "la-cu9929", Record: probe.Record{Time: FixtureStart().Add(time.Duration(100+i) * time.Second),
			Target: "203.0.113.40", Addr: "203.0.113.40", Protocol: "icmp", Seq: 100 + i, Status: probe.StatusLost}})
	}
	// Fresh statistics for la-cu9929: only lost probes.
	c := m.Candidate("la-cu9929")
	c.Stats, c.Others = LiveStats{}, nil
	m = step(t, m, msgs)
	if got := m.Order(); got[len(got)-1] != "la-cu9929" {
		t.Errorf("order %v: the dead candidate (cheapest, 147,055.20) is not last", got)
	}
	row := ""
	for _, l := range strings.Split(plain(m), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›"), "la-cu9929 ") {
			row = l
			break
		}
	}
	// name, line, RTT50/95, RECENT (all lost: ×), JIT, LOSS, STR
	if f := strings.Fields(row); len(f) < 7 || f[2] != "-" || f[4] != "-" || f[5] != "100%" || f[6] != "-" {
		t.Errorf("row %q: want - for RTT, jitter and stretch, 100%% loss", row)
	}
	for _, ch := range m.Candidate("la-cu9929").SLA.Checks {
		if ch.Name == "loss" {
			if ch.Pass || checkMeasured(ch) != "100%" {
				t.Errorf("loss check: pass %v measured %q; want a measured 100%% failure", ch.Pass, checkMeasured(ch))
			}
			continue
		}
		if ch.Name != "line_class" && (ch.Pass || checkMeasured(ch) != "no data") {
			t.Errorf("check %s: pass %v measured %q; want a failure for want of data", ch.Name, ch.Pass, checkMeasured(ch))
		}
	}
}

// A candidate answering faster than light in fibre allows from its stated
// region (la-cu9929: floor 104.5 ms, replies in 0.05 ms, as a loopback
// target given a city would) shows "<1!" as its stretch, not a ratio that
// rounds to 0.0, and the legend says what it means.
func TestStretchBelowTheFloorIsFlagged(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	var msgs UpdatesMsg
	for i := 0; i < 12; i++ {
		rtt := 0.05
		msgs = append(msgs, ProbeMsg{Candidate: "la-cu9929", Record: probe.Record{Time: FixtureStart().Add(time.Duration(100+i) * time.Second),
			Target: "203.0.113.40", Addr: "203.0.113.40", Protocol: "icmp", Seq: 100 + i, Status: probe.StatusOK, RTTms: &rtt}})
	}
	c := m.Candidate("la-cu9929")
	c.Stats, c.Others = LiveStats{}, nil
	m = step(t, m, msgs)
	frame := plain(m)
	// name, line, RTT50/95, RECENT, JIT, LOSS, STR
	str := func(name string) string {
		for _, l := range strings.Split(frame, "\n") {
			if f := strings.Fields(strings.TrimLeft(l, " ›")); len(f) >= 7 && f[0] == name {
				return f[6]
			}
		}
		return ""
	}
	if got := str("la-cu9929"); got != "<1!" {
		t.Errorf("STR cell = %q, want <1! (0.05 ms against a 104.5 ms floor)\n%s", got, frame)
	}
	if !strings.Contains(frame, "STR <1! = RTT below the physical floor") {
		t.Errorf("legend does not explain <1!:\n%s", frame)
	}
	if got := str("hk-cn2-gia"); got != "1.8" {
		t.Errorf("hk-cn2-gia STR = %q, want its ratio 1.8", got)
	}
	// Its SLA line gives the stretch in two significant digits and says
	// why it fails (it read "✗ stretch 0.00 ≤ 2.5").
	ch := verdict.Check{Name: verdict.CheckStretch, Measured: 0.05 / 104.5, Unit: "ratio"}
	if got := checkMeasured(ch); got != "0.00048" {
		t.Errorf("stretch %v shown as %q, want 0.00048", ch.Measured, got)
	}
	// A sub-millisecond p95 keeps two significant digits (it read "0.0 ms").
	p95 := verdict.Check{Name: verdict.CheckRTTP95, Measured: 0.0457, Unit: "ms"}
	if got := checkMeasured(p95); got != "0.046 ms" {
		t.Errorf("p95 %v shown as %q, want 0.046 ms", p95.Measured, got)
	}
	if got := checkMeasured(verdict.Check{Name: verdict.CheckRTTP95, Measured: 41.04, Unit: "ms"}); got != "41.0 ms" {
		t.Errorf("p95 41.04 shown as %q, want 41.0 ms", got)
	}
	for i := 0; i < 10 && !strings.Contains(plain(m), " la-cu9929 · "); i++ {
		m = step(t, m, keyMsg("j"))
	}
	frame = plain(m)
	if strings.Contains(frame, "stretch 0.00 ") || !strings.Contains(frame, "(min RTT below the physical floor)") {
		t.Errorf("the SLA line of la-cu9929 does not say it is below the floor:\n%s", frame)
	}
}

// The route screen shows the window's jitter (JIT, the SLA's figure) and
// RFC 3550's running value labelled "now" where the line has room:
// hk-cn2-gia 16/9 = 1.78 ms and 0.81 (testdata/FIXTURE.md).
func TestRouteScreenShowsJitterNow(t *testing.T) {
	frame := plain(press(t, fixtureModel(t, 130, 30), "enter"))
	if !contains(frame, "jitter 1.8, now 0.81") {
		t.Errorf("route screen at 130 columns lacks the window jitter and the running value:\n%s", frame)
	}
}

package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Each screen on its own: its Update takes a key over the shared state and
// its View shows what the key did. The expectations are the fixture's
// figures read by hand (tui/testdata/FIXTURE.md), not the views' output.

// screenView is a screen's View with the ANSI codes and trailing blanks
// taken out.
func screenView(s screen, st *state, w, h int) string {
	lines := strings.Split(ansiStrip(s.View(st, w, h)), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// The cost screen's m steps the 95th method from each offer's own rule to
// the first of billing's methods (nearest-rank), M back; the view names the
// method in force, and m returns the command that re-prices.
func TestCostScreenMethodKeyNamesTheNextMethod(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	st := &m.state
	var s screen = newCostScreen()
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "95th method per offer · direction per offer") {
		t.Fatalf("before m: want the offers' own rules:\n%s", v)
	}
	s, cmd := s.Update(st, keyMsg("m"))
	if cmd == nil || !st.costPending {
		t.Fatal("m returned no re-pricing command")
	}
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "95th method nearest-rank · direction per offer") {
		t.Errorf("after m: want the next method, nearest-rank:\n%s", v)
	}
	s, _ = s.Update(st, keyMsg("M"))
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "95th method per offer") {
		t.Errorf("after m M: want each offer's rule again:\n%s", v)
	}
	// A key of another screen does nothing here.
	if _, cmd := s.Update(st, keyMsg("s")); cmd != nil || st.sortCol != "" {
		t.Errorf("s on the cost screen: command %v, sort %q", cmd != nil, st.sortCol)
	}
}

// The route screen's v turns to the return path, ↓ puts the hop cursor on
// the first hop: its chart replaces the destination's.
func TestRouteScreenKeysChangeItsView(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	st := &m.state
	var s screen = newRouteScreen()
	v := screenView(s, st, 100, 29)
	// hk-cn2-gia, the top row: forward to 203.0.113.10 over 8 hops, the
	// destination's RTT charted.
	if !strings.Contains(v, "Route hk-cn2-gia") || !strings.Contains(v, "forward → 203.0.113.10") || !strings.Contains(v, "RTT to hk-cn2-gia") {
		t.Fatalf("route screen before any key:\n%s", v)
	}
	s, _ = s.Update(st, keyMsg("down"))
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "RTT at hop 1 (10.0.0.1") {
		t.Errorf("after ↓: want hop 1's chart:\n%s", v)
	}
	s, _ = s.Update(st, keyMsg("v"))
	v = screenView(s, st, 100, 29)
	// The return trace: 5 hops toward 198.51.100.7, hop 4 silent; the cursor
	// back on the destination.
	if !strings.Contains(v, "return → 198.51.100.7") || !strings.Contains(v, "???") || !strings.Contains(v, "RTT to hk-cn2-gia") {
		t.Errorf("after v: want the return path with the destination charted:\n%s", v)
	}
	if st.selected != "hk-cn2-gia" {
		t.Errorf("route keys moved the candidate cursor to %q", st.selected)
	}
	// ] is the next candidate in the ranking: la-cu9929.
	s, _ = s.Update(st, keyMsg("]"))
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "Route la-cu9929") {
		t.Errorf("after ]: want la-cu9929's route:\n%s", v)
	}
}

// The overview's s sorts by the first sortable column (the name): the title
// says so and the rows are in alphabetical order; j moves the cursor and
// the detail block follows it.
func TestOverviewScreenSortAndCursorKeys(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	st := &m.state
	var s screen = newOverviewScreen()
	s, _ = s.Update(st, keyMsg("s"))
	v := screenView(s, st, 100, 29)
	if !strings.Contains(v, "sorted by name ascending") {
		t.Fatalf("after s: want the title to name the sort:\n%s", v)
	}
	want := []string{"hk-bgp", "hk-cn2-gia", "la-cu9929", "tokyo-ntt"}
	last := -1
	for _, n := range want {
		i := strings.Index(v, "  "+n+" ")
		if i < 0 {
			i = strings.Index(v, "› "+n+" ")
		}
		if i <= last {
			t.Fatalf("after s: %s not after the rows before it (%v):\n%s", n, want, v)
		}
		last = i
	}
	// Until the user moves it the cursor is on the top row (hk-bgp now);
	// j moves it to hk-cn2-gia, next in name order.
	if !strings.Contains(v, "› hk-bgp") || !strings.Contains(v, "\n hk-bgp · ") {
		t.Errorf("after s: want hk-bgp, the top row, selected with its detail:\n%s", v)
	}
	s, _ = s.Update(st, keyMsg("j"))
	if v := screenView(s, st, 100, 29); !strings.Contains(v, "› hk-cn2-gia") || !strings.Contains(v, "\n hk-cn2-gia · ") {
		t.Errorf("after s j: want hk-cn2-gia selected with its detail:\n%s", v)
	}
}

// Help takes no key of its own (j, m, s leave it as it was) and fits 80
// columns whatever the keys (issue 35 for the width).
func TestHelpScreenIgnoresKeysAndFitsEightyColumns(t *testing.T) {
	m := fixtureModel(t, 80, 200)
	st := &m.state
	var s screen = helpScreen{help: &helpMemo{}}
	before := screenView(s, st, 80, 199)
	for _, k := range []string{"j", "m", "s", "v", "enter"} {
		var cmd tea.Cmd
		s, cmd = s.Update(st, keyMsg(k))
		if cmd != nil {
			t.Errorf("help: %s returned a command", k)
		}
	}
	after := screenView(s, st, 80, 199)
	if after != before {
		t.Errorf("help changed with keys:\n%s\nwas\n%s", after, before)
	}
	for i, l := range strings.Split(after, "\n") {
		if w := textWidth(l); w > 80 {
			t.Errorf("help line %d is %d columns: %q", i+1, w, l)
		}
	}
	// The cost screen's keys are listed, with their descriptions whole.
	if !strings.Contains(after, "m M        cost: next / previous 95th method") {
		t.Errorf("help does not list m M:\n%s", after)
	}
}

// The model routes a key to the screen shown only: m is the cost screen's
// and does nothing on the overview; on the cost screen it re-prices.
func TestModelRoutesKeysToTheScreenShown(t *testing.T) {
	m := fixtureModel(t, 100, 30)
	nm, cmd := m.Update(keyMsg("m"))
	m = nm.(Model)
	if cmd != nil || m.CostOptions().Method != "" {
		t.Fatalf("m on the overview: command %v, method %q", cmd != nil, m.CostOptions().Method)
	}
	m = press(t, m, "c")
	nm, cmd = m.Update(keyMsg("m"))
	m = nm.(Model)
	if cmd == nil || m.CostOptions().Method != "nearest-rank" {
		t.Errorf("m on the cost screen: command %v, method %q, want nearest-rank", cmd != nil, m.CostOptions().Method)
	}
	// v is the route screen's: on the cost screen it leaves the route
	// screen's direction as it was.
	m = press(t, m, "v", "esc", "enter")
	if v := plain(m); !strings.Contains(v, "forward → 203.0.113.10") {
		t.Errorf("v on the cost screen turned the route screen:\n%s", v)
	}
}

package tui

import (
	"strings"
	"testing"
)

// At 80 columns the help screen fits (no line wider, nothing cut with …)
// and shows every key of every group with its whole description (issue 35:
// the longest descriptions and the legend were cut at 80 columns).
func TestHelpFitsEightyColumnsAndShowsEveryKey(t *testing.T) {
	for _, w := range []int{80, 60} {
		m := press(t, fixtureModel(t, w, 200), "?")
		screen := plain(m)
		lines := strings.Split(screen, "\n")
		for i, l := range lines {
			if tw := textWidth(l); tw > w {
				t.Errorf("width %d: line %d is %d columns: %q", w, i+1, tw, l)
			}
			if strings.Contains(l, "…") && !strings.Contains(l, "?:help") { // the status line shortens by design
				t.Errorf("width %d: line %d is cut: %q", w, i+1, l)
			}
		}
		// Every word of every description is on the screen, in order.
		flat := strings.Join(strings.Fields(screen), " ")
		for _, g := range helpGroups() {
			for _, b := range g.Keys {
				h := b.Help()
				if h.Key == "" {
					continue
				}
				if want := h.Key + " " + strings.Join(strings.Fields(h.Desc), " "); !strings.Contains(flat, want) {
					t.Errorf("width %d: key %q with its description %q is not shown whole", w, h.Key, h.Desc)
				}
			}
		}
		if !strings.Contains(flat, "not forwarding loss).") {
			t.Errorf("width %d: the legend's end is missing", w)
		}
	}
}

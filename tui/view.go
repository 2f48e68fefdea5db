package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/billing"
)

// View renders the current screen in the alternate screen buffer.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "linecheck"
	return v
}

// Render returns the frame for the current size: exactly height lines, none
// wider than width. Golden tests compare it with ANSI stripped.
func (m Model) Render() string {
	w, h := max(m.width, 20), max(m.height, 5)
	var body []string
	if !m.loaded {
		body = []string{m.title("loading", w, m.screen == ScreenOverview), "", " loading candidates…"}
		if m.lastErr != "" {
			body = append(body, " "+m.st.Fail.Render(m.lastErr))
		}
	} else {
		body = []string{m.active().View(&m.state, w, h-1)}
	}
	// The screen's lines (an element may hold several), h-1 of them, each
	// cut to the width, then the status line.
	lines := make([]string, 0, h)
	for _, l := range body {
		for len(lines) < h-1 {
			i := strings.IndexByte(l, '\n')
			if i < 0 {
				lines = append(lines, line(l, w))
				break
			}
			lines = append(lines, line(l[:i], w))
			l = l[i+1:]
		}
	}
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.renderStatus(w))
	return strings.Join(lines, "\n")
}

// title is the first line of every screen; sorted adds the sort column
// (the overview's).
func (s *state) title(screen string, width int, sorted bool) string {
	parts := []string{"linecheck", screen}
	if s.snap.Title != "" {
		parts = append(parts, s.snap.Title)
	}
	if s.snap.Mode != "" {
		parts = append(parts, s.snap.Mode)
	}
	parts = append(parts, fmt.Sprintf("%d candidates", len(s.cands)))
	if s.sortCol != "" && sorted {
		dir := "ascending"
		if s.sortDesc {
			dir = "descending"
		}
		parts = append(parts, "sorted by "+s.sortCol+" "+dir)
	}
	// Too wide: leave out the last parts (sort, candidate count, mode) one
	// by one before cutting, between words, what is left.
	for len(parts) > 3 && textWidth(" "+strings.Join(parts, " · ")) > width {
		parts = parts[:len(parts)-1]
	}
	return s.st.render(styleTitle, line(" "+strings.Join(parts, " · "), width))
}

// renderStatus is the last line: feed state, probe counts, errors, key hints.
func (m *Model) renderStatus(width int) string {
	var sent, lost, late int
	var last time.Time
	for _, c := range m.cands {
		s, l, lt := c.sent()
		sent, lost, late = sent+s, lost+l, late+lt
		if c.Stats.Last.After(last) {
			last = c.Stats.Last
		}
		for _, o := range c.Others {
			if o.Last.After(last) {
				last = o.Last
			}
		}
	}
	state := "▶"
	switch {
	case m.paused:
		state = "PAUSED"
	case m.done:
		state = "■ done"
	}
	parts := []string{state}
	// A replay under way says how far it has got: its figures are interim
	// (the demo's replay showed them with no sign of progress).
	if r, ok := m.src.(interface{ ReplayFraction() (float64, int) }); ok && !m.done && strings.HasPrefix(m.snap.Mode, "replay") {
		frac, loops := r.ReplayFraction()
		rp := fmt.Sprintf("replay %d%%", int(frac*100))
		if loops > 0 {
			rp = fmt.Sprintf("replay loop %d %d%%", loops+1, int(frac*100))
		}
		parts = append(parts, rp)
	}
	// A throughput test under way (or the b key's answer) first: it says
	// why the probe counts stand still, and a narrow line keeps it.
	for _, n := range []string{m.bwNote, m.bwHint} {
		if n != "" {
			parts = append(parts, n)
		}
	}
	if !last.IsZero() {
		parts = append(parts, last.UTC().Format("15:04:05Z"))
	}
	p := fmt.Sprintf("%s probes %s lost", billing.GroupThousands(fmt.Sprint(sent)), billing.GroupThousands(fmt.Sprint(lost)))
	if late > 0 {
		p += fmt.Sprintf(" %d late", late)
	}
	parts = append(parts, p, fmt.Sprintf("%d traces", m.traces))
	if d, ok := m.src.(interface{ DroppedCount() int64 }); ok {
		if n := d.DroppedCount(); n > 0 {
			parts = append(parts, fmt.Sprintf("%d dropped", n))
		}
	}
	errs := fmt.Sprintf("%d errors", m.errCount)
	if m.lastErr != "" {
		errs += ": " + m.lastErr
	}
	parts = append(parts, errs)
	if m.costPending {
		parts = append(parts, "recomputing costs…")
	}
	left := " " + strings.Join(parts, " · ")
	if m.paused {
		left = " " + m.st.render(styleWarn, parts[0]) + " · " + strings.Join(parts[1:], " · ")
	}
	right := "?:help q:quit "
	if m.screen != ScreenOverview {
		right = "esc:back " + right
	}
	gap := width - textWidth(right)
	s := fit(line(left, max(gap-1, 1)), max(gap, 0), false) + right
	if m.errCount > 0 {
		return m.st.render(styleWarn, line(s, width))
	}
	return m.st.render(styleStatus, line(s, width))
}

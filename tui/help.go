package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// helpScreen lists every key and the overview's legend. It takes no key of
// its own: ? and esc, which close it, are every screen's.
type helpScreen struct {
	help *helpMemo // memo of the lines under the title
}

// Update ignores every key: help is read, not used.
func (hs helpScreen) Update(_ *state, _ tea.Msg) (screen, tea.Cmd) { return hs, nil }

// View is the help at width × height.
func (hs helpScreen) View(s *state, width, height int) string {
	return strings.Join(hs.renderHelp(s, width, height), "\n")
}

// renderHelp lists every key.
func (hs *helpScreen) renderHelp(s *state, width, height int) []string {
	// Under the title the screen changes only with the width: it is drawn
	// once per width.
	if hs.help == nil || hs.help.lines == nil || hs.help.width != width {
		body := hs.helpBody(s, width)
		if hs.help == nil {
			return clipLines(append([]string{s.title("Help", width, false)}, body...), height)
		}
		hs.help.lines, hs.help.width = body, width
	}
	return clipLines(append([]string{s.title("Help", width, false)}, hs.help.lines...), height)
}

// clipLines keeps the first n lines.
func clipLines(out []string, n int) []string {
	if len(out) > n {
		return out[:n]
	}
	return out
}

// helpMemo holds the help screen's lines under its title.
type helpMemo struct {
	lines []string
	width int
}

// helpBody is the help screen under its title: every key, then the legend,
// wrapped at width (an 80-column terminal cut the longest descriptions
// and the legend, issue 35): a description goes on under itself.
func (hs *helpScreen) helpBody(s *state, width int) []string {
	const keyCols = 14 // "   " + the key in 10 columns + " "
	descW := max(width-keyCols, 20)
	out := []string{""}
	for _, g := range helpGroups() {
		out = append(out, " "+s.st.Header.Render(g.Title))
		for _, b := range g.Keys {
			h := b.Help()
			if h.Key == "" {
				continue
			}
			for i, l := range wrapLines(h.Desc, descW, 1<<10, "", " ") {
				if i == 0 {
					out = append(out, "   "+s.st.Key.Render(fit(h.Key, 10, false))+" "+l)
					continue
				}
				out = append(out, strings.Repeat(" ", keyCols)+l)
			}
		}
	}
	legend := "RTT50/95, RECENT, LOSS and JIT (mean |ΔRTT|, the SLA's jitter) cover the last " + fmt.Sprint(HistorySize) +
		" probes; worst target shown. STR = stretch: min RTT / physical floor." +
		" MONTHLY: the offer's total in the compare currency; FIXED PER-GB 95TH: the same traffic" +
		" under the provider's other offers; * cheapest. RL on a hop = icmp-rate-limited: its" +
		" loss does not carry on to later hops (ICMP rate limiting, not forwarding loss)."
	out = append(out, "")
	return append(out, wrapLines(" "+legend, max(width, 21), 1<<10, " ", " ")...)
}

package tui

import (
	"fmt"
	"math"
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
	switch {
	case !m.loaded:
		body = []string{m.renderTitle("loading", w), "", " loading candidates…"}
		if m.lastErr != "" {
			body = append(body, " "+m.st.Fail.Render(m.lastErr))
		}
	case m.screen == ScreenHelp:
		body = m.renderHelp(w, h-1)
	case m.screen == ScreenRoute:
		body = m.renderRoute(w, h-1)
	case m.screen == ScreenCost:
		body = m.renderCost(w, h-1)
	default:
		body = m.renderOverview(w, h-1)
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

// renderTitle is the first line of every screen.
func (m *Model) renderTitle(screen string, width int) string {
	parts := []string{"linecheck", screen}
	if m.snap.Title != "" {
		parts = append(parts, m.snap.Title)
	}
	if m.snap.Mode != "" {
		parts = append(parts, m.snap.Mode)
	}
	parts = append(parts, fmt.Sprintf("%d candidates", len(m.cands)))
	if m.sortCol != "" && m.screen == ScreenOverview {
		dir := "ascending"
		if m.sortDesc {
			dir = "descending"
		}
		parts = append(parts, "sorted by "+m.sortCol+" "+dir)
	}
	// Too wide: leave out the last parts (sort, candidate count, mode) one
	// by one before cutting, between words, what is left.
	for len(parts) > 3 && textWidth(" "+strings.Join(parts, " · ")) > width {
		parts = parts[:len(parts)-1]
	}
	return m.st.render(styleTitle, line(" "+strings.Join(parts, " · "), width))
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

// renderHelp lists every key.
func (m *Model) renderHelp(width, height int) []string {
	// Under the title the screen changes only with the width: it is drawn
	// once per width.
	if m.help == nil || m.help.lines == nil || m.help.width != width {
		body := m.helpBody(width)
		if m.help == nil {
			return clipLines(append([]string{m.renderTitle("Help", width)}, body...), height)
		}
		m.help.lines, m.help.width = body, width
	}
	return clipLines(append([]string{m.renderTitle("Help", width)}, m.help.lines...), height)
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
func (m *Model) helpBody(width int) []string {
	const keyCols = 14 // "   " + the key in 10 columns + " "
	descW := max(width-keyCols, 20)
	out := []string{""}
	for _, g := range helpGroups() {
		out = append(out, " "+m.st.Header.Render(g.Title))
		for _, b := range g.Keys {
			h := b.Help()
			if h.Key == "" {
				continue
			}
			for i, l := range wrapLines(h.Desc, descW, 1<<10, "", " ") {
				if i == 0 {
					out = append(out, "   "+m.st.Key.Render(fit(h.Key, 10, false))+" "+l)
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

// hopColumns are the route detail's columns, mtr style.
var hopColumns = []column[hopShown]{
	{key: "ttl", title: "HOP", width: 3, right: true,
		cell: func(h hopShown) (string, styleID) { return fmt.Sprint(h.TTL), styleNone }},
	{key: "addr", title: "ADDRESS", width: 15, flex: true,
		cell: func(h hopShown) (string, styleID) {
			if h.addr() == "" {
				return "???", styleNone
			}
			if h.name != "" {
				return h.name, styleNone
			}
			return h.addr(), styleNone
		}},
	{key: "asn", title: "ASN", width: 7, prio: 2,
		cell: func(h hopShown) (string, styleID) {
			if h.main.ASN == 0 {
				return "-", styleNone
			}
			return fmt.Sprintf("AS%d", h.main.ASN), styleNone
		}},
	{key: "carrier", title: "NETWORK", width: 13,
		cell: func(h hopShown) (string, styleID) { return orDash(h.carrier()), styleNone }},
	{key: "cc", title: "CC", width: 2, prio: 3,
		cell: func(h hopShown) (string, styleID) { return h.main.Country, styleNone }},
	{key: "loss", title: "LOSS", width: 5, right: true,
		cell: func(h hopShown) (string, styleID) { return pct(h.Loss), styleNone }},
	{key: "sent", title: "SNT", width: 4, right: true, prio: 3,
		cell: func(h hopShown) (string, styleID) { return fmt.Sprint(h.Sent), styleNone }},
	{key: "last", title: "LAST", width: 5, right: true, prio: 3,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.last()), styleNone }},
	{key: "avg", title: "AVG", width: 5, right: true,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().Avg), styleNone }},
	{key: "best", title: "BEST", width: 5, right: true, prio: 3,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().Min), styleNone }},
	{key: "p50", title: "P50", width: 5, right: true, prio: 1,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().P50), styleNone }},
	{key: "p95", title: "P95", width: 5, right: true,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().P95), styleNone }},
	{key: "worst", title: "WRST", width: 5, right: true, prio: 2,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().Max), styleNone }},
	{key: "stdev", title: "STDEV", width: 5, right: true, prio: 4,
		cell: func(h hopShown) (string, styleID) { return hopMs(h, h.rtt().Stdev), styleNone }},
	{key: "mtu", title: "MTU", width: 5, right: true, prio: 1,
		cell: func(h hopShown) (string, styleID) {
			if h.MTU <= 0 {
				return "-", styleNone
			}
			return fmt.Sprint(h.MTU), styleNone
		}},
	{key: "flags", title: "FLAGS", width: 7, prio: 1,
		cell: func(h hopShown) (string, styleID) {
			var f []string
			if h.rateLimited() {
				f = append(f, "RL")
			}
			if len(h.main.MPLS) > 0 {
				f = append(f, "MPLS")
			}
			if n := h.alternates(); n > 0 {
				f = append(f, fmt.Sprintf("+%d", n))
			}
			return strings.Join(f, " "), styleNone
		}},
}

// routeColumns are hopColumns, with the MTU column only for a route whose
// path MTU was measured.
func routeColumns(r *Route) []column[hopShown] {
	if r.MTU {
		return hopColumns
	}
	cols := make([]column[hopShown], 0, len(hopColumns))
	for _, c := range hopColumns {
		if c.key != "mtu" {
			cols = append(cols, c)
		}
	}
	return cols
}

func hopMs(h hopShown, v float64) string {
	if h.addr() == "" || (h.Loss >= 1 && h.Sent > 0) {
		return "-"
	}
	return ms(v)
}

// renderRoute is the route detail of the selected candidate: hops mtr
// style, the rate-limit notes, and the destination RTT over time.
func (m *Model) renderRoute(width, height int) []string {
	c := m.current()
	if c == nil {
		return []string{m.renderTitle("Route", width)}
	}
	r, dir, via := m.routeShown(c)
	out := []string{m.renderTitle("Route "+c.Name, width)}
	if r == nil {
		out = append(out, m.routeNotTraced(c, dir, via, width)...)
	} else {
		out = append(out, m.routeHead(r, dir, via, width)...)
		notes := m.routeNotes(r, width)
		out = m.appendHopRows(out, r, width, max(height-len(out)-1-len(notes)-routeChartMin-2, 3))
		out = append(out, notes...)
	}
	out = append(out, "")
	chartH := height - len(out) - 1
	if r != nil && m.hop >= 0 && m.hop < len(r.Hops)-1 {
		out = append(out, m.renderHopChart(c, r, showHop(r.Hops[m.hop]), width, chartH)...)
	} else {
		out = append(out, m.renderRTTChart(c, width, chartH)...)
	}
	return out
}

// routeChartMin is the fewest rows the route screen keeps for its chart.
const routeChartMin = 8

// routeShown is the route the screen shows: forward, or (v) the return
// path, toward the carrier w selects when the return was traced per
// carrier; via says which, for the subtitle.
func (m *Model) routeShown(c *Candidate) (r *Route, dir, via string) {
	r, dir, via = m.routeShownBase(c)
	r, path := m.withPath(r)
	return r, dir, via + path
}

// routeShownBase is routeShown before a path of a multipath trace is
// chosen.
func (m *Model) routeShownBase(c *Candidate) (r *Route, dir, via string) {
	if !m.showRet {
		return c.Forward, "forward", ""
	}
	r, dir = c.Return, "return"
	if len(c.Carriers) == 0 {
		return r, dir, ""
	}
	cr := c.Carriers[m.carrier%len(c.Carriers)]
	via = fmt.Sprintf(" toward %s users (%s", cr.Carrier, cr.City)
	if cr.Target != "" {
		via += ", measured to " + cr.Target + " " + cr.TargetCity
	}
	via += ")"
	if cr.Verdict != "" {
		via += " · SLA " + cr.Verdict
	}
	via += fmt.Sprintf(" · w: next carrier (%d/%d)", m.carrier%len(c.Carriers)+1, len(c.Carriers))
	return cr.Route, dir, via
}

// routeNotTraced says why the direction shown has no route.
func (m *Model) routeNotTraced(c *Candidate, dir, via string, width int) []string {
	msg := " " + dir + " path not traced"
	switch {
	case dir == "forward" && c.fwdErr != "":
		// The trace failed (a missing privilege, say): its error, with the
		// fix it names, where "tracing…" would wait forever (issue 35).
		out := []string{m.st.Fail.Render(line(" forward path: trace failed"+via, width))}
		for _, l := range strings.Split(c.fwdErr, "\n") {
			for _, w := range wrapLines("   "+l, width, 4, "     ", " ") {
				out = append(out, m.st.Warn.Render(w))
			}
		}
		return append(out, m.st.Dim.Render(" v: other direction"))
	case dir == "forward" && m.snap.Tracing:
		msg = " forward path: tracing… (the hops show when the first cycle completes)"
	case dir == "return" && c.Forward != nil:
		msg += ": the line class is validated in the forward direction only"
	case dir == "forward" && c.Return != nil:
		msg += ": the line class is validated in the return direction only"
	}
	return []string{m.st.Warn.Render(line(msg+via, width)), m.st.Dim.Render(" v: other direction")}
}

// routeHead is the lines above the hops: where the route goes and whether
// it got there, the line class with its evidence, the AS path.
func (m *Model) routeHead(r *Route, dir, via string, width int) []string {
	st := m.st
	sub := fmt.Sprintf(" %s → %s %s · ", dir, r.Target, r.Protocol)
	if r.Reached {
		sub += "reached"
	} else {
		sub += st.Warn.Render("not reached")
	}
	sub += st.Dim.Render(" · v: " + map[string]string{"forward": "return", "return": "forward"}[dir] + " path" + via)
	if r.Live && m.opts.Names != nil {
		sub += st.Dim.Render(map[bool]string{true: " · n: show names", false: " · n: show addresses"}[m.hideNames])
	}
	out := []string{line(sub, width)}
	ev := " line " + orDash(r.LineClass)
	if r.Confidence != "" {
		ev += ", confidence " + r.Confidence
	}
	if r.Rule != "" {
		ev += ": " + r.Rule
	}
	out = append(out, wrapLines(ev, width, 2, "   ", " ")...)
	if len(r.Paths) > 0 && r.PathsSummary != "" {
		out = append(out, st.Dim.Render(line(" every path: "+r.PathsSummary, width)))
	}
	if r.ASPath != "" {
		out = append(out, st.Dim.Render(line(" as path: "+r.ASPath, width)))
	}
	return out
}

// routeNotes is at most three lines under the hops: rate-limited hops
// first, then the route's notes.
func (m *Model) routeNotes(r *Route, width int) []string {
	var notes []string
	for _, h := range r.Hops {
		if hopRateLimited(h) {
			notes = append(notes, m.st.Warn.Render(line(" RL "+rateLimitNote(h), width)))
		}
	}
	for _, n := range r.Notes {
		notes = append(notes, m.st.Dim.Render(line(" note: "+n, width)))
	}
	return notes[:min(len(notes), 3)]
}

// appendHopRows appends the hop table's header and at most hopRows hops,
// scrolled so that the cursor stays in view, and a line counting the hops
// below.
func (m *Model) appendHopRows(out []string, r *Route, width, hopRows int) []string {
	st := m.st
	cols := layout(routeColumns(r), width)
	out = append(out, renderHeader(cols, "", false, st))
	sel := m.hop
	if sel < 0 || sel >= len(r.Hops) {
		sel = len(r.Hops) - 1
	}
	// The cursor stays in view.
	if m.hop >= 0 {
		m.scroll = min(m.scroll, sel)
		m.scroll = max(m.scroll, sel-hopRows+1)
	}
	m.scroll = max(0, min(m.scroll, len(r.Hops)-hopRows))
	// A route's rows change only with a new trace (a new *Route), the
	// width, the cursor or a hop's name: the rows drawn are kept.
	memo := m.hopRows
	if memo == nil {
		memo = &hopRowMemo{}
	}
	if memo.r != r || memo.width != width || len(memo.rows) != len(r.Hops) {
		*memo = hopRowMemo{r: r, width: width, rows: make([]hopRow, len(r.Hops))}
	}
	for i := m.scroll; i < len(r.Hops) && i < m.scroll+hopRows; i++ {
		h := showHop(r.Hops[i])
		// Names come from the cache only: the lookups run in a
		// command started when the route arrived (Model.namesCmd), and
		// a name that ends later shows at the redraw its NamesMsg brings.
		if r.Live && !m.hideNames && m.opts.Names != nil && h.addr() != "" {
			h.name, _ = m.opts.Names.Cached(h.addr())
		}
		selected := i == sel && m.hop >= 0
		if e := memo.rows[i]; e.drawn && e.name == h.name && e.selected == selected {
			out = append(out, e.row)
			continue
		}
		row := renderRow(cols, h, selected, st)
		if h.rateLimited() && !selected {
			row = st.Warn.Render(ansiStrip(row))
		}
		memo.rows[i] = hopRow{drawn: true, name: h.name, selected: selected, row: row}
		out = append(out, row)
	}
	if more := len(r.Hops) - (m.scroll + hopRows); more > 0 {
		out = append(out, st.Dim.Render(fmt.Sprintf("   … %d more hops (↓ to scroll)", more)))
	}
	return out
}

// hopRowMemo holds the route screen's rows as last drawn for one route at
// one width: each hop's row, for its name and whether it was selected.
type hopRowMemo struct {
	r     *Route
	width int
	rows  []hopRow
}

type hopRow struct {
	drawn    bool
	name     string
	selected bool
	row      string
}

// renderHopChart charts one hop's RTT over the trace snapshots received
// (↑↓ on the route screen); the destination's chart is the probes'.
func (m *Model) renderHopChart(c *Candidate, r *Route, h hopShown, width, height int) []string {
	st := m.st
	who := h.addr()
	if who == "" {
		who = "no reply"
	}
	ring := m.hopHist[hopKey(c.Name, r.Direction, h.TTL)]
	if ring == nil || ring.Len() < 2 {
		return []string{line(fmt.Sprintf(" RTT at hop %d (%s): one trace so far; p50 %s p95 %s over its probes (↑↓ hop)",
			h.TTL, who, hopMs(h, h.rtt().P50), hopMs(h, h.rtt().P95)), width)}
	}
	s := series{name: "hop", style: st.ChartOut}
	ymax, lost := 0.0, 0
	for i := 0; i < ring.Len(); i++ {
		t, v := ring.At(i)
		s.t, s.v = append(s.t, t), append(s.v, v)
		if math.IsNaN(v) {
			lost++
			continue
		}
		ymax = math.Max(ymax, v)
	}
	t0, _ := ring.At(0)
	t1, _ := ring.At(ring.Len() - 1)
	head := fmt.Sprintf(" RTT at hop %d (%s, ms), last %d traces %s–%s UTC, %d without reply (↑↓ hop)",
		h.TTL, who, ring.Len(), t0.Format("15:04:05"), t1.Format("15:04:05"), lost)
	out := []string{line(head, width)}
	if ymax <= 0 || !t1.After(t0) {
		return out
	}
	// Redrawn only when a trace snapshot arrived, another hop is charted
	// or the size changed.
	key := fmt.Sprint(hopKey(c.Name, r.Direction, h.TTL), ring.Version(), width, height, m.noColor)
	if m.hopChart == nil {
		m.hopChart = &chartCache{}
	}
	if m.hopChart.key != key || m.hopChart.lines == nil {
		chart := renderTimeChart(width-1, height-1, t0, t1, niceMax(ymax*1.1), []series{s}, nil, timeLabels("15:04:05"), st)
		var lines []string
		for _, l := range strings.Split(chart, "\n") {
			if l != "" {
				lines = append(lines, " "+l)
			}
		}
		*m.hopChart = chartCache{key: key, lines: append([]string{}, lines...)}
	}
	return append(out, m.hopChart.lines...)
}

// renderRTTChart charts the destination RTT of the recent probes over time.
func (m *Model) renderRTTChart(c *Candidate, width, height int) []string {
	st := m.st
	h := c.Stats.History
	if h == nil || h.Len() < 2 {
		return []string{st.Dim.Render(" RTT chart: waiting for probe records…")}
	}
	s := series{name: "rtt", style: st.ChartOut}
	lost := 0
	ymax, lo := 0.0, math.Inf(1)
	for i := 0; i < h.Len(); i++ {
		t, v := h.At(i)
		s.t = append(s.t, t)
		s.v = append(s.v, v)
		if math.IsNaN(v) {
			lost++
			continue
		}
		ymax, lo = math.Max(ymax, v), math.Min(lo, v)
	}
	t0, _ := h.At(0)
	t1, _ := h.At(h.Len() - 1)
	// The chart is one target's (the candidate's first): with several,
	// the overview's figures are the worst over all of them, so it says
	// which one it draws.
	name := c.Name
	if len(c.Others) > 0 && c.Target != "" {
		name += " " + c.Target
	}
	head := fmt.Sprintf(" RTT to %s (ms), last %d probes %s–%s UTC: p50 %s p95 %s, %d lost",
		name, h.Len(), t0.Format("15:04:05"), t1.Format("15:04:05"), ms(c.Stats.P50), ms(c.Stats.P95), lost)
	// The window's jitter (JIT, the SLA's figure) and RFC 3550's running
	// value beside it, labelled "now", where the line has room for them.
	if jit := fmt.Sprintf("; jitter %s, now %s", ms(c.Stats.J.MeanAbs), ms(c.Stats.J.RFC3550)); lipglossWidth(head+jit) < width && c.Stats.res.Recv > 1 {
		head += jit
	}
	if math.IsInf(lo, 1) {
		return []string{line(head, width)}
	}
	var levels []hline
	if p := m.snap.SLA.RTTP95ms; p != nil && *p <= niceMax(ymax*1.1) {
		levels = append(levels, hline{v: *p, r: '┄', style: st.Level})
		head += fmt.Sprintf(" · ┄ SLA p95 %g ms", *p)
	}
	out := []string{line(head, width)}
	// Redrawn only when a sample arrived or the size changed.
	key := fmt.Sprint(c.Name, h.Version(), width, height, m.noColor, len(levels))
	if m.rttChart == nil {
		m.rttChart = &chartCache{}
	}
	if m.rttChart.key != key {
		chart := renderTimeChart(width-1, height-1, t0, t1, niceMax(math.Max(ymax*1.1, 0.01)), []series{s}, levels, timeLabels("15:04:05"), st)
		*m.rttChart = chartCache{key: key, lines: strings.Split(chart, "\n")}
	}
	chart := strings.Join(m.rttChart.lines, "\n")
	if chart != "" {
		for _, l := range strings.Split(chart, "\n") {
			out = append(out, " "+l)
		}
	}
	return out
}

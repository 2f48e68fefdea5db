package tui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/internal/route"
)

// routeScreen is the route detail of the selected candidate: its hops mtr
// style and an RTT chart. Its keys scroll the hops and pick the direction,
// the carrier, the path of a multipath trace and whether hops are named;
// it keeps that cursor and what it drew.
type routeScreen struct {
	scroll int // hop scroll
	// hop is the hop cursor (-1: the destination).
	hop     int
	showRet bool
	// hideNames turns the reverse DNS names off (n).
	hideNames bool
	carrier   int // index into the candidate's Carriers on the return route
	path      int // the path of a multipath trace (f): 0 every path's hops, k path k

	rttChart *chartCache // memo of the destination's RTT chart
	hopChart *chartCache // memo of the hop RTT chart
	hopRows  *hopRowMemo // memo of the hop rows
}

func newRouteScreen() routeScreen {
	return routeScreen{hop: -1, rttChart: &chartCache{}, hopChart: &chartCache{}, hopRows: &hopRowMemo{}}
}

// top puts the hop cursor back on the destination, the hops scrolled to
// the first: as the screen opens, and for another candidate, direction or
// path.
func (rs *routeScreen) top() { rs.scroll, rs.hop = 0, -1 }

// Update takes the route screen's keys: ↑↓ k j move the hop cursor, [ ] the
// candidate cursor; v the other direction, w the next user carrier, f the
// next path, n names on/off.
func (rs routeScreen) Update(s *state, msg tea.Msg) (screen, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return rs, nil
	}
	km := keys
	switch {
	case key.Matches(k, km.Up):
		rs.moveHop(s, -1)
	case key.Matches(k, km.Down):
		rs.moveHop(s, 1)
	case key.Matches(k, km.PrevCand):
		if s.move(-1) {
			rs.top()
		}
	case key.Matches(k, km.NextCand):
		if s.move(1) {
			rs.top()
		}
	case key.Matches(k, km.Names):
		rs.hideNames = !rs.hideNames
	case key.Matches(k, km.Path):
		rs.nextPath(s)
	case key.Matches(k, km.Return):
		rs.showRet = !rs.showRet
		rs.top()
	case key.Matches(k, km.Carrier):
		// The return path toward the next user carrier (and to it from the
		// forward path).
		if c := s.current(); c != nil && len(c.Carriers) > 0 {
			if rs.showRet {
				rs.carrier = (rs.carrier + 1) % len(c.Carriers)
			}
			rs.showRet = true
			rs.top()
		}
	}
	return rs, nil
}

// View is the route screen at width × height.
func (rs routeScreen) View(s *state, width, height int) string {
	return strings.Join(rs.renderRoute(s, width, height), "\n")
}

// shownRoute is the route the route screen shows for c: forward, return,
// or the return route toward the chosen user carrier; of a multipath
// trace, the path chosen with f.
func (rs *routeScreen) shownRoute(c *Candidate) *Route {
	r, _ := rs.withPath(rs.baseRoute(c))
	return r
}

// baseRoute is shownRoute before a path of a multipath trace is chosen.
func (rs *routeScreen) baseRoute(c *Candidate) *Route {
	if c == nil {
		return nil
	}
	if !rs.showRet {
		return c.Forward
	}
	if len(c.Carriers) > 0 {
		return c.Carriers[rs.carrier%len(c.Carriers)].Route
	}
	return c.Return
}

// moveHop moves the route screen's hop cursor (whose RTT is charted).
// Without a cursor the destination is charted; the first ↓ selects the
// first hop, the first ↑ the destination.
func (rs *routeScreen) moveHop(s *state, d int) {
	r := rs.shownRoute(s.current())
	if r == nil || len(r.Hops) == 0 {
		return
	}
	if rs.hop < 0 || rs.hop >= len(r.Hops) {
		if d > 0 {
			rs.hop = 0
		} else {
			rs.hop = len(r.Hops) - 1
		}
		return
	}
	rs.hop = max(0, min(rs.hop+d, len(r.Hops)-1))
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
func (rs *routeScreen) renderRoute(s *state, width, height int) []string {
	c := s.current()
	if c == nil {
		return []string{s.title("Route", width, false)}
	}
	r, dir, via := rs.routeShown(c)
	out := []string{s.title("Route "+c.Name, width, false)}
	if r == nil {
		out = append(out, rs.routeNotTraced(s, c, dir, via, width)...)
	} else {
		out = append(out, rs.routeHead(s, r, dir, via, width)...)
		out = append(out, familyLines(s, c, width)...)
		notes := rs.routeNotes(s, r, width)
		out = rs.appendHopRows(s, out, r, width, max(height-len(out)-1-len(notes)-routeChartMin-2, 3))
		out = append(out, notes...)
	}
	out = append(out, "")
	if hours, now := hoursOf(c, s.snap.SLA.Zone); len(hours) == 24 && height-len(out)-1-5 >= routeChartMin {
		out = append(out, renderHours(s, hours, now, s.snap.SLA.Zone.String(), width)...)
		out = append(out, "")
	}
	chartH := height - len(out) - 1
	if r != nil && rs.hop >= 0 && rs.hop < len(r.Hops)-1 {
		out = append(out, rs.renderHopChart(s, c, r, showHop(r.Hops[rs.hop]), width, chartH)...)
	} else {
		out = append(out, rs.renderRTTChart(s, c, width, chartH)...)
	}
	return out
}

// routeChartMin is the fewest rows the route screen keeps for its chart.
const routeChartMin = 8

// routeShown is the route the screen shows: forward, or (v) the return
// path, toward the carrier w selects when the return was traced per
// carrier; via says which, for the subtitle.
func (rs *routeScreen) routeShown(c *Candidate) (r *Route, dir, via string) {
	r, dir, via = rs.routeShownBase(c)
	r, path := rs.withPath(r)
	return r, dir, via + path
}

// routeShownBase is routeShown before a path of a multipath trace is
// chosen.
func (rs *routeScreen) routeShownBase(c *Candidate) (r *Route, dir, via string) {
	if !rs.showRet {
		return c.Forward, "forward", ""
	}
	r, dir = c.Return, "return"
	if len(c.Carriers) == 0 {
		return r, dir, ""
	}
	cr := c.Carriers[rs.carrier%len(c.Carriers)]
	via = fmt.Sprintf(" toward %s users (%s", cr.Carrier, cr.City)
	if cr.Target != "" {
		via += ", measured to " + cr.Target + " " + cr.TargetCity
	}
	via += ") · forward " + orDash(cr.Forward) + ", return " + orDash(cr.Return)
	if cr.Verdict != "" {
		via += " · SLA " + cr.Verdict
	}
	via += fmt.Sprintf(" · w: next carrier (%d/%d)", rs.carrier%len(c.Carriers)+1, len(c.Carriers))
	return cr.Route, dir, via
}

// routeNotTraced says why the direction shown has no route.
func (rs *routeScreen) routeNotTraced(s *state, c *Candidate, dir, via string, width int) []string {
	msg := " " + dir + " path not traced"
	switch {
	case dir == "forward" && c.fwdErr != "":
		// The trace failed (a missing privilege, say): its error, with the
		// fix it names, where "tracing…" would wait forever (issue 35).
		out := []string{s.st.Fail.Render(line(" forward path: trace failed"+via, width))}
		for _, l := range strings.Split(c.fwdErr, "\n") {
			for _, w := range wrapLines("   "+l, width, 4, "     ", " ") {
				out = append(out, s.st.Warn.Render(w))
			}
		}
		return append(out, s.st.Dim.Render(" v: other direction"))
	case dir == "forward" && s.snap.Tracing:
		msg = " forward path: tracing… (the hops show when the first cycle completes)"
	case dir == "return" && c.Forward != nil:
		msg += ": the line class is validated in the forward direction only"
	case dir == "forward" && c.Return != nil:
		msg += ": the line class is validated in the return direction only"
	}
	return []string{s.st.Warn.Render(line(msg+via, width)), s.st.Dim.Render(" v: other direction")}
}

// routeHead is the lines above the hops: where the route goes and whether
// it got there, the line class with its evidence, the AS path.
func (rs *routeScreen) routeHead(s *state, r *Route, dir, via string, width int) []string {
	st := s.st
	sub := fmt.Sprintf(" %s → %s %s · ", dir, r.Target, r.Protocol)
	if r.Reached {
		sub += "reached"
	} else {
		sub += st.Warn.Render("not reached")
	}
	sub += st.Dim.Render(" · v: " + map[string]string{"forward": "return", "return": "forward"}[dir] + " path" + via)
	if r.Live && s.opts.Names != nil {
		sub += st.Dim.Render(map[bool]string{true: " · n: show names", false: " · n: show addresses"}[rs.hideNames])
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
func (rs *routeScreen) routeNotes(s *state, r *Route, width int) []string {
	var notes []string
	for _, h := range r.Hops {
		if hopRateLimited(h) {
			notes = append(notes, s.st.Warn.Render(line(" RL "+rateLimitNote(h), width)))
		}
	}
	for _, n := range r.Notes {
		notes = append(notes, s.st.Dim.Render(line(" note: "+n, width)))
	}
	return notes[:min(len(notes), 3)]
}

// appendHopRows appends the hop table's header and at most hopRows hops,
// scrolled so that the cursor stays in view, and a line counting the hops
// below.
func (rs *routeScreen) appendHopRows(s *state, out []string, r *Route, width, hopRows int) []string {
	st := s.st
	cols := layout(routeColumns(r), width)
	out = append(out, renderHeader(cols, "", false, st))
	sel := rs.hop
	if sel < 0 || sel >= len(r.Hops) {
		sel = len(r.Hops) - 1
	}
	// The cursor stays in view.
	if rs.hop >= 0 {
		rs.scroll = min(rs.scroll, sel)
		rs.scroll = max(rs.scroll, sel-hopRows+1)
	}
	rs.scroll = max(0, min(rs.scroll, len(r.Hops)-hopRows))
	// A route's rows change only with a new trace (a new *Route), the
	// width, the cursor or a hop's name: the rows drawn are kept.
	memo := rs.hopRows
	if memo == nil {
		memo = &hopRowMemo{}
	}
	if memo.r != r || memo.width != width || len(memo.rows) != len(r.Hops) {
		*memo = hopRowMemo{r: r, width: width, rows: make([]hopRow, len(r.Hops))}
	}
	for i := rs.scroll; i < len(r.Hops) && i < rs.scroll+hopRows; i++ {
		h := showHop(r.Hops[i])
		// Names come from the cache only: the lookups run in a
		// command started when the route arrived (Model.namesCmd), and
		// a name that ends later shows at the redraw its NamesMsg brings.
		if r.Live && !rs.hideNames && s.opts.Names != nil && h.addr() != "" {
			h.name, _ = s.opts.Names.Cached(h.addr())
		}
		selected := i == sel && rs.hop >= 0
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
	if more := len(r.Hops) - (rs.scroll + hopRows); more > 0 {
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
func (rs *routeScreen) renderHopChart(s *state, c *Candidate, r *Route, h hopShown, width, height int) []string {
	st := s.st
	who := h.addr()
	if who == "" {
		who = "no reply"
	}
	ring := s.hopHist[hopKey(c.Name, r.Direction, h.TTL)]
	if ring == nil || ring.Len() < 2 {
		return []string{line(fmt.Sprintf(" RTT at hop %d (%s): one trace so far; p50 %s p95 %s over its probes (↑↓ hop)",
			h.TTL, who, hopMs(h, h.rtt().P50), hopMs(h, h.rtt().P95)), width)}
	}
	ser := series{name: "hop", style: st.ChartOut}
	ymax, lost := 0.0, 0
	for i := 0; i < ring.Len(); i++ {
		t, v := ring.At(i)
		ser.t, ser.v = append(ser.t, t), append(ser.v, v)
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
	key := fmt.Sprint(hopKey(c.Name, r.Direction, h.TTL), ring.Version(), width, height, s.noColor)
	if rs.hopChart == nil {
		rs.hopChart = &chartCache{}
	}
	if rs.hopChart.key != key || rs.hopChart.lines == nil {
		chart := renderTimeChart(width-1, height-1, t0, t1, niceMax(ymax*1.1), []series{ser}, nil, timeLabels("15:04:05"), st)
		var lines []string
		for _, l := range strings.Split(chart, "\n") {
			if l != "" {
				lines = append(lines, " "+l)
			}
		}
		*rs.hopChart = chartCache{key: key, lines: append([]string{}, lines...)}
	}
	return append(out, rs.hopChart.lines...)
}

// renderRTTChart charts the destination RTT of the recent probes over time.
func (rs *routeScreen) renderRTTChart(s *state, c *Candidate, width, height int) []string {
	st := s.st
	h := c.Stats.History
	if h == nil || h.Len() < 2 {
		return []string{st.Dim.Render(" RTT chart: waiting for probe records…")}
	}
	ser := series{name: "rtt", style: st.ChartOut}
	lost := 0
	ymax, lo := 0.0, math.Inf(1)
	for i := 0; i < h.Len(); i++ {
		t, v := h.At(i)
		ser.t = append(ser.t, t)
		ser.v = append(ser.v, v)
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
	if p := s.snap.SLA.RTTP95ms; p != nil && *p <= niceMax(ymax*1.1) {
		levels = append(levels, hline{v: *p, r: '┄', style: st.Level})
		head += fmt.Sprintf(" · ┄ SLA p95 %g ms", *p)
	}
	out := []string{line(head, width)}
	// Redrawn only when a sample arrived or the size changed.
	key := fmt.Sprint(c.Name, h.Version(), width, height, s.noColor, len(levels))
	if rs.rttChart == nil {
		rs.rttChart = &chartCache{}
	}
	if rs.rttChart.key != key {
		chart := renderTimeChart(width-1, height-1, t0, t1, niceMax(math.Max(ymax*1.1, 0.01)), []series{ser}, levels, timeLabels("15:04:05"), st)
		*rs.rttChart = chartCache{key: key, lines: strings.Split(chart, "\n")}
	}
	chart := strings.Join(rs.rttChart.lines, "\n")
	if chart != "" {
		for _, l := range strings.Split(chart, "\n") {
			out = append(out, " "+l)
		}
	}
	return out
}

// withPath is r as the route screen shows it with path m.path chosen (f):
// the path's hops and class in place of the route's, and a note for the
// subtitle saying which path it is and how to switch; r itself (and a
// note counting the paths) when m.path is 0 or r has no paths.
func (rs *routeScreen) withPath(r *Route) (*Route, string) {
	if r == nil || len(r.Paths) == 0 {
		return r, ""
	}
	n := rs.path % (len(r.Paths) + 1)
	if n == 0 {
		// Every path's hops as traced: their SNT counts the discovery's
		// probes too, a path's own view only its flow's cycles.
		return r, fmt.Sprintf(" · f: paths (%d) · every path, SNT with discovery", len(r.Paths))
	}
	p := r.Paths[n-1]
	shown := *r
	shown.Hops, shown.LineClass, shown.Confidence, shown.Rule = p.Hops, p.LineClass, p.Confidence, p.Rule
	// The route's notes and AS path are of every path's hops together.
	shown.Notes, shown.ASPath, shown.Paths = nil, "", nil
	return &shown, fmt.Sprintf(" · path %d of %d (%s, %.0f%% of flows) · f: next path", p.Path, p.Of, route.FlowsPhrase(p.Flows), p.Share*100)
}

// nextPath shows the route's next path (f): every path's hops as traced,
// then path 1, 2 … and round again.
func (rs *routeScreen) nextPath(s *state) {
	r := rs.baseRoute(s.current())
	if r == nil || len(r.Paths) == 0 {
		return
	}
	rs.path = (rs.path%(len(r.Paths)+1) + 1) % (len(r.Paths) + 1)
	rs.scroll, rs.hop = 0, -1
}

package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/verdict"
)

// column is one column of a table: its title, width, the priority with
// which it is dropped on a narrow terminal (higher goes first), how to
// render a cell and, when sortable, how to order rows.
type column[T any] struct {
	key   string
	title string
	width int
	prio  int
	right bool
	flex  bool // takes the width left over
	group string
	cell  func(r T) (string, styleID)
	less  func(a, b T) bool
}

// layout chooses the columns that fit in width (one space between columns,
// after a 1-cell cursor column) and gives the leftover to the flex column.
func layout[T any](cols []column[T], width int) []column[T] {
	used := func(cs []column[T]) int {
		w := 1
		for _, c := range cs {
			w += 1 + c.width
		}
		return w
	}
	out := append([]column[T](nil), cols...)
	for used(out) > width {
		drop, dropPrio := -1, 0
		for i, c := range out {
			if c.prio > 0 && c.prio >= dropPrio {
				drop, dropPrio = i, c.prio
			}
		}
		if drop < 0 {
			break
		}
		g := out[drop].group
		kept := out[:0:0]
		for i, c := range out {
			if i == drop || (g != "" && c.group == g) {
				continue
			}
			kept = append(kept, c)
		}
		out = kept
	}
	if extra := width - used(out); extra > 0 {
		for i := range out {
			if out[i].flex {
				out[i].width += min(extra, 12)
				break
			}
		}
	}
	return out
}

// renderHeader renders the column titles, marking the sort column.
func renderHeader[T any](cols []column[T], sortKey string, desc bool, st *Styles) string {
	var b strings.Builder
	b.WriteString(" ")
	for _, c := range cols {
		t := c.title
		if c.key == sortKey && sortKey != "" {
			if desc {
				t += "↓"
			} else {
				t += "↑"
			}
		}
		b.WriteString(" ")
		b.WriteString(fit(t, c.width, c.right))
	}
	return st.render(styleHeader, b.String())
}

// renderRow renders one row; the selected row is reverse video and marked
// with › so the selection survives a monochrome terminal.
func renderRow[T any](cols []column[T], r T, selected bool, st *Styles) string {
	return renderCells(cols, selected, st, func(_ int, c column[T]) (string, styleID) { return c.cell(r) })
}

// renderMemoRow is renderRow for an overview row from its memoised cells
// (cols[k] is the shown column where[k]); RECENT's cell is drawn for r.
func renderMemoRow(cols []column[overviewRow], where []int, rm *rowMemo, r overviewRow, selected bool, st *Styles) string {
	return renderCells(cols, selected, st, func(k int, c column[overviewRow]) (string, styleID) {
		if c.key == "recent" {
			return c.cell(r)
		}
		return rm.text[where[k]], rm.style[where[k]]
	})
}

// renderCells lays out one row of cols, cell(k, cols[k]) giving each cell's
// text and style: the selection mark, the cells fitted to their widths and
// styled (or the whole row reverse video when selected).
func renderCells[T any](cols []column[T], selected bool, st *Styles, cell func(k int, c column[T]) (string, styleID)) string {
	var b strings.Builder
	if selected {
		b.WriteString("›")
	} else {
		b.WriteString(" ")
	}
	for k, c := range cols {
		text, style := cell(k, c)
		text = fit(text, c.width, c.right)
		b.WriteString(" ")
		if !selected {
			text = st.render(style, text)
		}
		b.WriteString(text)
	}
	if selected {
		return st.render(styleSelected, b.String())
	}
	return b.String()
}

// overviewRow is what an overview cell needs: the candidate and the context
// of the whole table.
type overviewRow struct {
	c        *Candidate
	cheapest bool // the cheapest candidate that passes the SLA
	// noThresholds: the candidates file sets no SLA thresholds, so the SLA
	// cell is absent ("-"), not pending.
	noThresholds bool
	sparkW       int
	// spark memoises the drawn sparklines by candidate: the view never
	// writes into the candidate it shows.
	spark map[string]sparkMemo
}

// schemeCell is a FIXED / PER-GB / 95TH cell: the bandwidth charge alone of
// the cheapest offer of that scheme (the candidate's offer and its what-ifs).
// The totals would compare other items too: a what-if of another provider
// prices another GPU machine (issue 20: hk-bgp's FIXED showed gpu-spot's
// 31.8k against its own 58.8k, a different machine, not a cheaper port).
func schemeCell(name string) func(r overviewRow) (string, styleID) {
	return func(r overviewRow) (string, styleID) {
		s, ok := bandwidthScheme(r.c.Cost, name)
		if !ok {
			return "-", styleDim
		}
		txt := moneyCompact(amountFloat(s.Amount) * fx(r.c.Cost))
		if s.CannotCarry {
			return txt + "!", styleFail
		}
		if cheapestBandwidth(r.c.Cost) == name {
			return txt + "*", styleCheapest
		}
		return txt + " ", styleNone
	}
}

func schemeLess(name string) func(a, b overviewRow) bool {
	return func(a, b overviewRow) bool {
		x, _ := bandwidthScheme(a.c.Cost, name)
		y, _ := bandwidthScheme(b.c.Cost, name)
		return lessFloat(amountFloat(x.Amount)*fx(a.c.Cost), amountFloat(y.Amount)*fx(b.c.Cost))
	}
}

// bandwidthScheme is the offer of scheme name with the lowest bandwidth
// charge among those priced, preferring one that can carry the traffic.
func bandwidthScheme(c Cost, name string) (SchemeCost, bool) {
	var best SchemeCost
	ok := false
	for _, s := range c.Schemes {
		if s.Scheme != name || !s.Amount.Valid() {
			continue
		}
		if !ok || best.CannotCarry && !s.CannotCarry ||
			best.CannotCarry == s.CannotCarry && amountFloat(s.Amount) < amountFloat(best.Amount) {
			best, ok = s, true
		}
	}
	return best, ok
}

// cheapestBandwidth names the scheme with the lowest bandwidth charge that
// can carry the traffic ("" when fewer than two schemes are priced).
func cheapestBandwidth(c Cost) string {
	best, bestV := "", math.Inf(1)
	n := 0
	for _, name := range []string{"fixed", "per-gb", "p95"} {
		s, ok := bandwidthScheme(c, name)
		if !ok || s.CannotCarry {
			continue
		}
		n++
		if v := amountFloat(s.Amount); v < bestV {
			best, bestV = name, v
		}
	}
	if n < 2 {
		return ""
	}
	return best
}

// cheapestScheme names the scheme of the cheapest priced offer of a cost
// ("" when fewer than two are priced: nothing to compare).
func cheapestScheme(c Cost) string {
	best, bestV := "", math.Inf(1)
	n := 0
	for _, s := range c.Schemes {
		if v := amountFloat(s.Total); !math.IsNaN(v) && !s.CannotCarry {
			n++
			if v < bestV {
				best, bestV = s.Scheme, v
			}
		}
	}
	if n < 2 {
		return ""
	}
	return best
}

// fx converts an offer's amounts to the snapshot currency.
func fx(c Cost) float64 {
	if c.FX > 0 {
		return c.FX
	}
	return 1
}

// canCarry reports whether the offered scheme can carry the traffic.
func (c Cost) canCarry() bool {
	for _, s := range c.Schemes {
		if s.Offered && s.CannotCarry {
			return false
		}
	}
	return true
}

func totalOf(c *Candidate) float64 {
	if c.Cost.TotalBase.Valid() {
		return amountFloat(c.Cost.TotalBase)
	}
	return amountFloat(c.Cost.Total)
}

var overviewColumns = []column[overviewRow]{
	{key: "name", title: "CANDIDATE", width: 10, flex: true,
		cell: func(r overviewRow) (string, styleID) { return r.c.Name, styleNone },
		less: func(a, b overviewRow) bool { return lessString(a.c.Name, b.c.Name) }},
	{key: "line", title: "LINE", width: 13,
		cell: func(r overviewRow) (string, styleID) {
			if r.c.LineClass == "" {
				return "…", styleDim
			}
			return r.c.LineClass + directionGlyph(r.c.Direction), styleNone
		},
		less: func(a, b overviewRow) bool { return lessString(a.c.LineClass, b.c.LineClass) }},
	{key: "rtt", title: "RTT50/95", width: 9, right: true,
		cell: func(r overviewRow) (string, styleID) {
			v := r.c.view()
			if !v.HaveStats {
				return noStats(v), styleDim
			}
			if r.c.warming() {
				return ms(v.P50) + "/" + ms(v.P95), styleDim
			}
			return ms(v.P50) + "/" + ms(v.P95), styleNone
		},
		less: func(a, b overviewRow) bool { return lessFloat(rttKey(a.c), rttKey(b.c)) }},
	{key: "recent", title: "RECENT", width: 8, prio: 4,
		cell: func(r overviewRow) (string, styleID) {
			h := r.c.Stats.History
			if h == nil {
				return "", styleNone
			}
			if r.spark == nil {
				return renderSparkline(h, r.sparkW), styleSpark
			}
			m := r.spark[r.c.Name]
			if m.version != h.Version() || m.width != r.sparkW {
				m = sparkMemo{version: h.Version(), width: r.sparkW, text: renderSparkline(h, r.sparkW)}
				r.spark[r.c.Name] = m
			}
			return m.text, styleSpark
		}},
	{key: "jitter", title: "JIT", width: 4, right: true, prio: 2,
		cell: func(r overviewRow) (string, styleID) {
			v := r.c.view()
			if !v.HaveStats {
				return noStats(v), styleDim
			}
			if r.c.warming() {
				return ms(v.JitterMs), styleDim
			}
			return ms(v.JitterMs), styleNone
		},
		less: func(a, b overviewRow) bool { return lessFloat(a.c.view().JitterMs, b.c.view().JitterMs) }},
	{key: "loss", title: "LOSS", width: 5, right: true,
		cell: func(r overviewRow) (string, styleID) {
			v := r.c.view()
			if v.Sent == 0 {
				return "…", styleDim
			}
			if v.Loss > 0 {
				return pct(v.Loss), styleWarn
			}
			return pct(v.Loss), styleNone
		},
		less: func(a, b overviewRow) bool { return lessFloat(a.c.view().Loss, b.c.view().Loss) }},
	{key: "stretch", title: "STR", width: 4, right: true, prio: 3,
		cell: func(r overviewRow) (string, styleID) {
			v := r.c.view()
			switch {
			case v.BelowFloor:
				// Faster than light in fibre: an anycast address answering
				// nearby or a wrong location, not a ratio to read (the
				// legend says so).
				return "<1!", styleWarn
			case v.Stretch <= 0:
				return "-", styleDim
			}
			return fmt.Sprintf("%.1f", v.Stretch), styleNone
		},
		less: func(a, b overviewRow) bool { return lessFloat(stretchKey(a.c), stretchKey(b.c)) }},
	{key: "sla", title: "SLA", width: 12,
		cell: func(r overviewRow) (string, styleID) {
			switch {
			case r.c.Reference:
				return "-", styleDim
			case !r.c.slaKnown() && !r.noThresholds:
				return "…", styleDim
			case !r.c.slaKnown():
				// Nothing to check (the file sets no thresholds): absent,
				// as the detail line says, not pending forever.
				return "-", styleDim
			case r.c.warming():
				// Too few probes for a verdict: "wait" (the SLA is
				// pending; the figures are dimmed, the legend says so).
				return "wait", styleDim
			case r.c.SLA.Pass:
				return "pass", stylePass
			case failingWindow(r.c.SLA) != "":
				// Only an SLA window fails (issue 30): named, as the
				// detail line names its checks (loss@evening).
				return "FAIL@" + failingWindow(r.c.SLA), styleFail
			case failingFamily(r.c.SLA) != "":
				// Only an address family fails (sla.families, issue 32):
				// named, as the detail line names its checks (class on ipv6).
				return "FAIL " + failingFamily(r.c.SLA), styleFail
			default:
				return "FAIL", styleFail
			}
		},
		less: func(a, b overviewRow) bool { return a.c.SLA.Pass && !b.c.SLA.Pass }},
	{key: "monthly", title: "MONTHLY", width: 9, right: true,
		cell: func(r overviewRow) (string, styleID) {
			v := totalOf(r.c)
			if math.IsNaN(v) {
				return "- ", styleDim
			}
			if r.cheapest {
				return moneyWhole(v) + "*", styleCheapest
			}
			return moneyWhole(v) + " ", styleNone
		},
		less: func(a, b overviewRow) bool { return lessFloat(totalOf(a.c), totalOf(b.c)) }},
	{key: "fixed", title: "FIXED", width: 7, right: true, prio: 1, group: "schemes",
		cell: schemeCell("fixed"), less: schemeLess("fixed")},
	{key: "per-gb", title: "PER-GB", width: 7, right: true, prio: 1, group: "schemes",
		cell: schemeCell("per-gb"), less: schemeLess("per-gb")},
	{key: "p95", title: "95TH", width: 7, right: true, prio: 1, group: "schemes",
		cell: schemeCell("p95"), less: schemeLess("p95")},
}

// noStats is the cell of a figure without data: "…" while nothing was sent
// yet, "-" once probes were sent and none was answered (absent, not 0).
func noStats(v Summary) string {
	if v.Sent > 0 {
		return "-"
	}
	return "…"
}

func rttKey(c *Candidate) float64 {
	v := c.view()
	if !v.HaveStats {
		return math.NaN()
	}
	return v.P95
}

func stretchKey(c *Candidate) float64 {
	v := c.view()
	if v.Stretch <= 0 {
		return math.NaN()
	}
	return v.Stretch
}

// columnByKey finds an overview column (THRU included) adapted to the
// *Candidate ordering.
func columnByKey(k string) *struct{ less func(a, b *Candidate) bool } {
	adapt := func(c column[overviewRow]) *struct{ less func(a, b *Candidate) bool } {
		l := c.less
		return &struct{ less func(a, b *Candidate) bool }{
			less: func(a, b *Candidate) bool { return l(overviewRow{c: a}, overviewRow{c: b}) },
		}
	}
	for _, c := range overviewColumns {
		if c.key == k && c.less != nil {
			return adapt(c)
		}
	}
	if k == throughputColumn.key {
		return adapt(throughputColumn)
	}
	return nil
}

// failingWindow names the first SLA window whose check fails when no check
// of the whole window does; "" otherwise.
func failingWindow(v verdict.Verdict) string {
	name := ""
	for _, c := range v.Checks {
		switch {
		case c.Pass:
		case c.Window == "" || c.Window == verdict.WindowAll:
			return ""
		case name == "":
			name = c.Window
		}
	}
	return name
}

// failingFamily is the address family whose checks (sla.families) are
// the only ones failing in v, "" when a check of none, or of two
// families, fails.
func failingFamily(v verdict.Verdict) string {
	name := ""
	for _, c := range v.Checks {
		switch {
		case c.Pass:
		case c.Family == "" || name != "" && name != c.Family:
			return ""
		default:
			name = c.Family
		}
	}
	return name
}

// shortCheck names the SLA checks on the narrow detail line.
var shortCheck = map[string]string{"rtt_p95_ms": "p95", "loss": "loss", "jitter_ms": "jitter",
	"line_class": "class", "stretch": "stretch"}

// directionGlyph shows which direction the line class was validated in.
func directionGlyph(d string) string {
	switch d {
	case "both":
		return "⇄"
	case "forward":
		return "→"
	case "return":
		return "←"
	}
	return ""
}

// cheapestPassing names the cheapest candidate whose SLA passes and whose
// recorded delivery does not fail.
func (s *state) cheapestPassing() string {
	best, bestV := "", math.Inf(1)
	for _, c := range s.cands {
		v := totalOf(c)
		if c.SLA.Pass && len(c.DeliveryFailed) == 0 && !c.warming() && !math.IsNaN(v) && v < bestV && c.Cost.canCarry() {
			best, bestV = c.Name, v
		}
	}
	return best
}

// rowMemo is one candidate's overview row as last drawn: the text, style
// and width of each shown column's cell, computed from the candidate at
// revision rev (RECENT apart: the sparkline depends on the column's width
// and has its own memo), and the row rendered from them for the layout sig
// and the selection. Between two batches most rows are unchanged: they are
// neither formatted, measured nor styled again.
type rowMemo struct {
	rev      uint64
	cheapest bool
	ncols    int // len of the shown columns (THRU shown or not)
	text     []string
	style    []styleID
	width    []int

	sig      string // the layout the line was rendered for (layoutSig)
	selected bool
	line     string
}

// rowOf returns c's row memo, its cells brought up to date.
func (o *overviewScreen) rowOf(s *state, c *Candidate, shown []column[overviewRow], cheapest bool) *rowMemo {
	rm := o.rows[c]
	if rm == nil {
		rm = &rowMemo{}
		if o.rows != nil {
			o.rows[c] = rm
		}
	} else if rm.rev == c.rev && rm.cheapest == cheapest && rm.ncols == len(shown) && rm.text != nil {
		return rm
	}
	*rm = rowMemo{rev: c.rev, cheapest: cheapest, ncols: len(shown),
		text: rm.text[:0], style: rm.style[:0], width: rm.width[:0]}
	r := overviewRow{c: c, cheapest: cheapest, noThresholds: !hasThresholds(s.snap.SLA)}
	for _, col := range shown {
		text, style := "", styleNone
		if col.key != "recent" {
			text, style = col.cell(r)
		}
		rm.text = append(rm.text, text)
		rm.style = append(rm.style, style)
		rm.width = append(rm.width, textWidth(text))
	}
	return rm
}

// layoutSig names a layout (each column's key and width) for the row memo.
func layoutSig(cols []column[overviewRow], buf []byte) []byte {
	for _, c := range cols {
		buf = append(buf, c.key...)
		buf = strconv.AppendInt(append(buf, ':'), int64(c.width), 10)
		buf = append(buf, ' ')
	}
	return buf
}

// overviewScreen is the main screen: a row per candidate in display order,
// the selected one's detail under them. Its keys move the cursor, sort the
// rows and step the used hours; it keeps what it drew of each row.
type overviewScreen struct {
	rows    map[*Candidate]*rowMemo // memo of the rows
	sparks  map[string]sparkMemo    // memo of the sparklines, by candidate
	details *detailMemo             // memo of the detail block
}

func newOverviewScreen() overviewScreen {
	return overviewScreen{rows: map[*Candidate]*rowMemo{}, sparks: map[string]sparkMemo{}, details: &detailMemo{}}
}

// Update takes the overview's keys: ↑↓ k j [ ] move the cursor, s S i sort,
// u U step the used hours (and re-price).
func (o overviewScreen) Update(s *state, msg tea.Msg) (screen, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || s.moveKey(k) {
		return o, nil
	}
	km := keys
	switch {
	case key.Matches(k, km.SortNext):
		s.cycleSort(1)
	case key.Matches(k, km.SortPrev):
		s.cycleSort(-1)
	case key.Matches(k, km.SortInvert):
		s.sortDesc = !s.sortDesc
		s.resort()
	default:
		return o, s.usageKey(k)
	}
	return o, nil
}

// View is the overview at width × height.
func (o overviewScreen) View(s *state, width, height int) string {
	return strings.Join(o.renderOverview(s, width, height), "\n")
}

// cycleSort sorts by the next (d 1) or previous (-1) column shown, then
// by none (compare's ranking).
func (s *state) cycleSort(d int) {
	keysList := []string{""}
	// The columns on screen: THRU too when a candidate has a throughput test.
	for _, c := range s.overviewColumnsShown() {
		if c.less != nil {
			keysList = append(keysList, c.key)
		}
	}
	s.sortCol = cycle(keysList, s.sortCol, d)
	s.sortDesc = false
	s.resort()
}

// renderOverview is the main screen: one row per candidate, then the
// selected candidate's SLA checks, cost and route summary.
func (o *overviewScreen) renderOverview(s *state, width, height int) []string {
	st := s.st
	cheapest := s.cheapestPassing()
	shown := s.overviewColumnsShown()
	memos := make([]*rowMemo, len(s.order))
	for k, i := range s.order {
		c := s.cands[i]
		memos[k] = o.rowOf(s, c, shown, c.Name == cheapest)
	}
	cols, where := fitOverviewColumns(shown, memos, width)
	sparkW := 8
	for _, c := range cols {
		if c.key == "recent" {
			sparkW = c.width
		}
	}
	sig := string(layoutSig(cols, nil))
	cur := s.current()

	var detail []string
	if cur != nil {
		detail = o.candidateDetail(s, cur, width)
	}
	var out []string
	out = append(out, s.title("Overview", width, true))
	out = append(out, renderHeader(cols, s.sortCol, s.sortDesc, st))
	rowsH := height - 2 - 1 - len(detail) - 2
	rowsH = max(rowsH, 1)
	first := 0
	ci := s.cursorIndex()
	if ci >= rowsH {
		first = ci - rowsH + 1
	}
	rowsShown := 0
	rowsH = min(rowsH, max(len(s.order), 1))
	for i := first; i < len(s.order) && rowsShown < rowsH; i++ {
		c := s.cands[s.order[i]]
		rm, sel := memos[i], cur != nil && c.Name == cur.Name
		if rm.line == "" || rm.sig != sig || rm.selected != sel {
			r := overviewRow{c: c, cheapest: rm.cheapest, sparkW: sparkW, spark: o.sparks}
			rm.line, rm.sig, rm.selected = renderMemoRow(cols, where, rm, r, sel, st), sig, sel
		}
		out = append(out, rm.line)
		rowsShown++
	}
	if len(s.cands) == 0 {
		out = append(out, st.Dim.Render(" no candidates"))
		rowsShown++
	}
	for ; rowsShown < rowsH; rowsShown++ {
		out = append(out, "")
	}
	out = append(out, "")
	out = append(out, detail...)
	out = append(out, "", o.overviewLegend(s, width))
	return out
}

// fitOverviewColumns lays the shown columns out in width: each column as
// narrow as its title (with room for a sort mark) and its widest cell over
// every row, never wider than it was, so that at 80 columns the room a
// short candidate name leaves keeps the cost columns. RECENT's cells
// depend on its width: it stays. where[k] is the shown column cols[k] is.
func fitOverviewColumns(shown []column[overviewRow], memos []*rowMemo, width int) (cols []column[overviewRow], where []int) {
	fitted := append([]column[overviewRow](nil), shown...)
	for j := range fitted {
		c := &fitted[j]
		if c.key == "recent" {
			continue
		}
		w := textWidth(c.title) + 1
		for _, rm := range memos {
			w = max(w, rm.width[j])
		}
		c.width = min(c.width, w)
	}
	cols = layout(fitted, width)
	where = make([]int, len(cols))
	for k, c := range cols {
		for j := range shown {
			if shown[j].key == c.key {
				where[k] = j
			}
		}
	}
	return cols, where
}

// overviewLegend is the line under the overview: what its marks mean, or
// the one warning that matters more (figures warming up, an RTT below the
// physical floor, MONTHLY priced under what-if settings).
func (o *overviewScreen) overviewLegend(s *state, width int) string {
	st := s.st
	legend := st.render(styleDim, line(" * cheapest SLA pass (MONTHLY, "+orDash(s.snap.Currency)+") · ⇄ validated both ways · → forward only", width))
	for _, c := range s.cands {
		if c.warming() {
			legend = st.render(styleDim, line(fmt.Sprintf(" wait = SLA pending: fewer than %d probes, figures warming up (dimmed) · * cheapest SLA pass", WarmupProbes), width))
			break
		}
	}
	for _, c := range s.cands {
		if v := c.view(); !c.warming() && v.BelowFloor {
			legend = st.render(styleWarn, line(" STR <1! = RTT below the physical floor: an anycast address or a wrong region · * cheapest SLA pass", width))
			break
		}
	}
	if w := whatIfText(s.costOpts); w != "" {
		// The MONTHLY column is priced under settings changed in the cost
		// view: say so where the column is read, not only there.
		legend = st.render(styleWarn, line(" what-if MONTHLY: "+w+" (c: cost view to change)", width))
	}
	return legend
}

// whatIfText names the cost settings that differ from each offer's own
// rules and the recorded traffic; "" when there are none.
func whatIfText(o CostOptions) string {
	var parts []string
	if o.Method != "" {
		parts = append(parts, "95th "+string(o.Method))
	}
	if o.Direction != "" {
		parts = append(parts, "direction "+string(o.Direction))
	}
	if o.Scale > 0 && o.Scale != 1 {
		parts = append(parts, "traffic ×"+strconv.FormatFloat(o.Scale, 'g', 4, 64))
	}
	if o.UsageSet {
		parts = append(parts, "used "+strconv.FormatFloat(o.UsageHours, 'g', 6, 64)+" h")
	}
	return strings.Join(parts, " · ")
}

// detailMemo is the detail block last drawn, and for what.
type detailMemo struct {
	c       *Candidate
	rev     uint64
	width   int
	tracing bool
	lines   []string
}

// candidateDetail is renderCandidateDetail, drawn again only when the
// candidate changed (its rev), another one is selected or the width changed.
func (o *overviewScreen) candidateDetail(s *state, c *Candidate, width int) []string {
	if o.details == nil {
		return o.renderCandidateDetail(s, c, width)
	}
	d := o.details
	if d.lines == nil || d.c != c || d.rev != c.rev || d.width != width || d.tracing != s.snap.Tracing {
		*d = detailMemo{c: c, rev: c.rev, width: width, tracing: s.snap.Tracing, lines: o.renderCandidateDetail(s, c, width)}
	}
	return d.lines
}

// renderCandidateDetail is the block under the table for the selected row.
func (o *overviewScreen) renderCandidateDetail(s *state, c *Candidate, width int) []string {
	st := s.st
	head := []string{c.Name}
	for _, s := range []string{c.Provider, c.Region, c.Target} {
		if s != "" {
			head = append(head, s)
		}
	}
	if c.FloorMs > 0 {
		head = append(head, fmt.Sprintf("floor %.1f ms", c.FloorMs))
	}
	lines := []string{st.Title.Render(line(" "+strings.Join(head, " · "), width))}
	// Two lines when the checks do not fit in one: a verdict is not cut.
	lines = append(lines, wrapLines(o.detailSLA(s, c), width, 2, "     ", "  ")...)
	lines = append(lines, line(o.detailCost(s, c), width))
	return append(lines, line(o.detailRoute(s, c), width))
}

// detailSLA is the detail's SLA line: the verdict, then each check with
// what was measured and (but for the line class) what is required.
func (o *overviewScreen) detailSLA(s *state, c *Candidate) string {
	st := s.st
	var sla strings.Builder
	switch {
	case c.Reference:
		sla.WriteString(" SLA - (a reference row, not a candidate)")
	case !c.slaKnown() && !hasThresholds(s.snap.SLA):
		sla.WriteString(" SLA - (the candidates file sets no thresholds)")
	case !c.slaKnown():
		sla.WriteString(" SLA …")
	case c.warming():
		sent, _, _ := c.sent()
		sla.WriteString(fmt.Sprintf(" SLA pending: warming up, %d of %d probes (the figures are early)", sent, WarmupProbes))
	case c.SLA.Pass:
		sla.WriteString(" SLA " + st.Pass.Render("PASS"))
	default:
		sla.WriteString(" SLA " + st.Fail.Render("FAIL"))
	}
	if len(c.DeliveryFailed) > 0 {
		sla.WriteString(" delivery " + st.Fail.Render("FAIL ("+strings.Join(c.DeliveryFailed, ", ")+")"))
	}
	for _, ch := range c.SLA.Checks {
		mark, style := "✓", st.Pass
		switch {
		case ch.NotApplicable:
			mark, style = "–", st.Dim
		case !ch.Pass:
			mark, style = "✗", st.Fail
		}
		name := shortCheck[ch.Name]
		carrier, perCarrier := strings.CutPrefix(ch.Name, verdict.CheckLineClassCarrier)
		if perCarrier {
			name = carrier // line_class:telecom → "telecom forward cn2-gia, return cn2-gia"
		}
		measured := checkMeasured(ch)
		if perCarrier && (measured == "" || measured == "-") {
			measured = "not measured"
		}
		if ch.Name == verdict.CheckStretch && ch.Measured != nil && slices.Contains(c.q.StretchFlags, geo.FlagBelowFloor) {
			// As the STR column's "<1!": the ratio (rounded to 0.001)
			// says less than the reason.
			measured = "<1 (min RTT below the physical floor)"
		}
		if ch.Window != "" && ch.Window != verdict.WindowAll {
			// A check of an SLA window names it (issue 30).
			name += "@" + ch.Window
		}
		if ch.Family != "" {
			name += " on " + ch.Family // sla.families (issue 32)
		}
		sla.WriteString("  " + style.Render(mark) + " " + name + " " + measured)
		if ch.Name != "line_class" && !perCarrier {
			sla.WriteString(" " + checkRequired(ch))
		}
	}
	return sla.String()
}

// detailCost is the detail's cost line: the monthly total, in the base
// currency too, as the offered scheme plus the items.
func (o *overviewScreen) detailCost(s *state, c *Candidate) string {
	st := s.st
	cost := " Cost "
	switch {
	case c.Cost.Err != "":
		return cost + st.Fail.Render(c.Cost.Err)
	case !c.Cost.Total.Valid():
		return cost + "-"
	}
	cost += moneyText(c.Cost.Total) + " " + c.Cost.Total.Currency + "/month"
	if c.Cost.TotalBase.Valid() && c.Cost.TotalBase.Currency != c.Cost.Total.Currency {
		cost += " (" + moneyText(c.Cost.TotalBase) + " " + c.Cost.TotalBase.Currency + ")"
	}
	var parts []string
	for _, s := range c.Cost.Schemes {
		if s.Offered {
			parts = append(parts, s.Scheme+" "+moneyText(s.Amount))
		}
	}
	if len(c.Cost.Items) > 0 {
		var sum float64
		for _, it := range c.Cost.Items {
			sum += amountFloat(it.Amount)
		}
		parts = append(parts, fmt.Sprintf("%s %s", billing.Count(len(c.Cost.Items), "item", ""), moneyWhole(sum)))
	}
	if len(parts) > 0 {
		cost += " = " + strings.Join(parts, " + ")
	}
	cost += usageBrief(c.Cost)
	return cost + st.Dim.Render("  (c: detail)")
}

// detailRoute is the detail's route line: the line class and hop count of
// each direction traced, and what is missing.
func (o *overviewScreen) detailRoute(s *state, c *Candidate) string {
	st := s.st
	rt := " Route "
	if c.Forward != nil {
		rt += fmt.Sprintf("forward %s, %s", orDash(c.Forward.LineClass), hopsText(len(c.Forward.Hops)))
		if !c.Forward.Reached {
			rt += " (not reached)"
		}
	}
	if c.Return != nil {
		if c.Forward != nil {
			rt += " · "
		}
		rt += fmt.Sprintf("return %s, %s", orDash(c.Return.LineClass), hopsText(len(c.Return.Hops)))
	}
	tracing := s.snap.Tracing && c.Forward == nil
	failed := ""
	if c.Forward == nil && c.fwdErr != "" {
		failed, _, _ = strings.Cut(c.fwdErr, "\n")
		failed = "forward: trace failed: " + failed
		if c.Return != nil {
			failed = " · " + failed
		}
	}
	switch {
	case failed != "":
		rt += st.Fail.Render(failed)
	case tracing && c.Return == nil:
		rt += st.Dim.Render("forward: tracing…")
	case tracing:
		rt += st.Dim.Render(" · forward: tracing…")
	case c.Forward == nil && c.Return == nil:
		rt += st.Warn.Render("not traced in either direction: the line class is not validated")
	case c.Return == nil:
		rt += " · " + st.Warn.Render("return path not traced: only the forward direction is validated")
	case c.Forward == nil:
		rt += " · " + st.Warn.Render("forward path not traced: only the return direction is validated")
	}
	return rt + st.Dim.Render("  (enter: hops)")
}

// SortColumns lists the column keys Options.Sort accepts (the sortable
// ones, as the s key cycles them), in screen order; thru (THRU, shown when
// a candidate has a throughput test) before sla.
func SortColumns() []string {
	var keys []string
	for _, c := range overviewColumns {
		if c.key == "sla" {
			keys = append(keys, throughputColumn.key)
		}
		if c.less != nil {
			keys = append(keys, c.key)
		}
	}
	return keys
}

// hasThresholds reports whether the SLA asks for any check.
func hasThresholds(s candidates.SLA) bool {
	return s.RTTP95ms != nil || s.Loss != nil || s.JitterMs != nil || s.MaxStretch != nil || len(s.LineClasses) > 0
}

// hopsText counts hops in words: "1 hop", "10 hops".
func hopsText(n int) string {
	if n == 1 {
		return "1 hop"
	}
	return fmt.Sprintf("%d hops", n)
}

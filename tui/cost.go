package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/verdict"
)

// costScreen is the cost detail of the selected candidate. Its keys move
// the cursor and change how every candidate is priced (the 95th method,
// the direction rule, a traffic scale, the used hours), each re-pricing at
// once; it keeps what it drew.
type costScreen struct {
	chart     *chartCache    // memo of the traffic panel
	breakdown *breakdownMemo // memo of the breakdown
}

func newCostScreen() costScreen {
	return costScreen{chart: &chartCache{}, breakdown: &breakdownMemo{}}
}

// Update takes the cost screen's keys: ↑↓ k j [ ] move the cursor; m M, d D,
// + - and 0 set the 95th method, the direction rule and the traffic scale,
// u U the used hours; each of those returns the command that re-prices.
func (cs costScreen) Update(s *state, msg tea.Msg) (screen, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || s.moveKey(k) {
		return cs, nil
	}
	km := keys
	o := &s.costOpts
	if d := keyStep(k, km.Method, km.MethodPrev); d != 0 {
		o.Method = cycle(Methods, o.Method, d)
		return cs, s.costCmd()
	}
	if d := keyStep(k, km.Direction, km.DirectionPrev); d != 0 {
		o.Direction = cycle(Directions, o.Direction, d)
		return cs, s.costCmd()
	}
	if d := keyStep(k, km.ScaleUp, km.ScaleDown); d != 0 {
		o.Scale = stepScale(o.Scale, d)
		return cs, s.costCmd()
	}
	if key.Matches(k, km.ScaleReset) {
		o.Scale = 1
		return cs, s.costCmd()
	}
	return cs, s.usageKey(k)
}

// View is the cost screen at width × height.
func (cs costScreen) View(s *state, width, height int) string {
	return strings.Join(cs.renderCost(s, width, height), "\n")
}

// renderCost is the cost detail of the selected candidate: the month's
// traffic with the 95th line(s) and the commit, the per-scheme breakdown and
// the offer's other items.
func (cs *costScreen) renderCost(s *state, width, height int) []string {
	st := s.st
	c := s.current()
	if c == nil {
		return []string{s.title("Cost", width, false)}
	}
	o := s.costOpts
	out := []string{s.title("Cost "+c.Name, width, false)}
	sub := fmt.Sprintf(" offer %s · 95th method %s · direction %s · traffic %s",
		orDash(c.Cost.Offer), ruleText(o.Method), ruleText(o.Direction), scaleText(o.Scale))
	if u := usageText(c.Cost, o); u != "" {
		sub += " · used " + u
	}
	if c.Cost.Opts != o && c.Cost.Opts.Method != "" {
		sub += st.Warn.Render(" (recomputing…)")
	}
	sub += st.Dim.Render("   m method · d direction · + - 0 scale · u U used hours")
	out = append(out, line(sub, width))
	if l := throughputCostLine(c); l != "" {
		out = append(out, line(l, width))
	}

	// The breakdown changes only with the candidate's cost (its rev) and
	// the width.
	bd := cs.breakdown
	if bd == nil {
		bd = &breakdownMemo{}
	}
	if bd.lines == nil || bd.c != c || bd.rev != c.rev || bd.width != width {
		*bd = breakdownMemo{c: c, rev: c.rev, width: width, lines: renderBreakdown(c.Cost, width, st)}
	}
	breakdown := bd.lines
	chartH := height - len(out) - 2 - len(breakdown)
	// The month's chart changes only with the costs, the options or the
	// size, and drawing it is most of a frame: keep the last one.
	key := fmt.Sprint(width, chartH, o, c.Cost.Levels, c.Cost.CommitMbps, s.noColor)
	if cs.chart == nil {
		cs.chart = &chartCache{}
	}
	if cs.chart.key != key || cs.chart.traffic != s.snap.Traffic || cs.chart.lines == nil {
		*cs.chart = chartCache{key: key, traffic: s.snap.Traffic,
			lines: renderTrafficPanel(gridOf(s.snap.Traffic), c.Cost, o, width, chartH, st)}
	}
	out = append(out, cs.chart.lines...)
	out = append(out, "")
	out = append(out, breakdown...)
	return out
}

// breakdownMemo is the cost breakdown last drawn, and for what.
type breakdownMemo struct {
	c     *Candidate
	rev   uint64
	width int
	lines []string
}

// chartCache holds the last traffic panel drawn.
type chartCache struct {
	key     string
	traffic *verdict.TrafficSummary
	lines   []string
}

// renderTrafficPanel is the legend line and the traffic chart, height lines
// in all; the plotted series follows the direction rule.
func renderTrafficPanel(tr *trafficGrid, cost Cost, o CostOptions, width, height int, st *Styles) []string {
	if tr == nil || len(tr.InMbps) == 0 {
		return []string{st.Dim.Render(" no traffic profile: costs are shown without a chart")}
	}
	step := tr.Step
	if step <= 0 {
		step = 5 * time.Minute
	}
	t0 := tr.Start.UTC()
	t1 := t0.Add(time.Duration(len(tr.InMbps)) * step)
	dir := o.Direction
	if dir == "" {
		dir = cost.Direction
	}
	dirs := dir.Parts()
	legend, levels, ymax := trafficLegend(cost, dirs, t0, t1, width, st)
	out := []string{line(legend, width)}
	if height-1 < 4 {
		return out
	}
	ss, peak := trafficSeries(tr, o.Scale, dirs, step, max(width-8, 10), st)
	chart := renderTimeChart(width-1, height-1, t0, t1, niceMax(math.Max(ymax, peak)*1.05), ss, levels, timeLabels("01/02"), st)
	for _, l := range strings.Split(chart, "\n") {
		out = append(out, " "+l)
	}
	return out
}

// trafficLegend is the traffic chart's legend line, the levels drawn over
// it (the commit, then the 95th of each scheme) and the highest of them.
func trafficLegend(cost Cost, dirs []billing.Direction, t0, t1 time.Time, width int, st *Styles) (string, []hline, float64) {
	// Narrow terminals get the same legend without the spaces.
	sp, gap, head := " ", "  ", " Mbps %s–%s UTC, peak per column:"
	if width < 100 {
		sp, gap, head = "", " ", " Mbps %s–%s peak/col"
	}
	legend := fmt.Sprintf(head, t0.Format("01/02"), t1.Add(-time.Second).Format("01/02"))
	// Without colour the second direction is drawn as dots and the levels
	// each get their own rune, so the legend still tells them apart.
	glyph := func(k int) string {
		if st.Mono && k > 0 {
			return "•"
		}
		return "⣿"
	}
	for k, d := range dirs {
		legend += " " + glyph(k) + sp + string(d)
	}
	var levels []hline
	ymax := 0.0
	levelRunes := []rune{'─', '═', '╌'}
	for k, l := range cost.Levels {
		r := levelRunes[min(k, len(levelRunes)-1)]
		levels = append(levels, hline{v: l.Mbps, r: r, style: st.Level, label: true})
		legend += fmt.Sprintf("%s%c%s%s %s", gap, r, sp, l.Name, mbps(l.Mbps))
		ymax = math.Max(ymax, l.Mbps)
	}
	if cost.CommitMbps > 0 {
		// First, so that a 95th on the same row is drawn (and labelled) over it.
		levels = append([]hline{{v: cost.CommitMbps, r: '┄', style: st.Commit, label: true}}, levels...)
		legend += gap + "┄" + sp + "commit " + mbps(cost.CommitMbps)
		ymax = math.Max(ymax, cost.CommitMbps)
	}
	return legend, levels, ymax
}

// trafficSeries is the traffic of each direction as the peak per column,
// scaled, and the highest peak. Peak, since a month does not fit in 100
// columns, and averaging would hide exactly the bursts the 95th is about.
func trafficSeries(tr *trafficGrid, scale float64, dirs []billing.Direction, step time.Duration, cols int, st *Styles) ([]series, float64) {
	n := len(tr.InMbps)
	t0 := tr.Start.UTC()
	if scale <= 0 {
		scale = 1
	}
	value := func(dir billing.Direction, i int) float64 {
		in, out := tr.InMbps[i]*scale, 0.0
		if i < len(tr.OutMbps) {
			out = tr.OutMbps[i] * scale
		}
		return dir.Apply(in, out)
	}
	var ss []series
	ymax := 0.0
	for k, d := range dirs {
		s := series{name: fmt.Sprintf("%d-%s", k, d), style: st.ChartOut}
		if d == "in" {
			s.style = st.ChartIn
		}
		if st.Mono && k > 0 {
			s.mark = '•'
		}
		// A column without any slot of data (a day the log does not
		// cover) is a gap: the line stops there instead of dropping to
		// zero, as bill's --plot and --gaps skip show it. Each run of
		// columns with data is a series of its own, so no line bridges
		// the gap either.
		run := s
		for col := 0; col < cols; col++ {
			a, b := col*n/cols, (col+1)*n/cols
			if b <= a {
				continue
			}
			peak, seen := 0.0, false
			for i := a; i < b; i++ {
				if v := value(d, i); !math.IsNaN(v) {
					peak, seen = math.Max(peak, v), true
				}
			}
			if !seen {
				if len(run.t) > 0 {
					ss = append(ss, run)
					run = s
				}
				continue
			}
			ymax = math.Max(ymax, peak)
			run.t = append(run.t, t0.Add(time.Duration(a)*step))
			run.v = append(run.v, peak)
		}
		if len(run.t) > 0 {
			ss = append(ss, run)
		}
	}
	return ss, ymax
}

// renderBreakdown is the per-scheme table and the other items, side by
// side when there is room.
func renderBreakdown(c Cost, width int, st *Styles) []string {
	if c.Err != "" {
		return []string{st.Fail.Render(line(" cost: "+c.Err, width))}
	}
	half := width
	side := width >= 90
	if side {
		half = (width - 1) / 2
	}
	left := schemeLines(c, half, st)
	right := otherItemLines(c, half, st)
	if !side {
		// Narrow: the items as running text, so the chart keeps its rows.
		out := append(left, itemsRunning(c.Items, width)...)
		return append(out, right[len(c.Items)+1:]...)
	}
	var out []string
	for i := 0; i < max(len(left), len(right)); i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, fit(l, half, false)+" "+r)
	}
	return out
}

// schemeLines is the per-scheme table, half columns wide: a row a scheme
// (the cheapest starred, one that cannot carry the traffic marked !), then
// the carry verdicts.
func schemeLines(c Cost, half int, st *Styles) []string {
	cheap := cheapestScheme(c)
	detW := half - 13 - 11 - 12
	left := []string{st.Header.Render(fit(" SCHEME", 13, false) + fit("RULE", detW, false) +
		fit("BANDWIDTH", 11, true) + fit("TOTAL "+c.Total.Currency, 12, true))}
	// Several offers under one scheme (the same machine by the hour, month,
	// year, spot): each row names its offer, and only the cheapest is starred.
	perScheme := map[string]int{}
	cheapV := math.Inf(1)
	for _, s := range c.Schemes {
		perScheme[s.Scheme]++
		if v := amountFloat(s.Total); s.Scheme == cheap && !s.CannotCarry && v < cheapV {
			cheapV = v
		}
	}
	for _, s := range c.Schemes {
		name := s.Scheme
		if perScheme[s.Scheme] > 1 && !s.Offered {
			name = s.Offer
		}
		if s.Offered {
			name += " (offer)"
		}
		cheapest := s.Scheme == cheap && amountFloat(s.Total) == cheapV
		mark := " "
		switch {
		case s.CannotCarry:
			mark = "!"
		case cheapest:
			mark = "*"
		}
		row := mark + fit(name, 11, false) + " " + fit(line(volumeUnits(s.Detail), detW), detW, false) + fit(moneyText(s.Amount), 11, true) +
			fit(moneyText(s.Total), 12, true)
		switch {
		case s.CannotCarry:
			row = st.Fail.Render(row)
		case cheapest:
			row = st.Cheapest.Render(row)
		}
		left = append(left, row)
	}
	if cheap != "" {
		left = append(left, st.Dim.Render(line(" * cheapest total for this traffic", half)))
	}
	for _, s := range c.Schemes {
		// The offered bill's own verdict is among the notes already.
		if s.Carry != "" && !s.Offered {
			mark := " ~ "
			if s.CannotCarry {
				mark = " ! "
			}
			left = append(left, st.Warn.Render(line(mark+s.Offer+": "+s.Carry, half)))
		}
	}
	return left
}

// otherItemLines is the items beside the schemes, half columns wide: a
// header, a row an item, the total (and in the base currency), the used
// hours and the notes.
func otherItemLines(c Cost, half int, st *Styles) []string {
	cur := c.Total.Currency
	right := []string{st.Header.Render(fit(" OTHER ITEMS", half-14, false) + fit(cur, 14, true))}
	for _, it := range c.Items {
		name := it.Name
		if it.Detail != "" {
			name += " (" + it.Detail + ")"
		}
		right = append(right, " "+fit(name, half-1-14, false)+fit(moneyText(it.Amount), 14, true))
	}
	total := " TOTAL (offered scheme + items)"
	right = append(right, st.Title.Render(fit(total, half-14, false)+fit(moneyText(c.Total), 14, true)))
	if c.TotalBase.Valid() && c.TotalBase.Currency != cur {
		right = append(right, fit(" = in "+c.TotalBase.Currency, half-14, false)+fit(moneyText(c.TotalBase), 14, true))
	}
	if h := c.Horizon; h != nil {
		right = append(right, st.Title.Render(fit(fmt.Sprintf(" OVER %d MONTHS (730 h a month)", h.Months), half-14, false)+fit(moneyText(h.Total), 14, true)))
		if h.Base.Valid() && h.Base.Currency != cur {
			right = append(right, fit(" = in "+h.Base.Currency, half-14, false)+fit(moneyText(h.Base), 14, true))
		}
	}
	for _, u := range usageLines(c) {
		right = append(right, line(u, half))
	}
	for _, n := range c.Notes {
		right = append(right, st.Dim.Render(line(" note: "+n, half)))
	}
	return right
}

// itemsRunning is the items as running text, wrapped to width.
func itemsRunning(items []CostItem, width int) []string {
	var out []string
	cur := " items:"
	for _, it := range items {
		p := it.Name + " " + moneyText(it.Amount)
		if textWidth(cur)+3+textWidth(p) > width && cur != " items:" {
			out = append(out, cur)
			cur = "       "
		}
		if cur == " items:" || cur == "       " {
			cur += " " + p
		} else {
			cur += " · " + p
		}
	}
	if len(items) > 0 {
		out = append(out, cur)
	}
	return out
}

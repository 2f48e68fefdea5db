package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// CompareFormats are the formats compare's report renders in: all of them.
var CompareFormats = formatsWhere(func(formatSpec) bool { return true })

// compareHeader is the report's preamble: what was compared and on which traffic.
func compareHeader(r *compare.Result, format Format) string {
	var b strings.Builder
	title := "linecheck compare: " + r.Source
	if format == FormatMarkdown {
		b.WriteString("## " + title + "\n\n")
	} else {
		b.WriteString(title + "\n")
	}
	lines := []string{}
	mode := "live probes from the vantage"
	if r.Mode == "offline" {
		mode = "offline: recorded traces and probe streams only, nothing sent"
	}
	lines = append(lines, "mode: "+mode)
	where := "vantage: " + r.Vantage
	if len(r.Users) > 0 {
		where += "; users: " + strings.Join(r.Users, ", ")
	}
	lines = append(lines, where)
	if n := route.HiddenHopsNote(r.HiddenHops); n != "" {
		lines = append(lines, n)
	}
	if t := r.Traffic; t != nil {
		lines = append(lines, fmt.Sprintf("traffic: %s, %s to %s, in %s, out %s, p95 %s, %s (%d missing)",
			t.Source, t.PeriodStart.Format("2006-01-02 15:04 MST"), t.PeriodEnd.Format("2006-01-02 15:04 MST"),
			fmtBytes(t.InBytes), fmtBytes(t.OutBytes), fmtBps(t.P95bps), billing.Count(t.Samples, "sample", ""), t.Missing))
	}
	var rates []string
	for cur, rate := range r.FX {
		rates = append(rates, fmt.Sprintf("1 %s = %s %s", cur, rate, r.FXBase))
	}
	if len(rates) > 0 {
		sort.Strings(rates)
		lines = append(lines, "fx (given, not fetched): "+strings.Join(rates, ", "))
	}
	lines = append(lines, "SLA: "+slaText(r.SLA))
	if w := slaWindowsText(r); w != "" {
		lines = append(lines, w)
	}
	for _, l := range lines {
		if format == FormatMarkdown {
			b.WriteString("- " + l + "\n")
		} else {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// slaWindowsText says which SLA windows the checks were judged over
// besides the whole recording, and whether the evening is the default.
func slaWindowsText(r *compare.Result) string {
	var names []string
	seen := map[string]bool{}
	def := false
	for _, e := range r.Candidates {
		for _, w := range e.Windows {
			if k := w.Name + " " + w.Hours; !seen[k] {
				seen[k] = true
				names = append(names, w.Name+" "+w.Hours)
				def = def || w.Default
			}
		}
	}
	switch {
	case len(names) == 0 && r.SLA.WindowsOff:
		return "SLA windows: off (windows: {}): the whole recording only"
	case len(names) == 0:
		return ""
	case def:
		return "SLA windows: the whole recording and " + strings.Join(names, ", ") + " (the default; windows: {} turns it off)"
	}
	return "SLA windows: the whole recording and " + strings.Join(names, ", ")
}

func slaText(s compare.SLASpec) string {
	var p []string
	if s.RTTP95ms != nil {
		p = append(p, fmt.Sprintf("RTT p95 <= %g ms", *s.RTTP95ms))
	}
	if s.Loss != nil {
		p = append(p, fmt.Sprintf("loss <= %s", fmtPct(*s.Loss)))
	}
	if s.JitterMs != nil {
		p = append(p, fmt.Sprintf("jitter (mean |D|) <= %g ms", *s.JitterMs))
	}
	if len(s.LineClasses) > 0 {
		p = append(p, "line class in {"+strings.Join(s.LineClasses, ", ")+"}")
	}
	for _, c := range []string{"telecom", "unicom", "mobile", "other"} {
		if cs := s.LineClassesByCarrier[c]; len(cs) > 0 {
			p = append(p, "line class toward "+c+" users in {"+strings.Join(cs, ", ")+"}")
		}
	}
	if s.MaxStretch != nil {
		p = append(p, fmt.Sprintf("stretch <= %g", *s.MaxStretch))
	}
	if len(s.Families) > 0 {
		p = append(p, "each of "+strings.Join(s.Families, ", ")+" on its own route")
	}
	p = append(p, slaThroughputText(s)...)
	if s.MinPathMTU != nil {
		p = append(p, fmt.Sprintf("path MTU >= %d bytes", *s.MinPathMTU))
	}
	if len(p) == 0 {
		return "none given (every candidate passes)"
	}
	return strings.Join(p, ", ")
}

// compareCells formats one report's figures. csv stays machine-readable:
// plain decimals, loss as a fraction, and no notes.
type compareCells struct {
	money    func(string) string
	pct, ms1 func(float64) string
	msOr     func(float64, bool) string
	notes    bool     // false for csv
	blank    []string // the empty line that opens a note block in the aligned table
}

func newCompareCells(format Format) compareCells {
	c := compareCells{money: fmtMoney, pct: fmtPct, ms1: fmtMs1, msOr: msOr, notes: !format.Machine()}
	if format.Machine() {
		c.money = func(s string) string { return s }
		c.pct, c.ms1 = Float, Float
		c.msOr = func(x float64, ok bool) string {
			if !ok {
				return "-"
			}
			return Float(x)
		}
	}
	if format.ForTerminal() {
		c.blank = []string{""}
	}
	return c
}

// CompareTables builds the report's tables: the ranking, the SLA checks, the cost
// breakdown, and the per-target probe statistics. For csv the notes are left
// out (every cell stays machine-readable).
func CompareTables(r *compare.Result, format Format) []Table {
	c := newCompareCells(format)
	tables := []Table{compareRankTable(r, c), compareChecksTable(r), compareCostTable(r, c), compareProbesTable(r, c), compareRoutesTable(r, format, c)}
	if u := compareUsageTable(r, format); u != nil {
		tables = append(tables[:3], append([]Table{*u}, tables[3:]...)...)
	}
	if h := compareHorizonTable(r, c); h != nil {
		tables = append(tables[:3], append([]Table{*h}, tables[3:]...)...)
	}
	if nets, ok := carriersTable(r, format); ok {
		tables = append(tables, nets)
	}
	if ps, ok := comparePathsTable(r, c); ok {
		tables = append(tables, ps)
	}
	if rs, ok := compareRoutesSeenTable(r, format); ok {
		tables = append(tables, rs)
	}
	if fs, ok := compareFamiliesTable(r, c); ok {
		tables = append(tables, fs)
	}
	if h, ok := compareHourlyTable(r, format); ok {
		tables = append(tables, h)
	}
	if tp, ok := compareThroughputTable(r, format); ok {
		tables = append(tables, tp)
	}
	if g, ok := compareGPUTable(r, format); ok {
		tables = append(tables, g)
	}
	return tables
}

// compareRankTable is the ranking, one row a candidate in rank order, with
// the verdict, the recommendation and every warning as notes.
func compareRankTable(r *compare.Result, c compareCells) Table {
	base := r.FXBase
	rank := Table{
		Title:   "Ranking (passing first, able to carry the traffic, measured, then by monthly cost in " + base + ")",
		Headers: []string{"rank", "candidate", "provider", "region", "line class", "validated", "p50 ms", "p95 ms", "loss", "jitter ms", "stretch", "SLA", "monthly", "currency", "monthly " + base},
		Align:   "rlllllrrrrrlrlr",
		Movable: []string{"provider", "region", "stretch"},
	}
	for _, e := range r.Candidates {
		q := e.Route
		verdict := "FAIL"
		if e.SLA.Pass {
			verdict = "pass"
		}
		monthly, cur, conv := "-", "", "-"
		if e.Monthly != nil {
			monthly, cur = c.money(e.Monthly.Total), e.Monthly.Currency
			conv = c.money(e.Monthly.Converted.Text())
		}
		rtt50, rtt95, jit, loss, stretch := "-", "-", "-", "-", "-"
		if q.Recv > 0 {
			rtt50, rtt95 = c.ms1(q.RTT.P50), c.ms1(q.RTT.P95)
			jit = c.ms1(q.Jitter.MeanAbs)
		}
		if q.Sent > 0 {
			loss = c.pct(q.Loss)
		}
		if q.Stretch > 0 && q.Recv > 0 {
			stretch = strconv.FormatFloat(q.Stretch, 'f', 2, 64)
		}
		rank.Rows = append(rank.Rows, []string{strconv.Itoa(e.Rank), e.Name, e.Provider, e.Region, dashIfEmpty(q.LineClass), q.Direction,
			rtt50, rtt95, loss, jit, stretch, verdict, monthly, cur, conv})
	}
	addHorizonColumn(&rank, r, c)
	addGPUVerdictColumn(&rank, r)
	if c.notes {
		rank.Notes = append(append(rank.Notes, c.blank...), compareRankNotes(r, c)...)
	}
	return rank
}

// compareRankNotes are the lines under the ranking: the order rule, the
// verdict, projected months and the warnings, candidates' first.
func compareRankNotes(r *compare.Result, c compareCells) []string {
	notes := []string{"Order: " + verdict.RankingRule + ".", "Verdict: " + r.Verdict}
	if r.Horizon != nil {
		notes[0] = "Order: " + strings.Replace(verdict.RankingRule, "by monthly cost", fmt.Sprintf("by the cost over %d months", r.Horizon.Months), 1) + "; " + r.Horizon.Text + "."
	}
	if r.Recommended != "" {
		notes = append(notes, "Recommended: "+r.Recommended)
	}
	for _, n := range r.Notes {
		notes = append(notes, "note: "+n)
	}
	for _, e := range r.Candidates {
		if m := e.Monthly; m != nil && m.Projected != nil {
			pr := m.Projected
			notes = append(notes, fmt.Sprintf("projected month (not a bill): %s %s %s from %d of %d days of traffic recorded (bill as recorded %s %s; bandwidth: %s)",
				e.Name, c.money(pr.Converted.Text()), pr.Converted.Currency, pr.RecordedDays, pr.PeriodDays, c.money(m.Converted.Text()), m.Converted.Currency, pr.Basis))
		}
	}
	for _, e := range r.Candidates {
		if gap := e.Route.ValidationGap(); gap != "" {
			notes = append(notes, "warning: "+e.Name+": "+gap)
		}
		for _, w := range e.Warnings {
			notes = append(notes, "warning: "+e.Name+": "+w)
		}
	}
	for _, w := range r.Warnings {
		notes = append(notes, "warning: "+w)
	}
	return notes
}

// compareChecksTable is every SLA check of every candidate.
func compareChecksTable(r *compare.Result) Table {
	checks := Table{
		Title:   "SLA checks",
		Headers: []string{"candidate", "check", "required", "measured", "unit", "result", "note"},
		Align:   "lllrlll",
		Movable: []string{"note"},
	}
	for _, e := range r.Candidates {
		for _, c := range e.SLA.Checks {
			res := "FAIL"
			switch {
			case c.NotApplicable:
				res = "n/a"
			case c.Pass:
				res = "pass"
			}
			name, note := c.Label(), c.Note
			if c.Window != "" && c.Window != verdict.WindowAll {
				// A window's check names it and its hours; the whole
				// recording's rows stay as they were.
				name = c.Label() + " in " + c.Window
				note = strings.TrimSuffix(c.Hours+"; "+note, "; ")
			}
			checks.Rows = append(checks.Rows, []string{e.Name, name, fmtCheck(c.Required), fmtCheck(c.Measured), c.Unit, res, note})
		}
	}
	return checks
}

// compareCostTable is each candidate's monthly bill item by item, its total
// and its what-ifs, with the saving of the recommended one as a note.
func compareCostTable(r *compare.Result, c compareCells) Table {
	cost := Table{
		Title:   "Monthly cost breakdown",
		Headers: []string{"candidate", "offer", "item", "amount", "currency", "detail"},
		Align:   "lllrll",
		Movable: []string{"detail"},
	}
	for _, e := range r.Candidates {
		m := e.Monthly
		if m == nil {
			continue
		}
		for _, it := range m.Items {
			cost.Rows = append(cost.Rows, []string{e.Name, m.Offer, it.Name, c.money(it.Amount), m.Currency, it.Detail})
		}
		detail := ""
		if m.Currency != m.Converted.Currency {
			detail = fmt.Sprintf("= %s %s at %s", c.money(m.Converted.Text()), m.Converted.Currency, m.Rate)
		}
		cost.Rows = append(cost.Rows, []string{e.Name, m.Offer, "total", c.money(m.Total), m.Currency, detail})
		for _, w := range e.WhatIf {
			cost.Rows = append(cost.Rows, []string{e.Name, w.Offer, "what-if: " + w.Scheme + " (total)", c.money(w.Total), w.Currency,
				fmt.Sprintf("= %s %s", c.money(w.Converted.Text()), w.Converted.Currency)})
		}
	}
	if r.Savings != nil && c.notes {
		over := "a month"
		if r.Savings.Months > 0 {
			over = fmt.Sprintf("over %d months", r.Savings.Months)
		}
		cost.Notes = append(append(cost.Notes, c.blank...), fmt.Sprintf("%s is %s %s (%.1f %%) %s cheaper than the next passing candidate, %s.",
			r.Recommended, c.money(r.Savings.Amount), r.Savings.Currency, r.Savings.Percent, over, r.Savings.Versus))
	}
	return cost
}

// compareProbesTable is the probe statistics of every target of every candidate.
func compareProbesTable(r *compare.Result, c compareCells) Table {
	probes := Table{
		Title:   "Probe targets",
		Headers: []string{"candidate", "target", "sent", "recv", "loss", "late", "dup", "min ms", "p50 ms", "p95 ms", "max ms", "jitter ms"},
		Align:   "llrrrrrrrrrr",
	}
	for _, e := range r.Candidates {
		for _, t := range e.Targets {
			// A figure without data is "-", never 0.
			loss, mn, p50, p95, mx, jit := "-", "-", "-", "-", "-", "-"
			if t.Sent > 0 {
				loss = c.pct(t.Loss)
			}
			if t.Recv > 0 {
				mn, p50, p95, mx, jit = c.ms1(t.RTT.Min), c.ms1(t.RTT.P50), c.ms1(t.RTT.P95), c.ms1(t.RTT.Max), c.ms1(t.Jitter.MeanAbs)
			}
			probes.Rows = append(probes.Rows, []string{e.Name, t.Target.String(), strconv.Itoa(t.Sent), strconv.Itoa(t.Recv), loss,
				strconv.Itoa(t.Late), strconv.Itoa(t.Duplicates), mn, p50, p95, mx, jit})
		}
	}
	return probes
}

// compareRoutesTable is the evidence behind each candidate's line class.
func compareRoutesTable(r *compare.Result, format Format, c compareCells) Table {
	routes := Table{
		Title: "Route evidence",
		Headers: []string{"candidate", "forward", "return", "combined", "validated", "rule", "confidence", "floor ms", "min ms",
			"evidence hops", "forward as path", "return as path"},
		Align:   "llllllrrrlll",
		Movable: []string{"evidence hops", "rule", "forward as path", "return as path"},
	}
	for _, e := range r.Candidates {
		q := e.Route
		rule, conf, hops := "", "", ""
		if q.Evidence != nil {
			rule, conf = q.Evidence.Rule, q.Evidence.Confidence
			var hs []string
			for _, h := range q.Evidence.Hops {
				hs = append(hs, fmt.Sprintf("%d:%s(%s)", h.TTL, h.Addr, h.Carrier))
			}
			hops = strings.Join(hs, " ")
		}
		routes.Rows = append(routes.Rows, []string{e.Name, dashIfEmpty(q.ForwardClass), dashIfEmpty(q.ReturnClass), dashIfEmpty(q.LineClass), q.Direction, rule, conf,
			c.msOr(q.FloorMs, q.FloorMs > 0), c.msOr(q.RTT.Min, q.Recv > 0), hops,
			dashIfEmpty(route.ASPathText(q.ForwardASPath)), dashIfEmpty(route.ASPathText(q.ReturnASPath))})
	}
	// The CSV has no header lines: a column says it there.
	if format.Machine() && r.HiddenHops > 0 {
		routes.Headers, routes.Align = append(routes.Headers, "hidden hops"), routes.Align+"r"
		for i := range routes.Rows {
			routes.Rows[i] = append(routes.Rows[i], strconv.Itoa(r.HiddenHops))
		}
	}
	if !c.notes {
		return routes
	}
	if d := r.ASNData; d != nil {
		routes.Notes = append(routes.Notes, fmt.Sprintf("as path: the networks each direction crosses, (ttl N) where each begins; dataset %s (%s): %s",
			d.Snapshot, d.Origin, d.Attribution))
	}
	for _, e := range r.Candidates {
		for _, n := range e.Route.Notes {
			routes.Notes = append(routes.Notes, e.Name+": "+n)
		}
		for _, f := range e.Route.StretchFlags {
			routes.Notes = append(routes.Notes, e.Name+": stretch flag "+f)
		}
	}
	return routes
}

// carriersTable is the three-network view: per candidate, the route toward
// the users of each carrier, forward and return, and the per-carrier SLA
// classes; ok is false when no user names a carrier.
func carriersTable(r *compare.Result, format Format) (Table, bool) {
	t := Table{
		Title:   "Three networks (the route toward each user carrier)",
		Headers: []string{"candidate", "carrier", "users", "forward", "return", "return measured to", "return evidence", "allowed", "SLA"},
		Movable: []string{"return evidence", "return measured to"},
	}
	// The ping vantages' columns only when one of them measured a
	// candidate (recorded.probes of RIPE Atlas, Globalping).
	pings := hasCarrierPing(r)
	if pings {
		t.Headers = append(t.Headers, carrierPingHeaders...)
		t.Movable = append([]string{"ping vantage"}, t.Movable...)
	}
	for _, e := range r.Candidates {
		for _, c := range e.Route.Carriers {
			to := "-"
			if c.ReturnTarget != "" {
				to = c.ReturnTarget + " (" + c.ReturnCity + ")"
			}
			verdict := "-"
			if c.Pass != nil {
				verdict = "pass"
				if !*c.Pass {
					verdict = "FAIL"
				}
			}
			allowed := "-"
			if len(c.Allowed) > 0 {
				allowed = strings.Join(c.Allowed, "|")
			}
			row := []string{e.Name, c.Carrier, c.City, dashIfEmpty(c.Forward), dashIfEmpty(c.Return), to,
				dashIfEmpty(c.ReturnEvidence), allowed, verdict}
			if pings {
				row = append(row, carrierPingCells(c.Ping)...)
			}
			t.Rows = append(t.Rows, row)
			if !format.Machine() {
				for _, n := range c.Notes {
					t.Notes = append(t.Notes, e.Name+", "+c.Carrier+" users: "+n)
				}
			}
		}
	}
	if !format.Machine() && len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "return = server → users, from the backtrace recording (linecheck backtrace on the server); forward = from the vantage, counted for the vantage's own carrier")
		if pings {
			t.Notes = append(t.Notes, "ping = from the recorded.probes vantage on the users' carrier nearest to them, toward the candidate's target; the SLA figures pool every vantage")
		}
	}
	return t, len(t.Rows) > 0
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// msOr is fmtMs1(x), or "-" when the figure has no data.
func msOr(x float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmtMs1(x)
}

// fmtMs1 formats an RTT in ms for tables: MS, adaptive precision, so a
// loopback RTT reads 0.0213, not 0.0.
func fmtMs1(x float64) string { return MS(x) }

func fmtPct(x float64) string { return strconv.FormatFloat(x*100, 'f', 2, 64) + "%" }

func fmtCheck(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []string:
		return strings.Join(x, "|")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// fmtMoney groups thousands of a decimal string: 87649.50 → 87,649.50.
func fmtMoney(s string) string { return GroupThousands(s) }

func fmtBytes(n int64) string { return humanBytes(n) }

func fmtBps(x float64) string {
	units := []string{"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"}
	i := 0
	for x >= 1000 && i < len(units)-1 {
		x /= 1000
		i++
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " " + units[i]
}

package exporter

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The candidates as compare judges them. Every candidate of the file is
// evaluated with verdict.Evaluate — the function compare's report uses,
// with the aggregation and SLA checks the TUI's verdict.EvaluateLive uses —
// on a Measurement made of its targets' windows, its first target's last
// trace (forward), the file's recorded return route, the last throughput
// test and any floor SetSLA gave, and priced with the verdict's Pricing. The
// evaluations are the snapshot serve renders: the candidate families of
// /metrics, the SLA table of / and the compare report of /compare.json are
// written from it. A candidate is evaluated again only when something it
// depends on changed (dirty), and then when /metrics or / are read, so a
// cycle costs no more than it did before.

// candidateFamilies are the metrics written from the evaluations.
type candidateFamilies struct {
	loss, rtt, jitter       GaugeVec
	stretch, floor, class   GaugeVec
	tput, tputFloor         GaugeVec
	checkPass, checkNoData  GaugeVec
	winPass, winNoData      GaugeVec
	pass                    GaugeVec
	cost, costConv, project GaugeVec
	billed, commit          GaugeVec
	trafficP95, trafficCov  GaugeVec
	trafficStart, trafficTo GaugeVec
	delivery                GaugeVec
	// famClass, famLoss, famRTT, famCheckPass and famCheckNoData are the
	// address families' own series (issue 32): keyed by a family label
	// (ipv4, ipv6), beside the candidate's (its worse family's) ones.
	famClass, famLoss, famRTT    GaugeVec
	famCheckPass, famCheckNoData GaugeVec
	// carrierClass is compare's per-carrier table (route.carriers).
	carrierClass GaugeVec
}

func newCandidateFamilies() (candidateFamilies, []*family) {
	cand := []string{"candidate"}
	offer := []string{"candidate", "offer", "scheme", "currency", "role"}
	rate := []string{"candidate", "offer", "scheme"}
	var fams []*family
	g := func(name, help string, labels ...string) GaugeVec {
		f := newFamily(name, help, gaugeType, labels, nil)
		fams = append(fams, f)
		return GaugeVec{vec{f}}
	}
	cf := candidateFamilies{
		loss: g("linecheck_candidate_loss_ratio", "The candidate's loss over the window as compare judges it: the worst of its targets (0..1); absent before a probe ended.", cand...),
		rtt: g("linecheck_candidate_rtt_seconds", "The candidate's RTT over the window as compare reports it (nearest-rank percentiles; the worst of its targets, the best minimum), by stat (min, p50, p95, p99, max); absent before an answer.",
			"candidate", "stat"),
		jitter: g("linecheck_candidate_jitter_seconds", "The candidate's jitter over the window as compare reports it (the worst of its targets), by kind (rfc3550, mean_abs: the SLA's, pdv_p95); absent before two answers.",
			"candidate", "kind"),
		stretch: g("linecheck_stretch_ratio", "Minimum RTT over the physical floor (vantage to region at 200 km/ms of fibre, both ways), as compare's stretch; absent when the floor is unknown or nothing answered.", cand...),
		floor:   g("linecheck_floor_rtt_seconds", "The physical floor RTT between the file's vantage and the candidate's region; absent when either place is unknown.", cand...),
		class: g("linecheck_candidate_line_class_info", "The candidate's line class (value 1) per direction: forward (its first target's last trace), return (the file's recorded.return) and route (the class compare's verdict uses, from both); a direction without a trace has no series.",
			"candidate", "direction", "line_class"),
		tput: g("linecheck_candidate_throughput_bits_per_second", "The candidate's throughput as compare judges it (the last --bw-every test, else recorded.bw), by stat: p5 (what sla.min_throughput_mbps is checked on), p50, mean; absent when never measured.",
			"candidate", "stat"),
		tputFloor: g("linecheck_throughput_floor_bits_per_second", "The contracted throughput floor (sla.min_throughput_mbps) each candidate is checked against; absent without one.", cand...),
		checkPass: g("linecheck_sla_check_pass", "1 when the candidate passes the SLA check over the window (compare's rule), 0 when it fails on a measured figure; absent while the check has no data (see linecheck_sla_check_nodata).",
			"candidate", "check"),
		checkNoData: g("linecheck_sla_check_nodata", "1 while the SLA check has no data in the window (no answer, no trace, no throughput test, an unknown floor): compare fails such a check, serve reports it here and not as a measured fail.",
			"candidate", "check"),
		winPass: g("linecheck_sla_window_check_pass", "linecheck_sla_check_pass by SLA window: window=\"all\" is the target's --window (the same value as linecheck_sla_check_pass), any other window (sla.windows, else the evening 20:00-23:00 in the users' zone) is judged over its most recent occurrence: the current one while it is in progress, else the last one; absent while the check has no data there.",
			"candidate", "check", "window"),
		winNoData: g("linecheck_sla_window_check_nodata", "linecheck_sla_check_nodata by SLA window (window=\"all\" or the window's name, over its most recent occurrence): 1 while the check has no data there.",
			"candidate", "check", "window"),
		pass: g("linecheck_sla_pass", "1 when every SLA check of the candidate in the window passes (compare's verdict), 0 when one fails on a measured figure: window=\"all\" over the target's --window, any other SLA window (sla.windows, else the evening 20:00-23:00 in the users' zone, once serve has probed in one) over its most recent occurrence, the current one while it is in progress; absent while the only checks not passing have no data (a window without probes), and without an sla block.",
			"candidate", "window"),
		cost: g("linecheck_monthly_cost", "The candidate's monthly cost at the traffic serve is given, in the offer's currency, by offer and its bandwidth scheme: role offer (the candidate's) or what_if; compare's figure.",
			offer...),
		costConv: g("linecheck_monthly_cost_converted", "linecheck_monthly_cost converted to the file's fx base currency (currency label), the figure compare ranks by.", offer...),
		project: g("linecheck_projected_monthly_cost", "The month projected from a partial traffic recording (month to date), in the offer's currency, as compare's projected bill; absent for a complete month.",
			offer...),
		billed:       g("linecheck_billed_rate_bits_per_second", "The rate statistic the offer bills over the traffic month so far (its 95th, peak or average under its own method and direction rule); absent for per-GB and fixed offers.", rate...),
		commit:       g("linecheck_commit_bits_per_second", "The offer's committed rate (commit_mbps): the month-to-date 95th above it bills overage; absent without a commit.", rate...),
		trafficP95:   g("linecheck_traffic_p95_bits_per_second", "The 95th of the traffic serve prices (nearest rank, the greater direction) over its month so far; labelled with the traffic source.", "source"),
		trafficCov:   g("linecheck_traffic_coverage_ratio", "Share of the traffic month's 5-minute slots that have traffic (month to date: the recorded part).", "source"),
		trafficStart: g("linecheck_traffic_period_start_timestamp_seconds", "Start of the traffic month serve prices.", "source"),
		delivery: g("linecheck_delivery_pass", "1 when the candidate's recorded delivery part (part: gpu from recorded.gpu or a trial bundle's gpu/, host and interconnect from recorded.trial) passes its block of the candidates file (gpu:, host:, interconnect:), 0 when it fails: a failed part fails the candidate as in compare (not recommended); absent for a part not recorded or without a block to check against.",
			"candidate", "part"),
		trafficTo: g("linecheck_traffic_period_end_timestamp_seconds", "End of the traffic month serve prices.", "source"),
		famClass: g("linecheck_candidate_family_line_class_info", "A dual-stack candidate's line class (value 1) per address family and direction: each family's route target's last trace (forward), the recorded return of that family, and route (both); the candidate's own series is its worse family's. Only for candidates with targets of two families or under sla.families.",
			"candidate", "family", "direction", "line_class"),
		famLoss: g("linecheck_candidate_family_loss_ratio", "The loss of one address family's targets of the candidate (the worst of them, 0..1); absent before a probe of that family ended.", "candidate", "family"),
		famRTT: g("linecheck_candidate_family_rtt_seconds", "The RTT of one address family's targets of the candidate, by stat (p50, p95; the worst of them); absent before an answer of that family.",
			"candidate", "family", "stat"),
		famCheckPass: g("linecheck_sla_family_check_pass", "Under sla.families: 1 when the address family passes the SLA check on its own route, 0 when it fails on a measured figure; absent while it has no data (linecheck_sla_family_check_nodata).",
			"candidate", "family", "check"),
		famCheckNoData: g("linecheck_sla_family_check_nodata", "Under sla.families: 1 while the address family's SLA check has no data (no target or answer of that family, no trace): compare fails such a check.",
			"candidate", "family", "check"),
		carrierClass: g("linecheck_carrier_line_class_info", "The candidate's line class (value 1) toward the users of one carrier and city (sla users with a carrier), per direction: forward from a recorded.forward vantage on that carrier (RIPE Atlas, Globalping, NextTrace), return from a recorded.return backtrace, as compare's route.carriers; a direction not measured has no series.",
			"candidate", "carrier", "city", "direction", "line_class"),
	}
	return cf, fams
}

func (cf candidateFamilies) all() []GaugeVec {
	return []GaugeVec{cf.loss, cf.rtt, cf.jitter, cf.stretch, cf.floor, cf.class, cf.tput, cf.tputFloor,
		cf.checkPass, cf.checkNoData, cf.winPass, cf.winNoData, cf.pass, cf.cost, cf.costConv, cf.project, cf.billed, cf.commit,
		cf.trafficP95, cf.trafficCov, cf.trafficStart, cf.trafficTo, cf.famClass, cf.famLoss, cf.famRTT, cf.famCheckPass, cf.famCheckNoData, cf.delivery, cf.carrierClass}
}

// snapLocker is the lock the registry takes to write the exporter's
// families: the exporter's own, after the snapshot is brought up to date,
// so a scrape renders the candidates as they stand.
type snapLocker struct{ e *Exporter }

func (l snapLocker) Lock() {
	l.e.mu.Lock()
	l.e.refresh()
}

func (l snapLocker) Unlock() { l.e.mu.Unlock() }

// markDirty says candidate must be evaluated again; e.mu is held.
func (e *Exporter) markDirty(candidate string) { e.dirty[candidate] = true }

// markAllDirty marks every listed candidate; e.mu is held.
func (e *Exporter) markAllDirty() {
	for c := range e.byCand {
		e.dirty[c] = true
	}
}

// refresh brings the snapshot up to date: windows forget what fell out of
// --window, dirty candidates are evaluated again and the candidate families
// written afresh. e.mu is held.
func (e *Exporter) refresh() {
	if e.span > 0 {
		cut := e.now().Add(-e.span)
		for _, t := range e.targets {
			w := e.win[t.key()]
			if w != nil && w.DropBefore(cut) > 0 {
				r := e.windowSeries(t, w)
				if st := e.state[t.key()]; st != nil && st.fails == 0 {
					e.up.With(labelsOf(t)).Set(upValue(r.Recv))
				}
				e.markDirty(t.Candidate)
			}
		}
	}
	if len(e.dirty) == 0 {
		return
	}
	for c := range e.dirty {
		if _, ok := e.byCand[c]; ok {
			e.evals[c] = e.evaluate(c)
		} else {
			delete(e.evals, c)
		}
	}
	clear(e.dirty)
	for _, v := range e.cf.all() {
		v.Reset()
	}
	e.renderTraffic()
	for _, name := range e.candidateNames() {
		e.renderCandidate(e.evals[name])
	}
}

// candidateNames are the listed candidates, sorted.
func (e *Exporter) candidateNames() []string {
	out := make([]string, 0, len(e.byCand))
	for c := range e.byCand {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// candidateOf is the file's candidate of that name, or one made of its
// targets (a --targets list, or a test without a file). e.mu is held.
func (e *Exporter) candidateOf(name string) *candidates.Candidate {
	if c := e.cands[name]; c != nil {
		return c
	}
	c := &candidates.Candidate{Name: name}
	for _, t := range e.byCand[name] {
		c.Targets = append(c.Targets, candidates.Target{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port})
	}
	return c
}

// evaluate is compare's evaluation of one candidate from what serve holds.
// e.mu is held.
func (e *Exporter) evaluate(name string) *verdict.Evaluation {
	c := e.candidateOf(name)
	m := &verdict.Measurement{}
	if st := e.static[name]; st != nil {
		m.Return, m.ReturnBacktrace, m.ForwardVantages = st.Return, st.ReturnBacktrace, st.ForwardVantages
		if st.Throughput != nil {
			tp := *st.Throughput
			m.Throughput = &tp
		}
	}
	if tp := e.tput[name]; tp != nil {
		x := *tp // RelatePort writes into it
		m.Throughput = &x
	}
	rts := c.RouteTargets()
	for i, t := range e.byCand[name] {
		ct := candidates.Target{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port}
		if i < len(c.Targets) {
			ct = c.Targets[i]
		}
		if w := e.win[t.key()]; w != nil {
			m.Targets = append(m.Targets, w.Result(ct, nil))
		} else {
			m.Targets = append(m.Targets, verdict.TargetResult{Target: ct})
		}
		// The route is the route targets' traces, chosen where compare
		// and the TUI choose them (candidates.Candidate.RouteTargets: one
		// per address family, the first is Forward).
		if k := slices.Index(rts, ct); k == 0 && m.Forward == nil {
			m.Forward = e.traces[t.key()]
		} else if tr := e.traces[t.key()]; k > 0 && tr != nil {
			if m.FamilyForward == nil {
				m.FamilyForward = map[string]*route.Trace{}
			}
			fam := candidates.AddrFamily(ct.Addr)
			if fam == "" {
				fam = verdict.Family(tr.Addr)
			}
			m.FamilyForward[fam] = tr
		}
	}
	// A floor given without places (SetSLA) is judged as compare would
	// judge it with them.
	m.FloorMs = e.floor[name]
	ev := verdict.Evaluate(e.file, c, m, e.db)
	if d := e.delivery[name]; d != nil {
		// The recorded delivery, judged once at load as compare judges it:
		// a failed part fails the candidate (Evaluation.Pass).
		ev.GPU, ev.Host, ev.Interconnect = d.GPU, d.Host, d.Interconnect
		ev.DeliveryFailed = append([]string(nil), d.DeliveryFailed...)
		ev.Warnings = append(ev.Warnings, d.Warnings...)
	}
	if occ := e.occurrences(name); len(occ) > 0 {
		// The floor unrounded, as Evaluate judges its windows with it
		// (Route.FloorMs is rounded to 0.01 ms).
		floor, ok := verdict.FloorMs(e.file, c)
		if !ok {
			floor = m.FloorMs
			if floor <= 0 {
				floor = -1
			}
		}
		verdict.JudgeOccurrences(ev, e.file.SLA, occ, floor)
	}
	e.throughputNote(ev, c)
	if e.pricing != nil && c.Offer != "" {
		if mo, whatIf, err := e.pricing.Monthly(c); err == nil {
			ev.Monthly, ev.WhatIf = mo, whatIf
			verdict.RelatePort(ev.Throughput, mo)
		}
	}
	return ev
}

// Snapshot returns the evaluations of every listed candidate, by name: the
// figures, line classes, SLA verdicts and costs /metrics and / show. The
// values belong to the exporter: read them, do not change them.
func (e *Exporter) Snapshot() []*verdict.Evaluation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.snapshot()
}

// snapshot is Snapshot; e.mu is held.
func (e *Exporter) snapshot() []*verdict.Evaluation {
	e.refresh()
	out := make([]*verdict.Evaluation, 0, len(e.evals))
	for _, name := range e.candidateNames() {
		if ev := e.evals[name]; ev != nil {
			out = append(out, ev)
		}
	}
	return out
}

// Report is the snapshot as compare's document (compare.SnapshotResult):
// every listed candidate of the file ranked, with the verdict, stamped now.
func (e *Exporter) Report(now time.Time) *compare.Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	return compare.SnapshotResult(e.file, e.pricing, e.snapshot(), now)
}

// ReportRenderer writes a compare document in the format named by format
// ("" for the renderer's default) and returns its Content-Type; serve
// gives report.Render (cmd), so /compare is compare's own report.
type ReportRenderer func(w io.Writer, r *compare.Result, format string) (contentType string, err error)

// SetReportRenderer serves /compare?format=F with render (nil: /compare is
// not served).
func (e *Exporter) SetReportRenderer(render ReportRenderer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.render = render
}

// serveReport answers /compare: the snapshot rendered as compare's report.
func (e *Exporter) serveReport(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	render := e.render
	if render == nil {
		e.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	// Rendered under the lock: the document shares the routes a new
	// evaluation annotates again (verdict.Evaluate classifies its traces).
	var buf bytes.Buffer
	ct, err := render(&buf, compare.SnapshotResult(e.file, e.pricing, e.snapshot(), time.Now().UTC()), r.URL.Query().Get("format"))
	e.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Write(buf.Bytes())
}

// renderCandidate writes one evaluation's series. e.mu is held.
func (e *Exporter) renderCandidate(ev *verdict.Evaluation) {
	if ev == nil {
		return
	}
	cf := e.cf
	l := Labels{"candidate": ev.Name}
	q := ev.Route
	if q.Sent > 0 {
		cf.loss.With(l).Set(q.Loss)
	}
	if q.Recv > 0 {
		setSeconds(cf.rtt, l, "stat", []msFigure{{"min", q.RTT.Min}, {"p50", q.RTT.P50}, {"p95", q.RTT.P95}, {"p99", q.RTT.P99}, {"max", q.RTT.Max}})
		// No stretch within the vantage's city (same-city): no series.
		if q.Stretch > 0 {
			cf.stretch.With(l).Set(q.Stretch)
		}
	}
	if q.Recv > 1 {
		setSeconds(cf.jitter, l, "kind", []msFigure{{"rfc3550", q.Jitter.RFC3550}, {"mean_abs", q.Jitter.MeanAbs}, {"pdv_p95", q.Jitter.PDVP95}})
	}
	if q.FloorMs > 0 {
		cf.floor.With(l).Set(q.FloorMs / 1000)
	}
	classes := []struct{ dir, class string }{{"forward", q.ForwardClass}, {"return", q.ReturnClass}}
	if q.ForwardClass != "" || q.ReturnClass != "" {
		classes = append(classes, struct{ dir, class string }{"route", q.LineClass})
	}
	for _, dc := range classes {
		if dc.class != "" {
			cf.class.With(Labels{"candidate": ev.Name, "direction": dc.dir, "line_class": dc.class}).Set(1)
		}
	}
	for _, u := range q.Carriers {
		for _, dc := range []struct{ dir, class string }{{"forward", u.Forward}, {"return", u.Return}} {
			if dc.class != "" {
				cf.carrierClass.With(Labels{"candidate": ev.Name, "carrier": u.Carrier, "city": u.City, "direction": dc.dir, "line_class": dc.class}).Set(1)
			}
		}
	}
	if tp := ev.Throughput; tp != nil {
		for _, s := range []struct {
			stat string
			v    *float64
		}{{"p5", tp.P5}, {"p50", tp.P50}, {"mean", tp.Mean}} {
			if s.v != nil {
				cf.tput.With(Labels{"candidate": ev.Name, "stat": s.stat}).Set(*s.v)
			}
		}
	}
	if f := e.file.SLA.MinThroughputMbps; f != nil {
		cf.tputFloor.With(l).Set(*f * 1e6)
	}
	e.renderChecks(ev)
	e.renderDelivery(ev)
	e.renderFamilies(ev)
	e.renderCost(ev)
}

// renderFamilies writes each address family's own series of a candidate
// judged per family (verdict.Evaluation.Families). e.mu is held.
func (e *Exporter) renderFamilies(ev *verdict.Evaluation) {
	cf := e.cf
	for _, f := range ev.Families {
		l := Labels{"candidate": ev.Name, "family": f.Family}
		q := f.Route
		for _, dc := range []struct{ dir, class string }{{"forward", q.ForwardClass}, {"return", q.ReturnClass}, {"route", q.LineClass}} {
			if dc.class != "" && (dc.dir != "route" || q.ForwardClass != "" || q.ReturnClass != "") {
				cf.famClass.With(Labels{"candidate": ev.Name, "family": f.Family, "direction": dc.dir, "line_class": dc.class}).Set(1)
			}
		}
		if q.Sent > 0 {
			cf.famLoss.With(l).Set(q.Loss)
		}
		if q.Recv > 0 {
			setSeconds(cf.famRTT, l, "stat", []msFigure{{"p50", q.RTT.P50}, {"p95", q.RTT.P95}})
		}
	}
}

// msFigure is a figure in milliseconds and the label value that names it.
type msFigure struct {
	name string
	ms   float64
}

// setSeconds sets one series of v per figure, in seconds: labels l and
// key=the figure's name.
func setSeconds(v GaugeVec, l Labels, key string, figs []msFigure) {
	for _, f := range figs {
		v.With(withLabel(l, key, f.name)).Set(f.ms / 1000)
	}
}

// renderChecks writes the SLA checks: measured ones pass or fail, the others
// say "no data", and the overall verdict is absent while only checks
// without data stand in its way. e.mu is held.
func (e *Exporter) renderChecks(ev *verdict.Evaluation) {
	cf := e.cf
	var order []string
	byWindow := map[string][]verdict.Check{}
	for _, c := range ev.SLA.Checks {
		win := c.Window
		if win == "" {
			win = verdict.WindowAll
		}
		if _, ok := byWindow[win]; !ok {
			order = append(order, win)
		}
		byWindow[win] = append(byWindow[win], c)
		if c.Family != "" {
			// A family's own check (sla.families): its series carries the
			// family, so ipv4's and ipv6's line_class stay two series.
			l := Labels{"candidate": ev.Name, "check": c.Name, "family": c.Family}
			if c.Unmeasured {
				cf.famCheckNoData.With(l).Set(1)
			} else {
				cf.famCheckPass.With(l).Set(boolValue(c.Pass))
			}
			continue
		}
		l := Labels{"candidate": ev.Name, "check": c.Name, "window": win}
		if c.Unmeasured {
			cf.winNoData.With(l).Set(1)
		} else {
			cf.winPass.With(l).Set(boolValue(c.Pass))
		}
		if win != verdict.WindowAll {
			continue
		}
		// The series of before the SLA windows, for the dashboards that
		// read them: the whole window's checks.
		l = Labels{"candidate": ev.Name, "check": c.Name}
		if c.Unmeasured {
			cf.checkNoData.With(l).Set(1)
			continue
		}
		cf.checkPass.With(l).Set(boolValue(c.Pass))
	}
	for _, win := range order {
		if pass, ok := overall(verdict.Verdict{Checks: byWindow[win], Pass: allPass(byWindow[win])}); ok {
			cf.pass.With(Labels{"candidate": ev.Name, "window": win}).Set(boolValue(pass))
		}
	}
}

// renderDelivery writes linecheck_delivery_pass for each recorded part
// judged against its block. e.mu is held.
func (e *Exporter) renderDelivery(ev *verdict.Evaluation) {
	put := func(part, v string) {
		if v == "pass" || v == "fail" {
			e.cf.delivery.With(Labels{"candidate": ev.Name, "part": part}).Set(boolValue(v == "pass"))
		}
	}
	if ev.GPU != nil {
		put("gpu", ev.GPU.Verdict)
	}
	if ev.Host != nil {
		put("host", ev.Host.Verdict)
	}
	if ev.Interconnect != nil {
		put("interconnect", ev.Interconnect.Verdict)
	}
}

// allPass tells whether every check passes.
func allPass(checks []verdict.Check) bool {
	for _, c := range checks {
		if !c.Pass {
			return false
		}
	}
	return true
}

// renderCost writes the candidate's monthly cost under its offer and its
// what-if offers, the projected month, and each offer's billed rate beside
// its commit. e.mu is held.
func (e *Exporter) renderCost(ev *verdict.Evaluation) {
	cf := e.cf
	m := ev.Monthly
	if m == nil {
		return
	}
	put := func(offer, scheme, currency, role, total string, conv verdict.Money) {
		l := Labels{"candidate": ev.Name, "offer": offer, "scheme": scheme, "currency": currency, "role": role}
		if v, err := strconv.ParseFloat(total, 64); err == nil {
			cf.cost.With(l).Set(v)
		}
		if conv.Valid() {
			cl := Labels{"candidate": ev.Name, "offer": offer, "scheme": scheme, "currency": conv.Currency, "role": role}
			cf.costConv.With(cl).Set(conv.Amount.InexactFloat64())
		}
		e.renderRate(ev.Name, offer, scheme)
	}
	put(m.Offer, m.Scheme, m.Currency, "offer", m.Total, m.Converted)
	if p := m.Projected; p != nil {
		cf.project.With(Labels{"candidate": ev.Name, "offer": m.Offer, "scheme": m.Scheme, "currency": p.Total.Currency, "role": "offer"}).Set(p.Total.Amount.InexactFloat64())
	}
	for _, w := range ev.WhatIf {
		put(w.Offer, w.Scheme, w.Currency, "what_if", w.Total, w.Converted)
	}
}

// renderRate writes the offer's billed rate and commit. e.mu is held.
func (e *Exporter) renderRate(candidate, offer, scheme string) {
	l := Labels{"candidate": candidate, "offer": offer, "scheme": scheme}
	if b, ok := e.pricing.Bill(offer); ok && isRateScheme(scheme) {
		e.cf.billed.With(l).Set(b.Rule.Bps)
	}
	if o := e.pricing.Offer(offer); o != nil && o.Bandwidth.CommitMbps.Set {
		e.cf.commit.With(l).Set(o.Bandwidth.CommitMbps.InexactFloat64() * 1e6)
	}
}

// isRateScheme tells the bandwidth schemes that bill a rate statistic.
func isRateScheme(s string) bool {
	switch s {
	case "p95", "peak", "average", "daily-peak-average":
		return true
	}
	return false
}

// renderTraffic writes the traffic month serve prices. e.mu is held.
func (e *Exporter) renderTraffic() {
	if e.pricing == nil || e.pricing.Traffic == nil {
		return
	}
	t := e.pricing.Traffic
	l := Labels{"source": t.Source}
	e.cf.trafficP95.With(l).Set(t.P95bps)
	if n := t.Samples + t.Missing; n > 0 {
		e.cf.trafficCov.With(l).Set(float64(t.Samples) / float64(n))
	}
	e.cf.trafficStart.With(l).Set(float64(t.PeriodStart.Unix()))
	e.cf.trafficTo.With(l).Set(float64(t.PeriodEnd.Unix()))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

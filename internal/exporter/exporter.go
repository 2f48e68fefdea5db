// Package exporter is the Prometheus side of `linecheck serve`: the metrics
// of continuous probing, kept in the exporter's own registry (never the
// global one) and served on /metrics through client_golang (metrics.go), and
// the loop that probes every target of the candidates file.
//
// Metrics, labelled candidate, target (the address, with :port for tcp) and
// protocol; hop metrics add ttl (1..max TTL). Series exist only for
// the targets of the current configuration, so cardinality is bounded by it;
// a reload deletes the series of targets that left.
//
//	linecheck_rtt_seconds              histogram of echo / connect RTTs, buckets 0.1 ms … 1 s
//	linecheck_probes_sent_total        probes whose wait has ended
//	linecheck_probes_received_total    replies within the timeout
//	linecheck_probes_late_total        replies after the timeout (not received)
//	linecheck_probes_duplicate_total   duplicate replies (not received)
//	linecheck_probe_errors_total       cycles that failed (socket or privilege errors)
//	linecheck_hop_loss_ratio           loss per TTL in the last trace (0..1)
//	linecheck_hops                     hops (TTLs) of the last trace, up to the destination
//	linecheck_line_class_info          1, with the route's line_class from the last trace (and, for
//	                                   backtrace targets, the users' carrier and city)
//	linecheck_cycles_total             completed probe cycles
//	linecheck_target_up                1 when the target answered at least once in its window, 0 when
//	                                   nothing answered (refused TCP included) or while it backs off
//
// The loop (Run) paces itself: see LoopConfig and docs/scaleout.md.
package exporter

import (
	"html/template"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// RTTBuckets are the upper bounds of linecheck_rtt_seconds: 1-2-5 steps from
// 0.1 ms (same host) to 1 s (a bad intercontinental line), 13 buckets.
var RTTBuckets = []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1}

var targetLabels = []string{"candidate", "target", "protocol"}

// Exporter holds the metrics and the current target list.
type Exporter struct {
	reg *Registry

	rtt        HistogramVec
	sent       CounterVec
	recv       CounterVec
	late       CounterVec
	dup        CounterVec
	errs       CounterVec
	hopLoss    GaugeVec
	hops       GaugeVec
	lineClass  GaugeVec
	up         GaugeVec
	jitter     GaugeVec
	cycles     Counter
	configLoad Gauge

	log  io.Writer     // where the loop says what fails and recovers; nil: nowhere
	wake chan struct{} // a reload wakes the loop's wait

	mu      sync.Mutex
	targets []Target
	byCand  map[string][]Target     // targets by candidate, so judging one is not a scan of all
	state   map[string]*targetState // per target key
	// state per target key: the TTLs and line class currently exported, so a
	// shorter trace or a new class removes the stale series.
	maxTTL map[string]int
	class  map[string]string
	// The window of each target's latest probes: at most size probes
	// (SLAWindow unless SetWindow), and with span > 0 only those of the
	// last span (serve --window), by now.
	win map[string]*verdict.Window
	// occ holds each target's probes in the latest occurrence of each SLA
	// window, by target key and window name (windows.go).
	occ  map[string]map[string]*occurrence
	size int
	span time.Duration
	now  func() time.Time
	// What each candidate is evaluated with (snapshot.go): the file (a
	// stand-in holding the SLA without one), its candidates, their recorded
	// return routes and throughput, the pricing of the traffic, hop names,
	// each target's last trace and path, the last throughput test.
	file   *candidates.File
	cands  map[string]*candidates.Candidate
	static map[string]*verdict.Measurement
	// delivery is each candidate's recorded delivery verdict (Config.Delivery).
	delivery map[string]*verdict.Evaluation
	pricing  *verdict.Pricing
	db       route.ASNDB
	floor    map[string]float64
	traces   map[string]*route.Trace
	paths    map[string]*pathState
	tput     map[string]*verdict.Throughput
	bwEvery  time.Duration // serve --bw-every (0: no throughput tests), for the notes of checks without one
	// The snapshot: each candidate's evaluation, and those to make again.
	evals map[string]*verdict.Evaluation
	dirty map[string]bool
	cf    candidateFamilies
	// render writes /compare (SetReportRenderer).
	render ReportRenderer

	winLoss     GaugeVec
	winRTT      GaugeVec
	hopRTT      GaugeVec
	pathID      GaugeVec
	pathChanges CounterVec
	pathCount   GaugeVec
	pathClass   GaugeVec
}

// New returns an exporter with its own registry and no targets; log (nil:
// none) gets a line when a target starts failing and when it recovers.
func New(log io.Writer) *Exporter {
	// fam makes a family and keeps it for the registry; counters and
	// gauges make the labelled ones the exporter sets. Every metric is
	// declared once, where the Exporter takes it (the registry renders
	// families sorted by name).
	var fams []*family
	fam := func(name, help string, typ metricType, labels []string, buckets []float64) *family {
		f := newFamily(name, help, typ, labels, buckets)
		fams = append(fams, f)
		return f
	}
	counters := func(name, help string, labels []string) CounterVec {
		return CounterVec{vec{fam(name, help, counterType, labels, nil)}}
	}
	gauges := func(name, help string, labels []string) GaugeVec {
		return GaugeVec{vec{fam(name, help, gaugeType, labels, nil)}}
	}
	withTTL := append(append([]string{}, targetLabels...), "ttl")
	withClass := append(append([]string{}, targetLabels...), "line_class", "carrier", "city")
	withStat := append(append([]string{}, targetLabels...), "stat")
	withPath := append(append([]string{}, targetLabels...), "path", "line_class")
	cycles := fam("linecheck_cycles_total", "Completed probe cycles.", counterType, nil, nil)
	configLoad := fam("linecheck_config_last_reload_success_timestamp_seconds", "When the candidates file was last loaded.", gaugeType, nil, nil)
	cf, cfams := newCandidateFamilies()
	e := &Exporter{
		log:         log,
		wake:        make(chan struct{}, 1),
		state:       map[string]*targetState{},
		reg:         NewRegistry(),
		cycles:      Counter{cycles, cycles.plain},
		configLoad:  Gauge{configLoad, configLoad.plain},
		maxTTL:      map[string]int{},
		class:       map[string]string{},
		win:         map[string]*verdict.Window{},
		occ:         map[string]map[string]*occurrence{},
		size:        SLAWindow,
		now:         time.Now,
		file:        &candidates.File{},
		cands:       map[string]*candidates.Candidate{},
		traces:      map[string]*route.Trace{},
		paths:       map[string]*pathState{},
		tput:        map[string]*verdict.Throughput{},
		evals:       map[string]*verdict.Evaluation{},
		dirty:       map[string]bool{},
		cf:          cf,
		rtt:         HistogramVec{vec{fam("linecheck_rtt_seconds", "Round-trip time of answered probes (ICMP echo or TCP connect).", histogramType, targetLabels, RTTBuckets)}},
		sent:        counters("linecheck_probes_sent_total", "Probes sent whose wait has ended.", targetLabels),
		recv:        counters("linecheck_probes_received_total", "Replies received within the timeout.", targetLabels),
		late:        counters("linecheck_probes_late_total", "Replies received after the timeout (not counted as received).", targetLabels),
		dup:         counters("linecheck_probes_duplicate_total", "Duplicate replies (not counted as received).", targetLabels),
		errs:        counters("linecheck_probe_errors_total", "Probe attempts that failed with an error (name resolution, socket, privilege, a refused address; failed traces too).", targetLabels),
		hopLoss:     gauges("linecheck_hop_loss_ratio", "Loss per TTL in the last trace, 0..1.", withTTL),
		hops:        gauges("linecheck_hops", "Number of hops (TTLs) in the last trace, up to the destination or the maximum TTL.", targetLabels),
		lineClass:   gauges("linecheck_line_class_info", "Carrier line class of the route in the last trace (value always 1).", withClass),
		up:          gauges("linecheck_target_up", "1 when the target answered at least once in its window (serve --window; at most the latest "+strconv.Itoa(SLAWindow)+" probes without one), 0 when nothing in the window answered (all lost; a TCP target whose connections are refused), before its first answer, and while it backs off after errors (resolution, socket, privilege).", targetLabels),
		jitter:      gauges("linecheck_jitter_seconds", "Jitter of the target's answers over its window (serve --window): the mean |D| of consecutive RTTs, the whole-window figure the SLA's jitter_ms check uses; absent before two answers.", targetLabels),
		winLoss:     gauges("linecheck_window_loss_ratio", "Loss over the target's window (--window): 1 − received/sent over its probes whose wait ended, compare's per-target figure; absent before a probe ended.", targetLabels),
		winRTT:      gauges("linecheck_window_rtt_seconds", "RTT of the target's answers over its window, nearest rank, by stat (min, p50, p95, p99, max): compare's per-target figures; absent before an answer.", withStat),
		hopRTT:      gauges("linecheck_hop_rtt_seconds", "Median RTT per TTL in the last trace (the responder with the most replies); absent for a silent TTL.", withTTL),
		pathID:      gauges("linecheck_path_id", "Identity of the current route: FNV-1a (32 bits) of its hop addresses in TTL order; changes exactly when linecheck_path_changes_total counts.", targetLabels),
		pathChanges: counters("linecheck_path_changes_total", "Route changes between consecutive traces: another hop count, or a TTL answered by another address in both (a TTL silent in one is no change).", targetLabels),
		pathCount:   gauges("linecheck_paths", "Load-balanced paths the last multipath discovery found toward the target (a candidate with multipath: true); absent for plain traces.", targetLabels),
		pathClass:   gauges("linecheck_path_line_class_info", "Line class (value 1) of each path of the last multipath discovery, labelled path (its number in the trace document) and line_class.", withPath),
	}
	// Every metric of the exporter is read under its lock, so one scrape
	// never sees a cycle half applied (sent counted, received not yet): on
	// loopback received == sent must hold in every scrape.
	// The lock brings the snapshot up to date first (snapLocker).
	e.reg.add(snapLocker{e}, append(fams, cfams...)...)
	return e
}

// Registry returns the exporter's registry (for tests and extra metrics).
func (e *Exporter) Registry() *Registry { return e.reg }

// Handler serves /metrics from the exporter's registry through promhttp:
// the text format (0.0.4), OpenMetrics or protobuf as the scraper asks,
// gzipped when asked, only the families named by name[] parameters when
// there are any.
func (e *Exporter) Handler() http.Handler { return e.reg.Handler() }

// Mux returns the HTTP routes of serve: /metrics, /-/healthy (503 with the
// reason when nothing can be probed) and / (the state of every target).
func (e *Exporter) Mux() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("/metrics", e.Handler())
	m.HandleFunc("/compare", e.serveReport)
	m.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ok, why := e.Health(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "linecheck is unhealthy: "+why+"\n")
			return
		}
		io.WriteString(w, "linecheck is Healthy.\n")
	})
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		ok, why := e.Health()
		page := statusPage{Healthy: ok, Reason: why, Targets: e.Status(), Candidates: e.Snapshot(), SLA: e.SLA()}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := statusTmpl().Execute(w, page); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	return m
}

// TargetStatus is one target's state as / shows it.
type TargetStatus struct {
	Target
	IP      string // the address last probed ("" before the first measured cycle)
	Up      bool   // false while it backs off after errors
	Fails   int    // failures in a row
	Next    time.Time
	LastErr string
	// TraceErr is the last trace's error while traces back off.
	TraceErr string
	// WindowSent and WindowRecv are the probes of its window (--window)
	// and the answered ones: a target probed without a single answer is
	// down in linecheck_target_up, and on the page.
	WindowSent, WindowRecv int
	// Probed: at least one cycle measured it.
	Probed bool
	// Refused is how many TCP connections its last cycle had refused.
	Refused int
}

// Status returns the state of every target, in file order.
func (e *Exporter) Status() []TargetStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []TargetStatus
	for _, t := range e.targets {
		s := e.state[t.key()]
		if s == nil {
			continue
		}
		st := TargetStatus{Target: t, Up: s.fails == 0, Fails: s.fails, Next: s.next, LastErr: s.lastErr, TraceErr: s.trErr,
			WindowSent: s.winSent, WindowRecv: s.winRecv, Probed: s.probed, Refused: s.refused}
		if s.resolved.IsValid() {
			st.IP = s.resolved.String()
		}
		out = append(out, st)
	}
	return out
}

// Health is false, with the reason, when nothing can be probed: every
// target backs off after errors.
func (e *Exporter) Health() (bool, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.targets) == 0 {
		return false, "no targets"
	}
	why := map[string][]string{}
	for _, t := range e.targets {
		s := e.state[t.key()]
		if s == nil || s.fails == 0 {
			return true, ""
		}
		why[s.lastErr] = append(why[s.lastErr], t.Candidate+" "+string(t.Protocol)+" "+t.Label())
	}
	var errs []string
	for err, ts := range why {
		errs = append(errs, strings.Join(ts, ", ")+": "+err)
	}
	sort.Strings(errs)
	return false, "nothing can be probed: every target backs off after errors (" + strings.Join(errs, "; ") + ")"
}

type statusPage struct {
	Healthy    bool
	Reason     string
	Targets    []TargetStatus
	Candidates []*verdict.Evaluation
	SLA        []SLAStatus
}

// statusTmpl is parsed on the first request for the status page, not at
// package init: every linecheck command links this package, and only serve
// shows the page.
var statusTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("status").Funcs(template.FuncMap{
		"clock":    func(t time.Time) string { return t.UTC().Format("15:04:05Z") },
		"measured": checkText,
		"percent":  func(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + " %" },
		"ms":       func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) },
		"verdict":  verdictText,
		// Money as compare's tables write it: "144,691.54".
		"money": billing.GroupThousands,
	}).Parse(`<html><head><title>linecheck serve</title></head><body><h1>linecheck serve</h1>
<p><a href="/metrics">metrics</a> · <a href="/-/healthy">health</a> · <a href="/compare">compare report</a> (<a href="/compare?format=json">json</a>)</p>
{{if .Healthy}}<p>healthy</p>{{else}}<p><b>unhealthy</b>: {{.Reason}}</p>{{end}}
<table border="1" cellpadding="3">
<tr><th>candidate</th><th>protocol</th><th>target</th><th>address</th><th>state</th><th>error</th></tr>
{{range .Targets}}<tr><td>{{.Candidate}}</td><td>{{.Protocol}}</td><td>{{.Label}}</td><td>{{if .IP}}{{.IP}}{{else}}-{{end}}</td>
<td>{{if not .Up}}backing off: {{.Fails}} failure(s) in a row, next try {{clock .Next}}{{else if and .WindowSent (not .WindowRecv)}}down: no answer to the {{.WindowSent}} probe(s) of its window{{else if .WindowSent}}up{{else if .Probed}}no probe in its window{{else}}waiting for its first cycle{{end}}</td>
<td>{{.LastErr}}{{if and .Refused (not .LastErr)}}connection refused {{.Refused}} time(s) in the last cycle: the port is closed{{end}}{{if .TraceErr}}{{if or .LastErr .Refused}}; {{end}}trace: {{.TraceErr}} (traces back off){{end}}</td></tr>
{{end}}</table>
{{if .Candidates}}<h2>Candidates (the window of each target, as compare judges them)</h2>
<table border="1" cellpadding="3">
<tr><th>candidate</th><th>sent</th><th>loss</th><th>RTT p50 ms</th><th>p95 ms</th><th>jitter ms (mean |D|)</th><th>stretch</th><th>line class</th><th>validated</th><th>monthly</th><th>SLA</th></tr>
{{range .Candidates}}<tr><td>{{.Name}}</td><td>{{.Route.Sent}}</td><td>{{if .Route.Sent}}{{percent .Route.Loss}}{{else}}-{{end}}</td>
<td>{{if .Route.Recv}}{{ms .Route.RTT.P50}}{{else}}-{{end}}</td><td>{{if .Route.Recv}}{{ms .Route.RTT.P95}}{{else}}-{{end}}</td>
<td>{{if gt .Route.Recv 1}}{{ms .Route.Jitter.MeanAbs}}{{else}}-{{end}}</td><td>{{if and .Route.Recv .Route.Stretch}}{{.Route.Stretch}}{{else}}-{{end}}</td>
<td>{{if .Route.LineClass}}{{.Route.LineClass}}{{else}}-{{end}}</td><td>{{.Route.Direction}}</td>
<td>{{with .Monthly}}{{money .Total}} {{.Currency}} ({{.Offer}}, {{.Scheme}}){{else}}-{{end}}</td><td>{{verdict .}}</td></tr>
{{end}}</table>{{end}}
{{if .SLA}}<h2>SLA (the window of each target, compare's checks)</h2>
<table border="1" cellpadding="3">
<tr><th>candidate</th><th>check</th><th>window</th><th>required</th><th>measured</th><th>pass</th><th>note</th></tr>
{{range $s := .SLA}}{{range .Verdict.Checks}}<tr><td>{{$s.Candidate}}</td><td>{{.Name}}</td><td>{{if .Window}}{{.Window}}{{else}}all{{end}}{{if .Hours}} ({{.Hours}}){{end}}</td><td>{{.Required}}</td><td>{{measured .}}</td>
<td>{{if .Pass}}{{if .NotApplicable}}n/a{{else}}pass{{end}}{{else if .Unmeasured}}FAIL (no data){{else}}FAIL{{end}}</td><td>{{.Note}}</td></tr>
{{end}}{{end}}</table>{{end}}</body></html>
`))
})

func labelsOf(t Target) Labels {
	return Labels{"candidate": t.Candidate, "target": t.Label(), "protocol": string(t.Protocol)}
}

// SetTargets replaces the target list (at start and on reload). Series of
// targets that are no longer listed are deleted; new targets start with
// zero counters so they are visible before their first cycle ends.
// now is the reload time for linecheck_config_last_reload_success_timestamp_seconds.
func (e *Exporter) SetTargets(ts []Target, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := map[string]bool{}
	for _, t := range ts {
		keep[t.key()] = true
	}
	for _, old := range e.targets {
		if keep[old.key()] {
			continue
		}
		l := labelsOf(old)
		for _, v := range []interface{ DeletePartialMatch(Labels) int }{
			e.rtt, e.sent, e.recv, e.late, e.dup, e.errs, e.hopLoss, e.hops, e.lineClass, e.up, e.jitter,
			e.winLoss, e.winRTT, e.hopRTT, e.pathID, e.pathChanges, e.pathCount, e.pathClass} {
			v.DeletePartialMatch(l)
		}
		for _, m := range []map[string]int{e.maxTTL} {
			delete(m, old.key())
		}
		delete(e.class, old.key())
		delete(e.state, old.key())
		delete(e.win, old.key())
		delete(e.occ, old.key())
		delete(e.traces, old.key())
		delete(e.paths, old.key())
	}
	for _, t := range ts {
		l := labelsOf(t)
		e.sent.With(l)
		e.recv.With(l)
		e.late.With(l)
		e.dup.With(l)
		e.errs.With(l)
		e.rtt.With(l)
		e.pathChanges.With(l)
		if e.state[t.key()] == nil {
			// New targets are due at once, and down until they answer.
			e.state[t.key()] = &targetState{}
			e.up.With(l).Set(0)
		}
	}
	cands := map[string]bool{}
	for _, t := range e.targets {
		cands[t.Candidate] = true
	}
	e.targets = append([]Target(nil), ts...)
	e.byCand = make(map[string][]Target, len(cands))
	for _, t := range ts {
		cands[t.Candidate] = true
		e.byCand[t.Candidate] = append(e.byCand[t.Candidate], t)
	}
	for c := range cands {
		e.markDirty(c) // a removed candidate's series go, a changed one is judged again
	}
	e.configLoad.Set(float64(now.UnixNano()) / 1e9)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Targets returns a copy of the current target list.
func (e *Exporter) Targets() []Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Target(nil), e.targets...)
}

// PingOutcome is one target's outcome of one cycle (engine.PingOutcome).
type PingOutcome = engine.PingOutcome

// ObservePing adds one cycle's outcome for t. Outcomes of targets that left
// the configuration meanwhile are dropped, so a reload never leaves series
// behind.
func (e *Exporter) ObservePing(t Target, o PingOutcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.listed(t) {
		return
	}
	l := labelsOf(t)
	if o.Err != nil {
		e.errs.With(l).Inc()
	}
	e.sent.With(l).Add(float64(o.Sent))
	e.recv.With(l).Add(float64(o.Recv))
	e.late.With(l).Add(float64(o.Late))
	e.dup.With(l).Add(float64(o.Dup))
	h := e.rtt.With(l)
	for _, ms := range o.RTTms {
		h.Observe(ms / 1000)
	}
	if st := e.state[t.key()]; st != nil && o.Err == nil {
		st.refused = o.Refused
	}
	if o.Sent > 0 {
		w := e.win[t.key()]
		if w == nil {
			w = verdict.NewWindow(e.size)
			e.win[t.key()] = w
		}
		now := e.now()
		w.AddCycleAt(now, o.Sent, o.Recv, o.Late, o.Dup, o.RTTms)
		if e.span > 0 {
			w.DropBefore(now.Add(-e.span))
		}
		e.observeWindows(t, now, o)
		r := e.windowSeries(t, w)
		if o.Err == nil {
			e.up.With(l).Set(upValue(r.Recv))
		}
		e.markDirty(t.Candidate)
	}
}

// windowSeries writes t's window figures (jitter, loss, RTT) and returns
// them; target_up follows them unless t backs off. e.mu is held.
func (e *Exporter) windowSeries(t Target, w *verdict.Window) verdict.TargetResult {
	l := labelsOf(t)
	r := w.Result(candidates.Target{}, nil)
	if st := e.state[t.key()]; st != nil {
		// The status page says what linecheck_target_up says.
		st.winSent, st.winRecv = r.Sent, r.Recv
	}
	if r.Recv > 1 {
		e.jitter.With(l).Set(r.Jitter.MeanAbs / 1000)
	} else {
		e.jitter.Delete(l)
	}
	if r.Sent > 0 {
		e.winLoss.With(l).Set(r.Loss)
	} else {
		e.winLoss.Delete(l)
	}
	for _, s := range []struct {
		stat string
		ms   float64
	}{{"min", r.RTT.Min}, {"p50", r.RTT.P50}, {"p95", r.RTT.P95}, {"p99", r.RTT.P99}, {"max", r.RTT.Max}} {
		sl := withLabel(l, "stat", s.stat)
		if r.Recv > 0 {
			e.winRTT.With(sl).Set(s.ms / 1000)
		} else {
			e.winRTT.Delete(sl)
		}
	}
	return r
}

// ObserveTrace sets the hop metrics and line class of t from its last trace;
// a nil trace with err counts an error.
func (e *Exporter) ObserveTrace(t Target, tr *route.Trace, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.listed(t) {
		return
	}
	l := labelsOf(t)
	if err != nil || tr == nil {
		e.errs.With(l).Inc()
		return
	}
	k := t.key()
	n := len(tr.Hops)
	for ttl := n + 1; ttl <= e.maxTTL[k]; ttl++ {
		e.hopLoss.Delete(withTTL(l, ttl))
		e.hopRTT.Delete(withTTL(l, ttl))
	}
	e.maxTTL[k] = n
	for _, h := range tr.Hops {
		e.hopLoss.With(withTTL(l, h.TTL)).Set(h.Loss)
		if ms, ok := hopMedian(h); ok {
			e.hopRTT.With(withTTL(l, h.TTL)).Set(ms / 1000)
		} else {
			e.hopRTT.Delete(withTTL(l, h.TTL))
		}
	}
	p := e.paths[k]
	if p == nil {
		p = &pathState{}
		e.paths[k] = p
	}
	addrs := hopAddrs(tr)
	e.pathCount.Delete(l)
	e.pathClass.DeletePartialMatch(l)
	if len(tr.Paths) > 0 {
		addrs = multipathAddrs(tr)
		e.pathCount.With(l).Set(float64(len(tr.Paths)))
		for _, mp := range tr.Paths {
			class := mp.LineClass
			if class == "" {
				class = "unknown"
			}
			e.pathClass.With(withLabel(withLabel(l, "path", strconv.Itoa(mp.Path)), "line_class", class)).Set(1)
		}
	}
	if p.next(addrs) {
		e.pathChanges.With(l).Inc()
	}
	e.pathID.With(l).Set(float64(p.id()))
	e.traces[k] = tr
	e.hops.With(l).Set(float64(n))
	class := tr.LineClass
	if class == "" {
		class = "unknown"
	}
	if old, ok := e.class[k]; ok && old != class {
		e.lineClass.Delete(withClass(l, t, old))
	}
	e.class[k] = class
	e.lineClass.With(withClass(l, t, class)).Set(1)
	e.markDirty(t.Candidate)
}

// hopMedian is the median RTT (ms) of the hop's responder with the most
// replies; false when none answered.
func hopMedian(h route.Hop) (float64, bool) {
	best := -1
	var ms float64
	for _, r := range h.Responders {
		if r.Recv > 0 && r.Recv > best {
			best, ms = r.Recv, r.RTT.P50
		}
	}
	return ms, best > 0
}

// upValue is linecheck_target_up for a window with recv answers: up means
// answered at least once, so a target that is probed without a single
// answer (every connection refused, every echo lost) is down.
func upValue(recv int) float64 {
	if recv > 0 {
		return 1
	}
	return 0
}

// CycleDone counts a completed cycle.
func (e *Exporter) CycleDone() { e.cycles.Inc() }

// listed tells whether t is in the current configuration; e.mu is held.
func (e *Exporter) listed(t Target) bool {
	for _, x := range e.targets {
		if x.key() == t.key() {
			return true
		}
	}
	return false
}

func withTTL(l Labels, ttl int) Labels { return withLabel(l, "ttl", strconv.Itoa(ttl)) }

// withLabel is l with one more label.
func withLabel(l Labels, name, value string) Labels {
	m := Labels{name: value}
	for k, v := range l {
		m[k] = v
	}
	return m
}

// withClass adds the line_class label, and carrier and city (empty for
// candidates-file targets), to the target labels l of t.
func withClass(l Labels, t Target, c string) Labels {
	m := Labels{"line_class": c, "carrier": t.Carrier, "city": t.City}
	for k, v := range l {
		m[k] = v
	}
	return m
}

package exporter

import (
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// SLAWindow is how many of a target's latest probes serve judges the SLA
// on (about five minutes at one probe a second): recent enough to show a
// line going bad, long enough for a p95.
const SLAWindow = 300

// Config is what serve reads from a candidates file: the targets, and what
// each candidate is judged and priced with.
type Config struct {
	Targets []Target
	SLA     candidates.SLA
	// FloorMs is each candidate's physical RTT floor (verdict.FloorMs), for
	// the stretch check; absent when unknown.
	FloorMs map[string]float64
	// File is the candidates file as compare loaded it (nil for a
	// --targets list alone): every candidate is evaluated with it.
	File *candidates.File
	// Recorded holds, per candidate, what the file's recordings give that
	// serve does not measure: the return route (recorded.return) and the
	// throughput until a live test ran (recorded.bw).
	Recorded map[string]*verdict.Measurement
	// Pricing is the file's traffic priced under its offers (compare's
	// Pricing); nil when the file names no offers or no traffic.
	Pricing *verdict.Pricing
	// Delivery holds, per candidate with a recorded delivery
	// (recorded.gpu, recorded.trial), its verdict as compare judges it
	// (verdict.EvaluateDelivery), read once at load: a failed part fails
	// the candidate in serve as in compare.
	Delivery map[string]*verdict.Evaluation
}

// LoadConfig reads the candidates file at path with compare's loader,
// reads the recordings serve uses (recorded.return, recorded.bw) and
// prices the traffic when the file has offers and traffic (a synthetic
// month without a period is the month before now).
func LoadConfig(path string, now time.Time) (Config, error) {
	f, err := candidates.LoadWith(path, loadOptions)
	if err != nil {
		return Config{}, err
	}
	return ConfigOf(f, now)
}

// ConfigOf is LoadConfig on a loaded file.
func ConfigOf(f *candidates.File, now time.Time) (Config, error) {
	c := Config{Targets: targetsOf(f), SLA: f.SLA, FloorMs: map[string]float64{}, File: f, Recorded: map[string]*verdict.Measurement{},
		Delivery: map[string]*verdict.Evaluation{}}
	for i := range f.Candidates {
		fc := &f.Candidates[i]
		if fl, ok := verdict.FloorMs(f, fc); ok {
			c.FloorMs[fc.Name] = fl
		}
		if fc.Recorded.GPU != "" || fc.Recorded.Trial != "" {
			d := &verdict.Evaluation{Name: fc.Name}
			if err := verdict.EvaluateDelivery(d, fc, false); err != nil {
				return Config{}, fmt.Errorf("%s: %w", fc.Name, err)
			}
			c.Delivery[fc.Name] = d
		}
		if fc.Recorded.Return == "" && fc.Recorded.BW == "" && fc.Recorded.Forward == "" && len(fc.Recorded.ForwardFiles) == 0 {
			continue
		}
		// serve traces the forward route itself; of recorded.forward it
		// keeps the vantages (issue 32), each carrier's forward route
		// where nobody of serve's can trace from.
		only := *fc
		only.Recorded = candidates.Recorded{Return: fc.Recorded.Return, ReturnFiles: fc.Recorded.ReturnFiles, BW: fc.Recorded.BW,
			Forward: fc.Recorded.Forward, ForwardFiles: fc.Recorded.ForwardFiles}
		m, err := compare.Replay(&only)
		if err != nil {
			return Config{}, err
		}
		c.Recorded[fc.Name] = &verdict.Measurement{Return: m.Return, ReturnBacktrace: m.ReturnBacktrace, Throughput: m.Throughput,
			ForwardVantages: m.ForwardVantages}
	}
	if f.Offers != "" && (f.Traffic.Log != "" || f.Traffic.MonthlyGB > 0) {
		p, err := verdict.NewPricing(f, now)
		if err != nil {
			return Config{}, err
		}
		c.Pricing = p
	}
	return c, nil
}

// SLAStatus is one candidate's SLA verdict over the window, shown on /.
type SLAStatus struct {
	Candidate string
	Verdict   verdict.Verdict
}

// SetSLA sets what the SLA is judged with when there is no candidates file
// (tests; a stand-in file holds it) and judges every candidate again.
func (e *Exporter) SetSLA(s candidates.SLA, floorMs map[string]float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.file, e.cands, e.floor = &candidates.File{SLA: s}, map[string]*candidates.Candidate{}, floorMs
	e.markAllDirty()
}

// SetConfig makes c the configuration (at start and on reload): its
// targets (SetTargets), and the file, recordings and pricing every
// candidate is evaluated with.
func (e *Exporter) SetConfig(c Config, now time.Time) {
	e.SetTargets(c.Targets, now)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.file, e.cands, e.floor = c.File, map[string]*candidates.Candidate{}, c.FloorMs
	if e.file == nil {
		e.file = &candidates.File{SLA: c.SLA}
	}
	for i := range e.file.Candidates {
		e.cands[e.file.Candidates[i].Name] = &e.file.Candidates[i]
	}
	e.static, e.pricing, e.delivery = c.Recorded, c.Pricing, c.Delivery
	e.markAllDirty()
}

// SetHopNames sets the hop names (AS numbers, carriers) the candidates'
// routes are classified with, as compare's LoadHopNames gives them.
func (e *Exporter) SetHopNames(db route.ASNDB) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.db = db
	e.markAllDirty()
}

// SetWindow keeps each target's window to the probes of the last span
// (0: no limit in time), at most size probes (SLAWindow when ≤ 0), with
// now as the clock (time.Now when nil). Call it before the first probe.
func (e *Exporter) SetWindow(span time.Duration, size int, now func() time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if size <= 0 {
		size = SLAWindow
	}
	if now == nil {
		now = time.Now
	}
	e.span, e.size, e.now = span, size, now
}

// SetThroughputTests says how often serve tests each candidate's
// bandwidth_test (--bw-every; 0: never), so that a min_throughput_mbps
// check without a test names what is missing.
func (e *Exporter) SetThroughputTests(every time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bwEvery = every
	e.markAllDirty()
}

// throughputNote rewrites the note of a min_throughput_mbps check that has
// no test for serve: compare's asks for bandwidth_test, which serve runs
// only with --bw-every (issue 35: a candidate with bandwidth_test was told
// to give it one). e.mu is held.
func (e *Exporter) throughputNote(ev *verdict.Evaluation, c *candidates.Candidate) {
	for i := range ev.SLA.Checks {
		ch := &ev.SLA.Checks[i]
		if ch.Name != verdict.CheckMinThroughput || !ch.Unmeasured || ev.Throughput != nil {
			continue
		}
		switch {
		case c.BandwidthTest != nil && e.bwEvery == 0:
			ch.Note = verdict.NoData + ": no throughput test: serve tests the candidate's bandwidth_test only with --bw-every D, which is not given"
		case c.BandwidthTest != nil:
			ch.Note = fmt.Sprintf("%s: no throughput figures yet: serve tests the candidate's bandwidth_test every %v (--bw-every), the first one cycle after start; a test that fails is logged and counted in linecheck_bw_tests_total{result=\"error\"}", verdict.NoData, e.bwEvery)
		case e.bwEvery == 0:
			ch.Note = verdict.NoData + ": no throughput test: give the candidate bandwidth_test: {addr, port} and serve --bw-every D, or recorded.bw"
		}
	}
}

// ObserveThroughput records a candidate's throughput test (serve
// --bw-every), as compare's live run summarises one: what the
// min_throughput_mbps check is judged on from now on. A test that gave no
// figures leaves the previous one standing.
func (e *Exporter) ObserveThroughput(candidate string, r *engine.BWResult, err error) {
	if r == nil || r.Throughput.P5 == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	tp := verdict.ThroughputFromResult(r, "live")
	if err != nil {
		tp.Error = err.Error()
	}
	e.tput[candidate] = tp
	e.markDirty(candidate)
}

// SLA returns every judged candidate's verdict, by name (candidates
// without SLA checks are left out).
func (e *Exporter) SLA() []SLAStatus {
	var out []SLAStatus
	for _, ev := range e.Snapshot() {
		if len(ev.SLA.Checks) > 0 {
			out = append(out, SLAStatus{Candidate: ev.Name, Verdict: ev.SLA})
		}
	}
	return out
}

// checkText is a check's measured figure for /: "-" without data.
func checkText(c verdict.Check) string {
	if c.Measured == nil || c.Unmeasured {
		return "-"
	}
	return fmt.Sprint(c.Measured)
}

// verdictText is the overall SLA verdict as /compare says it, "pass" or
// "FAIL", with the distinction linecheck_sla_pass makes: "FAIL (no data)"
// while only checks without data stand in the way; "-" without checks.
// (Issue 35: the page said "no data" where /compare said FAIL.)
func verdictText(ev *verdict.Evaluation) string {
	switch v, ok := overall(ev.SLA); {
	case len(ev.SLA.Checks) == 0:
		return "-"
	case !ok:
		return "FAIL (no data)"
	case v:
		return "pass"
	}
	return "FAIL"
}

// overall is the candidate's SLA verdict for linecheck_sla_pass: false
// when a measured check fails, true when every check passes; ok is false
// when neither holds (the checks not passing have no data) or there is no
// check.
func overall(v verdict.Verdict) (pass, ok bool) {
	nodata := false
	for _, c := range v.Checks {
		switch {
		case c.Unmeasured:
			nodata = true
		case !c.Pass:
			return false, true
		}
	}
	if len(v.Checks) == 0 || nodata {
		return false, false
	}
	return v.Pass, true
}

package verdict

import (
	"fmt"
	"slices"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/route"
)

// Measurement is what the probes (live or replayed) say about one candidate,
// before any verdict: per-target statistics and the traces of each direction.
type Measurement struct {
	Targets []TargetResult
	// Forward is the vantage → server trace, Return the server → users trace;
	// nil when not available.
	Forward, Return *route.Trace
	// ForwardVantages are the traces of a recorded.forward file of several
	// vantages (RIPE Atlas results, a Globalping measurement), one per
	// vantage; Forward is then the first. Each fills the per-carrier forward
	// class for the users of its vantage's carrier (route.NearestVantage).
	ForwardVantages []*route.Trace
	// PingVantages are the vantages of recorded.probes' measurement
	// networks' files (RIPE Atlas, Globalping ping results) with each one's
	// figures: the per-carrier table's ping columns. The targets' figures
	// pool them all.
	PingVantages []PingVantage
	// FamilyForward is the forward trace of each address family's route
	// target (candidates.Candidate.RouteTargets) when the candidate has
	// targets of two families; Forward is the first family's. nil
	// otherwise.
	FamilyForward map[string]*route.Trace
	// ReturnBacktrace is set when recorded.return is a backtrace document
	// (one route per user carrier); Return is then the route toward the
	// first user (readReturn, Evaluate).
	ReturnBacktrace *route.BacktraceDoc
	// ForwardSeries and ReturnSeries are the traces taken over the days of
	// a trial (recorded.forward or return as a list of files or a trace
	// --watch journal), earliest first; Forward and Return are then the
	// first of them. sla.line_classes holds only if it holds on each.
	ForwardSeries, ReturnSeries []*route.Trace
	// Throughput is the candidate's bw test, when it has one.
	Throughput *Throughput
	Warnings   []string
	// FloorMs is a physical floor known apart from the places (serve's
	// SetSLA): Evaluate uses it when the vantage and region give none; 0
	// when none.
	FloorMs float64
	// Probes are the targets' windows with each probe's time, in the
	// order of Targets (a recording: WindowsFromRecords): Evaluate judges
	// the SLA windows and the day's hours on them. nil when the probes
	// have no times (a live one-shot sweep).
	Probes []*Window
}

// Evaluate turns one candidate's measurement into its evaluation: line class
// per direction (classified with db, which may be nil), RTT, loss, jitter,
// stretch and the SLA verdict. Monthly cost is filled in by the caller
// (Pricing.Monthly); the TUI calls this as measurements arrive.
func Evaluate(f *candidates.File, c *candidates.Candidate, m *Measurement, db route.ASNDB) *Evaluation {
	e := &Evaluation{Name: c.Name, Provider: c.Provider, Region: c.Region.String(), Targets: m.Targets, Warnings: m.Warnings}
	if e.Targets == nil {
		e.Targets = []TargetResult{}
	}
	q := &e.Route
	ret := m.Return
	if m.ReturnBacktrace != nil {
		var note string
		ret, note = backtraceReturn(m.ReturnBacktrace, f.Users, db)
		if note != "" {
			e.Warnings = append(e.Warnings, note)
		}
		if m.Return == nil {
			// The route that stands for the users is the candidate's
			// return trace from now on (the TUI shows it, for one).
			m.Return = ret
		}
	}
	q.LineClass, q.Direction, q.Evidence, q.ForwardClass, q.ReturnClass, q.Notes = classify(m.Forward, ret, db)
	var pathWarnings []string
	q.Paths, q.PathsSummary, pathWarnings = multipathRoutes(c, m.Forward, ret, db)
	e.Warnings = append(e.Warnings, pathWarnings...)
	q.Forward, q.Return, q.Backtrace = m.Forward, ret, m.ReturnBacktrace
	if m.Forward != nil {
		q.ForwardASPath = m.Forward.ASPath
		if m.Forward.MTU != nil {
			q.PathMTU = m.Forward.MTU.PathMTU
		}
	}
	if ret != nil {
		q.ReturnASPath = ret.ASPath
	}
	for _, v := range m.ForwardVantages {
		route.Annotate(v, db)
	}
	for _, p := range m.PingVantages {
		route.AnnotateVantage(p.Vantage, db)
	}
	q.RoutesSeen = routesSeen(f, m, db)
	q.Carriers = carrierRoutes(f, m)
	e.Warnings = append(e.Warnings, q.AddTargets(m.Targets)...)
	if floor, ok := FloorMs(f, c); ok {
		q.SetFloor(floor)
	}
	if q.FloorMs == 0 && m.FloorMs > 0 {
		// A floor known apart from the places (serve's SetSLA).
		q.SetFloor(m.FloorMs)
	}
	q.Throughput, e.Throughput = m.Throughput, m.Throughput
	e.SLA = CheckSLA(f.SLA, *q)
	floor, ok := FloorMs(f, c)
	if !ok {
		floor = m.FloorMs
		if floor <= 0 {
			floor = -1 // unknown
		}
	}
	judgeFamilies(e, f, c, m, ret, db, floor)
	judgeWindows(e, f.SLA, m, floor, true)
	return e
}

// FloorMs is the physical floor RTT between f's vantage and c's region
// (2·great-circle distance at 200 km/ms), unrounded; false when either place
// is unknown.
func FloorMs(f *candidates.File, c *candidates.Candidate) (float64, bool) {
	a, ok1 := candidates.Location(f.Vantage)
	b, ok2 := candidates.Location(c.Region)
	if !ok1 || !ok2 {
		return 0, false
	}
	return geo.FloorRTTms(a, b), true
}

// AddTargets fills the figures of q from per-target results — the one
// aggregation rule of compare, the TUI and serve: the worst over the targets
// for what the SLA bounds (RTT percentiles, loss, jitter), the best minimum
// for the floor comparison, since physics bounds the fastest reply; counts
// are summed. It returns a warning per target without results when others
// have them, and one when no target has any.
func (q *RouteQuality) AddTargets(targets []TargetResult) []string {
	var warnings []string
	first := true
	minRTT := 0.0
	for _, t := range targets {
		if t.Sent == 0 && len(targets) > 1 {
			warnings = append(warnings, fmt.Sprintf("target %s: no probe results; the figures come from the other targets", t.Target))
		}
		q.Sent += t.Sent
		q.Recv += t.Recv
		if t.Sent > 0 && t.Loss > q.Loss {
			q.Loss = t.Loss
		}
		if t.Recv == 0 {
			continue
		}
		if first {
			q.Samples, q.SamplesOf = t.Samples, t.Target.String()
			q.RTT = RTTSummary{Min: t.RTT.Min, P50: t.RTT.P50, P95: t.RTT.P95, P99: t.RTT.P99, Max: t.RTT.Max}
			q.Jitter = t.Jitter
			minRTT = t.RTT.Min
			first = false
			continue
		}
		q.RTT.P50 = max(q.RTT.P50, t.RTT.P50)
		q.RTT.P95 = max(q.RTT.P95, t.RTT.P95)
		q.RTT.P99 = max(q.RTT.P99, t.RTT.P99)
		q.RTT.Max = max(q.RTT.Max, t.RTT.Max)
		q.Jitter.RFC3550 = max(q.Jitter.RFC3550, t.Jitter.RFC3550)
		q.Jitter.MeanAbs = max(q.Jitter.MeanAbs, t.Jitter.MeanAbs)
		q.Jitter.PDVP95 = max(q.Jitter.PDVP95, t.Jitter.PDVP95)
		minRTT = min(minRTT, t.RTT.Min)
	}
	q.RTT.Min = minRTT
	q.Jitter = JitterSummary{RFC3550: round(q.Jitter.RFC3550, 4), MeanAbs: round(q.Jitter.MeanAbs, 4), PDVP95: round(q.Jitter.PDVP95, 4)}
	if q.Sent == 0 {
		warnings = append(warnings, "no probe results (live probes or recorded.probes): RTT, loss and jitter are unknown")
	}
	return warnings
}

// SetFloor sets FloorMs, Stretch and StretchFlags from the physical floor
// between the vantage and the region (FloorMs) and q's minimum RTT. Without
// an answered probe the stretch stays unknown (0) and the only flag kept is
// same-city, which the places decide.
func (q *RouteQuality) SetFloor(floorMs float64) {
	st := geo.StretchOverFloor(floorMs, q.RTT.Min)
	q.FloorMs, q.Stretch, q.StretchFlags = round(st.FloorMs, 2), round(st.Stretch, 3), st.Flags
	if q.Recv == 0 {
		q.Stretch, q.StretchFlags = 0, nil
		if slices.Contains(st.Flags, geo.FlagSameCity) {
			q.StretchFlags = []string{geo.FlagSameCity}
		}
	}
}

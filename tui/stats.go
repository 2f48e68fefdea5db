package tui

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/verdict"
)

// Ring is a fixed-capacity ring buffer of timed samples: pushing past the
// capacity overwrites the oldest, so memory stays constant over a long run.
type Ring struct {
	t     []int64 // unix nanoseconds
	v     []float64
	head  int // index of the oldest sample
	n     int
	total uint64 // samples ever pushed: a version for memoised drawings
}

// NewRing returns an empty ring holding at most capacity samples.
func NewRing(capacity int) *Ring {
	if capacity < 1 {
		capacity = 1
	}
	return &Ring{t: make([]int64, capacity), v: make([]float64, capacity)}
}

// Cap is the ring's capacity.
func (r *Ring) Cap() int { return len(r.v) }

// Len is the number of samples held.
func (r *Ring) Len() int { return r.n }

// Push appends a sample, overwriting the oldest when full.
func (r *Ring) Push(t time.Time, v float64) {
	i := (r.head + r.n) % len(r.v)
	if r.n == len(r.v) {
		r.head = (r.head + 1) % len(r.v)
	} else {
		r.n++
	}
	r.t[i], r.v[i] = t.UnixNano(), v
	r.total++
}

// Version changes whenever a sample is pushed.
func (r *Ring) Version() uint64 { return r.total }

// At returns the i-th oldest sample.
func (r *Ring) At(i int) (time.Time, float64) {
	j := (r.head + i) % len(r.v)
	return time.Unix(0, r.t[j]).UTC(), r.v[j]
}

// Last returns the newest n values (fewer if the ring holds fewer), oldest first.
func (r *Ring) Last(n int, dst []float64) []float64 {
	if n > r.n {
		n = r.n
	}
	dst = dst[:0]
	for i := r.n - n; i < r.n; i++ {
		_, v := r.At(i)
		dst = append(dst, v)
	}
	return dst
}

// applyRecord folds one probe record into the running statistics: the
// counts since the start, the drawing's history and the statistics window.
func (s *LiveStats) applyRecord(rec engine.Record) {
	if s.History == nil {
		s.History = NewRing(HistorySize)
		s.win = verdict.NewWindow(HistorySize)
	}
	if rec.Time.After(s.Last) {
		s.Last = rec.Time
	}
	if f := verdict.Family(rec.Addr); f != "" {
		s.family = f
	}
	switch rec.Status {
	case engine.StatusDup:
		// A duplicate is counted apart, never as a received probe.
		s.Dup++
		s.win.Add(rec)
		return
	case engine.StatusLost:
		s.Sent++
		s.Lost++
		s.History.Push(rec.Time, math.NaN())
	case engine.StatusLate:
		s.Sent++
		s.Late++
		s.History.Push(rec.Time, math.NaN())
	case engine.StatusOK:
		if rec.RTTms == nil {
			return
		}
		s.Sent++
		s.Recv++
		s.History.Push(rec.Time, *rec.RTTms)
	default:
		return
	}
	s.win.Add(rec)
	s.dirty = true
}

// settle recomputes what applyRecord left stale; called once per batch.
func (s *LiveStats) settle() {
	if s.dirty && s.win != nil {
		s.summarize()
		s.dirty = false
	}
}

// summarize recomputes the window's figures with compare's one window
// statistic (verdict.Window.Result, as compare and serve compute them),
// reusing one scratch slice for the samples.
func (s *LiveStats) summarize() {
	if cap(s.scratch) < s.win.Size() {
		s.scratch = make([]float64, 0, s.win.Size())
	}
	s.res = s.win.Result(candidates.Target{}, s.scratch)
	s.scratch = s.res.Samples[:0]
	s.res.Samples = nil // the scratch is reused: the result keeps no view of it
	s.RTT, s.J = s.res.RTT, s.res.Jitter
	s.P50, s.P95, s.MinRTT, s.Jitter = s.RTT.P50, s.RTT.P95, s.RTT.Min, s.J.MeanAbs
}

// result is the target's statistics over the window, as compare and serve
// state them (verdict.Window.Result).
func (s *LiveStats) result(target string) verdict.TargetResult {
	r := s.res
	r.Target = candidates.Target{Addr: target}
	return r
}

// targetKey names a record's target as compare names targets.
func targetKey(r engine.Record) string {
	return candidates.Target{Addr: r.Addr, Protocol: r.Protocol, Port: r.Port}.String()
}

// settle brings every target's percentiles up to date.
func (c *Candidate) settle() {
	c.Stats.settle()
	for _, o := range c.Others {
		o.settle()
	}
}

// applyRecord routes a record to its target's statistics.
func (c *Candidate) applyRecord(r engine.Record) {
	k := targetKey(r)
	if c.Target == "" {
		c.Target = k
	}
	if k == c.Target {
		c.Stats.applyRecord(r)
		return
	}
	if c.Others == nil {
		c.Others = map[string]*LiveStats{}
	}
	st, ok := c.Others[k]
	if !ok {
		if len(c.Others) >= 16 {
			return // a stream with many foreign targets must not grow the map
		}
		st = &LiveStats{}
		c.Others[k] = st
	}
	st.applyRecord(r)
}

// sent counts the probes of all targets.
func (c *Candidate) sent() (sent, lost, late int) {
	sent, lost, late = c.Stats.Sent, c.Stats.Lost, c.Stats.Late
	for _, o := range c.Others {
		sent, lost, late = sent+o.Sent, lost+o.Lost, late+o.Late
	}
	return
}

// liveRoute is what the candidate holds for its evaluation: the live
// targets' windows once records arrived (the main target first, the
// others by name), the recording's quality, the floor, and the line class
// and direction the traces gave.
func (c *Candidate) liveRoute() verdict.LiveRoute {
	l := verdict.LiveRoute{Recorded: c.Recorded, FloorMs: c.FloorMs, LineClass: c.LineClass, Direction: c.Direction,
		Carriers: c.Recorded.Carriers, Throughput: c.Throughput}
	if sent, _, _ := c.sent(); sent > 0 {
		l.Targets = []verdict.TargetResult{c.Stats.result(c.Target)}
		l.Probes = []*verdict.Window{c.Stats.win}
		keys := make([]string, 0, len(c.Others))
		for k := range c.Others {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		l.TargetFamilies = []string{c.Stats.family}
		for _, k := range keys {
			l.Targets = append(l.Targets, c.Others[k].result(k))
			l.Probes = append(l.Probes, c.Others[k].win)
			l.TargetFamilies = append(l.TargetFamilies, c.Others[k].family)
		}
	}
	l.Families, l.RecordedFamilies = c.liveFamilies(l.TargetFamilies), c.Families
	return l
}

// liveFamilies are the row's address families for the verdict's
// sla.families checks (issue 32): the main target's with the row's
// traces, the others' with their own forward traces (FamilyRoutes), each
// the recording's until one is traced live.
func (c *Candidate) liveFamilies(targets []string) []verdict.LiveFamily {
	var fams []string
	add := func(f string) {
		if f != "" && !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	add(c.family)
	add(c.Stats.family)
	for _, f := range targets {
		add(f)
	}
	for _, f := range c.Families {
		add(f.Family)
	}
	others := make([]string, 0, len(c.famTraces))
	for f := range c.famTraces {
		others = append(others, f)
	}
	sort.Strings(others)
	for _, f := range others {
		add(f)
	}
	out := make([]verdict.LiveFamily, 0, len(fams))
	for i, f := range fams {
		lf := verdict.LiveFamily{Family: f}
		if i == 0 {
			lf.Forward, lf.Return = c.fwdTrace, c.retTrace
		} else {
			lf.Forward = c.famTraces[f]
		}
		for _, rf := range c.Families {
			if rf.Family == f && lf.Forward == nil && lf.Return == nil {
				lf.Forward, lf.Return = rf.Route.Forward, rf.Route.Return
			}
		}
		out = append(out, lf)
	}
	return out
}

// WarmupProbes is how many probes (answered or lost) a candidate's live
// figures need before they count as a verdict: until then percentiles and
// jitter over a few seconds are marked warming-up (~) and the SLA pending.
const WarmupProbes = 10

// warming reports whether c's live figures are still warming up.
func (c *Candidate) warming() bool {
	sent, _, _ := c.sent()
	return !c.Reference && sent > 0 && sent < WarmupProbes
}

// view returns the statistics to display, from the current quality.
func (c *Candidate) view() Summary {
	q := c.q
	return Summary{Sent: q.Sent, P50: q.RTT.P50, P95: q.RTT.P95, MinRTT: q.RTT.Min, JitterMs: q.Jitter.MeanAbs,
		Loss: q.Loss, Stretch: q.Stretch, BelowFloor: slices.Contains(q.StretchFlags, geo.FlagBelowFloor), HaveStats: q.Recv > 0}
}

// evaluate recomputes the candidate's quality and SLA verdict: the
// verdict's evaluation of what the candidate holds (verdict.EvaluateLive,
// the one aggregation and SLA rule: a check without data fails, "no
// data"; the line class check notes the direction it was validated in).
func (c *Candidate) evaluate(s candidates.SLA) {
	e := verdict.EvaluateLive(s, c.liveRoute())
	c.q = e.Route
	if c.Reference {
		c.SLA = verdict.Verdict{}
		return
	}
	c.SLA = e.SLA
}

// checkMeasured is a check's measured figure as the screen shows it:
// "41.0 ms", "0%", "no data" when nothing was measured.
func checkMeasured(ch verdict.Check) string {
	if ch.Measured == nil {
		return "no data"
	}
	return checkValue(ch.Name, ch.Measured, ch.Unit, false)
}

// checkRequired is a check's threshold as the screen shows it: "≤ 60 ms".
func checkRequired(ch verdict.Check) string {
	return checkValue(ch.Name, ch.Required, ch.Unit, true)
}

// checkValue formats a check's required or measured value for the
// screen, as the overview always showed them: "≤ 60 ms", "41.0 ms",
// "0.81 ms", "≤ 0.5%", "2.18".
func checkValue(name string, v any, unit string, required bool) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "-"
	case float64:
		switch {
		case unit == "fraction":
			s = pct(x)
		case required:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		case name == verdict.CheckRTTP95:
			// A sub-millisecond p95 (a loopback or LAN target) keeps two
			// significant digits: "0.046 ms", not "0.0 ms" (report.MS1).
			s = report.MS1(x)
		case name == verdict.CheckStretch && x > 0 && x < 0.01:
			// Below the physical floor a stretch can be 0.004: two
			// significant digits, not "0.00".
			s = strconv.FormatFloat(x, 'g', 2, 64)
		default:
			s = fmt.Sprintf("%.2f", x)
		}
		if unit == "ms" || unit == "Mbps" {
			s += " " + unit
		}
	case []string:
		return strings.Join(x, ",")
	default:
		s = fmt.Sprint(x)
	}
	if required && name == verdict.CheckMinThroughput {
		return "≥ " + s
	}
	if required {
		s = "≤ " + s
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// pct formats a fraction as a percentage for tables (JSON keeps fractions).
func pct(f float64) string {
	switch {
	case math.IsNaN(f):
		return "-"
	case f == 0:
		return "0%"
	case f < 0.1:
		return fmt.Sprintf("%.1f%%", f*100)
	default:
		return fmt.Sprintf("%.0f%%", f*100)
	}
}

// slaKnown reports whether the candidate has been checked (a verdict with
// checks: thresholds are set and it is not a reference row).
func (c *Candidate) slaKnown() bool { return len(c.SLA.Checks) > 0 }

package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
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

// applyRecord folds one probe record into the running statistics.
func (s *LiveStats) applyRecord(rec probe.Record) {
	if s.History == nil {
		s.History = NewRing(HistorySize)
	}
	if rec.Time.After(s.Last) {
		s.Last = rec.Time
	}
	switch rec.Status {
	case probe.StatusDup:
		// A duplicate is counted apart, never as a received probe.
		s.Dup++
		return
	case probe.StatusLost:
		s.Sent++
		s.Lost++
		s.History.Push(rec.Time, math.NaN())
	case probe.StatusLate:
		s.Sent++
		s.Late++
		s.History.Push(rec.Time, math.NaN())
	case probe.StatusOK:
		if rec.RTTms == nil {
			return
		}
		rtt := *rec.RTTms
		s.Sent++
		s.Recv++
		if s.Recv == 1 || rtt < s.MinRTT {
			s.MinRTT = rtt
		}
		// RFC 3550 §6.4.1 smoothing over consecutive received RTTs, in ms, no
		// integer scaling; the first sample is not a difference (DESIGN.md).
		if s.hasPrev {
			s.Jitter += (math.Abs(rtt-s.prev) - s.Jitter) / 16
		}
		s.prev, s.hasPrev = rtt, true
		s.History.Push(rec.Time, rtt)
	default:
		return
	}
	s.dirty = true
}

// settle recomputes what applyRecord left stale; called once per batch.
func (s *LiveStats) settle() {
	if s.dirty && s.History != nil {
		s.percentiles()
		s.dirty = false
	}
}

// percentiles recomputes P50/P95 over the received samples in the window,
// reusing one scratch slice so a long run allocates nothing new.
func (s *LiveStats) percentiles() {
	if cap(s.scratch) < s.History.Cap() {
		s.scratch = make([]float64, 0, s.History.Cap())
	}
	xs := s.scratch[:0]
	for i := 0; i < s.History.Len(); i++ {
		if _, v := s.History.At(i); !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	sort.Float64s(xs)
	s.P50 = route.NearestRank(xs, 50)
	s.P95 = route.NearestRank(xs, 95)
	s.scratch = xs
}

// targetKey names a record's target as compare names targets.
func targetKey(r probe.Record) string {
	if r.Protocol == "tcp" {
		return fmt.Sprintf("%s tcp/%d", r.Addr, r.Port)
	}
	return r.Addr + " " + r.Protocol
}

// settle brings every target's percentiles up to date.
func (c *Candidate) settle() {
	c.Stats.settle()
	for _, o := range c.Others {
		o.settle()
	}
}

// applyRecord routes a record to its target's statistics.
func (c *Candidate) applyRecord(r probe.Record) {
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

// view returns the statistics to display: live ones once records arrived
// (the worst over the targets, the best minimum for stretch, as compare
// does), else the recording's summary.
func (c *Candidate) view() Summary {
	all := []*LiveStats{&c.Stats}
	for _, o := range c.Others {
		all = append(all, o)
	}
	var s Summary
	first := true
	for _, t := range all {
		s.Sent += t.Sent
		if t.Sent > 0 {
			s.Loss = math.Max(s.Loss, t.Loss())
		}
		if t.Recv == 0 {
			continue
		}
		if first {
			s.P50, s.P95, s.MinRTT, s.JitterMs, first = t.P50, t.P95, t.MinRTT, t.Jitter, false
			continue
		}
		s.P50, s.P95 = math.Max(s.P50, t.P50), math.Max(s.P95, t.P95)
		s.JitterMs, s.MinRTT = math.Max(s.JitterMs, t.Jitter), math.Min(s.MinRTT, t.MinRTT)
	}
	if s.Sent == 0 {
		return c.Summary
	}
	s.HaveStats = !first
	if c.FloorMs > 0 && s.HaveStats {
		s.Stretch = s.MinRTT / c.FloorMs
	} else {
		s.Stretch = c.Summary.Stretch
	}
	return s
}

// evalSLA checks a candidate's current statistics against the thresholds.
func evalSLA(c *Candidate, t SLA) SLAResult {
	if c.Reference {
		return SLAResult{}
	}
	v := c.view()
	res := SLAResult{Pass: true}
	add := func(ch Check) {
		res.Checks = append(res.Checks, ch)
		res.Known = true
		if !ch.Pass {
			res.Pass = false
		}
	}
	if t.RTTP95ms != nil && v.HaveStats {
		add(Check{Name: "rtt_p95_ms", Required: fmt.Sprintf("≤ %g ms", *t.RTTP95ms),
			Measured: fmt.Sprintf("%.1f ms", v.P95), Pass: v.P95 <= *t.RTTP95ms})
	}
	if t.Loss != nil && v.Sent > 0 {
		add(Check{Name: "loss", Required: "≤ " + pct(*t.Loss),
			Measured: pct(v.Loss), Pass: v.Loss <= *t.Loss})
	}
	if t.JitterMs != nil && v.HaveStats {
		add(Check{Name: "jitter_rfc3550_ms", Required: fmt.Sprintf("≤ %g ms", *t.JitterMs),
			Measured: fmt.Sprintf("%.2f ms", v.JitterMs), Pass: v.JitterMs <= *t.JitterMs})
	}
	if len(t.LineClasses) > 0 {
		add(Check{Name: "line_class", Required: strings.Join(t.LineClasses, ","),
			Measured: orDash(c.LineClass), Pass: hasString(t.LineClasses, c.LineClass)})
	}
	if t.MaxStretch != nil && v.Stretch > 0 {
		add(Check{Name: "stretch", Required: fmt.Sprintf("≤ %g", *t.MaxStretch),
			Measured: fmt.Sprintf("%.2f", v.Stretch), Pass: v.Stretch <= *t.MaxStretch})
	}
	if !res.Known {
		res.Pass = false
	}
	return res
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

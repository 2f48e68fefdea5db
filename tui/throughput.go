package tui

import (
	"fmt"
	"math"
	"strconv"

	"github.com/linecheck/linecheck/internal/verdict"
)

// throughputColumn shows the p5 of a candidate's throughput test in Mbit/s
// (THRU): the figure sla.min_throughput_mbps is checked on; "test…" while
// a live test runs. It is shown only when some candidate has a test
// (bandwidth_test live, or recorded.bw).
var throughputColumn = column[overviewRow]{key: "thru", title: "THRU", width: 6, right: true, prio: 2,
	cell: func(r overviewRow) (string, styleID) {
		tp := r.c.Throughput
		if r.c.bwRunning {
			return "test…", styleDim
		}
		if tp == nil || tp.P5 == nil {
			return "-", styleDim
		}
		return strconv.FormatFloat(*tp.P5/1e6, 'f', 0, 64), styleNone
	},
	less: func(a, b overviewRow) bool { return lessFloat(thruKey(a.c), thruKey(b.c)) }}

func thruKey(c *Candidate) float64 {
	if tp := c.Throughput; tp != nil && tp.P5 != nil {
		return -*tp.P5 // most throughput first
	}
	return math.NaN()
}

func init() {
	shortCheck[verdict.CheckMinThroughput] = "thru"
	shortCheck[verdict.CheckMaxOversell] = "oversell"
}

// overviewColumnsShown is overviewColumns with THRU before SLA when a
// candidate has a throughput test.
func (s *state) overviewColumnsShown() []column[overviewRow] {
	has := false
	for i := range s.snap.Candidates {
		if c := &s.snap.Candidates[i]; c.Throughput != nil || c.BWTest != "" {
			has = true
		}
	}
	if !has {
		return overviewColumns
	}
	out := make([]column[overviewRow], 0, len(overviewColumns)+1)
	for _, c := range overviewColumns {
		if c.key == "sla" {
			out = append(out, throughputColumn)
		}
		out = append(out, c)
	}
	return out
}

// throughputCostLine says, on the cost screen, what the line carried beside
// the port the offer sells; "" without a throughput test.
func throughputCostLine(c *Candidate) string {
	tp := c.Throughput
	if tp == nil || tp.Mean == nil {
		return ""
	}
	mb := func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 1, 64) }
	s := " carried p5 " + mbOr(tp.P5, mb) + " · mean " + mb(*tp.Mean) + " Mbit/s (" + orDash(tp.Direction) + ")"
	if tp.PortBps != nil && tp.Achieved != nil {
		s += " of the " + mb(*tp.PortBps) + " Mbit/s port sold: " + pct(*tp.Achieved)
	}
	if tp.P95OfCarried != nil {
		s += " · traffic p95 = " + pct(*tp.P95OfCarried) + " of the p5 carried"
	}
	return s
}

func mbOr(v *float64, f func(float64) string) string {
	if v == nil {
		return "-"
	}
	return f(*v)
}

// applyThroughputStart marks the candidate's live test under way.
func (s *state) applyThroughputStart(u ThroughputStartMsg) {
	c := s.find(u.Candidate)
	if c == nil {
		return
	}
	c.bwRunning = true
	s.bwHint = ""
	s.bwNote = fmt.Sprintf("measuring throughput of %s: %s %v from %s port %d, probes paused",
		c.Name, u.Start.Direction, u.Start.Time, u.Start.Test.Addr, u.Start.Test.Port)
	s.touched(c)
}

// applyThroughput takes a live test's outcome: its figures become the
// candidate's throughput (THRU, the thru check, the cost screen's carried
// line); a failure is a warning in the status line and keeps what was
// there (nothing, "-", before a first good test).
func (s *state) applyThroughput(u ThroughputMsg) {
	c := s.find(u.Candidate)
	if c == nil || u.Throughput == nil {
		return
	}
	c.bwRunning = false
	s.bwNote = ""
	tp := u.Throughput
	if tp.Error != "" {
		s.fail(fmt.Errorf("%s: throughput test: %s", c.Name, tp.Error))
	}
	if tp.P5 != nil || c.Throughput == nil || c.Throughput.P5 == nil {
		c.Throughput = tp
	}
	s.touched(c)
}

// askThroughput is the b key: a round of live throughput tests now.
func (s *state) askThroughput() {
	t, ok := s.src.(interface{ TestThroughput() bool })
	switch {
	case s.bwNote != "":
		s.bwHint = "" // a round is under way
	case ok && t.TestThroughput():
		s.bwHint = "throughput tests asked for…"
	default:
		s.bwHint = "no live throughput test: no candidate names a bandwidth_test (or this is a replay)"
	}
}

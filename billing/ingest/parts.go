package ingest

import (
	"cmp"
	"slices"

	"github.com/linecheck/linecheck/billing"
)

// parts records which stretch of the timeline a multi-resolution log (vnstat,
// MRTG) gave at which step, for Series.Parts.
type parts []billing.Part

// add notes a source row of step seconds read for [start, end): a whole row
// extends the run of same-step rows it follows; a row cut short (end −
// start < step) is a part of its own.
func (ps *parts) add(start, end, step int64) {
	if end <= start {
		return
	}
	if n := len(*ps); n > 0 && end-start == step {
		last := &(*ps)[n-1]
		if last.Step == step && last.End == start && last.End-last.Start == int64(last.Rows)*step {
			last.End = end
			last.Rows++
			return
		}
	}
	*ps = append(*ps, billing.Part{Start: start, End: end, Step: step, Rows: 1})
}

// keep sets s.Parts to the recorded parts that meet the series' slots (a
// reader keeps only the period, or the latest month), sorted, and s.Step to
// the coarsest of them.
func (ps parts) keep(s *billing.Series) {
	s.Parts = nil
	if len(s.Slots) == 0 {
		return
	}
	lo, hi := s.Slots[0].Start, s.Slots[len(s.Slots)-1].Start+billing.SlotSeconds
	var step int64 = billing.SlotSeconds
	for _, p := range ps {
		if p.End > lo && p.Start < hi {
			s.Parts = append(s.Parts, p)
			step = max(step, p.Step)
		}
	}
	slices.SortFunc(s.Parts, func(a, b billing.Part) int { return cmp.Compare(a.Start, b.Start) })
	s.Step = step
}

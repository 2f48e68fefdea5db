package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// sparks are the eight heights of an hour's p95 in the hourly row.
var sparks = []rune("▁▂▃▄▅▆▇█")

// compareHourlyTable is the users' day in 24 hours, one compact row a
// candidate (issue 30): each hour's p95 as a bar on one scale for every
// candidate (the lowest hour's p95 to the highest), "·" for an hour without
// an answered probe, then the worst hour by p95 with its p95 and loss. Left
// out of machine formats, whose documents carry candidates[].hourly[]
// (JSON), and when no candidate has hours.
func compareHourlyTable(r *compare.Result, format Format) (Table, bool) {
	if format.Machine() {
		return Table{}, false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range r.Candidates {
		for _, h := range e.Hourly {
			if h.Recv > 0 {
				lo, hi = min(lo, h.RTTP95), max(hi, h.RTTP95)
			}
		}
	}
	if math.IsInf(lo, 1) || r.SLA.Zone == nil {
		return Table{}, false
	}
	t := Table{
		Title:   fmt.Sprintf("The users' day (%s): p95 by hour, 00–23, %.1f–%.1f ms", r.SLA.Zone, lo, hi),
		Headers: []string{"candidate", "p95 by hour", "worst hour", "p95 ms", "loss"},
		Align:   "lllrr",
	}
	for _, e := range r.Candidates {
		if len(e.Hourly) != 24 {
			continue
		}
		t.Rows = append(t.Rows, hourlyRow(e, lo, hi))
	}
	return t, len(t.Rows) > 0
}

// hourlyRow is one candidate's row of compareHourlyTable.
func hourlyRow(e *verdict.Evaluation, lo, hi float64) []string {
	var b strings.Builder
	worst := -1
	for i, h := range e.Hourly {
		if h.Recv == 0 {
			b.WriteRune('·')
			continue
		}
		k := len(sparks) - 1
		if hi > lo {
			k = int((h.RTTP95 - lo) / (hi - lo) * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[min(max(k, 0), len(sparks)-1)])
		if worst < 0 || h.RTTP95 > e.Hourly[worst].RTTP95 {
			worst = i
		}
	}
	if worst < 0 {
		return []string{e.Name, b.String(), "-", "-", "-"}
	}
	w := e.Hourly[worst]
	return []string{e.Name, b.String(), fmt.Sprintf("%02d:00", w.Hour), fmtMs1(w.RTTP95), fmtPct(w.Loss)}
}

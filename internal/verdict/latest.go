package verdict

import (
	"fmt"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// Occurrence is one SLA window's most recent occurrence as a live surface
// (serve) holds it: the window, the span [From, To) of that occurrence (To
// is in the future while it is in progress) and each target's probes in
// it, in the order of the evaluation's targets (a nil window: none).
type Occurrence struct {
	Window   candidates.Window
	From, To time.Time
	Probes   []*Window
}

// JudgeOccurrences adds to e the checks and summary of each SLA window over
// the occurrence given for it, by the rules Evaluate judges a recording's
// windows with (the worst target, the window's checks, no data never a
// pass), and settles the verdict again: serve judges the last evening, not
// every evening since it started. e.Targets name the targets; floorMs is
// the physical floor (negative: unknown).
func JudgeOccurrences(e *Evaluation, s candidates.SLA, occ []Occurrence, floorMs float64) {
	for _, o := range occ {
		from, to := o.From, o.To
		m := &Measurement{Targets: e.Targets, Probes: o.Probes}
		q := m.quality(func(t time.Time) bool { return !t.Before(from) && t.Before(to) }, floorMs)
		if e.Throughput.Hourly() {
			q.Throughput = e.Throughput.Within(o.Window)
		}
		checks := windowChecks(s, q, o.Window, e.Throughput)
		e.SLA.Checks = append(e.SLA.Checks, checks...)
		sum := WindowSummary{Name: o.Window.Name, Hours: o.Window.Hours(), Default: o.Window.Default, Sent: q.Sent, Recv: q.Recv,
			Loss: round(q.Loss, 6), RTTP50: q.RTT.P50, RTTP95: q.RTT.P95, Jitter: q.Jitter.MeanAbs, Pass: q.Sent > 0}
		for _, c := range checks {
			if !c.Pass {
				sum.Pass = false
			}
		}
		if q.Sent > 0 {
			sum.Occurrences = 1
		} else {
			e.Warnings = append(e.Warnings, fmt.Sprintf("SLA window %s (%s): no probe yet in its latest occurrence: no data, not a pass", o.Window.Name, o.Window.Hours()))
		}
		e.Windows = append(e.Windows, sum)
	}
	e.SLA.settle()
}

// HourlyLive is the users' day in 24 hours of loc over a live surface's
// windows (the TUI's route screen): the hours Evaluate gives a recording
// (Evaluation.Hourly), the worst target's figures, null without probes in
// that hour. nil without a zone or without the windows.
func HourlyLive(l LiveRoute, loc *time.Location) []HourSummary {
	if loc == nil || len(l.Probes) == 0 || len(l.Probes) != len(l.Targets) {
		return nil
	}
	return hourly(&Measurement{Targets: l.Targets, Probes: l.Probes}, loc)
}

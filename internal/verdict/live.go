package verdict

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// LiveRoute is what a live surface (the TUI) holds of one candidate between
// two evaluations: the results of its targets' windows, what its recording
// said, the physical floor and what its traces gave.
type LiveRoute struct {
	// Recorded is the recording's route quality: it stands until a live
	// probe was sent.
	Recorded RouteQuality
	// Targets are the live windows' results (Window.Result), the main
	// target first; the live figures replace the recorded ones once one of
	// them has a probe sent.
	Targets []TargetResult
	// FloorMs is the physical floor between the vantage and the region
	// (FloorMs); 0 when unknown.
	FloorMs float64
	// LineClass and Direction are what the traces gave; "" reads as
	// "unknown" and "none".
	LineClass, Direction string
	// Carriers are the per-carrier routes, from the recordings (a backtrace
	// from the server: probing from here cannot measure them).
	Carriers []route.UserRoute
	// Throughput is the bw test, measured apart from the probes (recorded.bw
	// or a live test); nil without one.
	Throughput *Throughput
	// Probes are the windows Targets were read from, in their order, for
	// the SLA windows (Measurement.Probes); nil when not kept.
	Probes []*Window
}

// EvaluateLive is a live candidate's evaluation: its route quality from the
// windows by the one aggregation rule (AddTargets, SetFloor), else the
// recording's, with the traces' class, and the SLA verdict (CheckSLA). The
// TUI renders it and assembles nothing itself.
func EvaluateLive(s candidates.SLA, l LiveRoute) Evaluation {
	q := l.Recorded
	for _, t := range l.Targets {
		if t.Sent > 0 {
			q = RouteQuality{}
			q.AddTargets(l.Targets)
			if l.FloorMs > 0 {
				q.SetFloor(l.FloorMs)
			}
			break
		}
	}
	q.Carriers = l.Carriers
	q.LineClass, q.Direction = l.LineClass, l.Direction
	q.Throughput = l.Throughput
	if q.LineClass == "" {
		q.LineClass = "unknown"
	}
	if q.Direction == "" {
		q.Direction = "none"
	}
	e := Evaluation{Route: q, Targets: l.Targets, Throughput: l.Throughput, SLA: CheckSLA(s, q)}
	if len(l.Probes) == len(l.Targets) {
		// The SLA windows as Evaluate judges them; the day's hours are
		// the report's, not recomputed at every batch.
		floor := l.FloorMs
		if floor <= 0 {
			floor = -1
		}
		judgeWindows(&e, s, &Measurement{Targets: l.Targets, Probes: l.Probes, Throughput: l.Throughput}, floor, false)
	}
	return e
}

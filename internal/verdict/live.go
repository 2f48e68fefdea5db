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
	// Families are a dual-stack candidate's address families, the main
	// target's first, each with its latest traces (the recording's until
	// one is traced live); TargetFamilies is each of Targets' family, in
	// their order ("" reads as the first family). With two families, or
	// sla.families, each family is judged as Evaluate judges it
	// (Evaluation.Families); nil: one family.
	Families       []LiveFamily
	TargetFamilies []string
	// RecordedFamilies are the recording's families
	// (Evaluation.Families): they stand, as Recorded does, until a live
	// probe was sent.
	RecordedFamilies []FamilyQuality
}

// LiveFamily is one address family of a live candidate: the latest
// forward and return traces of an address of that family (nil when none).
type LiveFamily struct {
	Family          string
	Forward, Return *route.Trace
}

// EvaluateLive is a live candidate's evaluation: its route quality from the
// windows by the one aggregation rule (AddTargets, SetFloor), else the
// recording's, with the traces' class, the SLA verdict (CheckSLA), each
// address family's under sla.families (as Evaluate judges them) and the
// SLA windows. The TUI renders it and assembles nothing itself.
func EvaluateLive(s candidates.SLA, l LiveRoute) Evaluation {
	q, live := l.Recorded, false
	for _, t := range l.Targets {
		if t.Sent > 0 {
			q, live = RouteQuality{}, true
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
	judgeLiveFamilies(&e, s, l, live)
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

// judgeLiveFamilies is judgeFamilies for a live candidate: each family's
// figures from its own targets' windows (live once a probe was sent, else
// the recording's families stand as Recorded does) and its class from its
// own traces (route.CombineDirections, as a row's class); then the one
// rule of settleFamilies.
func judgeLiveFamilies(e *Evaluation, s candidates.SLA, l LiveRoute, live bool) {
	var have []string
	for _, lf := range l.Families {
		have = append(have, lf.Family)
	}
	fams := familiesJudged(have, s)
	if fams == nil {
		return
	}
	var haveTargets []bool
	for i, fam := range fams {
		fq := FamilyQuality{Family: fam}
		var ts []TargetResult
		for j, t := range l.Targets {
			tf := ""
			if j < len(l.TargetFamilies) {
				tf = l.TargetFamilies[j]
			}
			if tf == fam || (tf == "" && i == 0) {
				ts = append(ts, t)
			}
		}
		q := &fq.Route
		if live {
			q.AddTargets(ts)
			if l.FloorMs > 0 {
				q.SetFloor(l.FloorMs)
			}
		} else {
			for _, rf := range l.RecordedFamilies {
				if rf.Family == fam {
					*q = rf.Route
				}
			}
		}
		for _, lf := range l.Families {
			if lf.Family != fam || lf.Forward == nil && lf.Return == nil {
				continue
			}
			q.Forward, q.Return, q.ForwardClass, q.ReturnClass = lf.Forward, lf.Return, "", ""
			if lf.Forward != nil {
				q.ForwardClass, q.ForwardASPath = lf.Forward.LineClass, lf.Forward.ASPath
			}
			if lf.Return != nil {
				q.ReturnClass, q.ReturnASPath = lf.Return.LineClass, lf.Return.ASPath
			}
			q.LineClass, q.Direction, q.Notes = route.CombineDirections(lf.Forward, lf.Return)
		}
		if q.LineClass == "" {
			q.LineClass = "unknown"
		}
		if q.Direction == "" {
			q.Direction = "none"
		}
		e.Families = append(e.Families, fq)
		haveTargets = append(haveTargets, len(ts) > 0 || !live && q.Sent > 0)
	}
	settleFamilies(e, s, haveTargets)
}

package verdict

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// FamilyQuality is one address family's route (issue 32): a dual-stack
// server's IPv6 route often rides another line than its IPv4 route (CN2
// for IPv4, ordinary 163 for IPv6 is common), so each family is judged on
// its own targets and its own traces.
type FamilyQuality struct {
	// Family is IPv4 or IPv6.
	Family string
	// Route is the family's route quality: its targets' figures (worst over
	// them, AddTargets) and the line class of its own forward and return
	// traces.
	Route RouteQuality
	// SLA is the family's own checks when sla.families lists it (each
	// check's Family is set); nil otherwise.
	SLA *Verdict
}

// MarshalJSON writes a family as its route's fields with "family" (and
// "sla" when judged) ahead: candidates[].families[] of the document.
func (f FamilyQuality) MarshalJSON() ([]byte, error) {
	q, err := json.Marshal(f.Route)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		Family string   `json:"family"`
		SLA    *Verdict `json:"sla,omitempty"`
	}{f.Family, f.SLA})
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1], ',')
	return append(out, q[1:]...), nil
}

// familyChecks are the SLA thresholds judged per family: the route's own
// figures. Throughput and the per-carrier classes are the candidate's,
// judged once over Route.
func familyChecks(s candidates.SLA) (perFamily, whole candidates.SLA) {
	perFamily = s
	perFamily.MinThroughputMbps, perFamily.MaxOversell, perFamily.LineClassesByCarrier = nil, nil, nil
	whole = candidates.SLA{MinThroughputMbps: s.MinThroughputMbps, MaxOversell: s.MaxOversell, LineClassesByCarrier: s.LineClassesByCarrier}
	return perFamily, whole
}

// judgeFamilies fills e.Families when c has targets of two families or the
// SLA names families (sla.families), and then makes Route the worse
// family's route: the line class, direction, evidence and traces of the
// family with the weaker class (the one failing its SLA first, with
// sla.families; a family with nothing measured never), while Route's
// figures stay the worst over all targets.
// With sla.families, e.SLA is each listed family's checks (a family
// without targets or answers fails them with no data) and the
// candidate-wide ones (throughput, per-carrier classes) over Route. A
// single-family candidate without sla.families is left as it was.
func judgeFamilies(e *Evaluation, f *candidates.File, c *candidates.Candidate, m *Measurement, ret *route.Trace, db route.ASNDB, floor float64) {
	fams := familiesJudged(c.Families(), f.SLA)
	if fams == nil {
		return
	}
	var haveTargets []bool
	for i, fam := range fams {
		fq := FamilyQuality{Family: fam}
		q := &fq.Route
		fwd := m.FamilyForward[fam]
		if fwd == nil && m.Forward != nil && traceFamily(m.Forward, fams[0]) == fam {
			fwd = m.Forward
		}
		for _, v := range m.ForwardVantages {
			// A recorded.forward of several traces (a NextTrace or
			// Atlas file, say) may hold the other family's route.
			if fwd == nil && Family(v.Addr) == fam {
				fwd = v
			}
		}
		r := ret
		if r != nil && traceFamily(r, fams[0]) != fam {
			r = nil
		}
		q.LineClass, q.Direction, q.Evidence, q.ForwardClass, q.ReturnClass, q.Notes = classify(fwd, r, db)
		q.Forward, q.Return = fwd, r
		if fwd != nil {
			q.ForwardASPath = fwd.ASPath
			if fwd.MTU != nil {
				q.PathMTU = fwd.MTU.PathMTU
			}
		}
		if r != nil {
			q.ReturnASPath = r.ASPath
		}
		var ts []TargetResult
		for _, t := range m.Targets {
			tf := Family(t.Addr)
			if tf == fam || (tf == "" && i == 0) {
				ts = append(ts, t)
			}
		}
		q.AddTargets(ts)
		if floor > 0 {
			q.SetFloor(floor)
		}
		e.Families = append(e.Families, fq)
		haveTargets = append(haveTargets, len(ts) > 0)
	}
	settleFamilies(e, f.SLA, haveTargets)
}

// familiesJudged are the address families a candidate whose targets are
// of fams is judged over one by one: its own and those sla.families
// lists; nil when it is judged as one (a single family, no
// sla.families).
func familiesJudged(fams []string, s candidates.SLA) []string {
	fams = slices.Clone(fams)
	for _, fam := range s.Families {
		if !slices.Contains(fams, fam) {
			fams = append(fams, fam)
		}
	}
	if len(fams) < 2 && len(s.Families) == 0 {
		return nil
	}
	return fams
}

// settleFamilies judges e.Families, their routes filled, as compare,
// serve and the TUI do alike: each family sla.families lists gets its own
// checks (one without targets, haveTargets[i] false, fails them with no
// data), Route takes the worse family's route and, with sla.families,
// e.SLA is the families' checks and the candidate-wide ones.
func settleFamilies(e *Evaluation, s candidates.SLA, haveTargets []bool) {
	perFamily, whole := familyChecks(s)
	for i := range e.Families {
		fq := &e.Families[i]
		if !slices.Contains(s.Families, fq.Family) {
			continue
		}
		v := CheckSLA(perFamily, fq.Route)
		for k := range v.Checks {
			v.Checks[k].Family = fq.Family
			if !haveTargets[i] && !v.Checks[k].Pass {
				v.Checks[k].Note = fmt.Sprintf("%s: the candidate has no %s target; %s", NoData, fq.Family, v.Checks[k].Note)
			}
		}
		fq.SLA = &v
	}
	worse := -1
	for i, fq := range e.Families {
		q := fq.Route
		if q.Sent == 0 && q.Forward == nil && q.Return == nil {
			// A family with nothing measured (sla.families naming one
			// the candidate has no target of) fails its checks; it does
			// not blank the route the other family has.
			continue
		}
		if worse < 0 {
			worse = i
			continue
		}
		w := e.Families[worse]
		fails, wFails := fq.SLA != nil && !fq.SLA.Pass, w.SLA != nil && !w.SLA.Pass
		if fails && !wFails || fails == wFails && route.LineClassRank(fq.Route.LineClass) < route.LineClassRank(w.Route.LineClass) {
			worse = i
		}
	}
	worse = max(worse, 0)
	w := e.Families[worse].Route
	q := &e.Route
	q.LineClass, q.Direction, q.Evidence, q.ForwardClass, q.ReturnClass, q.Notes = w.LineClass, w.Direction, w.Evidence, w.ForwardClass, w.ReturnClass, w.Notes
	q.Forward, q.Return, q.ForwardASPath, q.ReturnASPath, q.PathMTU = w.Forward, w.Return, w.ForwardASPath, w.ReturnASPath, w.PathMTU
	if len(s.Families) == 0 {
		// The SLA as before, on the route that now is the worse family's.
		e.SLA = CheckSLA(s, *q)
		return
	}
	var checks []Check
	for _, fq := range e.Families {
		if fq.SLA != nil {
			checks = append(checks, fq.SLA.Checks...)
		}
	}
	checks = append(checks, CheckSLA(whole, *q).Checks...)
	e.SLA = Verdict{Checks: checks}
	e.SLA.settle()
}

// traceFamily is the address family of the address t traced; def when
// the trace names no address.
func traceFamily(t *route.Trace, def string) string {
	if fam := Family(t.Addr); fam != "" {
		return fam
	}
	return def
}

// Label names a check in sentences and tables: its name, and the address
// family it judged when it judged one ("line_class on ipv6").
func (c Check) Label() string {
	if c.Family != "" {
		return c.Name + " on " + c.Family
	}
	return c.Name
}

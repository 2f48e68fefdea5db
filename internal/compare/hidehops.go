package compare

import (
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// HideHops returns r with the hops at TTL 1..n of every candidate's routes
// masked (compare --hide-hops N; route.HopMask): the evidence leaves them
// out, the AS paths are rebuilt from the shown hops, and every text of the
// document (rules, notes, warnings, the per-carrier evidence) has what only
// hidden hops named replaced by route.Hidden. Classes, figures and verdicts
// stay as computed on the real hops. r itself when n is 0; r is not changed.
func HideHops(r *Result, n int) *Result {
	if r == nil || n <= 0 {
		return r
	}
	var traces []*route.Trace
	for _, e := range r.Candidates {
		traces = append(traces, e.Route.Forward, e.Route.Return)
		if d := e.Route.Backtrace; d != nil {
			for _, b := range d.Results {
				traces = append(traces, b.Trace)
			}
		}
	}
	m := route.NewHopMask(n, traces...)
	c := *r
	c.HiddenHops = n
	c.Notes, c.Warnings, c.Verdict = m.Texts(r.Notes), m.Texts(r.Warnings), m.Text(r.Verdict)
	c.Candidates = make([]*verdict.Evaluation, len(r.Candidates))
	for i, e := range r.Candidates {
		ce := *e
		q := &ce.Route
		q.Evidence, q.Notes = m.Evidence(e.Route.Evidence), m.Texts(e.Route.Notes)
		q.Forward, q.Return = m.Trace(e.Route.Forward), m.Trace(e.Route.Return)
		q.Backtrace = route.HideBacktraceHops(e.Route.Backtrace, n)
		q.ForwardASPath, q.ReturnASPath = maskedPath(m, e.Route.ForwardASPath, q.Forward), maskedPath(m, e.Route.ReturnASPath, q.Return)
		if e.Route.Carriers != nil {
			q.Carriers = make([]route.UserRoute, len(e.Route.Carriers))
			for j, u := range e.Route.Carriers {
				u.ReturnEvidence, u.Notes = m.Text(u.ReturnEvidence), m.Texts(u.Notes)
				q.Carriers[j] = u
			}
		}
		ce.Warnings = m.Texts(e.Warnings)
		ce.SLA.Checks = make([]verdict.Check, len(e.SLA.Checks))
		for j, k := range e.SLA.Checks {
			k.Note = m.Text(k.Note)
			ce.SLA.Checks[j] = k
		}
		c.Candidates[i] = &ce
	}
	return &c
}

// maskedPath is the AS path of a masked route: rebuilt from its masked
// trace when there is one, else p without the networks that begin at a
// hidden TTL.
func maskedPath(m route.HopMask, p []route.ASHop, masked *route.Trace) []route.ASHop {
	if p == nil {
		return nil
	}
	if masked != nil && masked.ASPath != nil {
		return masked.ASPath
	}
	return m.ASPath(p)
}

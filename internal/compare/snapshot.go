package compare

import (
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// SnapshotResult is the compare document of a live surface's evaluations
// (serve's snapshot): the Result compare's report renders, ranked by the
// same rule (Rank), with the traffic and the exchange its pricing used (p
// may be nil: no prices). The evaluations are copied, since ranking sets
// their Rank; the caller's stay as they were. Each candidate's recorded
// delivery is read and judged (EvaluateDelivery) unless its evaluation
// holds it already.
func SnapshotResult(f *candidates.File, p *verdict.Pricing, evs []*verdict.Evaluation, now time.Time) *Result {
	r := NewResult(f, Options{Now: now})
	if p != nil {
		r.useFX(p.FX())
		r.Traffic = p.Traffic
	}
	byName := map[string]*candidates.Candidate{}
	for i := range f.Candidates {
		byName[f.Candidates[i].Name] = &f.Candidates[i]
	}
	for _, ev := range evs {
		c := *ev
		c.Warnings = append(append([]string(nil), ev.Warnings...), carryWarnings(ev.Monthly, ev.WhatIf)...)
		// The recorded delivery is judged as compare judges it: a failed
		// one fails the candidate here too. An evaluation that carries it
		// already (serve judges it once, at load) is not read again.
		if cand := byName[c.Name]; cand != nil && c.GPU == nil && c.Host == nil && c.Interconnect == nil {
			c.DeliveryFailed = nil
			if err := verdict.EvaluateDelivery(&c, cand, false); err != nil {
				c.Warnings = append(c.Warnings, "recorded delivery not read: "+err.Error())
			}
		}
		r.Candidates = append(r.Candidates, &c)
	}
	Rank(r)
	return r
}

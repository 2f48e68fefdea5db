package compare

import "time"

// SnapshotResult is the compare document of a live surface's evaluations
// (serve's snapshot): the Result compare's report renders, ranked by the
// same rule (Rank), with the traffic and the exchange its pricing used (p
// may be nil: no prices). The evaluations are copied, since ranking sets
// their Rank; the caller's stay as they were.
func SnapshotResult(f *File, p *Pricing, evs []*Evaluation, now time.Time) *Result {
	r := NewResult(f, Options{Now: now})
	if p != nil {
		r.useFX(p.FX())
		r.Traffic = p.Traffic
	}
	for _, ev := range evs {
		c := *ev
		c.Warnings = append(append([]string(nil), ev.Warnings...), carryWarnings(ev.Monthly, ev.WhatIf)...)
		r.Candidates = append(r.Candidates, &c)
	}
	Rank(r)
	return r
}

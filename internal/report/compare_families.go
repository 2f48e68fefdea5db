package report

import (
	"strconv"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/route"
)

// compareFamiliesTable is each address family's route side by side (issue
// 32: a dual-stack server's IPv6 route often rides another line than its
// IPv4 one): line class and direction, loss, p50 and p95 of the family's
// targets, and the family's SLA verdict when sla.families lists it; ok is
// false when no candidate is judged per family.
func compareFamiliesTable(r *compare.Result, c compareCells) (Table, bool) {
	t := Table{
		Title:   "Address families (each family's own targets and route)",
		Headers: []string{"candidate", "family", "line class", "validated", "sent", "loss", "p50 ms", "p95 ms", "jitter ms", "SLA", "forward as path"},
		Align:   "llllrrrrrll",
		Movable: []string{"forward as path"},
	}
	for _, e := range r.Candidates {
		for _, f := range e.Families {
			q := f.Route
			loss, p50, p95, jit := "-", "-", "-", "-"
			if q.Sent > 0 {
				loss = c.pct(q.Loss)
			}
			if q.Recv > 0 {
				p50, p95, jit = c.ms1(q.RTT.P50), c.ms1(q.RTT.P95), c.ms1(q.Jitter.MeanAbs)
			}
			sla := "-"
			if f.SLA != nil {
				sla = "pass"
				if !f.SLA.Pass {
					sla = "FAIL"
				}
			}
			t.Rows = append(t.Rows, []string{e.Name, f.Family, dashIfEmpty(q.LineClass), q.Direction, strconv.Itoa(q.Sent), loss, p50, p95, jit, sla,
				dashIfEmpty(route.ASPathText(q.ForwardASPath))})
		}
	}
	if c.notes && len(t.Rows) > 0 {
		t.Notes = append(t.Notes, "the candidate's route is its worse family's; with sla.families each family listed must pass on its own")
	}
	return t, len(t.Rows) > 0
}

package tui

import (
	"fmt"
	"sort"

	"github.com/linecheck/linecheck/internal/route"
)

// weakerFamilyClass is the row's line class with the live routes of its
// other address families: the weaker of them (route.LineClassRank), as
// compare makes a dual-stack candidate's route its worse family's.
func weakerFamilyClass(c *Candidate) string {
	class := c.LineClass
	for _, r := range c.FamilyRoutes {
		if r.LineClass != "" && (class == "" || route.LineClassRank(r.LineClass) < route.LineClassRank(class)) {
			class = r.LineClass
		}
	}
	return class
}

// familyLines are the route screen's lines of a dual-stack candidate, one
// per address family: live, each family's forward class and AS path;
// from a recording, each family's class, p95 and loss
// (verdict.Evaluation.Families). None for a single-family candidate.
func familyLines(s *state, c *Candidate, width int) []string {
	var out []string
	if len(c.FamilyRoutes) > 0 {
		main := "-"
		if c.Forward != nil {
			main = orDash(c.Forward.LineClass) + " · " + orDash(c.Forward.ASPath)
		}
		out = append(out, s.st.Dim.Render(line(fmt.Sprintf(" %s forward: %s", c.family, main), width)))
		fams := make([]string, 0, len(c.FamilyRoutes))
		for f := range c.FamilyRoutes {
			fams = append(fams, f)
		}
		sort.Strings(fams)
		for _, f := range fams {
			r := c.FamilyRoutes[f]
			out = append(out, s.st.Dim.Render(line(fmt.Sprintf(" %s forward: %s · %s", f, orDash(r.LineClass), orDash(r.ASPath)), width)))
		}
		return out
	}
	for _, f := range c.Families {
		q := f.Route
		p95, loss := "-", "-"
		if q.Recv > 0 {
			p95 = ms(q.RTT.P95) + " ms"
		}
		if q.Sent > 0 {
			loss = fmt.Sprintf("%.2f %%", q.Loss*100)
		}
		sla := ""
		if f.SLA != nil {
			sla = " · SLA pass"
			if !f.SLA.Pass {
				sla = " · SLA FAIL"
			}
		}
		out = append(out, s.st.Dim.Render(line(fmt.Sprintf(" %s: %s (%s) · p95 %s · loss %s%s", f.Family, orDash(q.LineClass), q.Direction, p95, loss, sla), width)))
	}
	return out
}

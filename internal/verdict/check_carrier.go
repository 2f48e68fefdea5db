package verdict

import (
	"fmt"
	"strings"

	"github.com/linecheck/linecheck/internal/candidates"
)

// CheckLineClassCarrier prefixes the per-carrier class checks of
// sla.line_classes_by_carrier: line_class:telecom, line_class:unicom …
const CheckLineClassCarrier = "line_class:"

func init() { registerCheck(SLACheck{Order: 70, Judge: checkCarriers}) }

// checkCarriers checks sla.line_classes_by_carrier: one check per user
// (carrier and city) of a carrier the SLA names, over the directions measured
// toward those users. Nothing measured fails with a note: a pre-contract
// check does not pass on no data.
func checkCarriers(s candidates.SLA, q RouteQuality) []Check {
	var out []Check
	for _, u := range q.Carriers {
		allowed := s.LineClassesByCarrier[u.Carrier]
		if len(allowed) == 0 {
			continue
		}
		c := Check{Name: CheckLineClassCarrier + u.Carrier, Required: allowed, Unit: "class"}
		var measured []string
		if u.Forward != "" {
			measured = append(measured, "forward "+u.Forward)
		}
		if u.Return != "" {
			measured = append(measured, "return "+u.Return)
		}
		c.Measured = strings.Join(measured, ", ")
		switch {
		case u.Pass == nil:
			c.Note, c.Unmeasured = fmt.Sprintf("%s users (%s): no route measured toward them", u.Carrier, u.City), true
		case u.Forward == "":
			c.Pass = *u.Pass
			c.Note = fmt.Sprintf("%s users (%s): return path only", u.Carrier, u.City)
		case u.Return == "":
			c.Pass = *u.Pass
			c.Note = fmt.Sprintf("%s users (%s): forward path only, the return path was not measured", u.Carrier, u.City)
		default:
			c.Pass = *u.Pass
			c.Note = fmt.Sprintf("%s users (%s): both directions", u.Carrier, u.City)
		}
		if u.Forward != "" {
			// The forward traces of the days from a vantage on this
			// carrier: every one must take an allowed class.
			if cls, note, failed := seenFailure(q.RoutesSeen, allowed, u.Carrier); failed {
				c.Pass, c.Unmeasured = false, false
				c.Measured = "forward " + cls
				if u.Return != "" {
					c.Measured = c.Measured.(string) + ", return " + u.Return
				}
				c.Note += "; " + note
			}
		}
		out = append(out, c)
	}
	return out
}

package verdict

import (
	"slices"

	"github.com/linecheck/linecheck/internal/candidates"
)

// CheckLineClass is the check of sla.line_classes: the class the traces
// gave, in the direction(s) they validated it, on every path of a
// multipath trace, and on every trace of the days of a trial (RoutesSeen:
// a failure names the time the route left the allowed classes).
const CheckLineClass = "line_class"

func init() { registerCheck(SLACheck{Order: 40, Judge: checkLineClass}) }

func checkLineClass(s candidates.SLA, q RouteQuality) []Check {
	if len(s.LineClasses) == 0 {
		return nil
	}
	cls := q.LineClass
	if cls == "" {
		cls = "unknown"
	}
	c := Check{Name: CheckLineClass, Required: s.LineClasses, Measured: cls, Unit: "class",
		Pass: slices.Contains(s.LineClasses, cls)}
	c.Note = q.ValidationGap()
	if q.Direction != "both" && q.Direction != "forward" && q.Direction != "return" {
		c.Pass = c.Pass && cls != "unknown"
		// No direction traced at all: nothing was measured (a trace that
		// ran and gave no class is a measured "unknown").
		c.Unmeasured = q.ForwardClass == "" && q.ReturnClass == ""
	}
	checkPathClasses(&c, s.LineClasses, q.Paths)
	if cls, note, failed := seenFailure(q.RoutesSeen, s.LineClasses, ""); failed {
		c.Pass, c.Measured = false, cls
		if c.Note != "" {
			note += "; " + c.Note
		}
		c.Note = note
	}
	return []Check{c}
}

package verdict

import "github.com/linecheck/linecheck/internal/candidates"

// CheckLoss is the check of sla.loss: the worst target's lost share of
// the probes sent.
const CheckLoss = "loss"

func init() { registerCheck(SLACheck{Order: 20, Judge: checkLoss, PerWindow: true}) }

func checkLoss(s candidates.SLA, q RouteQuality) []Check {
	if s.Loss == nil {
		return nil
	}
	c := Check{Name: CheckLoss, Required: *s.Loss, Unit: "fraction"}
	if q.Sent == 0 {
		c.Note, c.Unmeasured = NoData+": no probe was sent or recorded", true
	} else {
		c.Measured = round(q.Loss, 6)
		c.Pass = q.Loss <= *s.Loss
	}
	return []Check{c}
}

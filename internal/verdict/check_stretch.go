package verdict

import (
	"fmt"
	"slices"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
)

// CheckStretch is the check of sla.max_stretch: min RTT over the physical
// floor between the vantage and the region.
const CheckStretch = "stretch"

func init() { registerCheck(SLACheck{Order: 50, Judge: checkStretch, PerWindow: true}) }

func checkStretch(s candidates.SLA, q RouteQuality) []Check {
	if s.MaxStretch == nil {
		return nil
	}
	c := Check{Name: CheckStretch, Required: *s.MaxStretch, Unit: "ratio"}
	switch {
	case slices.Contains(q.StretchFlags, geo.FlagSameCity):
		// Within one city the floor is hundredths of a millisecond and
		// any real RTT is many times it: the ratio says nothing, so the
		// check neither passes on a figure nor fails (issue 35).
		c.Pass, c.NotApplicable = true, true
		c.Note = fmt.Sprintf("%s: the region is in the vantage's city (floor %.2f ms, under %g km apart): the physical floor is no yardstick", NotApplicable, q.FloorMs, geo.SameCityKm)
	case q.Recv == 0:
		c.Note, c.Unmeasured = NoData+": no probe was answered, stretch cannot be measured", true
	case q.FloorMs <= 0:
		c.Note, c.Unmeasured = "physical floor unknown: the vantage or the region has no location", true
	default:
		c.Measured = round(q.Stretch, 3)
		c.Pass = q.Stretch <= *s.MaxStretch
		if slices.Contains(q.StretchFlags, "below-floor") {
			c.Pass = false
			c.Note = fmt.Sprintf("min RTT %.3g ms is below the physical floor %.1f ms: anycast or a wrong region", q.RTT.Min, q.FloorMs)
		}
	}
	return []Check{c}
}

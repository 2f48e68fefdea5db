package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
)

// SLA check names, as they appear in reports.
const (
	CheckRTTP95 = "rtt_p95_ms"
	CheckLoss   = "loss"
	// CheckJitter is the mean |D| between consecutive RTTs over the whole
	// window (docs/definitions.md, "SLA jitter"); it was named
	// jitter_rfc3550_ms until issue 35, though it never was RFC 3550's
	// smoothed estimator.
	CheckJitter    = "jitter_ms"
	CheckLineClass = "line_class"
	CheckStretch   = "stretch"
	CheckPathMTU   = "min_path_mtu"
	// CheckLineClassCarrier prefixes the per-carrier class checks of
	// sla.line_classes_by_carrier: line_class:telecom, line_class:unicom …
	CheckLineClassCarrier = "line_class:"
)

// NoData begins the note of every check that fails for want of a
// measurement: compare, the TUI and serve say it the same way.
const NoData = "no data"

// NotApplicable begins the note of a check that does not apply to the
// candidate (stretch within the vantage's own city): it passes, measures
// nothing, and the tables say "n/a" rather than pass or FAIL.
const NotApplicable = "not applicable"

// CheckSLA checks a route's quality against the thresholds. A threshold that
// is not set produces no check; a measurement that is missing (no probe
// answered, no route evidence) fails its check with a note rather than
// passing by default: a pre-contract check must not pass on no data.
func CheckSLA(s candidates.SLA, q RouteQuality) Verdict {
	var checks []Check
	noReplies := q.Recv == 0
	upper := func(name, unit string, req *float64, measured float64, what string) {
		if req == nil {
			return
		}
		c := Check{Name: name, Required: *req, Unit: unit}
		if noReplies {
			c.Note, c.Unmeasured = NoData+": no probe was answered, "+what+" cannot be measured", true
		} else {
			c.Measured = round(measured, 4)
			c.Pass = measured <= *req
		}
		checks = append(checks, c)
	}
	upper(CheckRTTP95, "ms", s.RTTP95ms, q.RTT.P95, "RTT")
	if s.Loss != nil {
		c := Check{Name: CheckLoss, Required: *s.Loss, Unit: "fraction"}
		if q.Sent == 0 {
			c.Note, c.Unmeasured = NoData+": no probe was sent or recorded", true
		} else {
			c.Measured = round(q.Loss, 6)
			c.Pass = q.Loss <= *s.Loss
		}
		checks = append(checks, c)
	}
	// The whole window's jitter, not the estimator's last value: RFC 3550's
	// running J reflects about the last 16 probes, and a verdict on it
	// flipped with them (issue 20; docs/definitions.md, "SLA jitter").
	upper(CheckJitter, "ms", s.JitterMs, q.Jitter.MeanAbs, "jitter")
	if len(s.LineClasses) > 0 {
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
		checks = append(checks, c)
	}
	if s.MaxStretch != nil {
		c := Check{Name: CheckStretch, Required: *s.MaxStretch, Unit: "ratio"}
		switch {
		case slices.Contains(q.StretchFlags, geo.FlagSameCity):
			// Within one city the floor is hundredths of a millisecond and
			// any real RTT is many times it: the ratio says nothing, so the
			// check neither passes on a figure nor fails (issue 35).
			c.Pass, c.NotApplicable = true, true
			c.Note = fmt.Sprintf("%s: the region is in the vantage's city (floor %.2f ms, under %g km apart): the physical floor is no yardstick", NotApplicable, q.FloorMs, geo.SameCityKm)
		case noReplies:
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
		checks = append(checks, c)
	}
	if s.MinPathMTU != nil {
		c := Check{Name: CheckPathMTU, Required: *s.MinPathMTU, Unit: "bytes"}
		if q.PathMTU <= 0 {
			c.Note, c.Unmeasured = NoData+": the forward path MTU was not measured (record the forward trace with trace --mtu, or probe live)", true
		} else {
			c.Measured = q.PathMTU
			c.Pass = q.PathMTU >= *s.MinPathMTU
		}
		checks = append(checks, c)
	}
	checks = append(checks, carrierChecks(s, q)...)
	checks = append(checks, CheckThroughput(s.MinThroughputMbps, s.MaxOversell, q.Throughput)...)
	v := Verdict{Pass: true, Checks: checks}
	for _, c := range checks {
		if !c.Pass {
			v.Pass = false
		}
	}
	return v
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// carrierChecks checks sla.line_classes_by_carrier: one check per user
// (carrier and city) of a carrier the SLA names, over the directions measured
// toward those users. Nothing measured fails with a note: a pre-contract
// check does not pass on no data.
func carrierChecks(s candidates.SLA, q RouteQuality) []Check {
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
		out = append(out, c)
	}
	return out
}

package verdict

import "github.com/linecheck/linecheck/internal/candidates"

// CheckJitter is the mean |D| between consecutive RTTs over the whole
// window (docs/definitions.md, "SLA jitter"); it was named
// jitter_rfc3550_ms until issue 35, though it never was RFC 3550's
// smoothed estimator.
const CheckJitter = "jitter_ms"

func init() { registerCheck(SLACheck{Order: 30, Judge: checkJitter, PerWindow: true}) }

// checkJitter judges the whole window's jitter, not the estimator's last
// value: RFC 3550's running J reflects about the last 16 probes, and a
// verdict on it flipped with them (issue 20; docs/definitions.md, "SLA
// jitter").
func checkJitter(s candidates.SLA, q RouteQuality) []Check {
	return upperBound(CheckJitter, "ms", s.JitterMs, q, q.Jitter.MeanAbs, "jitter")
}

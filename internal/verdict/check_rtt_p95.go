package verdict

import "github.com/linecheck/linecheck/internal/candidates"

// CheckRTTP95 is the check of sla.rtt_p95_ms: the worst target's 95th
// percentile RTT, in ms.
const CheckRTTP95 = "rtt_p95_ms"

func init() { registerCheck(SLACheck{Order: 10, Judge: checkRTTP95, PerWindow: true}) }

func checkRTTP95(s candidates.SLA, q RouteQuality) []Check {
	return upperBound(CheckRTTP95, "ms", s.RTTP95ms, q, q.RTT.P95, "RTT")
}

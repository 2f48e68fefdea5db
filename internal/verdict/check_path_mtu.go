package verdict

import "github.com/linecheck/linecheck/internal/candidates"

// CheckPathMTU is the check of sla.min_path_mtu: the forward route's path
// MTU in bytes.
const CheckPathMTU = "min_path_mtu"

func init() { registerCheck(SLACheck{Order: 60, Judge: checkPathMTU}) }

func checkPathMTU(s candidates.SLA, q RouteQuality) []Check {
	if s.MinPathMTU == nil {
		return nil
	}
	c := Check{Name: CheckPathMTU, Required: *s.MinPathMTU, Unit: "bytes"}
	if q.PathMTU <= 0 {
		c.Note, c.Unmeasured = NoData+": the forward path MTU was not measured (record the forward trace with trace --mtu, or probe live)", true
	} else {
		c.Measured = q.PathMTU
		c.Pass = q.PathMTU >= *s.MinPathMTU
	}
	return []Check{c}
}

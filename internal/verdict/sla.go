package verdict

import (
	"math"
	"sort"

	"github.com/linecheck/linecheck/internal/candidates"
)

// NoData begins the note of every check that fails for want of a
// measurement: compare, the TUI and serve say it the same way.
const NoData = "no data"

// NotApplicable begins the note of a check that does not apply to the
// candidate (stretch within the vantage's own city): it passes, measures
// nothing, and the tables say "n/a" rather than pass or FAIL.
const NotApplicable = "not applicable"

// SLACheck is one entry of the table of SLA checks. Each check is one file
// (check_*.go) that registers its entry: a new check is that file, its
// threshold in the candidates schema (candidates.SLA) and its line in
// docs/compare.md, and touches nothing else.
type SLACheck struct {
	// Order places the check among the others: the order compare, the TUI
	// and serve list the checks in.
	Order int
	// Judge returns the check's results for the route: none when its
	// threshold is not set, one (or one per user carrier) otherwise.
	Judge func(s candidates.SLA, q RouteQuality) []Check
	// PerWindow marks a check of a measured figure (RTT, loss, jitter,
	// stretch, throughput): it is judged again over each SLA window.
	PerWindow bool
}

var slaChecks []SLACheck

// registerCheck adds a check to the table, kept in Order.
func registerCheck(c SLACheck) {
	slaChecks = append(slaChecks, c)
	sort.SliceStable(slaChecks, func(i, j int) bool { return slaChecks[i].Order < slaChecks[j].Order })
}

// SLAChecks returns the table of checks CheckSLA runs, in order.
func SLAChecks() []SLACheck { return append([]SLACheck(nil), slaChecks...) }

// CheckSLA checks a route's quality against the thresholds: every check of
// the table in order. A threshold that is not set produces no check; a
// measurement that is missing (no probe answered, no route evidence) fails
// its check with a note rather than passing by default: a pre-contract
// check must not pass on no data.
func CheckSLA(s candidates.SLA, q RouteQuality) Verdict {
	var checks []Check
	for _, c := range slaChecks {
		checks = append(checks, c.Judge(s, q)...)
	}
	for i := range checks {
		checks[i].Window = WindowAll
	}
	v := Verdict{Checks: checks}
	v.settle()
	return v
}

// WindowAll is the window of a check judged over the whole recording.
const WindowAll = "all"

// CheckSLAWindow judges the checks of measured figures (SLACheck.PerWindow)
// over q, the route's figures in the SLA window w: each check is named by
// the window and its hours.
func CheckSLAWindow(s candidates.SLA, q RouteQuality, w candidates.Window) []Check {
	var checks []Check
	for _, c := range slaChecks {
		if c.PerWindow {
			checks = append(checks, c.Judge(s, q)...)
		}
	}
	for i := range checks {
		checks[i].Window, checks[i].Hours = w.Name, w.Hours()
	}
	return checks
}

// settle sets Pass: every check passes.
func (v *Verdict) settle() {
	v.Pass = true
	for _, c := range v.Checks {
		if !c.Pass {
			v.Pass = false
		}
	}
}

// upperBound is a check of a figure that must not exceed the threshold,
// measured over the answered probes: none answered fails it as no data.
func upperBound(name, unit string, req *float64, q RouteQuality, measured float64, what string) []Check {
	if req == nil {
		return nil
	}
	c := Check{Name: name, Required: *req, Unit: unit}
	if q.Recv == 0 {
		c.Note, c.Unmeasured = NoData+": no probe was answered, "+what+" cannot be measured", true
	} else {
		c.Measured = round(measured, 4)
		c.Pass = measured <= *req
	}
	return []Check{c}
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

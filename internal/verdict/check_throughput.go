package verdict

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe/bw"
)

// SLA check names of the throughput thresholds.
const (
	CheckMinThroughput = "min_throughput_mbps"
	CheckMaxOversell   = "max_oversell"
)

func init() { registerCheck(SLACheck{Order: 80, Judge: checkThroughput, PerWindow: true}) }

func checkThroughput(s candidates.SLA, q RouteQuality) []Check {
	return CheckThroughput(s.MinThroughputMbps, s.MaxOversell, q.Throughput)
}

// CheckThroughput checks min_throughput_mbps on the p5 of the intervals and
// max_oversell on the journal's oversell. No measurement fails the check
// with a note, as every other SLA check does.
func CheckThroughput(minMbps, maxOversell *float64, t *Throughput) []Check {
	var checks []Check
	if minMbps != nil {
		c := Check{Name: CheckMinThroughput, Required: *minMbps, Unit: "Mbps"}
		switch {
		case t == nil:
			c.Note, c.Unmeasured = NoData+": no throughput test: give the candidate bandwidth_test: {addr, port} (live) or recorded.bw", true
		case t.P5 == nil:
			c.Unmeasured = true
			c.Note = NoData + ": the throughput test gave no intervals"
			if t.Error != "" {
				c.Note = NoData + ": the throughput test failed: " + t.Error
			}
		default:
			mbps := round(*t.P5/1e6, 3)
			c.Measured, c.Pass = mbps, mbps >= *minMbps
			if t.Direction != "" && t.Direction != bw.Download {
				c.Note = "measured " + t.Direction + ", not download"
			}
		}
		checks = append(checks, c)
	}
	if maxOversell != nil {
		c := Check{Name: CheckMaxOversell, Required: *maxOversell, Unit: "fraction"}
		switch {
		case t == nil || t.Oversell == nil:
			c.Unmeasured = true
			c.Note = NoData + ": oversell needs tests around the clock: record `linecheck bw --watch --journal FILE` and give it as recorded.bw"
		default:
			c.Measured, c.Pass = round(*t.Oversell, 4), *t.Oversell <= *maxOversell
		}
		checks = append(checks, c)
	}
	return checks
}

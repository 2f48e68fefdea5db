// Package percentile holds the one nearest-rank percentile of linecheck:
// RTT percentiles and jitter (internal/stats), the throughput percentiles of
// bw reports and billing's default 95th all call it. It is public so that
// the public billing package can use it without importing an internal one
// (issue 34), and it depends on nothing of this module.
//
// Definition (docs/definitions.md has it with its public sources): the p-th
// percentile of n ascending values is the value of rank ceil(p/100·n),
// clamped into 1..n, computed in integers on per-mille (Rank).
package percentile

import "math"

// Rank is the 1-based nearest-rank of the p-th percentile (0 < p <= 100)
// among n ascending values: ceil(p/100·n), clamped into 1..n, computed in
// integers on per-mille (no ceil(0.95·20) = 20.000000000000004 style
// errors). n < 1 gives 0.
func Rank(n int, p float64) int {
	if n < 1 {
		return 0
	}
	pm := int(math.Round(p * 10))
	return min(max((pm*n+999)/1000, 1), n)
}

// NearestRank returns the p-th percentile (0 < p <= 100) of sorted ascending
// values by the nearest-rank rule (Rank). It returns 0 for an empty slice.
func NearestRank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[Rank(len(sorted), p)-1]
}

// Package stats holds the statistics every surface shows over samples: RTT
// statistics and the three labelled jitter figures. Its percentiles are the
// one nearest-rank percentile of package percentile. It is pure and depends
// on no other package of this module but percentile.
//
// Definitions (docs/definitions.md has them with their public sources):
//
//   - Percentiles are nearest-rank: the value of rank ceil(p/100·n) in the
//     ascending sort, computed in integers (percentile.Rank). Stdev is the sample
//     standard deviation (n−1).
//   - Jitter, each over the RTTs of received replies in send order; the first
//     sample never counts as a difference:
//     rfc3550:  J += (|D|−J)/16 over consecutive RTT differences D, in ms,
//     no integer scaling (mtr shows ≈16× this);
//     mean_abs: mean |RTT_n − RTT_n−1| (mtr's Javg, without its first-sample 0);
//     pdv_p95:  nearest-rank p95 of RTT − min RTT.
package stats

import (
	"math"
	"sort"

	"github.com/linecheck/linecheck/percentile"
)

// RTTStats are round-trip time statistics in milliseconds.
type RTTStats struct {
	Min   float64 `json:"min"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Stdev float64 `json:"stdev"`
}

// Jitter holds the three labelled jitter figures in milliseconds (see the package doc).
type Jitter struct {
	RFC3550 float64 `json:"rfc3550"`
	MeanAbs float64 `json:"mean_abs"`
	PDVP95  float64 `json:"pdv_p95"`
}

// Summarize computes RTT statistics and jitter for RTTs (ms) of received
// replies given in send order. With no samples every figure is 0.
func Summarize(rtts []float64) (RTTStats, Jitter) {
	var s RTTStats
	var j Jitter
	n := len(rtts)
	if n == 0 {
		return s, j
	}
	sorted := append([]float64(nil), rtts...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[n-1]
	// Welford for a numerically stable mean and sample variance.
	var mean, m2 float64
	for i, x := range rtts {
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	s.Avg = mean
	if n > 1 {
		s.Stdev = math.Sqrt(m2 / float64(n-1))
	}
	s.P50 = percentile.NearestRank(sorted, 50)
	s.P95 = percentile.NearestRank(sorted, 95)
	s.P99 = percentile.NearestRank(sorted, 99)

	var sumAbs float64
	for i := 1; i < n; i++ {
		d := math.Abs(rtts[i] - rtts[i-1])
		j.RFC3550 += (d - j.RFC3550) / 16
		sumAbs += d
	}
	if n > 1 {
		j.MeanAbs = sumAbs / float64(n-1)
	}
	pdv := make([]float64, n)
	for i, x := range sorted {
		pdv[i] = x - s.Min
	}
	j.PDVP95 = percentile.NearestRank(pdv, 95)
	return s, j
}

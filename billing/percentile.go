package billing

import (
	"fmt"

	"github.com/linecheck/linecheck/percentile"
)

// Method is a 95th-percentile method: the rank rule of one tool
// (definitions in the package doc).
type Method string

// The 95th-percentile methods.
const (
	NearestRank Method = "nearest-rank"
	LibreNMS    Method = "librenms"
	// LibreNMSLegacy is LibreNMS's rule before PR #18481 (one rank higher).
	LibreNMSLegacy Method = "librenms-legacy"
	VnStat         Method = "vnstat"
	RRDtool        Method = "rrdtool"
	Cacti          Method = "cacti"
	Linear         Method = "linear"
)

// Methods are the 95th-percentile methods, default first.
var Methods = []Method{NearestRank, LibreNMS, LibreNMSLegacy, VnStat, RRDtool, Cacti, Linear}

// ParseMethod returns the method named s, or an error naming the methods.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("95th-percentile method %q: use one of %s", s, joinNames(Methods))
}

// Rank returns the 1-based ascending rank the method bills among n samples,
// computed in integers and clamped into 1..n. For linear it returns the rank
// of the lower of the two interpolated samples. n < 1 gives 0.
func (method Method) Rank(n int) int {
	if n < 1 {
		return 0
	}
	m := 95 * n
	var r int
	switch method {
	case LibreNMS:
		// Since PR #18481: 0-based index round(n/100·95) − 2 over the
		// 5-minute buckets, clamped at 0 — one rank below the legacy rule.
		r = (m+50)/100 - 1
	case LibreNMSLegacy:
		r = (m + 50) / 100
	case VnStat:
		q, rem := m/100, m%100
		if rem > 50 || (rem == 50 && q%2 == 1) {
			q++
		}
		r = q
	case RRDtool:
		r = (95*(n-1)+50)/100 + 1
	case Cacti:
		r = m / 100
	case Linear:
		r = 95*(n-1)/100 + 1
	default: // nearest-rank, the rule of every other percentile too
		r = percentile.Rank(n, 95)
	}
	return min(max(r, 1), n)
}

// Percentile95 returns the method's 95th percentile of ascending values.
// It does not sort: pass sorted data. An empty slice gives 0.
func Percentile95(method Method, sorted []float64) float64 {
	return sortedSample{vals: sorted}.p95(method)
}

// sortedSample is an ascending sample with zeros extra zero values in front
// of vals (the missing slots under --gaps zero), without materialising them.
type sortedSample struct {
	vals  []float64
	zeros int
}

func (s sortedSample) n() int { return len(s.vals) + s.zeros }

// at returns the value of 1-based rank r.
func (s sortedSample) at(r int) float64 {
	if r <= s.zeros {
		return 0
	}
	return s.vals[r-s.zeros-1]
}

func (s sortedSample) p95(method Method) float64 { return p95At(method, s.n(), s.at) }

// p95At is the method's 95th percentile of n values, at(r) giving the value
// of 1-based rank r: at most ranks Rank(n) and the one after it are read.
func p95At(method Method, n int, at func(r int) float64) float64 {
	if n == 0 {
		return 0
	}
	r := method.Rank(n)
	if method != Linear {
		return at(r)
	}
	// Prometheus quantile.go: rank0 = q(n-1); lo = floor, hi = min(n-1, lo+1); w = rank0 - lo.
	num := 95 * (n - 1)
	w := float64(num%100) / 100
	lo := at(r)
	hi := at(min(r+1, n))
	return lo*(1-w) + hi*w
}

// max returns the largest value, or the nth largest (1 = largest).
func (s sortedSample) nthLargest(nth int) float64 {
	n := s.n()
	if n == 0 {
		return 0
	}
	return s.at(max(n-max(nth, 1)+1, 1))
}

func newSortedSample(vals []float64, zeros int) sortedSample {
	sortFloats(vals)
	return sortedSample{vals: vals, zeros: zeros}
}

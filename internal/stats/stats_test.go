package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarizeHandComputed(t *testing.T) {
	// RTTs 10, 12, 11, 15 ms. Differences 2, 1, 4.
	// rfc3550: J1 = 2/16 = 0.125; J2 = 0.125 + (1-0.125)/16 = 0.1796875;
	// J3 = 0.1796875 + (4-0.1796875)/16 = 0.418457031...
	s, j := Summarize([]float64{10, 12, 11, 15})
	if s.Min != 10 || s.Max != 15 || !near(s.Avg, 12) {
		t.Errorf("min/avg/max = %v/%v/%v", s.Min, s.Avg, s.Max)
	}
	// sample stdev: deviations -2,0,-1,3 → ss = 14, /3 → sqrt(4.6667)
	if !near(s.Stdev, math.Sqrt(14.0/3)) {
		t.Errorf("stdev = %v", s.Stdev)
	}
	if s.P50 != 11 || s.P95 != 15 || s.P99 != 15 {
		t.Errorf("p50/p95/p99 = %v/%v/%v", s.P50, s.P95, s.P99)
	}
	if !near(j.RFC3550, 0.1796875+(4-0.1796875)/16) {
		t.Errorf("rfc3550 = %v", j.RFC3550)
	}
	if !near(j.MeanAbs, 7.0/3) {
		t.Errorf("mean_abs = %v", j.MeanAbs)
	}
	if j.PDVP95 != 5 {
		t.Errorf("pdv_p95 = %v", j.PDVP95)
	}
}

func TestJitterConstantStepIsRFCValue(t *testing.T) {
	// A constant 1 ms alternation converges to J = 1 ms (mtr would show ≈16).
	r := make([]float64, 2000)
	for i := range r {
		r[i] = 10 + float64(i%2)
	}
	_, j := Summarize(r)
	if math.Abs(j.RFC3550-1) > 1e-6 {
		t.Errorf("rfc3550 = %v, want 1", j.RFC3550)
	}
	if _, j1 := Summarize([]float64{777}); j1.RFC3550 != 0 || j1.MeanAbs != 0 {
		t.Errorf("a single sample has no jitter: %+v", j1)
	}
}

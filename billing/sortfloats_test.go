package billing

import (
	"math"
	"slices"
	"testing"
)

// sortFloats must order exactly as slices.Sort: random rates, heavy ties,
// zeros, negatives, huge and tiny magnitudes, short and long inputs, NaN.
func TestSortFloatsEqualsSlicesSort(t *testing.T) {
	x := uint64(12345)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	gens := map[string]func(int) float64{
		"rates":     func(int) float64 { return float64(next()%1e9) * 8 / 300 },
		"ties":      func(int) float64 { return float64(next() % 7) },
		"signed":    func(int) float64 { return (float64(next()%2e6) - 1e6) / 3 },
		"magnitude": func(int) float64 { return math.Ldexp(float64(next()%1000), int(next()%200)-100) },
		"ascending": func(i int) float64 { return float64(i) },
		"desc":      func(i int) float64 { return -float64(i) * 1.5 },
	}
	for name, g := range gens {
		for _, n := range []int{0, 1, 511, 512, 8928, 20000} {
			v := make([]float64, n)
			for i := range v {
				v[i] = g(i)
			}
			want := slices.Clone(v)
			slices.Sort(want)
			sortFloats(v)
			if !slices.Equal(v, want) {
				t.Fatalf("%s n=%d: differs from slices.Sort", name, n)
			}
		}
	}
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(1000 - i)
	}
	v[500] = math.NaN()
	sortFloats(v)
	if !math.IsNaN(v[0]) || !slices.IsSorted(v[1:]) {
		t.Errorf("with a NaN: not as slices.Sort")
	}
}

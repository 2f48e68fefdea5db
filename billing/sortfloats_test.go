package billing

import (
	"math"
	"slices"
	"testing"
	"time"
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

// rankFloats must give exactly the values sortFloats leaves at k and k+1.
func TestRankFloatsEqualsSortFloats(t *testing.T) {
	x := uint64(987654321)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	gens := map[string]func(int) float64{
		"rates":     func(int) float64 { return float64(next()%1e9) * 8 / 300 },
		"ties":      func(int) float64 { return float64(next() % 3) },
		"zeros":     func(i int) float64 { return [2]float64{0, math.Copysign(0, -1)}[next()%2] },
		"signed":    func(int) float64 { return (float64(next()%2e6) - 1e6) / 3 },
		"magnitude": func(int) float64 { return math.Ldexp(float64(next()%1000), int(next()%200)-100) },
		"ascending": func(i int) float64 { return float64(i) },
		"desc":      func(i int) float64 { return -float64(i) * 1.5 },
		"same":      func(int) float64 { return 42 },
	}
	for name, g := range gens {
		for _, n := range []int{1, 2, 511, 512, 513, 8928, 20000} {
			v := make([]float64, n)
			for i := range v {
				v[i] = g(i)
			}
			sorted := slices.Clone(v)
			sortFloats(sorted)
			for _, k := range []int{0, 1, n / 2, n * 95 / 100, n - 2, n - 1} {
				if k < 0 || k >= n {
					continue
				}
				a, b := rankFloats(slices.Clone(v), k)
				wa, wb := sorted[k], sorted[min(k+1, n-1)]
				if math.Float64bits(a) != math.Float64bits(wa) || math.Float64bits(b) != math.Float64bits(wb) {
					t.Fatalf("%s n=%d k=%d: got %v %v, sorted %v %v", name, n, k, a, b, wa, wb)
				}
			}
		}
	}
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(1000 - i)
	}
	v[500] = math.NaN()
	if a, _ := rankFloats(v, 0); !math.IsNaN(a) {
		t.Errorf("with a NaN: rank 0 is %v, want NaN as slices.Sort puts it first", a)
	}
}

// The report's 95th block by selection equals the sorted sample's for every
// method and direction rule, including samples where the --gaps zero zeros
// reach past the rank, and tiny and empty-ish samples.
func TestP95RankedEqualsSorted(t *testing.T) {
	p := MonthPeriod(2026, time.July, time.UTC)
	x := uint64(4242)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for _, keep := range []int{1, 2, 3, 20, 400, 440, 460, 600, 5000, 8928} {
		s := &Series{Name: "t", Step: SlotSeconds}
		start := p.Start.Unix()
		for i := range 8928 {
			if int(next()%8928) < keep {
				s.Slots = append(s.Slots, Slot{Start: start + int64(i)*SlotSeconds, In: float64(next() % 1e9), Out: float64(next() % 1e8)})
			}
		}
		if len(s.Slots) == 0 {
			continue
		}
		for _, gaps := range []string{"skip", "zero"} {
			for _, m := range Methods {
				for _, d := range []Direction{DirIn, DirOut, DirGreater, DirMax, DirSum} {
					got := newView(s, p, BoundaryStart, gaps, 1).p95Ranked(m, d)
					want := newView(s, p, BoundaryStart, gaps, 1).p95(m, d, false)
					if got.bps != want.bps || got.n != want.n || got.rank != want.rank {
						t.Fatalf("%d slots, gaps %s, %s, %s: selected %+v, sorted %+v", len(s.Slots), gaps, m, d, got, want)
					}
				}
			}
		}
	}
}

// rankFloats' sampled pivot: whatever the sample says, the values equal the
// sort's, also when the sample misleads (the top of the sample far above the
// rank: a sorted run, a block of huge values sampled more than its share,
// ties at the pivot), with -0/+0 and a NaN past the sample points.
func TestRankFloatsSampledPivot(t *testing.T) {
	x := uint64(77)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	n := 8928
	gens := map[string]func(int) float64{
		"sampled-high": func(i int) float64 { // every sample point huge, the rest small
			if i%(n/128) == 0 {
				return 1e12 + float64(i)
			}
			return float64(next() % 1000)
		},
		"sampled-low": func(i int) float64 {
			if i%(n/128) == 0 {
				return 0
			}
			return float64(next() % 1e6)
		},
		"ties":   func(int) float64 { return float64(next() % 4) },
		"zeros":  func(i int) float64 { return [3]float64{0, math.Copysign(0, -1), 1}[next()%3] },
		"sorted": func(i int) float64 { return float64(i) },
		"rev":    func(i int) float64 { return float64(n - i) },
	}
	for name, g := range gens {
		v := make([]float64, n)
		for i := range v {
			v[i] = g(i)
		}
		sorted := slices.Clone(v)
		sortFloats(sorted)
		for _, k := range []int{n / 2, n*95/100 - 1, n * 95 / 100, n * 99 / 100, n - 2, n - 1} {
			a, b := rankFloats(slices.Clone(v), k)
			wa, wb := sorted[k], sorted[min(k+1, n-1)]
			if math.Float64bits(a) != math.Float64bits(wa) || math.Float64bits(b) != math.Float64bits(wb) {
				t.Fatalf("%s k=%d: got %v %v, sorted %v %v", name, k, a, b, wa, wb)
			}
		}
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	v[n/128+1] = math.NaN() // not a sample point: 70 is missing, the NaN sorts first
	if a, b := rankFloats(v, n*95/100); a != float64(n*95/100) || b != a+1 {
		t.Errorf("with a NaN: ranks %d, %d are %v, %v; want %d, %d", n*95/100, n*95/100+1, a, b, n*95/100, n*95/100+1)
	}
}

// The 95th block picks its ranks among the bytes per slot and converts only
// the picked ones to bit/s: equal to the sorted rates also for neighbouring
// byte counts (one ulp apart, which the division may merge) and huge ones.
func TestP95RankedOnBytesEqualsSortedRates(t *testing.T) {
	p := MonthPeriod(2026, time.July, time.UTC)
	x := uint64(99)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	start := p.Start.Unix()
	for _, base := range []float64{1e9, 3e15, 1e300} {
		s := &Series{Name: "t", Step: SlotSeconds}
		for i := range 8928 {
			in := math.Nextafter(base, math.Inf(1))
			for range next() % 6 {
				in = math.Nextafter(in, math.Inf(1))
			}
			s.Slots = append(s.Slots, Slot{Start: start + int64(i)*SlotSeconds, In: in, Out: float64(next()%1e6) + base/3})
		}
		for _, m := range Methods {
			for _, d := range []Direction{DirIn, DirOut, DirGreater, DirMax, DirSum} {
				got := newView(s, p, BoundaryStart, "skip", 1).p95Ranked(m, d)
				want := newView(s, p, BoundaryStart, "skip", 1).p95(m, d, false)
				if math.Float64bits(got.bps) != math.Float64bits(want.bps) || got.n != want.n || got.rank != want.rank {
					t.Fatalf("base %g, %s, %s: selected %+v, sorted %+v", base, m, d, got, want)
				}
			}
		}
	}
}

// The four parts ranked in one pass (rankParts, as BillSeries does before
// the 95th block) equal the sorted samples for every method and direction
// rule, --gaps policy, and sample size (including those it leaves to
// p95Ranked: short samples, the zeros past the rank).
func TestRankPartsEqualsSorted(t *testing.T) {
	p := MonthPeriod(2026, time.July, time.UTC)
	x := uint64(5151)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	gens := map[string]func() (float64, float64){
		"random": func() (float64, float64) { return float64(next() % 1e9), float64(next() % 1e8) },
		"ties":   func() (float64, float64) { return float64(next() % 3), float64(next() % 2) },
		"ulps": func() (float64, float64) {
			v := 3e15
			for range next() % 4 {
				v = math.Nextafter(v, math.Inf(1))
			}
			return v, 3e15 - float64(next()%3)
		},
	}
	for name, g := range gens {
		for _, keep := range []int{3, 400, 600, 5000, 8928} {
			s := &Series{Name: "t", Step: SlotSeconds}
			start := p.Start.Unix()
			for i := range 8928 {
				if int(next()%8928) < keep {
					in, out := g()
					s.Slots = append(s.Slots, Slot{Start: start + int64(i)*SlotSeconds, In: in, Out: out})
				}
			}
			for _, gaps := range []string{"skip", "zero"} {
				for _, m := range Methods {
					v := newView(s, p, BoundaryStart, gaps, 1)
					v.rankParts(m)
					for _, d := range []Direction{DirIn, DirOut, DirGreater, DirMax, DirSum} {
						got := v.p95Ranked(m, d)
						want := newView(s, p, BoundaryStart, gaps, 1).p95(m, d, false)
						if math.Float64bits(got.bps) != math.Float64bits(want.bps) || got.n != want.n || got.rank != want.rank {
							t.Fatalf("%s, %d slots, gaps %s, %s, %s: %+v, sorted %+v", name, len(s.Slots), gaps, m, d, got, want)
						}
					}
				}
			}
		}
	}
}

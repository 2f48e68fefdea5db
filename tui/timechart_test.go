package tui

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestTimeChartMatchesNtcharts checks the chart drawn on the UI's own
// canvas against ntcharts' drawing of the same data, in colour and
// monochrome, over random charts: every size from the narrowest drawn to
// 300×80, spans from seconds to months, tops of every magnitude, one to
// three series with gaps, values over the top and points outside the
// range, series drawn as marks, and levels.
func TestTimeChartMatchesNtcharts(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 4))
	styles := []Styles{NewStyles(true), NewStyles(false)}
	layouts := []string{"15:04:05", "01/02", "15:04"}
	charts := 800
	if testing.Short() {
		charts = 200
	}
	for n := 0; n < charts; n++ {
		st := &styles[n%2]
		w, h := 20+rng.IntN(281), 4+rng.IntN(77)
		t0 := FixtureStart().Add(time.Duration(rng.IntN(86400)) * time.Second).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
		span := time.Duration(1+rng.IntN([]int{60, 3600, 31 * 86400}[rng.IntN(3)])) * time.Second
		if rng.IntN(4) == 0 {
			span += time.Duration(rng.IntN(1000)) * time.Millisecond
		}
		t1 := t0.Add(span)
		ymax := niceMax(math.Pow(10, rng.Float64()*6-2))
		var ss []series
		for k := 0; k < 1+rng.IntN(3); k++ {
			s := series{name: string(rune('a' + k)), style: st.ChartOut}
			if k == 1 {
				s.style = st.ChartIn
			}
			if st.Mono && k > 0 && rng.IntN(2) == 0 {
				s.mark = '•'
			}
			npts := rng.IntN(400)
			if rng.IntN(10) == 0 {
				npts = 0
			}
			for i := 0; i < npts; i++ {
				at := t0.Add(time.Duration(rng.Float64() * float64(span)))
				if i > 0 {
					at = s.t[i-1].Add(time.Duration(rng.Float64() * float64(span) / float64(npts) * 2))
				}
				if rng.IntN(50) == 0 {
					at = t0.Add(-time.Duration(rng.IntN(100)) * time.Second) // before the range
				}
				v := rng.Float64() * ymax * 1.2
				if rng.IntN(15) == 0 {
					v = math.NaN()
				}
				s.t, s.v = append(s.t, at), append(s.v, v)
			}
			ss = append(ss, s)
		}
		var levels []hline
		for k := 0; k < rng.IntN(4); k++ {
			levels = append(levels, hline{v: rng.Float64() * ymax * 1.1, r: []rune{'─', '═', '╌', '┄'}[k], style: st.Level})
		}
		xfmt := timeLabels(layouts[rng.IntN(len(layouts))])
		got := renderTimeChart(w, h, t0, t1, ymax, ss, levels, xfmt, st)
		want := renderTimeChartNtcharts(w, h, t0, t1, ymax, ss, levels, xfmt, st)
		if got != want {
			t.Fatalf("chart %d (%d×%d, %v from %v, top %g, %d series, %d levels, mono %v) differs:\n got:\n%s\nwant:\n%s",
				n, w, h, span, t0, ymax, len(ss), len(levels), st.Mono, ansiStrip(got), ansiStrip(want))
		}
	}
}

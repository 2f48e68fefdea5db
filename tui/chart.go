package tui

import (
	"image/color"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/linechart"
	tslc "github.com/NimbleMarkets/ntcharts/v2/linechart/timeserieslinechart"
)

// renderSparkline draws the newest w samples of h as one row of bars
// (▁ to █ in eighths, as ntcharts' one-row sparkline draws them); a lost
// probe is drawn as ×. The bars are scaled from a little under the window's
// minimum to its maximum, so the few milliseconds of variation that matter
// are visible. It writes the runes itself: through an ntcharts canvas (a
// lipgloss.Style per cell) the 50 rows of a 200-column overview took most
// of a frame whenever new samples arrived.
func renderSparkline(h *Ring, w int) string {
	if h == nil || h.Len() == 0 || w <= 0 {
		return ""
	}
	vals, base, hi, ok := sparkRange(h, w)
	if !ok {
		return strings.Repeat("×", len(vals))
	}
	scale := 1 / (hi - base) // one row: a bar of height 1 is the top
	var b strings.Builder
	b.Grow(3 * len(vals))
	for _, v := range vals {
		if math.IsNaN(v) {
			b.WriteRune('×')
			continue
		}
		b.WriteRune(sparkBar(math.Max(v-base, 0) * scale))
	}
	return b.String()
}

// sparkRange returns the newest w samples of h and the range the sparkline
// scales them over: from a little under the window's minimum (base) to its
// maximum (hi); ok is false when every sample is a lost probe (NaN).
func sparkRange(h *Ring, w int) (vals []float64, base, hi float64, ok bool) {
	vals = h.Last(w, make([]float64, 0, w))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return vals, 0, 0, false
	}
	return vals, lo - math.Max((hi-lo)/4, 0.05*hi+0.001), hi, true
}

// sparkBars are the lower block elements, 0 to 8 eighths of a cell.
var sparkBars = [9]rune{' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// sparkBar is the bar of a value scaled to the row (1 = full): whole rows
// are full blocks, the fraction goes to the nearest eighth, a remainder of
// a sixteenth or more rounding up.
func sparkBar(s float64) rune {
	if s <= 0 {
		return ' '
	}
	if s >= 1 {
		return sparkBars[8]
	}
	e := int(s / .125)
	if s-float64(e)*.125 >= 0.0625 {
		e++
	}
	return sparkBars[e]
}

// canvasView renders an ntcharts canvas like its View, but styles runs of
// cells that share a foreground colour at once instead of every cell on its
// own (which is most of a frame's time: ntcharts renders each cell through
// lipgloss). With styled false it returns the runes alone.
func canvasView(cv *canvas.Model, styled bool) string {
	var b, run strings.Builder
	var runFg color.Color
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if _, none := runFg.(lipgloss.NoColor); !styled || runFg == nil || none {
			b.WriteString(run.String())
		} else {
			b.WriteString(lipgloss.NewStyle().Foreground(runFg).Render(run.String()))
		}
		run.Reset()
	}
	for y := 0; y < cv.Height(); y++ {
		if y > 0 {
			b.WriteByte('\n')
		}
		for x := 0; x < cv.Width(); x++ {
			cell := cv.Cell(canvas.Point{X: x, Y: y})
			fg := cell.Style.GetForeground()
			if fg != runFg {
				flush()
				runFg = fg
			}
			if cell.Rune == 0 {
				run.WriteByte(' ')
			} else {
				run.WriteRune(cell.Rune)
			}
		}
		flush()
	}
	return b.String()
}

// series is one named line of a time chart.
type series struct {
	name  string
	style lipgloss.Style
	t     []time.Time
	v     []float64 // NaN = gap (not drawn)
	// mark, when set, draws the series as this rune per column over the
	// braille lines instead of as braille: without colour two braille
	// lines would merge into one.
	mark rune
}

// hline is a horizontal level across a chart, drawn with its own rune so it
// reads without colour.
type hline struct {
	v     float64
	r     rune
	style lipgloss.Style
	// label writes the level's own value as the Y label of its row: a
	// row spans ymax/rows of values, and its axis label (the top of a
	// neighbouring row's span) could read 600 beside a 95th of 390.8.
	label bool
}

// renderTimeChartNtcharts draws series against time on a w×h braille chart
// (ntcharts' time-series line chart) over the explicit range [t0, t1] and
// [0, ymax], then the horizontal levels over them. renderTimeChart draws the
// same chart on a canvas of its own; this one draws the charts whose range
// lies within one second (ntcharts then keeps a range of its own) and is
// the oracle of TestTimeChartMatchesNtcharts.
func renderTimeChartNtcharts(w, h int, t0, t1 time.Time, ymax float64, ss []series, levels []hline, xfmt linechart.LabelFormatter, st *Styles) string {
	if w < 20 || h < 4 || !t1.After(t0) || ymax <= 0 {
		return ""
	}
	c := tslc.New(w, h,
		tslc.WithTimeRange(t0, t1),
		tslc.WithYRange(0, ymax),
		tslc.WithXYSteps(14, 2),
		tslc.WithXLabelFormatter(xfmt),
		tslc.WithYLabelFormatter(func(_ int, v float64) string { return yLabel(ymax, v) }),
		tslc.WithAxesStyles(st.Axis, st.Axis),
	)
	c.AutoMinX, c.AutoMaxX, c.AutoMinY, c.AutoMaxY = false, false, false, false
	var names []string
	var marked []series
	for _, s := range ss {
		if s.mark != 0 {
			marked = append(marked, s)
			continue
		}
		c.SetDataSetStyle(s.name, s.style)
		for i := range s.t {
			if math.IsNaN(s.v[i]) {
				continue
			}
			c.PushDataSet(s.name, tslc.TimePoint{Time: s.t[i], Value: math.Min(s.v[i], ymax)})
		}
		names = append(names, s.name)
	}
	c.DrawBrailleDataSets(names)
	if len(names) == 0 {
		c.DrawXYAxisAndLabel()
	}
	origin, gh := c.Origin(), c.GraphHeight()
	gw := c.Canvas.Width() - origin.X - 1
	span := t1.Sub(t0).Seconds()
	for _, s := range marked {
		for i := range s.t {
			v := s.v[i]
			if math.IsNaN(v) || gw <= 0 {
				continue
			}
			x := origin.X + 1 + int(s.t[i].Sub(t0).Seconds()/span*float64(gw))
			dot := int(math.Round(math.Min(v, ymax) / ymax * float64(gh*4-1)))
			y := origin.Y - 1 - min(dot/4, gh-1)
			if x <= origin.X || x >= c.Canvas.Width() || y < 0 || y >= origin.Y {
				continue
			}
			c.Canvas.SetCell(canvas.Point{X: x, Y: y}, canvas.NewCellWithStyle(s.mark, s.style))
		}
	}
	for _, l := range levels {
		if l.v <= 0 || l.v > ymax {
			continue
		}
		// The same row the braille grid puts the value in (ntcharts'
		// Y labels sit half a row lower).
		dot := int(math.Round(l.v / ymax * float64(gh*4-1)))
		j := min(dot/4, gh-1)
		y := origin.Y - 1 - j
		if y < 0 || y >= origin.Y {
			continue
		}
		for x := origin.X + 1; x < c.Canvas.Width(); x++ {
			// Drawn over the data, as a threshold line: what crosses it is
			// what the bill is about.
			c.Canvas.SetCell(canvas.Point{X: x, Y: y}, canvas.NewCellWithStyle(l.r, l.style))
		}
	}
	return canvasView(&c.Canvas, true)
}

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, f := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if f*p >= v {
			return f * p
		}
	}
	return 10 * p
}

// timeLabels formats chart X labels in UTC.
func timeLabels(layout string) linechart.LabelFormatter {
	return func(_ int, v float64) string {
		return time.Unix(int64(v), 0).UTC().Format(layout)
	}
}

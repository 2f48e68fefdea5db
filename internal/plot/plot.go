// Package plot draws the few charts linecheck needs — a time series with
// horizontal reference lines (traffic with its 95th and commit lines, as MRTG
// and Cacti users expect), bars (cost breakdowns) and histograms (RTT
// distributions) — as SVG or PNG.
//
// It is hand-written on purpose: gonum/plot would pull fonts, PDF and LaTeX
// code into every build of the CLI, and these charts need only lines,
// rectangles and labels. Every chart is laid out once as a list of primitives
// in pixel coordinates; SVG and PNG are two renderers of that list.
package plot

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Palette is the colour cycle for series (hex RGB).
var Palette = []string{"#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// Line is one series of a TimeSeries.
type Line struct {
	Name  string
	X     []time.Time
	Y     []float64
	Color string // "" = from Palette
	Fill  bool   // fill the area under the line (MRTG's inbound style)
}

// HLine is a horizontal reference line (a 95th percentile, a commit).
type HLine struct {
	Label string
	Y     float64
	Color string // "" = from Palette, after the series colours
	Dash  bool
}

// TimeSeries is a chart of values over time.
type TimeSeries struct {
	Title  string
	YLabel string
	Series []Line
	HLines []HLine
	// Loc is the time zone of the axis labels (nil = the zone of the first X).
	Loc *time.Location
}

// BarSeries is one named set of values, one per category.
type BarSeries struct {
	Name   string
	Values []float64
	Color  string
}

// Bars is a bar chart over categories; several series are stacked when
// Stacked, else drawn side by side.
type Bars struct {
	Title      string
	YLabel     string
	Categories []string
	Series     []BarSeries
	Stacked    bool
}

// HistSeries is one sample whose distribution is drawn.
type HistSeries struct {
	Name   string
	Values []float64
	Color  string
}

// Histogram draws the distribution of each series over shared bins, as
// outlines so that several series stay readable on top of each other.
type Histogram struct {
	Title  string
	XLabel string
	Series []HistSeries
	Bins   int // default 30
}

// SVG renders the chart as a standalone SVG document.
func (t TimeSeries) SVG(w, h int) string { return svg(t.layout(w, h)) }

// PNG renders the chart as a PNG image.
func (t TimeSeries) PNG(w, h int) ([]byte, error) { return pngOf(t.layout(w, h)) }

// SVG renders the chart as a standalone SVG document.
func (b Bars) SVG(w, h int) string { return svg(b.layout(w, h)) }

// PNG renders the chart as a PNG image.
func (b Bars) PNG(w, h int) ([]byte, error) { return pngOf(b.layout(w, h)) }

// SVG renders the chart as a standalone SVG document.
func (hs Histogram) SVG(w, h int) string { return svg(hs.layout(w, h)) }

// PNG renders the chart as a PNG image.
func (hs Histogram) PNG(w, h int) ([]byte, error) { return pngOf(hs.layout(w, h)) }

// ---- primitives -------------------------------------------------------------

type pt struct{ x, y float64 }

type prim struct {
	kind   byte // 'l' polyline, 'r' rect, 't' text
	pts    []pt
	color  string
	width  float64
	dash   bool
	fill   bool    // polyline: close to the baseline and fill
	base   float64 // fill baseline y
	x, y   float64 // rect origin / text anchor
	w, h   float64 // rect size
	text   string
	anchor byte // 'l', 'm', 'r'
	size   float64
	bold   bool
	vert   bool // text rotated −90°
	title  string
}

type canvas struct {
	w, h  int
	title string
	prims []prim
}

func (c *canvas) line(color string, width float64, dash bool, pts ...pt) {
	c.prims = append(c.prims, prim{kind: 'l', pts: pts, color: color, width: width, dash: dash})
}

func (c *canvas) area(color string, base float64, pts []pt) {
	c.prims = append(c.prims, prim{kind: 'l', pts: pts, color: color, width: 1, fill: true, base: base})
}

func (c *canvas) rect(x, y, w, h float64, color, title string) {
	c.prims = append(c.prims, prim{kind: 'r', x: x, y: y, w: w, h: h, color: color, title: title})
}

func (c *canvas) text(x, y float64, s string, anchor byte, size float64, color string) {
	c.prims = append(c.prims, prim{kind: 't', x: x, y: y, text: s, anchor: anchor, size: size, color: color})
}

// frame is the plotting area inside the margins and the data ranges it maps.
type frame struct {
	left, top, right, bottom float64
	x0, x1, y0, y1           float64
}

func (f frame) px(x float64) float64 {
	if f.x1 == f.x0 {
		return f.left
	}
	return f.left + (x-f.x0)/(f.x1-f.x0)*(f.right-f.left)
}

func (f frame) py(y float64) float64 {
	if f.y1 == f.y0 {
		return f.bottom
	}
	return f.bottom - (y-f.y0)/(f.y1-f.y0)*(f.bottom-f.top)
}

const (
	axisColor = "#444444"
	gridColor = "#e0e0e0"
	textColor = "#222222"
	fontSize  = 12
)

// niceStep returns a 1-2-5 step giving about n intervals over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// fmtNum renders an axis value compactly (1.5k, 2M).
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimZero(v/1e9) + "G"
	case a >= 1e6:
		return trimZero(v/1e6) + "M"
	case a >= 1e4:
		return trimZero(v/1e3) + "k"
	}
	return trimZero(v)
}

func trimZero(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// yAxis draws horizontal grid lines and labels for [f.y0, f.y1].
func (c *canvas) yAxis(f frame, label string) {
	step := niceStep(f.y1-f.y0, 6)
	for v := math.Ceil(f.y0/step) * step; v <= f.y1+step*1e-9; v += step {
		y := f.py(v)
		c.line(gridColor, 1, false, pt{f.left, y}, pt{f.right, y})
		c.text(f.left-6, y+4, fmtNum(v), 'r', fontSize, textColor)
	}
	c.line(axisColor, 1, false, pt{f.left, f.top}, pt{f.left, f.bottom}, pt{f.right, f.bottom})
	if label != "" {
		c.prims = append(c.prims, prim{kind: 't', x: 14, y: (f.top + f.bottom) / 2, text: label, anchor: 'm', size: fontSize, color: textColor, vert: true})
	}
}

func (c *canvas) titleText(s string) {
	if s != "" {
		c.title = s
		c.prims = append(c.prims, prim{kind: 't', x: float64(c.w) / 2, y: 20, text: s, anchor: 'm', size: 14, color: textColor, bold: true})
	}
}

// legend draws colour keys in a row under the plot.
func (c *canvas) legend(y float64, x0 float64, names, colors []string, dashed []bool) {
	x := x0
	for i, n := range names {
		if n == "" {
			continue
		}
		w := float64(len([]rune(n)))*7 + 34
		if x+w > float64(c.w)-10 && x > x0 {
			x = x0
			y += 16
		}
		c.line(colors[i], 2.5, dashed != nil && dashed[i], pt{x, y - 4}, pt{x + 20, y - 4})
		c.text(x+25, y, n, 'l', fontSize, textColor)
		x += w
	}
}

func colorAt(i int, c string) string {
	if c != "" {
		return c
	}
	return Palette[i%len(Palette)]
}

// ---- time series -----------------------------------------------------------

func (t TimeSeries) layout(w, h int) *canvas {
	c := &canvas{w: w, h: h}
	c.titleText(t.Title)
	rows := 1 + (len(t.Series)+len(t.HLines))/4
	f := frame{left: 64, top: 34, right: float64(w) - 16, bottom: float64(h) - 40 - 16*float64(rows)}
	var tmin, tmax time.Time
	ymax := 0.0
	loc := t.Loc
	for _, s := range t.Series {
		for i, x := range s.X {
			if tmin.IsZero() || x.Before(tmin) {
				tmin = x
			}
			if x.After(tmax) {
				tmax = x
			}
			if i < len(s.Y) && !math.IsNaN(s.Y[i]) && s.Y[i] > ymax {
				ymax = s.Y[i]
			}
		}
		if loc == nil && len(s.X) > 0 {
			loc = s.X[0].Location()
		}
	}
	for _, hl := range t.HLines {
		ymax = max(ymax, hl.Y)
	}
	if loc == nil {
		loc = time.UTC
	}
	if ymax <= 0 {
		ymax = 1
	}
	step := niceStep(ymax*1.05, 6)
	f.x0, f.x1 = float64(tmin.Unix()), float64(tmax.Unix())
	f.y0, f.y1 = 0, math.Ceil(ymax*1.05/step)*step
	c.yAxis(f, t.YLabel)
	c.timeTicks(f, loc)
	var names, colors []string
	var dashed []bool
	for i, s := range t.Series {
		col := colorAt(i, s.Color)
		for _, r := range runs(s.X) {
			pts := decimate(f, s.X[r[0]:r[1]], s.Y[r[0]:min(r[1], len(s.Y))])
			if s.Fill && len(pts) > 1 {
				c.area(col, f.bottom, pts)
			} else {
				c.line(col, 1.2, false, pts...)
			}
		}
		names, colors, dashed = append(names, s.Name), append(colors, col), append(dashed, false)
	}
	var placed []pt // label anchors so far: x = side (0 right, 1 left), y
	free := func(side, y float64) bool {
		for _, q := range placed {
			if q.x == side && math.Abs(q.y-y) < 13 {
				return false
			}
		}
		return true
	}
	for i, hl := range t.HLines {
		col := colorAt(len(t.Series)+i, hl.Color)
		y := f.py(hl.Y)
		c.line(col, 1.5, hl.Dash, pt{f.left, y}, pt{f.right, y})
		// Labels sit just above their line, right side first, then left, then
		// pushed down until they no longer overlap an earlier label.
		ly, side := y-4, 0.0
		for k := 0; k < 20 && !free(side, ly); k++ {
			if free(1, ly) {
				side = 1
				break
			}
			ly += 13
		}
		placed = append(placed, pt{side, ly})
		if side == 0 {
			c.text(f.right-4, ly, hl.Label, 'r', 11, col)
		} else {
			c.text(f.left+4, ly, hl.Label, 'l', 11, col)
		}
		names, colors, dashed = append(names, hl.Label), append(colors, col), append(dashed, hl.Dash)
	}
	c.legend(f.bottom+40, f.left, names, colors, dashed)
	return c
}

// runs splits a series at gaps (a spacing above 1.5 × the smallest one), so
// that missing samples show as breaks in the line, not as straight bridges.
func runs(xs []time.Time) [][2]int {
	step := time.Duration(math.MaxInt64)
	for i := 1; i < len(xs); i++ {
		if d := xs[i].Sub(xs[i-1]); d > 0 && d < step {
			step = d
		}
	}
	var out [][2]int
	start := 0
	for i := 1; i < len(xs); i++ {
		if xs[i].Sub(xs[i-1]) > step+step/2 {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	if len(xs) > 0 {
		out = append(out, [2]int{start, len(xs)})
	}
	return out
}

// decimate maps points to pixels, keeping the min and max of each pixel
// column so that one-slot bursts stay visible on a month-wide chart.
func decimate(f frame, xs []time.Time, ys []float64) []pt {
	n := min(len(xs), len(ys))
	width := int(f.right - f.left)
	if n <= 2*width || width <= 0 {
		out := make([]pt, 0, n)
		for i := 0; i < n; i++ {
			out = append(out, pt{f.px(float64(xs[i].Unix())), f.py(ys[i])})
		}
		return out
	}
	out := make([]pt, 0, 4*width)
	col := -1
	var lo, hi pt
	flush := func() {
		if col < 0 {
			return
		}
		if lo.x <= hi.x {
			out = append(out, lo, hi)
		} else {
			out = append(out, hi, lo)
		}
	}
	for i := 0; i < n; i++ {
		p := pt{f.px(float64(xs[i].Unix())), f.py(ys[i])}
		c := int(p.x)
		if c != col {
			flush()
			col, lo, hi = c, p, p
			continue
		}
		if p.y > lo.y { // pixel y grows downwards: larger y = lower value
			lo = p
		}
		if p.y < hi.y {
			hi = p
		}
	}
	flush()
	return out
}

// timeTicks draws vertical grid lines at a round interval and their labels.
func (c *canvas) timeTicks(f frame, loc *time.Location) {
	span := f.x1 - f.x0
	steps := []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour}
	step := steps[len(steps)-1]
	maxTicks := max(int((f.right-f.left)/70), 2)
	for _, s := range steps {
		if span/s.Seconds() <= float64(maxTicks) {
			step = s
			break
		}
	}
	layout := "15:04"
	if step >= 24*time.Hour {
		layout = "Jan 2"
	}
	t0 := time.Unix(int64(f.x0), 0).In(loc)
	var t time.Time
	if step >= 24*time.Hour {
		t = time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 0, 0, 0, loc)
	} else {
		t = t0.Truncate(step)
	}
	for ; float64(t.Unix()) <= f.x1; t = advance(t, step) {
		if float64(t.Unix()) < f.x0 {
			continue
		}
		x := f.px(float64(t.Unix()))
		c.line(gridColor, 1, false, pt{x, f.top}, pt{x, f.bottom})
		c.text(x, f.bottom+16, t.Format(layout), 'm', fontSize, textColor)
	}
}

// advance steps in calendar days for day-sized steps, so that DST days keep ticks at midnight.
func advance(t time.Time, step time.Duration) time.Time {
	if step >= 24*time.Hour {
		return t.AddDate(0, 0, int(step/(24*time.Hour)))
	}
	return t.Add(step)
}

// ---- bars --------------------------------------------------------------------

func (b Bars) layout(w, h int) *canvas {
	c := &canvas{w: w, h: h}
	c.titleText(b.Title)
	rows := 1 + len(b.Series)/5
	f := frame{left: 70, top: 34, right: float64(w) - 16, bottom: float64(h) - 44 - 16*float64(rows)}
	n := len(b.Categories)
	ymax := 0.0
	for i := 0; i < n; i++ {
		sum := 0.0
		for _, s := range b.Series {
			if i < len(s.Values) {
				if b.Stacked {
					sum += max(s.Values[i], 0)
				} else {
					ymax = max(ymax, s.Values[i])
				}
			}
		}
		ymax = max(ymax, sum)
	}
	if ymax <= 0 {
		ymax = 1
	}
	step := niceStep(ymax*1.05, 6)
	f.y0, f.y1 = 0, math.Ceil(ymax*1.05/step)*step
	c.yAxis(f, b.YLabel)
	if n == 0 {
		return c
	}
	slot := (f.right - f.left) / float64(n)
	bw := slot * 0.7
	for i, cat := range b.Categories {
		x := f.left + slot*float64(i) + (slot-bw)/2
		acc := 0.0
		for j, s := range b.Series {
			if i >= len(s.Values) {
				continue
			}
			v := s.Values[i]
			col := colorAt(j, s.Color)
			tip := fmt.Sprintf("%s %s: %s", cat, s.Name, trimZero(v))
			if b.Stacked {
				v = max(v, 0)
				y1, y2 := f.py(acc+v), f.py(acc)
				c.rect(x, y1, bw, y2-y1, col, tip)
				acc += v
			} else {
				sw := bw / float64(len(b.Series))
				y := f.py(v)
				c.rect(x+sw*float64(j), y, sw, f.bottom-y, col, tip)
			}
		}
		c.text(x+bw/2, f.bottom+16, cat, 'm', fontSize, textColor)
	}
	var names, colors []string
	for j, s := range b.Series {
		names, colors = append(names, s.Name), append(colors, colorAt(j, s.Color))
	}
	if len(b.Series) > 1 || (len(b.Series) == 1 && b.Series[0].Name != "") {
		c.legend(f.bottom+38, f.left, names, colors, nil)
	}
	return c
}

// ---- histogram -------------------------------------------------------------

func (hs Histogram) layout(w, h int) *canvas {
	c := &canvas{w: w, h: h}
	c.titleText(hs.Title)
	rows := 1 + len(hs.Series)/5
	f := frame{left: 64, top: 34, right: float64(w) - 16, bottom: float64(h) - 44 - 16*float64(rows)}
	bins := hs.Bins
	if bins <= 0 {
		bins = 30
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range hs.Series {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	width := (hi - lo) / float64(bins)
	counts := make([][]int, len(hs.Series))
	cmax := 0
	for i, s := range hs.Series {
		counts[i] = make([]int, bins)
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			k := min(int((v-lo)/width), bins-1)
			counts[i][k]++
			cmax = max(cmax, counts[i][k])
		}
	}
	step := niceStep(float64(max(cmax, 1))*1.05, 5)
	f.x0, f.x1 = lo, hi
	f.y0, f.y1 = 0, math.Ceil(float64(max(cmax, 1))*1.05/step)*step
	c.yAxis(f, "count")
	xs := niceStep(hi-lo, 8)
	for v := math.Ceil(lo/xs) * xs; v <= hi+xs*1e-9; v += xs {
		x := f.px(v)
		c.line(gridColor, 1, false, pt{x, f.top}, pt{x, f.bottom})
		c.text(x, f.bottom+16, fmtNum(v), 'm', fontSize, textColor)
	}
	if hs.XLabel != "" {
		c.text((f.left+f.right)/2, f.bottom+32, hs.XLabel, 'm', fontSize, textColor)
	}
	var names, colors []string
	for i, s := range hs.Series {
		col := colorAt(i, s.Color)
		pts := []pt{{f.px(lo), f.bottom}}
		for k, n := range counts[i] {
			y := f.py(float64(n))
			pts = append(pts, pt{f.px(lo + float64(k)*width), y}, pt{f.px(lo + float64(k+1)*width), y})
		}
		pts = append(pts, pt{f.px(hi), f.bottom})
		c.line(col, 2, false, pts...)
		names, colors = append(names, s.Name), append(colors, col)
	}
	c.legend(f.bottom+52, f.left, names, colors, nil)
	return c
}

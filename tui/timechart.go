package tui

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/linechart"
)

// renderTimeChart draws series against time on a w×h braille chart over
// the explicit range [t0, t1] and [0, ymax], then the horizontal levels
// over them: the chart ntcharts' time-series line chart draws
// (renderTimeChartNtcharts), cell for cell, on a canvas of its own. An
// ntcharts canvas holds a lipgloss.Style (648 bytes) per cell and is
// allocated twice per drawing: a 300×80 route screen's RTT chart took
// 10–15 ms whenever a probe arrived. TestTimeChartMatchesNtcharts checks
// the two drawings are the same.
func renderTimeChart(w, h int, t0, t1 time.Time, ymax float64, ss []series, levels []hline, xfmt linechart.LabelFormatter, st *Styles) string {
	if w < 20 || h < 4 || !t1.After(t0) || ymax <= 0 {
		return ""
	}
	minX, maxX := float64(t0.Unix()), float64(t1.Unix())
	if !(minX < maxX) {
		// ntcharts keeps the range it started with (the time it was
		// made): draw what it draws.
		return renderTimeChartNtcharts(w, h, t0, t1, ymax, ss, levels, xfmt, st)
	}
	f := newTimeFrame(w, h, t0, t1, ymax)
	cv := newChartCanvas(w, h)
	axis := st.Axis.GetForeground()
	f.drawAxes(cv, xfmt, axis)
	var marked, braille []series
	for _, s := range ss {
		if s.mark != 0 {
			marked = append(marked, s)
		} else {
			braille = append(braille, s)
		}
	}
	f.drawBraille(cv, braille)
	f.drawMarks(cv, marked)
	f.drawLevels(cv, levels, axis)
	return cv.view()
}

// timeFrame is a time chart's layout: X labels under the X axis on the
// last row, Y labels right-aligned left of the Y axis, as wide as the
// widest label; the plot is gw×gh cells right of (ox, oy), the origin.
type timeFrame struct {
	w, labelW, ox, oy, gw, gh int
	t0, t1                    time.Time
	minX, maxX, ymax          float64
}

const timeXStep, timeYStep = 14, 2

func newTimeFrame(w, h int, t0, t1 time.Time, ymax float64) timeFrame {
	f := timeFrame{w: w, t0: t0, t1: t1, minX: float64(t0.Unix()), maxX: float64(t1.Unix()), ymax: ymax, gh: h - 2}
	last := ""
	for i := 0; i <= f.gh; i += timeYStep {
		if s := f.yfmt(ymax / float64(f.gh) * float64(i)); s != last {
			f.labelW, last = max(f.labelW, len(s)), s
		}
	}
	f.ox, f.oy = f.labelW, h-2
	f.gw = w - f.labelW - 1
	return f
}

func (f timeFrame) yfmt(v float64) string { return yLabel(f.ymax, v) }

// drawAxes draws both axes and their labels.
func (f timeFrame) drawAxes(cv *chartCanvas, xfmt linechart.LabelFormatter, axis color.Color) {
	ox, oy := f.ox, f.oy
	cv.set(ox, oy, '└', axis)
	for y := oy - 1; y >= 0; y-- {
		cv.set(ox, y, '│', axis)
	}
	for x := ox + 1; x < f.w; x++ {
		cv.set(x, oy, '─', axis)
	}
	last := ""
	for i := 0; i <= f.gh; i += timeYStep {
		if s := f.yfmt(f.ymax / float64(f.gh) * float64(i)); s != last {
			cv.setString(ox-len(s), oy-i, s, axis)
			last = s
		}
	}
	last = ""
	for i := 0; i < f.gw; i += timeXStep {
		// A label only where the cell before it is free, whole, and not
		// the one before it again.
		if cv.at(ox+i-1, oy+1).r != 0 {
			continue
		}
		s := xfmt(i, f.minX+(f.maxX-f.minX)/float64(f.gw)*float64(i))
		if s != last && len(s)+ox+i <= f.w {
			cv.setString(ox+i, oy+1, s, axis)
			last = s
		}
	}
}

// drawBraille draws each series as braille lines between consecutive
// points, each on a dot grid of its own (2×4 dots a cell), OR-ed into the
// canvas.
func (f timeFrame) drawBraille(cv *chartCanvas, braille []series) {
	gw, gh := f.gw, f.gh
	dotsW, dotsH := gw*2, gh*4
	// Each cell's braille dots as the rune's bits: dots 1–3 and 4–6 down
	// its left and right columns, 7 and 8 on its bottom row.
	cells := make([]uint8, gw*gh)
	dotBit := [2][4]uint8{{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}}
	xs, ys := float64(gw)/(f.maxX-f.minX), float64(f.oy)/f.ymax
	// Data to dots: the scale factors first, then the products, in
	// ntcharts' order (a value on a half dot rounds the same way).
	gxs, gys := float64(dotsW-1)/float64(gw), float64(dotsH-1)/float64(gh)
	gridPoint := func(x, y float64) (int, int) {
		return int(math.Round(x * gxs)), dotsH - 1 - int(math.Round(y*gys))
	}
	for _, s := range braille {
		var px, py []float64
		for i := range s.t {
			if math.IsNaN(s.v[i]) {
				continue
			}
			px = append(px, (float64(s.t[i].Unix())-f.minX)*xs)
			py = append(py, math.Min(s.v[i], f.ymax)*ys)
		}
		if len(px) == 0 {
			// ntcharts stops at a series without points: later ones
			// are not drawn.
			break
		}
		clear(cells)
		for i := range px {
			j := min(i+1, len(px)-1)
			if (px[i] < 0 && px[j] < 0) || (px[i] > float64(gw) && px[j] > float64(gw)) {
				continue
			}
			x1, y1 := gridPoint(px[i], py[i])
			x2, y2 := gridPoint(px[j], py[j])
			plotLine(x1, y1, x2, y2, func(x, y int) {
				if x >= 0 && x < dotsW && y >= 0 && y < dotsH {
					cells[(y/4)*gw+x/2] |= dotBit[x%2][y%4]
				}
			})
		}
		fg := s.style.GetForeground()
		for cy := 0; cy < gh; cy++ {
			for cx := 0; cx < gw; cx++ {
				bits := cells[cy*gw+cx]
				if bits == 0 {
					continue
				}
				r := 0x2800 | rune(bits)
				x := f.ox + 1 + cx
				if old := cv.at(x, cy).r; old >= 0x2800 && old <= 0x28ff {
					r |= old
				}
				cv.set(x, cy, r, fg)
			}
		}
	}
}

// row is the row the braille grid puts the value v in.
func (f timeFrame) row(v float64) int {
	dot := int(math.Round(math.Min(v, f.ymax) / f.ymax * float64(f.gh*4-1)))
	return f.oy - 1 - min(dot/4, f.gh-1)
}

// drawMarks draws each marked series as its rune, one per point.
func (f timeFrame) drawMarks(cv *chartCanvas, marked []series) {
	span := f.t1.Sub(f.t0).Seconds()
	for _, s := range marked {
		fg := s.style.GetForeground()
		for i := range s.t {
			v := s.v[i]
			if math.IsNaN(v) || f.gw <= 0 {
				continue
			}
			x := f.ox + 1 + int(s.t[i].Sub(f.t0).Seconds()/span*float64(f.gw))
			y := f.row(v)
			if x <= f.ox || x >= f.w || y < 0 || y >= f.oy {
				continue
			}
			cv.set(x, y, s.mark, fg)
		}
	}
}

// drawLevels draws each level as a line of its rune across the plot, with
// its own value as the row's Y label when asked.
func (f timeFrame) drawLevels(cv *chartCanvas, levels []hline, axis color.Color) {
	for _, l := range levels {
		if l.v <= 0 || l.v > f.ymax {
			continue
		}
		y := f.row(l.v)
		if y < 0 || y >= f.oy {
			continue
		}
		fg := l.style.GetForeground()
		for x := f.ox + 1; x < f.w; x++ {
			cv.set(x, y, l.r, fg)
		}
		if s := yLabel(f.ymax, l.v); l.label && len(s) <= f.labelW {
			for x := 0; x < f.ox; x++ {
				cv.set(x, y, ' ', axis)
			}
			cv.setString(f.ox-len(s), y, s, fg)
		}
	}
}

// yLabel formats a Y axis value with the precision the chart's top needs.
func yLabel(ymax, v float64) string {
	switch {
	case ymax < 1:
		return fmt.Sprintf("%.2f", v)
	case ymax < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// plotLine calls set for the dots of the line from (x1, y1) to (x2, y2),
// Bresenham's way, walking the longer axis from its lower end.
func plotLine(x1, y1, x2, y2 int, set func(x, y int)) {
	abs := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	if abs(y2-y1) >= abs(x2-x1) {
		// Steep: the same walk with the axes swapped.
		x1, y1, x2, y2 = y1, x1, y2, x2
		plot := set
		set = func(x, y int) { plot(y, x) }
	}
	if x1 > x2 {
		x1, y1, x2, y2 = x2, y2, x1, y1
	}
	dx, dy, step := x2-x1, y2-y1, 1
	if dy < 0 {
		dy, step = -dy, -1
	}
	d, y := 2*dy-dx, y1
	for x := x1; x <= x2; x++ {
		set(x, y)
		if d > 0 {
			y += step
			d += 2 * (dy - dx)
		} else {
			d += 2 * dy
		}
	}
}

// chartCanvas is a grid of runes, each with its foreground colour (an
// index into the canvas's few colours: 0 is a cell never drawn).
type chartCanvas struct {
	w, h    int
	r       []rune
	fg      []uint8
	palette []color.Color
}

func newChartCanvas(w, h int) *chartCanvas {
	return &chartCanvas{w: w, h: h, r: make([]rune, w*h), fg: make([]uint8, w*h),
		palette: []color.Color{lipgloss.Style{}.GetForeground()}}
}

type chartCell struct {
	r  rune
	fg color.Color
}

func (c *chartCanvas) at(x, y int) chartCell {
	if x < 0 || y < 0 || x >= c.w || y >= c.h {
		return chartCell{fg: c.palette[0]}
	}
	return chartCell{c.r[y*c.w+x], c.palette[c.fg[y*c.w+x]]}
}

// colour is fg's index in the palette, added when new.
func (c *chartCanvas) colour(fg color.Color) uint8 {
	for i, p := range c.palette {
		if p == fg {
			return uint8(i)
		}
	}
	c.palette = append(c.palette, fg)
	return uint8(len(c.palette) - 1)
}

func (c *chartCanvas) set(x, y int, r rune, fg color.Color) {
	if x < 0 || y < 0 || x >= c.w || y >= c.h {
		return
	}
	c.r[y*c.w+x], c.fg[y*c.w+x] = r, c.colour(fg)
}

// setString writes s from (x, y) on, what falls outside cut off.
func (c *chartCanvas) setString(x, y int, s string, fg color.Color) {
	if y < 0 || y >= c.h {
		return
	}
	for _, r := range s {
		c.set(x, y, r, fg)
		x++
	}
}

// view renders the canvas as canvasView does an ntcharts canvas: runs of
// cells of one foreground styled at once, an empty cell a space.
func (c *chartCanvas) view() string {
	type colourAffix struct {
		fg        color.Color
		pre, post string
	}
	var affixes []colourAffix
	affixOf := func(fg color.Color) (string, string) {
		for _, a := range affixes {
			if a.fg == fg {
				return a.pre, a.post
			}
		}
		out := lipgloss.NewStyle().Foreground(fg).Render("x")
		i := strings.IndexByte(out, 'x')
		affixes = append(affixes, colourAffix{fg, out[:i], out[i+1:]})
		return out[:i], out[i+1:]
	}
	var b strings.Builder
	b.Grow(c.w*c.h*3 + 64)
	for y := 0; y < c.h; y++ {
		if y > 0 {
			b.WriteByte('\n')
		}
		for x := 0; x < c.w; {
			k := c.fg[y*c.w+x]
			end := x + 1
			// A run: the cells of one colour (two indices of one colour
			// never occur: colour finds it).
			for end < c.w && c.fg[y*c.w+end] == k {
				end++
			}
			fg := c.palette[k]
			_, none := fg.(lipgloss.NoColor)
			pre, post := "", ""
			if fg != nil && !none {
				pre, post = affixOf(fg)
			}
			b.WriteString(pre)
			for ; x < end; x++ {
				if r := c.r[y*c.w+x]; r == 0 {
					b.WriteByte(' ')
				} else {
					b.WriteRune(r)
				}
			}
			b.WriteString(post)
		}
	}
	return b.String()
}

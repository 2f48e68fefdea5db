package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	xfont "golang.org/x/image/font"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The canvas is laid out in points and rendered at 72 dpi, so that one point
// is one pixel in the PNG and one user unit in the SVG: w × h means the same
// picture in both formats.
const (
	tickSize  = 10
	textSize  = 11
	titleSize = 13
	noteSize  = 10
	minSide   = 80
	maxSide   = 10000
)

var (
	axisColor = mustHex("#444444")
	gridColor = mustHex("#e3e3e3")
	textColor = mustHex("#222222")
	markColor = mustHex("#333333")
)

// sans is the typeface of every text; Liberation Sans ships inside gonum/plot
// (so the PNG needs no system font) and has the metrics of Arial/Helvetica,
// which the SVG names as fallbacks.
func sans(size float64, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return font.From(f, vg.Length(size))
}

func textStyle(size float64, bold bool, c color.Color) text.Style {
	return text.Style{Color: c, Font: sans(size, bold), XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: gplot.DefaultTextHandler}
}

func mustHex(s string) color.NRGBA {
	c, ok := parseHex(s)
	if !ok {
		panic("plot: bad colour " + s)
	}
	return c
}

// parseHex reads #rrggbb.
func parseHex(s string) (color.NRGBA, bool) {
	s = strings.TrimPrefix(s, "#")
	if len(s) != 6 {
		return color.NRGBA{}, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return color.NRGBA{}, false
	}
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}, true
}

// colorAt is the colour c, or the palette's i-th when c is empty or not #rrggbb.
func colorAt(i int, c string) color.NRGBA {
	if col, ok := parseHex(c); ok {
		return col
	}
	col, _ := parseHex(palette[i%len(palette)])
	return col
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

var dashed = []vg.Length{6, 4}

// marginLabel is a text in the right margin at the height of a data value.
type marginLabel struct {
	text  string
	y     float64
	color color.Color
}

// legendItem is one key of the legend under the plot.
type legendItem struct {
	name  string
	thumb gplot.Thumbnailer
}

// chart is a gonum plot plus what this package draws around it.
type chart struct {
	p       *gplot.Plot
	margin  []marginLabel
	legend  []legendItem
	marks   []Mark
	vlabels []VLine
}

// newPlot is a gonum plot in the house style: sans-serif text, grey axes and
// grid, no padding between the axes and the data (so that a filled area
// meets the x axis).
func newPlot(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle = textStyle(titleSize, true, textColor)
	p.Title.TextStyle.XAlign, p.Title.TextStyle.YAlign = draw.XCenter, draw.YTop
	p.Title.Padding = 8
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = textStyle(textSize, false, textColor)
		a.Label.TextStyle.XAlign, a.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
		a.Tick.Label = textStyle(tickSize, false, textColor)
		a.LineStyle = draw.LineStyle{Color: axisColor, Width: 1}
		a.Tick.LineStyle = draw.LineStyle{Color: axisColor, Width: 1}
		a.Tick.Length = 4
		a.Padding = 0
	}
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Y.Tick.Marker = compactTicks{}
	g := plotter.NewGrid()
	g.Horizontal.Color, g.Vertical.Color = gridColor, gridColor
	g.Horizontal.Width, g.Vertical.Width = 1, 1
	p.Add(g)
	return p
}

// compactTicks label about six round values (a 1-2-5 step) compactly (1.5k, 2M).
type compactTicks struct{}

func (compactTicks) Ticks(lo, hi float64) []gplot.Tick {
	step := niceStep(hi-lo, 6)
	var ts []gplot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9 && len(ts) < 100; v += step {
		ts = append(ts, gplot.Tick{Value: v, Label: fmtNum(v)})
	}
	return ts
}

// niceCeil is the 1-2-5 round number a little above v: the top of a value axis.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	step := niceStep(v*1.05, 6)
	return math.Ceil(v*1.05/step) * step
}

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

// draw lays the chart out on a canvas: the plot on the left, the margin
// labels on its right, the legend under it, then the marks over the data. It
// returns the data area.
func (ch *chart) draw(c draw.Canvas) vg.Rectangle {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, 6, -8, 6, -6)
	lsty := textStyle(noteSize, false, textColor)
	rightW := vg.Length(4)
	for _, m := range ch.margin {
		// 10 % slack: a viewer without Liberation Sans or Arial draws the
		// SVG's labels in a wider fallback font.
		rightW = max(rightW, lsty.Width(m.text)*1.1+22)
	}
	// At most a third of the width goes to labels; a longer one is cut.
	rightW = min(rightW, (c.Max.X-c.Min.X)/3)
	legendH := ch.legendHeight(c.Max.X-c.Min.X, lsty)
	area := draw.Crop(c, 0, -rightW, legendH, 0)
	ch.p.Draw(area)
	data := ch.p.DataCanvas(area)
	trX, trY := ch.p.Transforms(&data)
	ch.drawVLabels(data, trX)
	ch.drawMarks(data, trX, trY)
	ch.drawMargin(c, data, trY, lsty, rightW)
	ch.drawLegend(draw.Crop(c, data.Min.X-c.Min.X, 0, 0, -(c.Max.Y-c.Min.Y-legendH)), lsty)
	return data.Rectangle
}

const thumbW, legendGap = 22, 16

func (ch *chart) legendRows(width vg.Length, sty text.Style) [][]legendItem {
	var rows [][]legendItem
	x := vg.Length(0)
	for _, it := range ch.legend {
		w := thumbW + 5 + sty.Width(it.name) + legendGap
		if len(rows) == 0 || (x+w > width && x > 0) {
			rows = append(rows, nil)
			x = 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], it)
		x += w
	}
	return rows
}

func (ch *chart) legendHeight(width vg.Length, sty text.Style) vg.Length {
	n := len(ch.legendRows(width-70, sty))
	if n == 0 {
		return 0
	}
	return vg.Length(n)*16 + 6
}

func (ch *chart) drawLegend(c draw.Canvas, sty text.Style) {
	y := c.Max.Y - 10
	for _, row := range ch.legendRows(c.Max.X-c.Min.X, sty) {
		x := c.Min.X
		for _, it := range row {
			tc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: y - 5}, Max: vg.Point{X: x + thumbW, Y: y + 5}}}
			it.thumb.Thumbnail(&tc)
			c.FillText(sty, vg.Point{X: x + thumbW + 5, Y: y}, it.name)
			x += thumbW + 5 + sty.Width(it.name) + legendGap
		}
		y -= 16
	}
}

// drawMargin writes the margin labels beside the data area at the heights of
// their values, pushed apart to one line each where values are close, each
// tied to its height by a short leader.
func (ch *chart) drawMargin(c, data draw.Canvas, trY func(float64) vg.Length, sty text.Style, width vg.Length) {
	if len(ch.margin) == 0 {
		return
	}
	type placed struct {
		m       marginLabel
		at, put vg.Length
	}
	ps := make([]placed, len(ch.margin))
	for i, m := range ch.margin {
		at := min(max(trY(m.y), data.Min.Y), data.Max.Y)
		ps[i] = placed{m, at, at}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].at > ps[j].at })
	const step = 13
	top, bottom := c.Max.Y-6, c.Min.Y+6
	for i := range ps {
		ps[i].put = min(ps[i].put, top)
		if i > 0 {
			ps[i].put = min(ps[i].put, ps[i-1].put-step)
		}
	}
	for i := len(ps) - 1; i >= 0; i-- {
		ps[i].put = max(ps[i].put, bottom)
		if i < len(ps)-1 {
			ps[i].put = max(ps[i].put, ps[i+1].put+step)
		}
	}
	x0 := data.Max.X
	room := width - 22
	for _, p := range ps {
		s := sty
		s.Color = p.m.color
		c.StrokeLines(draw.LineStyle{Color: p.m.color, Width: 1}, []vg.Point{{X: x0, Y: p.at}, {X: x0 + 8, Y: p.at}, {X: x0 + 16, Y: p.put}})
		c.FillText(s, vg.Point{X: x0 + 19, Y: p.put}, fitText(s, p.m.text, room))
	}
}

// fitText shortens s with an ellipsis to at most w wide.
func fitText(sty text.Style, s string, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && sty.Width(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// drawVLabels writes each vertical line's label at the top of the data
// area, right of its line (left of it when there is no room).
func (ch *chart) drawVLabels(data draw.Canvas, trX func(float64) vg.Length) {
	sty := textStyle(noteSize, false, markColor)
	for _, v := range ch.vlabels {
		x := trX(v.X) + 4
		if x+sty.Width(v.Label) > data.Max.X {
			sty.XAlign = draw.XRight
			x = trX(v.X) - 4
		}
		data.FillText(sty, vg.Point{X: x, Y: data.Max.Y - 8}, v.Label)
	}
}

// drawMarks rings each mark and labels it above, skipping a label that would
// overlap one already drawn (the rings all stay).
func (ch *chart) drawMarks(data draw.Canvas, trX, trY func(float64) vg.Length) {
	sty := textStyle(noteSize, false, markColor)
	sty.XAlign = draw.XCenter
	var boxes []vg.Rectangle
	for _, m := range ch.marks {
		col := color.Color(markColor)
		if c, ok := parseHex(m.Color); ok {
			col = c
		}
		pt := vg.Point{X: trX(m.X), Y: trY(m.Y)}
		if !data.Contains(pt) {
			continue
		}
		data.DrawGlyphNoClip(draw.GlyphStyle{Color: col, Radius: 4, Shape: draw.RingGlyph{}}, pt)
		if m.Label == "" {
			continue
		}
		w, h := sty.Width(m.Label), sty.Height(m.Label)
		at := vg.Point{X: pt.X, Y: pt.Y + 6 + h/2}
		box := vg.Rectangle{Min: vg.Point{X: at.X - w/2 - 2, Y: at.Y - h/2}, Max: vg.Point{X: at.X + w/2 + 2, Y: at.Y + h/2}}
		if box.Min.X < data.Min.X || box.Max.X > data.Max.X || box.Max.Y > data.Max.Y {
			continue
		}
		clash := false
		for _, b := range boxes {
			if box.Min.X < b.Max.X && b.Min.X < box.Max.X && box.Min.Y < b.Max.Y && b.Min.Y < box.Max.Y {
				clash = true
				break
			}
		}
		if clash {
			continue
		}
		boxes = append(boxes, box)
		s := sty
		s.Color = col
		data.FillText(s, at, m.Label)
	}
}

func sizeOK(w, h int) error {
	if w < minSide || h < minSide || w > maxSide || h > maxSide {
		return fmt.Errorf("plot: image size %d×%d out of range (%d…%d per side)", w, h, minSide, maxSide)
	}
	return nil
}

var svgSize = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)
})

// svgOf renders the chart as SVG. gonum's document starts with an XML
// declaration and sizes itself in points; the declaration is dropped (the
// text is inlined into HTML as it is) and the size given in pixels, one per
// point, the size the caller asked for; fonts are named with their
// metric-compatible fallbacks. An out-of-range size gives an empty
// document.
func svgOf(build func(w, h int) *chart, w, h int) string {
	if sizeOK(w, h) != nil {
		return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d"></svg>`+"\n", max(w, 0), max(h, 0))
	}
	vc := vgsvg.New(vg.Length(w), vg.Length(h))
	build(w, h).draw(draw.New(vc))
	var buf bytes.Buffer
	if _, err := vc.WriteTo(&buf); err != nil {
		// vgsvg writes to memory: it cannot fail.
		panic(err)
	}
	doc := buf.String()
	if i := strings.Index(doc, "<svg "); i >= 0 {
		doc = doc[i:]
	}
	doc = svgSize().ReplaceAllString(doc, `<svg width="$1" height="$2"`)
	// The xlink namespace serves embedded images only, which no chart has.
	doc = strings.Replace(doc, "\n\txmlns:xlink=\"http://www.w3.org/1999/xlink\"", "", 1)
	return strings.ReplaceAll(doc, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
}

// pngOf renders the chart as a PNG image, w × h pixels.
func pngOf(build func(w, h int) *chart, w, h int) ([]byte, error) {
	if err := sizeOK(w, h); err != nil {
		return nil, err
	}
	vc := vgimg.NewWith(vgimg.UseWH(vg.Length(w), vg.Length(h)), vgimg.UseDPI(72))
	build(w, h).draw(draw.New(vc))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: vc}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	return buf.Bytes(), nil
}

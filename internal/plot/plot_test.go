package plot

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// wellFormed parses the SVG with encoding/xml and returns the element names seen.
func wellFormed(t *testing.T, doc string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	seen := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			seen[se.Name.Local]++
		}
	}
	if seen["svg"] != 1 {
		t.Fatalf("want one <svg> root, got %v", seen)
	}
	return seen
}

func month() TimeSeries {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var xs []time.Time
	var in, out []float64
	for i := 0; i < 8928; i++ {
		if i >= 3000 && i < 3100 { // a gap of 100 slots: no samples
			continue
		}
		xs = append(xs, start.Add(time.Duration(i)*5*time.Minute))
		h := float64(i%288) / 288
		out = append(out, 100+80*math.Sin(2*math.Pi*h))
		in = append(in, 20+10*math.Sin(2*math.Pi*h))
	}
	out[4000] = 750 // one burst slot must survive thinning
	return TimeSeries{
		Title:  "eth0 <October> & more",
		YLabel: "Mbit/s",
		Series: []Line{{Name: "in", X: xs, Y: in, Fill: true, Color: "#2ca02c"}, {Name: "out", X: xs, Y: out, Color: "#1f4fb4"}},
		HLines: []HLine{{Label: "95th greater 170.2 Mbps", Y: 170.2, Color: "#d62728"}, {Label: "commit 172 Mbps", Y: 172, Dash: true, Color: "#9467bd"}},
	}
}

// record lays a chart out on a recording canvas and returns its actions and data area.
func record(build func(w, h int) *chart, w, h int) ([]recorder.Action, vg.Rectangle) {
	rc := &recorder.Canvas{}
	data := build(w, h).draw(draw.NewCanvas(rc, vg.Length(w), vg.Length(h)))
	return rc.Actions, data
}

func texts(acts []recorder.Action) map[string]vg.Point {
	out := map[string]vg.Point{}
	for _, a := range acts {
		if fs, ok := a.(*recorder.FillString); ok {
			out[fs.String] = fs.Point
		}
	}
	return out
}

func TestTimeSeriesSVGIsWellFormedAndHasTheLines(t *testing.T) {
	ts := month()
	doc := ts.SVG(900, 360)
	seen := wellFormed(t, doc)
	if !strings.HasPrefix(doc, `<svg width="900" height="360"`) || strings.Contains(doc, "xlink") || strings.Contains(doc, "<?xml") {
		t.Errorf("the document must start with the <svg> element sized in pixels, got %.80q", doc)
	}
	if seen["text"] < 10 {
		t.Errorf("want title, tick and legend texts, got %d <text>", seen["text"])
	}
	for _, want := range []string{"95th greater 170.2 Mbps", "commit 172 Mbps", "stroke-dasharray", "eth0 &lt;October&gt; &amp; more", "Oct 1", "Oct 29", "Mbit/s", "800", "Arial"} {
		if !strings.Contains(doc, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestThinKeepsTheBurstAndTheGapBreaksTheLine(t *testing.T) {
	ts := month()
	out := ts.Series[1]
	rs := runs(out.X)
	if len(rs) != 2 || rs[0] != [2]int{0, 3000} || rs[1] != [2]int{3000, len(out.X)} {
		t.Fatalf("runs = %v, want a break at the 100-slot gap", rs)
	}
	// One bucket per 10 slots: the burst must still be a point at 750.
	pts := thin(out.X[rs[1][0]:rs[1][1]], out.Y[rs[1][0]:rs[1][1]], 3000)
	peak := 0.0
	for _, p := range pts {
		peak = max(peak, p.Y)
	}
	if peak != 750 {
		t.Errorf("thinned peak = %v, want the 750 burst", peak)
	}
	if n := len(pts); n > 2*len(out.X[3000:])/10+4 {
		t.Errorf("thin kept %d points, want at most 2 per bucket", n)
	}
	// In the drawing, the out series is stroked as two separate paths.
	acts, _ := record(ts.chart, 900, 360)
	strokes := 0
	for _, a := range acts {
		if _, ok := a.(*recorder.Stroke); ok {
			strokes++
		}
	}
	if strokes < 4 { // in ×2, out ×2, plus grid, axes, reference lines
		t.Errorf("only %d stroked paths", strokes)
	}
}

func TestReferenceLabelsSitOffTheDataAndApart(t *testing.T) {
	acts, data := record(month().chart, 900, 360)
	tx := texts(acts)
	a, okA := tx["95th greater 170.2 Mbps"]
	b, okB := tx["commit 172 Mbps"]
	if !okA || !okB {
		t.Fatalf("labels missing: %v", tx)
	}
	for _, p := range []vg.Point{a, b} {
		if p.X <= data.Max.X {
			t.Errorf("label at x=%v is inside the data area (right edge %v)", p.X, data.Max.X)
		}
	}
	// 170.2 and 172 are 1.8 Mbps apart (under a point on this axis): the
	// labels are pushed a line apart, the higher value above.
	if b.Y-a.Y < 12 {
		t.Errorf("labels overlap: commit at y=%v, 95th at y=%v", b.Y, a.Y)
	}
	// The legend keys (in, out) sit below the data area.
	for _, k := range []string{"in", "out"} {
		if p, ok := tx[k]; !ok || p.Y >= data.Min.Y {
			t.Errorf("legend %q at %v, want below the data area (bottom %v)", k, p, data.Min.Y)
		}
	}
}

func countColor(img image.Image, want color.NRGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			// Lines are anti-aliased: count pixels close to the colour.
			r, g, bl, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(r>>8)-float64(want.R)) + math.Abs(float64(g>>8)-float64(want.G)) + math.Abs(float64(bl>>8)-float64(want.B))
			if d < 40 {
				n++
			}
		}
	}
	return n
}

func TestTimeSeriesPNGDecodes(t *testing.T) {
	b, err := month().PNG(900, 360)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 900 || img.Bounds().Dy() != 360 {
		t.Errorf("size %v", img.Bounds())
	}
	// The 95th line is solid red across the data area (partly under the
	// dashed commit line 1.8 Mbps above it): hundreds of pixels, and none
	// without it.
	if n := countColor(img, mustHex("#d62728")); n < 150 {
		t.Errorf("only %d pixels of the 95th line's red", n)
	}
	bare := month()
	bare.HLines = nil
	nb, err := bare.PNG(900, 360)
	if err != nil {
		t.Fatal(err)
	}
	bareImg, _ := png.Decode(bytes.NewReader(nb))
	if n := countColor(bareImg, mustHex("#d62728")); n > 10 {
		t.Errorf("%d red pixels without the 95th line", n)
	}
	if n := countColor(img, mustHex("#1f4fb4")); n < 500 {
		t.Errorf("only %d pixels of the out line's blue", n)
	}
	if dir := os.Getenv("PLOT_OUT"); dir != "" {
		_ = os.WriteFile(dir+"/month.png", b, 0o644)
	}
}

func TestBarsAndHistogram(t *testing.T) {
	b := Bars{Title: "Monthly cost", YLabel: "CNY", Categories: []string{"hk-cn2", "tokyo", "la"}, Stacked: true,
		Series: []BarSeries{{Name: "bandwidth", Values: []float64{20750, 30000, 4615}}, {Name: "compute", Values: []float64{118000, 150000, 103000}}}}
	doc := b.SVG(600, 320)
	wellFormed(t, doc)
	for _, want := range []string{"hk-cn2", "tokyo", "la", "bandwidth", "compute", "200k",
		"138,750", "180,000", "107,615"} {
		if !strings.Contains(doc, ">"+want+"<") {
			t.Errorf("bars SVG lacks %q", want)
		}
	}
	h := Histogram{Title: "RTT", XLabel: "ms", Series: []HistSeries{{Name: "hk", Values: []float64{30, 31, 32, 32, 33, 80}}, {Name: "la", Values: []float64{150, 151, 155}}}, Bins: 10}
	doc = h.SVG(600, 320)
	wellFormed(t, doc)
	for _, want := range []string{"count", "ms", "hk", "la"} {
		if !strings.Contains(doc, ">"+want+"<") {
			t.Errorf("histogram SVG lacks %q", want)
		}
	}
	for i, c := range []interface {
		PNG(int, int) ([]byte, error)
	}{b, h} {
		p, err := c.PNG(600, 320)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(p)); err != nil {
			t.Fatal(err)
		}
		if dir := os.Getenv("PLOT_OUT"); dir != "" {
			_ = os.WriteFile(dir+"/"+[]string{"bars", "histogram"}[i]+".png", p, 0o644)
		}
	}
}

func TestHistogramSharesBinsAndCounts(t *testing.T) {
	h := Histogram{Series: []HistSeries{{Values: []float64{0, 1, 1, 2, 9.9, 10, math.NaN()}}, {Values: []float64{5}}}, Bins: 10}
	ch := h.chart(600, 320)
	// The grid is the first plotter; the two histograms follow.
	if ch.p.X.Min != 0 || ch.p.X.Max != 10 {
		t.Errorf("x range %v…%v, want 0…10", ch.p.X.Min, ch.p.X.Max)
	}
	// Bins of width 1 from 0: 0→[0], 1→[1,1], 2→[2], 9→[9.9, 10 (the top edge)].
	// NaN is not counted. Max count 2 → y axis up to a round 2.1 above.
	if ch.p.Y.Max < 2 || ch.p.Y.Max > 3 {
		t.Errorf("y max %v, want a little above the largest count 2", ch.p.Y.Max)
	}
}

func TestXYChartMarksAndNames(t *testing.T) {
	x := XYChart{
		Title: "Monthly total by used hours", XLabel: "used hours", YLabel: "CNY",
		Curves: []Curve{
			{Name: "hourly", X: []float64{0, 744}, Y: []float64{0, 178560}},
			{Name: "monthly", X: []float64{0, 744}, Y: []float64{90000, 90000}},
		},
		Marks:  []Mark{{Label: "375 h", X: 375, Y: 90000}, {Label: "376 h", X: 376, Y: 90100}},
		VLines: []VLine{{Label: "300 h used", X: 300}, {Label: "outside", X: 800}},
		XMin:   0, XMax: 744,
	}
	doc := x.SVG(800, 360)
	wellFormed(t, doc)
	acts, data := record(x.chart, 800, 360)
	tx := texts(acts)
	for _, n := range []string{"hourly", "monthly"} {
		if p, ok := tx[n]; !ok || p.X <= data.Max.X {
			t.Errorf("curve name %q at %v: want it in the right margin (data right edge %v)", n, p, data.Max.X)
		}
	}
	if _, ok := tx["375 h"]; !ok {
		t.Error("the first crossing's label is missing")
	}
	if p, ok := tx["300 h used"]; !ok || p.X <= data.Min.X || p.X >= data.Max.X || p.Y < data.Max.Y-20 {
		t.Errorf("the stated-usage line's label at %v, want near the top inside the data area %v", p, data)
	}
	if _, ok := tx["outside"]; ok {
		t.Error("a vertical line outside the X range must be left out")
	}
	if _, ok := tx["376 h"]; ok {
		t.Error("a label that would cover the first one must be left out")
	}
	if !strings.Contains(doc, ">375 h<") || !strings.Contains(doc, ">used hours<") {
		t.Error("SVG lacks the crossing or axis label")
	}
}

func TestEmptyChartsDoNotPanic(t *testing.T) {
	wellFormed(t, TimeSeries{}.SVG(300, 200))
	wellFormed(t, Bars{}.SVG(300, 200))
	wellFormed(t, Histogram{}.SVG(300, 200))
	wellFormed(t, XYChart{}.SVG(300, 200))
	wellFormed(t, TimeSeries{HLines: []HLine{{Label: "x", Y: math.NaN()}}, Series: []Line{{Y: []float64{1}, X: []time.Time{time.Unix(0, 0)}}}}.SVG(300, 200))
	wellFormed(t, TimeSeries{}.SVG(0, 0))
	if _, err := (TimeSeries{}).PNG(0, 0); err == nil {
		t.Error("a zero-size PNG must be an error")
	}
	if _, err := (Bars{}).PNG(20000, 100); err == nil {
		t.Error("an oversized PNG must be an error")
	}
}

func TestTimeTicksAtLocalMidnightsAcrossDST(t *testing.T) {
	ber, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	// October 2026 in Berlin: 25 October has 25 hours.
	lo := time.Date(2026, 10, 1, 0, 0, 0, 0, ber)
	hi := time.Date(2026, 11, 1, 0, 0, 0, 0, ber)
	ts := timeTicks{loc: ber, width: 800}.Ticks(float64(lo.Unix()), float64(hi.Unix()))
	if len(ts) < 4 {
		t.Fatalf("ticks %v", ts)
	}
	for _, tk := range ts {
		at := time.Unix(int64(tk.Value), 0).In(ber)
		if at.Hour() != 0 || at.Minute() != 0 {
			t.Errorf("tick %q at %v, want local midnight", tk.Label, at)
		}
	}
}

func TestFmtTotal(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 99.5: "99.5", 144691.54: "144,692", 1e6: "1,000,000", -2500: "-2,500", 100: "100"} {
		if got := fmtTotal(v); got != want {
			t.Errorf("fmtTotal(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ span, want float64 }{{800, 200}, {1, 0.2}, {7, 2}, {170, 50}} {
		if got := niceStep(c.span, 6); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", c.span, got, c.want)
		}
	}
	if got := niceCeil(750); got != 800 {
		t.Errorf("niceCeil(750) = %v, want 800", got)
	}
}

// An hour without data (NaN) is a gap: the line breaks there and nothing
// is drawn at it, never a point at zero; a lone hour between two gaps
// still shows as a dot.
func TestXYChartBreaksTheLineAtAGapAndDrawsNoZero(t *testing.T) {
	xs := make([]float64, 24)
	ys := make([]float64, 24)
	for h := range ys {
		xs[h], ys[h] = float64(h), 40+float64(h%5)
	}
	// Runs 0–2, 4–9, 11 alone, 13–23.
	for _, h := range []int{3, 10, 12} {
		ys[h] = math.NaN()
	}
	const col = "#1f77b4"
	x := XYChart{Title: "p95 by hour", XLabel: "hour", YLabel: "ms", XMin: 0, XMax: 23,
		Curves: []Curve{{Name: "hk", X: xs, Y: ys, Color: col, Points: true}}}
	wellFormed(t, x.SVG(800, 300))
	acts, data := record(x.chart, 800, 300)
	want := mustHex(col)
	var cur color.Color
	var lines [][2]vg.Length // each stroked line's X extent
	dots := 0
	for _, a := range acts {
		switch a := a.(type) {
		case *recorder.SetColor:
			cur = a.Color
		case *recorder.Stroke, *recorder.Fill:
			r, g, b, _ := cur.RGBA()
			wr, wg, wb, _ := want.RGBA()
			if r != wr || g != wg || b != wb {
				continue
			}
			var path vg.Path
			if s, ok := a.(*recorder.Stroke); ok {
				path = s.Path
			} else {
				path = a.(*recorder.Fill).Path
			}
			arc := false
			lo, hi := vg.Length(math.Inf(1)), vg.Length(math.Inf(-1))
			for _, c := range path {
				if c.Type == vg.ArcComp {
					arc = true
				}
				if c.Type == vg.MoveComp || c.Type == vg.LineComp {
					lo, hi = min(lo, c.Pos.X), max(hi, c.Pos.X)
				}
			}
			if arc {
				dots++
				continue
			}
			if len(path) >= 2 && hi <= data.Max.X+0.5 { // not the margin label's leader
				lines = append(lines, [2]vg.Length{lo, hi})
			}
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d line runs %v, want 3 (hours 0–2, 4–9, 13–23; hour 11 alone is a dot)", len(lines), lines)
	}
	// Each run spans its hours: X of hour h is data.Min.X + h/23 of the width.
	at := func(h float64) vg.Length { return data.Min.X + vg.Length(h/23)*(data.Max.X-data.Min.X) }
	for i, span := range [][2]float64{{0, 2}, {4, 9}, {13, 23}} {
		if d0, d1 := math.Abs(float64(lines[i][0]-at(span[0]))), math.Abs(float64(lines[i][1]-at(span[1]))); d0 > 1 || d1 > 1 {
			t.Errorf("run %d spans %v, want hours %v (%v..%v)", i, lines[i], span, at(span[0]), at(span[1]))
		}
	}
	if dots != 21 {
		t.Errorf("%d dots, want one per hour with data (21)", dots)
	}
}

package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"
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
		xs = append(xs, start.Add(time.Duration(i)*5*time.Minute))
		h := float64(i%288) / 288
		out = append(out, 100+80*math.Sin(2*math.Pi*h))
		in = append(in, 20+10*math.Sin(2*math.Pi*h))
	}
	out[4000] = 750 // one burst slot must survive decimation
	return TimeSeries{
		Title:  "eth0 <October> & more",
		YLabel: "Mbit/s",
		Series: []Line{{Name: "in", X: xs, Y: in, Fill: true}, {Name: "out", X: xs, Y: out}},
		HLines: []HLine{{Label: "95th greater 170.2 Mbps", Y: 170.2}, {Label: "commit 200 Mbps", Y: 200, Dash: true}},
	}
}

func TestTimeSeriesSVGIsWellFormedAndHasTheLines(t *testing.T) {
	ts := month()
	doc := ts.SVG(900, 360)
	seen := wellFormed(t, doc)
	// in is an area (polygon), out a polyline, plus two reference lines and the legend keys.
	if seen["polygon"] != 1 {
		t.Errorf("want 1 filled area, got %d", seen["polygon"])
	}
	for _, want := range []string{"95th greater 170.2 Mbps", "commit 200 Mbps", "stroke-dasharray", "&lt;October&gt; &amp; more", "Oct 1", "Mbit/s"} {
		if !strings.Contains(doc, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// The burst of 750 reaches the top of the y axis (800 with a 1-2-5 step).
	if !strings.Contains(doc, ">800<") {
		t.Errorf("y axis should reach 800 to show the 750 burst")
	}
	// Decimation keeps the burst: some point of the out line is at the 750 level.
	f := frame{top: 34, bottom: 360 - 40 - 16*2, y0: 0, y1: 800}
	y750 := f1(f.py(750))
	if !strings.Contains(doc, ","+y750+" ") && !strings.Contains(doc, ","+y750+`"`) {
		t.Errorf("the 750 burst (y=%s) was lost", y750)
	}
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
	// Some pixels carry the palette's first colour (the in area / line).
	colored := 0
	for y := 0; y < 360; y += 2 {
		for x := 0; x < 900; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r != g || g != bl {
				colored++
			}
		}
	}
	if colored < 500 {
		t.Errorf("only %d coloured pixels", colored)
	}
	if dir := os.Getenv("PLOT_OUT"); dir != "" {
		_ = os.WriteFile(dir+"/month.png", b, 0o644)
	}
}

func TestBarsAndHistogram(t *testing.T) {
	b := Bars{Title: "Monthly cost", YLabel: "CNY", Categories: []string{"hk-cn2", "tokyo", "la"}, Stacked: true,
		Series: []BarSeries{{Name: "bandwidth", Values: []float64{20750, 30000, 4615}}, {Name: "compute", Values: []float64{118000, 150000, 103000}}}}
	seen := wellFormed(t, b.SVG(600, 320))
	if seen["rect"] != 1+6 {
		t.Errorf("want background + 6 bar segments, got %d rects", seen["rect"])
	}
	h := Histogram{Title: "RTT", XLabel: "ms", Series: []HistSeries{{Name: "hk", Values: []float64{30, 31, 32, 32, 33, 80}}, {Name: "la", Values: []float64{150, 151, 155}}}, Bins: 10}
	doc := h.SVG(600, 320)
	seen = wellFormed(t, doc)
	if seen["polyline"] < 2 {
		t.Errorf("want one outline per series, got %d polylines", seen["polyline"])
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

func TestEmptyChartsDoNotPanic(t *testing.T) {
	wellFormed(t, TimeSeries{}.SVG(300, 200))
	wellFormed(t, Bars{}.SVG(300, 200))
	wellFormed(t, Histogram{}.SVG(300, 200))
	if _, err := (TimeSeries{}).PNG(0, 0); err == nil {
		t.Error("a zero-size PNG must be an error")
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ span, want float64 }{{800, 200}, {1, 0.2}, {7, 2}, {170, 50}} {
		if got := niceStep(c.span, 6); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", c.span, got, c.want)
		}
	}
}

// Package plot draws the charts linecheck needs, with gonum.org/v1/plot: a
// time series with horizontal reference lines (traffic with its 95th and
// commit lines, as MRTG and Cacti users expect), bars (cost breakdowns),
// histograms (RTT distributions) and curves over a numeric axis (the month's
// cost against the used hours), as SVG or PNG.
//
// The chart types here say what a linecheck chart shows; gonum/plot lays it
// out and renders it. What gonum does not do by itself is done here, the same
// way for every chart: labels of reference lines and curve names sit in the
// right margin, off the data (pushed apart when lines are close, with a
// leader back to their line); legends sit under the plot; missing samples
// break a line instead of being bridged; month-long series are thinned to
// the minimum and maximum of each pixel column, so one-slot bursts survive;
// time axes tick at local midnights (DST days included).
package plot

import (
	"time"
)

// palette is the colour cycle for series (hex RGB).
var palette = [...]string{"#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// Line is one series of a TimeSeries.
type Line struct {
	Name  string
	X     []time.Time
	Y     []float64
	Color string // "" = from the palette
	Fill  bool   // fill the area under the line (MRTG's inbound style)
}

// HLine is a horizontal reference line (a 95th percentile, a commit), labelled
// in the right margin.
type HLine struct {
	Label string
	Y     float64
	Color string // "" = from the palette, after the series colours
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

// Histogram draws the distribution of each series over shared bins, lightly
// filled and outlined so that several series stay readable on top of each
// other.
type Histogram struct {
	Title  string
	XLabel string
	Series []HistSeries
	Bins   int // default 30
}

// Curve is one line of an XYChart, named in the right margin at its last point.
// A non-finite Y (NaN: no data there) is a gap: the line breaks and nothing
// is drawn there, never a zero.
type Curve struct {
	Name  string
	X, Y  []float64
	Color string // "" = from the palette
	Dash  bool
	// Points marks every point with a dot, so that a point between two
	// gaps shows too (the hours of a day).
	Points bool
}

// Mark is a marked point of an XYChart (a crossing of two curves): a ring at
// (X, Y) and a short label beside it, left out where it would cover another
// mark's label.
type Mark struct {
	Label string
	X, Y  float64
	Color string // "" = dark grey
}

// VLine is a dashed vertical line of an XYChart (the stated usage), labelled
// at the top of the data area.
type VLine struct {
	Label string
	X     float64
}

// XYChart draws curves over a numeric X axis with marked points.
type XYChart struct {
	Title  string
	XLabel string
	YLabel string
	Curves []Curve
	Marks  []Mark
	VLines []VLine
	// XMin and XMax fix the X range; both zero = the range of the data.
	XMin, XMax float64
}

// SVG renders the chart as a standalone SVG document (without an XML
// declaration, so that the same text can be inlined into HTML).
func (t TimeSeries) SVG(w, h int) string { return svgOf(t.chart, w, h) }

// PNG renders the chart as a PNG image.
func (t TimeSeries) PNG(w, h int) ([]byte, error) { return pngOf(t.chart, w, h) }

// SVG renders the chart as a standalone SVG document.
func (b Bars) SVG(w, h int) string { return svgOf(b.chart, w, h) }

// PNG renders the chart as a PNG image.
func (b Bars) PNG(w, h int) ([]byte, error) { return pngOf(b.chart, w, h) }

// SVG renders the chart as a standalone SVG document.
func (hs Histogram) SVG(w, h int) string { return svgOf(hs.chart, w, h) }

// PNG renders the chart as a PNG image.
func (hs Histogram) PNG(w, h int) ([]byte, error) { return pngOf(hs.chart, w, h) }

// SVG renders the chart as a standalone SVG document.
func (x XYChart) SVG(w, h int) string { return svgOf(x.chart, w, h) }

// PNG renders the chart as a PNG image.
func (x XYChart) PNG(w, h int) ([]byte, error) { return pngOf(x.chart, w, h) }

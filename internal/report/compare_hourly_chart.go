package report

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/plot"
)

// CompareHourlyChart is the users' day in 24 hours as a chart (issue 30):
// each candidate's p95 by hour of day in the users' zone, one curve a
// candidate, an hour without an answered probe a gap (never a zero), with
// the SLA's p95 bound dashed; ok is false when no candidate has an hour
// with answers. The HTML report shows it and compare --plot writes it.
func CompareHourlyChart(r *compare.Result) (plot.XYChart, bool) {
	zone := "UTC"
	if r.SLA.Zone != nil {
		zone = r.SLA.Zone.String()
	}
	x := plot.XYChart{Title: "The users' day: RTT p95 by hour (" + zone + ")", XLabel: "hour of day", YLabel: "ms", XMin: 0, XMax: 23}
	have := false
	for _, e := range r.Candidates {
		if len(e.Hourly) != 24 {
			continue
		}
		c := plot.Curve{Name: e.Name, X: make([]float64, 24), Y: make([]float64, 24), Points: true}
		for i, h := range e.Hourly {
			c.X[i], c.Y[i] = float64(h.Hour), math.NaN()
			if h.Recv > 0 {
				c.Y[i], have = h.RTTP95, true
			}
		}
		x.Curves = append(x.Curves, c)
	}
	if !have {
		return plot.XYChart{}, false
	}
	if b := r.SLA.RTTP95ms; b != nil {
		x.Curves = append(x.Curves, plot.Curve{Name: fmt.Sprintf("SLA p95 %g ms", *b), X: []float64{0, 23}, Y: []float64{*b, *b}, Dash: true, Color: "#555555"})
	}
	return x, true
}

// hourlySVG is CompareHourlyChart for the HTML report; "" without hours.
func hourlySVG(r *compare.Result) string {
	x, ok := CompareHourlyChart(r)
	if !ok {
		return ""
	}
	return x.SVG(1000, 340)
}

// CompareHourlyChartFile renders CompareHourlyChart for compare --plot
// FILE: PNG for a .png name, SVG otherwise; ok is false without hours.
func CompareHourlyChartFile(name string, r *compare.Result) (f ChartFile, ok bool, err error) {
	x, ok := CompareHourlyChart(r)
	if !ok {
		return ChartFile{}, false, nil
	}
	if strings.EqualFold(filepath.Ext(name), ".png") {
		b, err := x.PNG(chartWidth, chartHeight)
		return ChartFile{Name: name, Data: b}, true, err
	}
	return ChartFile{Name: name, Data: []byte(x.SVG(chartWidth, chartHeight))}, true, nil
}

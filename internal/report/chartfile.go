package report

import (
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/plot"
)

// ChartFile is a chart rendered for a file: its name and its bytes.
type ChartFile struct {
	Name string
	Data []byte
}

// chartWidth and chartHeight are the size of every chart written to a file.
const chartWidth, chartHeight = 1100, 420

// NewChartFile renders ts for the file name: PNG for a .png name, SVG
// otherwise.
func NewChartFile(name string, ts plot.TimeSeries) (ChartFile, error) {
	if strings.EqualFold(filepath.Ext(name), ".png") {
		b, err := ts.PNG(chartWidth, chartHeight)
		return ChartFile{Name: name, Data: b}, err
	}
	return ChartFile{Name: name, Data: []byte(ts.SVG(chartWidth, chartHeight))}, nil
}

// BillChartFiles draws each series' month with its 95th and commit lines
// (bill --plot FILE): FILE itself for one series, FILE-NAME.ext each for
// several. reports[i] is the bill of series[i].
func BillChartFiles(file string, series []*billing.Series, reports []*billing.Report, p billing.Period, offers []*billing.Offer, scale float64) ([]ChartFile, error) {
	var out []ChartFile
	for i, s := range series {
		name := file
		if len(series) > 1 {
			ext := filepath.Ext(file)
			name = strings.TrimSuffix(file, ext) + "-" + fileSafe(s.Name) + ext
		}
		f, err := NewChartFile(name, BillChart(s, reports[i], p, offers, scale))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// fileSafe replaces the characters a file name cannot hold (or that would
// make it a path) in a series name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

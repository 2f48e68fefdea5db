package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/plot"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

//go:embed compare.html.tmpl
var compareHTMLTemplate string

// htmlTmpl is parsed on first use, not at start-up: every command of the
// binary would otherwise pay for it (it was the largest package init).
var compareHTMLTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"money":       fmtMoney,
		"ms":          fmtMs1,
		"pct":         fmtPct,
		"any":         fmtCheck,
		"bytes":       fmtBytes,
		"bps":         fmtBps,
		"f2":          func(x float64) string { return fmt.Sprintf("%.2f", x) },
		"aspath":      func(p []route.ASHop) string { return dashIfEmpty(route.ASPathText(p)) },
		"join":        strings.Join,
		"sla":         slaText,
		"rankingRule": func() string { return verdict.RankingRule },
		"when":        func(r *compare.Result) string { return r.Generated.UTC().Format("2006-01-02 15:04 UTC") },
	}).Parse(compareHTMLTemplate))
})

// htmlView is what the template renders.
type compareHTMLView struct {
	R          *compare.Result
	TrafficSVG template.HTML
	RTTSVGs    []namedSVG
	CostSVG    template.HTML
	UsageSVG   template.HTML
	UsageTable *Table
	// Horizon is the cost over the horizon (nil without one).
	Horizon *Table
	// Carriers is the three-network table (nil when no user names a carrier).
	Carriers *Table
	// Paths is the per-path line class of multipath traces (nil without).
	Paths *Table
	// RoutesSeen is each distinct route of the days' traces (nil without).
	RoutesSeen *Table
	// HourlySVG is the users' day in 24 hours (empty without hours).
	HourlySVG template.HTML
	// Families is each address family's route (nil when none is judged apart).
	Families *Table
	// Throughput is the bw tests beside the port sold (nil without any).
	Throughput *Table
	// GPU is the delivery verdict of recorded.gpu (nil without any).
	GPU      *Table
	Warnings []string
	Notes    []string
}

type namedSVG struct {
	Name, Note string
	SVG        template.HTML
}

// WriteCompareHTML writes compare's report as one self-contained HTML file: inline CSS and
// inline SVG plots (the traffic month with its 95th line, the RTT
// distribution of each candidate, the cost breakdown), no external URL.
func WriteCompareHTML(w io.Writer, r *compare.Result) error {
	v := compareHTMLView{R: r}
	if r.Traffic != nil && len(r.Traffic.Times) > 0 {
		v.TrafficSVG = template.HTML(trafficSVG(r.Traffic))
	}
	for _, e := range r.Candidates {
		if len(e.Route.Samples) > 0 {
			// A floor without a located region is unknown, not 0 ms.
			floor := "floor unknown"
			if e.Route.FloorMs > 0 {
				floor = "floor " + MS1(e.Route.FloorMs) + " ms"
			}
			note := fmt.Sprintf("%s; %s; route (worst target) p50 %s, p95 %s ms", e.Route.SamplesOf, floor, MS1(e.Route.RTT.P50), MS1(e.Route.RTT.P95))
			if r.SLA.RTTP95ms != nil {
				note += fmt.Sprintf(" (SLA p95 ≤ %g ms)", *r.SLA.RTTP95ms)
			}
			v.RTTSVGs = append(v.RTTSVGs, namedSVG{e.Name, note, template.HTML(histogramSVG(e))})
		}
	}
	v.CostSVG = template.HTML(costSVG(r))
	v.UsageSVG = template.HTML(usageSVG(r))
	v.UsageTable = compareUsageTable(r, FormatHTML)
	v.Horizon = compareHorizonTable(r, newCompareCells(FormatHTML))
	if nets, ok := carriersTable(r, FormatHTML); ok {
		v.Carriers = &nets
	}
	if ps, ok := comparePathsTable(r, newCompareCells(FormatHTML)); ok {
		v.Paths = &ps
	}
	if rs, ok := compareRoutesSeenTable(r, FormatHTML); ok {
		v.RoutesSeen = &rs
	}
	v.HourlySVG = template.HTML(hourlySVG(r))
	if fs, ok := compareFamiliesTable(r, newCompareCells(FormatHTML)); ok {
		v.Families = &fs
	}
	if tp, ok := compareThroughputTable(r, FormatHTML); ok {
		v.Throughput = &tp
	}
	if g, ok := compareGPUTable(r, FormatHTML); ok {
		v.GPU = &g
	}
	for _, e := range r.Candidates {
		if gap := e.Route.ValidationGap(); gap != "" {
			v.Warnings = append(v.Warnings, e.Name+": "+gap)
		}
		for _, w := range e.Warnings {
			v.Warnings = append(v.Warnings, e.Name+": "+w)
		}
	}
	v.Warnings = append(v.Warnings, r.Warnings...)
	v.Notes = r.Notes
	if n := route.HiddenHopsNote(r.HiddenHops); n != "" {
		v.Notes = append([]string{n}, r.Notes...)
	}
	return compareHTMLTmpl().Execute(w, v)
}

// trafficSVG draws the month's in/out rates (Mbit/s) with the 95th percentile line.
func trafficSVG(t *verdict.TrafficSummary) string {
	mbps := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x / 1e6
		}
		return out
	}
	return plot.TimeSeries{
		Title:  "Traffic " + t.PeriodStart.Format("January 2006") + " (5-minute rates)",
		YLabel: "Mbit/s",
		Series: []plot.Line{
			{Name: "in", X: t.Times, Y: mbps(t.InBps), Color: "#2ca02c", Fill: true},
			{Name: "out", X: t.Times, Y: mbps(t.OutBps), Color: "#1f77b4"},
		},
		HLines: []plot.HLine{{Label: "95th " + fmtBps(t.P95bps), Y: t.P95bps / 1e6, Color: "#d62728", Dash: true}},
		Loc:    t.PeriodStart.Location(),
	}.SVG(1000, 320)
}

// histogramSVG draws one candidate's RTT distribution.
func histogramSVG(e *verdict.Evaluation) string {
	return plot.Histogram{
		Title:  e.Name,
		XLabel: "RTT ms",
		Series: []plot.HistSeries{{Name: fmt.Sprintf("%d replies", len(e.Route.Samples)), Values: e.Route.Samples}},
		Bins:   30,
	}.SVG(520, 260)
}

// costSVG draws each candidate's monthly cost in the base currency as a
// stacked bar of its items, grouped by kind (bandwidth, compute, storage …).
func costSVG(r *compare.Result) string {
	var cats []string
	var kinds []string
	vals := map[string][]float64{}
	for _, e := range r.Candidates {
		if e.Monthly == nil {
			continue
		}
		rate, err := decimal.NewFromString(e.Monthly.Rate)
		if err != nil {
			rate = decimal.NewFromInt(1)
		}
		label := e.Name
		if !e.Passes() {
			label += " (fails)"
		}
		cats = append(cats, label)
		col := len(cats) - 1
		for _, it := range e.Monthly.Items {
			a, err := decimal.NewFromString(it.Amount)
			if err != nil {
				continue
			}
			k := it.Kind
			if k == "" {
				k = "other"
			}
			if _, ok := vals[k]; !ok {
				kinds = append(kinds, k)
			}
			for len(vals[k]) <= col {
				vals[k] = append(vals[k], 0)
			}
			f, _ := a.Mul(rate).Float64()
			vals[k][col] += f
		}
	}
	if len(cats) == 0 {
		return ""
	}
	var series []plot.BarSeries
	for _, k := range kinds {
		v := vals[k]
		for len(v) < len(cats) {
			v = append(v, 0)
		}
		series = append(series, plot.BarSeries{Name: k, Values: v})
	}
	return plot.Bars{Title: "Monthly cost by item kind", YLabel: r.FXBase + " per month", Categories: cats, Series: series, Stacked: true}.SVG(1000, 340)
}

package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/plot"
)

func pctCell(p *float64) string {
	if p == nil {
		return dash
	}
	return Pct(*p)
}

// GPUWatchTables renders `gpu --report`: per card the temperature, the
// share of time throttled and by which reason, power against the cap,
// clocks and new ECC errors; the Xid errors; the SLA checks.
func GPUWatchTables(d gpu.WatchDoc) []Table {
	t := Table{Name: "cards", Title: "GPU under load (" + d.Source + ")", Align: "rrrrrlrrrrrrl",
		Headers: []string{"#", "samples", "max °C", "mean °C", "throttled", "by reason", "max W", "mean W", "cap W", "at cap", "SM MHz", "util", "ECC new"},
		Movable: []string{"by reason", "mean W", "SM MHz", "util"}}
	for _, c := range d.Cards {
		var rs []string
		for _, r := range gpu.Throttling {
			if v, ok := c.ByReason[r.Name]; ok && v > 0 {
				rs = append(rs, fmt.Sprintf("%s %s", r.Name, Pct(v)))
			}
		}
		by := dash
		if len(rs) > 0 {
			by = strings.Join(rs, ", ")
		} else if c.ThrottleShare != nil {
			by = "none"
		}
		sm := dash
		if c.MinSMClockMHz != nil {
			sm = fmt.Sprintf("%.0f–%.0f", *c.MinSMClockMHz, *c.MaxSMClockMHz)
		}
		util := dash
		if c.MeanUtilGPU != nil {
			util = strconv.FormatFloat(*c.MeanUtilGPU, 'f', 0, 64) + "%"
		}
		ecc := fcell(c.ECCUncorrectedNew, 0)
		if c.ECCCorrectedNew != nil {
			ecc += " (" + fcell(c.ECCCorrectedNew, 0) + " corr.)"
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(c.Index), strconv.Itoa(c.Samples), fcell(c.MaxTempC, 0), fcell(c.MeanTempC, 1),
			pctCell(c.ThrottleShare), by, fcell(c.MaxPowerW, 0), fcell(c.MeanPowerW, 0), fcell(c.PowerCapW, 0), pctCell(c.AtCapShare), sm, util, ecc})
	}
	if len(d.Cards) > 0 {
		first, last := d.Cards[0].First, d.Cards[0].Last
		for _, c := range d.Cards {
			if c.First.Before(first) {
				first = c.First
			}
			if c.Last.After(last) {
				last = c.Last
			}
		}
		t.Notes = append(t.Notes, fmt.Sprintf("from %s to %s (%s)", first.Format("2006-01-02 15:04:05"), last.Format("2006-01-02 15:04:05"), last.Sub(first).Round(1e9)))
	}
	t.Notes = append(t.Notes, "throttled: share of samples holding SW power cap, HW slowdown, SW/HW thermal slowdown or HW power brake; at cap: drawing 98% of the power limit or more; ECC new: volatile uncorrected errors counted during the watch")
	tables := []Table{t}
	x := Table{Name: "xid", Title: "Xid errors (kernel log)", Headers: []string{"time", "bus id", "Xid", "message"}, HideEmpty: true}
	for _, e := range d.Xid {
		x.Rows = append(x.Rows, []string{e.Time.Format("2006-01-02 15:04:05"), e.BusID, strconv.Itoa(e.Code), e.Text})
	}
	if len(x.Rows) == 0 {
		x.Notes = []string{"none logged (or the kernel log was not readable: the watch says so when it starts)"}
	}
	tables = append(tables, x)
	if len(d.Checks) > 0 {
		tables = append(tables, CheckTable("checks", "Under load against the SLA: "+strings.ToUpper(d.Verdict), d.Checks))
	}
	return tables
}

// GPUTempChart is the measured temperature curve: one line per card, the
// SLA's max_temp_c as a reference line when given.
func GPUTempChart(d gpu.WatchDoc, maxTempC *float64) plot.TimeSeries {
	by := map[int]*plot.Line{}
	var idx []int
	for _, s := range d.Samples {
		l, ok := by[s.Index]
		if !ok {
			l = &plot.Line{Name: "GPU" + strconv.Itoa(s.Index)}
			by[s.Index] = l
			idx = append(idx, s.Index)
		}
		if s.TempC == nil {
			continue
		}
		l.X = append(l.X, s.Time)
		l.Y = append(l.Y, *s.TempC)
	}
	sort.Ints(idx)
	ts := plot.TimeSeries{Title: "GPU temperature under load", YLabel: "°C"}
	for _, i := range idx {
		ts.Series = append(ts.Series, *by[i])
	}
	if maxTempC != nil {
		ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("max_temp_c %.0f", *maxTempC), Y: *maxTempC, Dash: true})
	}
	return ts
}

package report

import (
	"fmt"
	"path/filepath"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/plot"
)

// BillChart is the MRTG/Cacti picture of a bill: in (filled) and out over the
// period, the 95th line(s) and each offer's commit line, in Mbps.
func BillChart(s *billing.Series, r *billing.Report, p billing.Period, offers []*billing.Offer, scale float64) plot.TimeSeries {
	t, in, out := billing.PeriodRates(s, p, scale)
	for i := range in {
		in[i] /= 1e6
		out[i] /= 1e6
	}
	name := s.Name
	if name == "" {
		name = filepath.Base(s.Source)
	}
	title := fmt.Sprintf("%s — %s (%s)", name, p.Label(), r.Period.TZ)
	if name == p.Label() {
		title = fmt.Sprintf("%s (%s)", name, r.Period.TZ)
	}
	ts := plot.TimeSeries{
		Title:  title,
		YLabel: "Mbit/s",
		Series: []plot.Line{{Name: "in", X: t, Y: in, Fill: true, Color: "#2ca02c"}, {Name: "out", X: t, Y: out, Color: "#1f4fb4"}},
	}
	if r.P95 != nil {
		ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("95th %s greater %.1f Mbps", r.P95.Method, r.P95.GreaterBps/1e6), Y: r.P95.GreaterBps / 1e6, Color: "#d62728"})
		if r.P95.SumBps > r.P95.GreaterBps*1.05 {
			ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("95th sum %.1f Mbps", r.P95.SumBps/1e6), Y: r.P95.SumBps / 1e6, Color: "#ff7f0e", Dash: true})
		}
	}
	commitColors := []string{"#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}
	n := 0
	for _, o := range offers {
		if o.Bandwidth.CommitMbps.Set {
			v, _ := o.Bandwidth.CommitMbps.Float64()
			ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("%s commit %g Mbps", o.Name, v), Y: v, Dash: true, Color: commitColors[n%len(commitColors)]})
			n++
		}
	}
	return ts
}

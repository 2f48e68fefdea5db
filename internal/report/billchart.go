package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/plot"
)

// BillChart is the MRTG/Cacti picture of a bill: in (filled) and out over the
// period, the 95th line(s), each offer's commit line and the port capacity
// of fixed-port offers, in Mbit/s; a --scale what-if says so in the title.
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
	if scale != 1 { // a what-if picture says so where it is seen first
		title += fmt.Sprintf(", traffic scaled ×%g (--scale)", scale)
	}
	ts := plot.TimeSeries{
		Title:  title,
		YLabel: "Mbit/s",
		Series: []plot.Line{{Name: "in", X: t, Y: in, Fill: true, Color: "#2ca02c"}, {Name: "out", X: t, Y: out, Color: "#1f4fb4"}},
	}
	if r.P95 != nil {
		ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("95th %s greater %.1f %s", r.P95.Method, r.P95.GreaterBps/1e6, RateUnit), Y: r.P95.GreaterBps / 1e6, Color: "#d62728"})
		if r.P95.SumBps > r.P95.GreaterBps*1.05 {
			ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("95th sum %.1f %s", r.P95.SumBps/1e6, RateUnit), Y: r.P95.SumBps / 1e6, Color: "#ff7f0e", Dash: true})
		}
	}
	commitColors := []string{"#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}
	n := 0
	for _, o := range offers {
		if o.Bandwidth.CommitMbps.Set {
			v, _ := o.Bandwidth.CommitMbps.Float64()
			ts.HLines = append(ts.HLines, plot.HLine{Label: fmt.Sprintf("%s commit %g %s", o.Name, v, RateUnit), Y: v, Dash: true, Color: commitColors[n%len(commitColors)]})
			n++
		}
	}
	// The port capacity of fixed-port offers: one solid line per speed,
	// naming the offers sold on it (several offers often share 1000 Mbit/s).
	var speeds []float64
	names := map[float64][]string{}
	for _, o := range offers {
		if o.Bandwidth.Scheme != "fixed" || !o.Bandwidth.PortMbps.Set || o.Bandwidth.PortMbps.IsZero() {
			continue
		}
		v, _ := o.Bandwidth.PortMbps.Float64()
		if names[v] == nil {
			speeds = append(speeds, v)
		}
		names[v] = append(names[v], o.Name)
	}
	for _, v := range speeds {
		label := fmt.Sprintf("port %g %s: %s", v, RateUnit, strings.Join(names[v], ", "))
		if len(names[v]) > 2 {
			label = fmt.Sprintf("port %g %s: %s +%d", v, RateUnit, strings.Join(names[v][:2], ", "), len(names[v])-2)
		}
		ts.HLines = append(ts.HLines, plot.HLine{Label: label, Y: v, Color: "#444444"})
	}
	return ts
}

package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/shopspring/decimal"
)

//go:embed report.html.tmpl
var htmlTemplate string

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"money": fmtMoney,
	"ms":    fmtMs,
	"pct":   fmtPct,
	"any":   fmtAny,
	"bytes": fmtBytes,
	"bps":   fmtBps,
	"f2":    func(x float64) string { return fmt.Sprintf("%.2f", x) },
	"sla":   slaText,
	"when":  func(r *Result) string { return r.Generated.UTC().Format("2006-01-02 15:04 UTC") },
}).Parse(htmlTemplate))

// htmlView is what the template renders.
type htmlView struct {
	R          *Result
	TrafficSVG template.HTML
	RTTSVGs    []namedSVG
	CostSVG    template.HTML
	Warnings   []string
	Direction  map[string]string
}

type namedSVG struct {
	Name string
	SVG  template.HTML
}

// WriteHTML writes the report as one self-contained HTML file: inline CSS and
// inline SVG plots (the traffic month with its 95th line, the RTT
// distribution of each candidate, the cost breakdown), no external URL.
func WriteHTML(w io.Writer, r *Result) error {
	v := htmlView{R: r}
	if r.Traffic != nil && len(r.Traffic.Times) > 0 {
		v.TrafficSVG = template.HTML(trafficSVG(r.Traffic))
	}
	for _, e := range r.Candidates {
		if len(e.Route.Samples) > 0 {
			v.RTTSVGs = append(v.RTTSVGs, namedSVG{e.Name, template.HTML(histogramSVG(e.Route.Samples, e.Route.FloorMs, r.SLA.RTTP95ms))})
		}
	}
	v.CostSVG = template.HTML(costSVG(r))
	for _, e := range r.Candidates {
		switch e.Route.Direction {
		case "forward":
			v.Warnings = append(v.Warnings, e.Name+": line class validated on the forward path only; the return path (server → users) was not checked")
		case "return":
			v.Warnings = append(v.Warnings, e.Name+": line class validated on the return path only; the forward path (users → server) was not checked")
		case "none", "":
			v.Warnings = append(v.Warnings, e.Name+": no trace in either direction; the line class is not validated")
		}
		for _, w := range e.Warnings {
			v.Warnings = append(v.Warnings, e.Name+": "+w)
		}
	}
	v.Warnings = append(v.Warnings, r.Warnings...)
	return htmlTmpl.Execute(w, v)
}

// palette for candidates and cost items (colour-blind friendly, Okabe–Ito).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"}

func esc(s string) string { return template.HTMLEscapeString(s) }

// niceStep returns a round tick step for a span divided into about n ticks.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// trafficSVG draws the month's in/out rates (Mbps) with the 95th percentile line.
func trafficSVG(t *TrafficSummary) string {
	const W, H, L, R, T, B = 1000.0, 300.0, 60.0, 20.0, 20.0, 40.0
	pw, ph := W-L-R, H-T-B
	n := len(t.Times)
	maxV := t.P95bps
	for i := range n {
		maxV = math.Max(maxV, math.Max(t.InBps[i], t.OutBps[i]))
	}
	maxM := maxV / 1e6
	step := niceStep(maxM, 5)
	top := math.Ceil(maxM/step) * step
	if top <= 0 {
		top = 1
	}
	t0, t1 := t.PeriodStart.Unix(), t.PeriodEnd.Unix()
	x := func(u int64) float64 { return L + pw*float64(u-t0)/float64(max(t1-t0, 1)) }
	y := func(bps float64) float64 { return T + ph*(1-bps/1e6/top) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" class="plot" role="img" aria-label="traffic month">`, W, H)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fff" stroke="#ccc"/>`, L, T, pw, ph)
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%g" y="%.1f" text-anchor="end" font-size="11">%g</text>`,
			L, W-R, y(v*1e6), y(v*1e6), L-5, y(v*1e6)+4, v)
	}
	fmt.Fprintf(&b, `<text x="12" y="%g" font-size="11" transform="rotate(-90 12 %g)" text-anchor="middle">Mbit/s</text>`, T+ph/2, T+ph/2)
	// Day ticks every 7 days from the period start.
	for d := t.PeriodStart; d.Before(t.PeriodEnd); d = d.AddDate(0, 0, 7) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#eee"/><text x="%.1f" y="%g" text-anchor="middle" font-size="11">%s</text>`,
			x(d.Unix()), x(d.Unix()), T, T+ph, x(d.Unix()), H-B+16, d.Format("Jan 2"))
	}
	series := func(vals []float64, colour, fill string) {
		var p strings.Builder
		for i := range n {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&p, "%s%.1f %.1f", cmd, x(t.Times[i].Unix()), y(vals[i]))
		}
		if fill != "" {
			fmt.Fprintf(&p, "L%.1f %.1f L%.1f %.1f Z", x(t.Times[n-1].Unix()), y(0), x(t.Times[0].Unix()), y(0))
			fmt.Fprintf(&b, `<path d="%s" fill="%s" stroke="none"/>`, p.String(), fill)
			return
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="0.8"/>`, p.String(), colour)
	}
	series(t.InBps, "", "#9fd59f")
	series(t.OutBps, "#0050a0", "")
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#d00" stroke-width="1.5" stroke-dasharray="6 3"/>`, L, W-R, y(t.P95bps), y(t.P95bps))
	fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" font-size="12" fill="#d00">95th: %s</text>`, W-R-4, y(t.P95bps)-5, esc(fmtBps(t.P95bps)))
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="#9fd59f"/><text x="%g" y="%g" font-size="11">in</text>`, L+10, T+8, L+24, T+17)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="3" fill="#0050a0"/><text x="%g" y="%g" font-size="11">out</text>`, L+50, T+12, L+64, T+17)
	b.WriteString(`</svg>`)
	return b.String()
}

// histogramSVG draws an RTT distribution with the physical floor and the SLA p95 limit.
func histogramSVG(samples []float64, floorMs float64, limit *float64) string {
	const W, H, L, R, T, B = 480.0, 200.0, 45.0, 10.0, 10.0, 35.0
	pw, ph := W-L-R, H-T-B
	lo, hi := samples[0], samples[0]
	for _, s := range samples {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	if floorMs > 0 {
		lo = math.Min(lo, floorMs)
	}
	if limit != nil {
		lo, hi = math.Min(lo, *limit), math.Max(hi, *limit)
	}
	step := niceStep(hi-lo, 6)
	x0 := math.Floor(lo/step) * step
	x1 := math.Ceil(hi/step) * step
	if x1 <= x0 {
		x1 = x0 + step
	}
	const bins = 40
	counts := make([]int, bins)
	bw := (x1 - x0) / bins
	for _, s := range samples {
		i := int((s - x0) / bw)
		counts[min(max(i, 0), bins-1)]++
	}
	cmax := 1
	for _, c := range counts {
		cmax = max(cmax, c)
	}
	x := func(v float64) float64 { return L + pw*(v-x0)/(x1-x0) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" class="plot" role="img" aria-label="RTT distribution">`, W, H)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fff" stroke="#ccc"/>`, L, T, pw, ph)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		h := ph * float64(c) / float64(cmax)
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#0072B2"/>`, x(x0+float64(i)*bw)+0.5, T+ph-h, pw/bins-1, h)
	}
	for v := x0; v <= x1+step/2; v += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle" font-size="11">%g</text>`, x(v), H-B+14, v)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" font-size="11">RTT ms (%d replies)</text>`, L+pw/2, H-4, len(samples))
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end" font-size="11">%d</text>`, L-4, T+10, cmax)
	if floorMs > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#555" stroke-dasharray="3 3"/><text x="%.1f" y="%g" font-size="10" fill="#555">floor</text>`,
			x(floorMs), x(floorMs), T, T+ph, x(floorMs)+3, T+22)
	}
	if limit != nil {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#d00" stroke-dasharray="5 3"/><text x="%.1f" y="%g" font-size="10" fill="#d00" text-anchor="end">SLA p95</text>`,
			x(*limit), x(*limit), T, T+ph, x(*limit)-3, T+12)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// costSVG draws each candidate's monthly cost in the base currency as a
// horizontal stacked bar of its items.
func costSVG(r *Result) string {
	type seg struct {
		name string
		v    float64
	}
	type row struct {
		name  string
		pass  bool
		segs  []seg
		total float64
	}
	var rows []row
	maxT := 0.0
	for _, e := range r.Candidates {
		m := e.Monthly
		if m == nil {
			continue
		}
		rate, err := decimal.NewFromString(m.Rate)
		if err != nil {
			rate = decimal.NewFromInt(1)
		}
		rw := row{name: e.Name, pass: e.SLA.Pass}
		for _, it := range m.Items {
			a, err := decimal.NewFromString(it.Amount)
			if err != nil {
				continue
			}
			f, _ := a.Mul(rate).Float64()
			rw.segs = append(rw.segs, seg{it.Name, f})
			rw.total += f
		}
		maxT = math.Max(maxT, rw.total)
		rows = append(rows, rw)
	}
	if len(rows) == 0 {
		return ""
	}
	const W, L, R, T = 1000.0, 120.0, 260.0, 10.0
	rowH := 34.0
	items := map[string]bool{}
	for _, rw := range rows {
		for _, s := range rw.segs {
			items[s.name] = true
		}
	}
	H := math.Max(T+rowH*float64(len(rows))+40, T+15*float64(len(items))+10)
	pw := W - L - R
	step := niceStep(maxT, 5)
	top := math.Ceil(maxT/step) * step
	if top <= 0 {
		top = 1
	}
	x := func(v float64) float64 { return L + pw*v/top }
	colours := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" class="plot" role="img" aria-label="monthly cost breakdown">`, W, H)
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#eee"/><text x="%.1f" y="%g" text-anchor="middle" font-size="11">%s</text>`,
			x(v), x(v), T, H-30, x(v), H-16, esc(fmtMoney(decimal.NewFromFloat(v).StringFixed(0))))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" font-size="11">%s per month</text>`, L+pw/2, H-2, esc(r.FXBase))
	for i, rw := range rows {
		y := T + rowH*float64(i)
		label := rw.name
		if !rw.pass {
			label += " ✗"
		}
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" font-size="12">%s</text>`, L-6, y+rowH/2+4, esc(label))
		acc := 0.0
		for _, s := range rw.segs {
			c, ok := colours[s.name]
			if !ok {
				c = palette[len(colours)%len(palette)]
				colours[s.name] = c
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.2f %s</title></rect>`,
				x(acc), y+5, math.Max(x(acc+s.v)-x(acc), 0), rowH-10, c, esc(s.name), s.v, esc(r.FXBase))
			acc += s.v
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12">%s</text>`, x(acc)+5, y+rowH/2+4, esc(fmtMoney(decimal.NewFromFloat(rw.total).StringFixed(0))))
	}
	// Legend in the order items first appeared.
	ly := T
	seen := map[string]bool{}
	for _, rw := range rows {
		for _, s := range rw.segs {
			if seen[s.name] {
				continue
			}
			seen[s.name] = true
			fmt.Fprintf(&b, `<rect x="%g" y="%.1f" width="10" height="10" fill="%s"/><text x="%g" y="%.1f" font-size="11">%s</text>`,
				W-R+90, ly, colours[s.name], W-R+104, ly+9, esc(s.name))
			ly += 15
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

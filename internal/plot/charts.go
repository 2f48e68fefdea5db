package plot

import (
	"math"
	"strconv"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ---- time series -----------------------------------------------------------

func (t TimeSeries) chart(w, _ int) *chart {
	p := newPlot(t.Title, "", t.YLabel)
	ch := &chart{p: p}
	var tmin, tmax time.Time
	ymax := 0.0
	loc := t.Loc
	for _, s := range t.Series {
		for i, x := range s.X {
			if tmin.IsZero() || x.Before(tmin) {
				tmin = x
			}
			if x.After(tmax) {
				tmax = x
			}
			if i < len(s.Y) && !math.IsNaN(s.Y[i]) && !math.IsInf(s.Y[i], 0) && s.Y[i] > ymax {
				ymax = s.Y[i]
			}
		}
		if loc == nil && len(s.X) > 0 {
			loc = s.X[0].Location()
		}
	}
	for _, hl := range t.HLines {
		if !math.IsNaN(hl.Y) && !math.IsInf(hl.Y, 0) {
			ymax = max(ymax, hl.Y)
		}
	}
	if loc == nil {
		loc = time.UTC
	}
	x0, x1 := float64(tmin.Unix()), float64(tmax.Unix())
	if tmin.IsZero() {
		x0, x1 = 0, 1
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min, p.Y.Max = 0, niceCeil(ymax)
	p.X.Tick.Marker = timeTicks{loc: loc, width: float64(w - 140)}
	// Bucket width for thinning: about one pixel column of the data area.
	cols := max(w-140, 100)
	bucket := (x1 - x0) / float64(cols)
	for i, s := range t.Series {
		col := colorAt(i, s.Color)
		var first *plotter.Line
		for _, r := range runs(s.X) {
			xs, ys := s.X[r[0]:r[1]], s.Y[r[0]:min(r[1], len(s.Y))]
			l, err := plotter.NewLine(thin(xs, ys, bucket))
			if err != nil { // NaN or Inf in the run: leave the run out
				continue
			}
			l.LineStyle = draw.LineStyle{Color: col, Width: 1.2}
			if s.Fill {
				l.FillColor = withAlpha(col, 120)
				l.LineStyle.Width = 0.8
			}
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		if first != nil && s.Name != "" {
			ch.legend = append(ch.legend, legendItem{s.Name, first})
		}
	}
	for i, hl := range t.HLines {
		if math.IsNaN(hl.Y) || math.IsInf(hl.Y, 0) {
			continue
		}
		col := colorAt(len(t.Series)+i, hl.Color)
		l, _ := plotter.NewLine(plotter.XYs{{X: x0, Y: hl.Y}, {X: x1, Y: hl.Y}})
		l.LineStyle = draw.LineStyle{Color: col, Width: 1.5}
		if hl.Dash {
			l.LineStyle.Dashes = dashed
		}
		p.Add(l)
		if hl.Label != "" {
			ch.margin = append(ch.margin, marginLabel{hl.Label, hl.Y, col})
		}
	}
	return ch
}

// runs splits a series at gaps (a spacing above 1.5 × the smallest one), so
// that missing samples show as breaks in the line, not as straight bridges.
func runs(xs []time.Time) [][2]int {
	step := time.Duration(math.MaxInt64)
	for i := 1; i < len(xs); i++ {
		if d := xs[i].Sub(xs[i-1]); d > 0 && d < step {
			step = d
		}
	}
	var out [][2]int
	start := 0
	for i := 1; i < len(xs); i++ {
		if xs[i].Sub(xs[i-1]) > step+step/2 {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	if len(xs) > 0 {
		out = append(out, [2]int{start, len(xs)})
	}
	return out
}

// thin keeps, per bucket of X, the lowest and the highest point in their
// order, so that a month of 5-minute slots draws as about two points per
// pixel column and a one-slot burst still reaches its height. NaN values are
// left out.
func thin(xs []time.Time, ys []float64, bucket float64) plotter.XYs {
	n := min(len(xs), len(ys))
	out := make(plotter.XYs, 0, min(n, 4096))
	if bucket <= 0 {
		bucket = 1
	}
	cur := math.Inf(-1)
	var lo, hi plotter.XY
	have := false
	flush := func() {
		if !have {
			return
		}
		if lo == hi {
			out = append(out, lo)
		} else if lo.X <= hi.X {
			out = append(out, lo, hi)
		} else {
			out = append(out, hi, lo)
		}
	}
	for i := 0; i < n; i++ {
		if math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			continue
		}
		pt := plotter.XY{X: float64(xs[i].Unix()), Y: ys[i]}
		b := math.Floor(pt.X / bucket)
		if !have || b != cur {
			flush()
			cur, lo, hi, have = b, pt, pt, true
			continue
		}
		if pt.Y < lo.Y {
			lo = pt
		}
		if pt.Y > hi.Y {
			hi = pt
		}
	}
	flush()
	return out
}

// timeTicks labels a Unix-seconds axis at round local times: hours within a
// day, midnights (calendar days, so DST days stay at 00:00) beyond.
type timeTicks struct {
	loc   *time.Location
	width float64 // of the axis, in points: about one label per 70
}

func (tt timeTicks) Ticks(lo, hi float64) []gplot.Tick {
	span := hi - lo
	steps := []time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 28 * 24 * time.Hour}
	step := steps[len(steps)-1]
	maxTicks := max(int(tt.width/70), 2)
	for _, s := range steps {
		if span/s.Seconds() <= float64(maxTicks) {
			step = s
			break
		}
	}
	layout := "15:04"
	if step >= 24*time.Hour {
		layout = "Jan 2"
	}
	t0 := time.Unix(int64(lo), 0).In(tt.loc)
	var t time.Time
	if step >= 24*time.Hour {
		t = time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 0, 0, 0, tt.loc)
	} else {
		t = t0.Truncate(step)
	}
	var out []gplot.Tick
	for ; float64(t.Unix()) <= hi && len(out) < 500; t = advance(t, step) {
		if float64(t.Unix()) >= lo {
			out = append(out, gplot.Tick{Value: float64(t.Unix()), Label: t.Format(layout)})
		}
	}
	return out
}

// advance steps in calendar days for day-sized steps, so that DST days keep ticks at midnight.
func advance(t time.Time, step time.Duration) time.Time {
	if step >= 24*time.Hour {
		return t.AddDate(0, 0, int(step/(24*time.Hour)))
	}
	return t.Add(step)
}

// ---- bars --------------------------------------------------------------------

func (b Bars) chart(w, _ int) *chart {
	p := newPlot(b.Title, "", b.YLabel)
	ch := &chart{p: p}
	n := len(b.Categories)
	ymax := 0.0
	for i := 0; i < n; i++ {
		sum := 0.0
		for _, s := range b.Series {
			if i < len(s.Values) && !math.IsNaN(s.Values[i]) && !math.IsInf(s.Values[i], 0) {
				if b.Stacked {
					sum += max(s.Values[i], 0)
				} else {
					ymax = max(ymax, s.Values[i])
				}
			}
		}
		ymax = max(ymax, sum)
	}
	p.Y.Min, p.Y.Max = 0, niceCeil(ymax)
	if n == 0 {
		p.X.Min, p.X.Max = 0, 1
		return ch
	}
	p.NominalX(b.Categories...)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Label.YAlign = draw.YTop
	slot := vg.Length(max(w-110, 100)) / vg.Length(n)
	bw := slot * 0.7
	ns := len(b.Series)
	var below *plotter.BarChart
	for j, s := range b.Series {
		vals := make(plotter.Values, n)
		for i := range vals {
			if i < len(s.Values) && !math.IsNaN(s.Values[i]) && !math.IsInf(s.Values[i], 0) {
				vals[i] = s.Values[i]
				if b.Stacked {
					vals[i] = max(vals[i], 0)
				}
			}
		}
		width := bw
		if !b.Stacked && ns > 0 {
			width = bw / vg.Length(ns)
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			continue
		}
		col := colorAt(j, s.Color)
		bc.Color = col
		bc.LineStyle = draw.LineStyle{Color: withAlpha(col, 0), Width: 0}
		if b.Stacked {
			if below != nil {
				bc.StackOn(below)
			}
			below = bc
		} else {
			bc.Offset = width * (vg.Length(j) - vg.Length(ns-1)/2)
		}
		p.Add(bc)
		if s.Name != "" {
			ch.legend = append(ch.legend, legendItem{s.Name, bc})
		}
	}
	// Each stacked bar (or a single series' bar) carries its total above it,
	// so the figure reads without hovering.
	if b.Stacked || ns == 1 {
		tot := &plotter.Labels{Offset: vg.Point{Y: 3}}
		for i := 0; i < n; i++ {
			sum, any := 0.0, false
			for _, s := range b.Series {
				if i < len(s.Values) && finite(s.Values[i]) {
					sum += max(s.Values[i], 0)
					any = true
				}
			}
			if !any {
				continue
			}
			st := textStyle(noteSize, false, textColor)
			st.XAlign, st.YAlign = draw.XCenter, draw.YBottom
			tot.XYs = append(tot.XYs, plotter.XY{X: float64(i), Y: sum})
			tot.Labels = append(tot.Labels, fmtTotal(sum))
			tot.TextStyle = append(tot.TextStyle, st)
		}
		if len(tot.XYs) > 0 {
			p.Add(tot)
		}
	}
	return ch
}

// ---- histogram -------------------------------------------------------------

func (hs Histogram) chart(_, _ int) *chart {
	p := newPlot(hs.Title, hs.XLabel, "count")
	ch := &chart{p: p}
	bins := hs.Bins
	if bins <= 0 {
		bins = 30
	}
	bins = min(bins, 10000)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range hs.Series {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	width := (hi - lo) / float64(bins)
	cmax := 0.0
	var hists []*plotter.Histogram
	for _, s := range hs.Series {
		h := &plotter.Histogram{Width: width, Bins: make([]plotter.HistogramBin, bins)}
		for k := range h.Bins {
			h.Bins[k].Min, h.Bins[k].Max = lo+float64(k)*width, lo+float64(k+1)*width
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			k := min(int((v-lo)/width), bins-1)
			h.Bins[k].Weight++
			cmax = max(cmax, h.Bins[k].Weight)
		}
		hists = append(hists, h)
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = 0, niceCeil(max(cmax, 1))
	p.X.Tick.Marker = compactTicks{}
	for i, s := range hs.Series {
		col := colorAt(i, s.Color)
		hists[i].FillColor = withAlpha(col, 70)
		hists[i].LineStyle = draw.LineStyle{Color: col, Width: 1.2}
		p.Add(hists[i])
		if s.Name != "" {
			ch.legend = append(ch.legend, legendItem{s.Name, hists[i]})
		}
	}
	return ch
}

// ---- curves over a numeric axis ---------------------------------------------

func (x XYChart) chart(_, _ int) *chart {
	p := newPlot(x.Title, x.XLabel, x.YLabel)
	ch := &chart{p: p}
	lo, hi, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, c := range x.Curves {
		for i := 0; i < min(len(c.X), len(c.Y)); i++ {
			if finite(c.X[i]) && finite(c.Y[i]) {
				lo, hi, ymax = min(lo, c.X[i]), max(hi, c.X[i]), max(ymax, c.Y[i])
			}
		}
	}
	if x.XMin != 0 || x.XMax != 0 {
		lo, hi = x.XMin, x.XMax
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = 0, niceCeil(ymax)
	p.X.Tick.Marker = compactTicks{}
	for i, c := range x.Curves {
		// Runs of finite points: a non-finite Y breaks the line.
		var all plotter.XYs
		var segs []plotter.XYs
		var cur plotter.XYs
		for k := 0; k < min(len(c.X), len(c.Y)); k++ {
			if finite(c.X[k]) && finite(c.Y[k]) {
				pt := plotter.XY{X: c.X[k], Y: c.Y[k]}
				cur, all = append(cur, pt), append(all, pt)
				continue
			}
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
		}
		if len(cur) > 0 {
			segs = append(segs, cur)
		}
		if len(all) == 0 {
			continue
		}
		col := colorAt(i, c.Color)
		for _, seg := range segs {
			if len(seg) < 2 {
				continue
			}
			l, _ := plotter.NewLine(seg)
			l.LineStyle = draw.LineStyle{Color: col, Width: 1.6}
			if c.Dash {
				l.LineStyle.Dashes = dashed
			}
			p.Add(l)
		}
		if c.Points {
			sc, _ := plotter.NewScatter(all)
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: 2.2, Shape: draw.CircleGlyph{}}
			p.Add(sc)
		}
		if c.Name != "" {
			ch.margin = append(ch.margin, marginLabel{c.Name, all[len(all)-1].Y, col})
		}
	}
	for _, m := range x.Marks {
		if finite(m.X) && finite(m.Y) {
			ch.marks = append(ch.marks, m)
		}
	}
	for _, v := range x.VLines {
		if !finite(v.X) || v.X < lo || v.X > hi {
			continue
		}
		l, _ := plotter.NewLine(plotter.XYs{{X: v.X, Y: p.Y.Min}, {X: v.X, Y: p.Y.Max}})
		l.LineStyle = draw.LineStyle{Color: markColor, Width: 1, Dashes: dashed}
		p.Add(l)
		ch.vlabels = append(ch.vlabels, v)
	}
	return ch
}

// fmtTotal writes a bar's total in full, grouped by thousands (144,692), to
// the unit from 100 up.
func fmtTotal(v float64) string {
	if math.Abs(v) < 100 {
		return trimZero(v)
	}
	s := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

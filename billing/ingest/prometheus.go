package ingest

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/linecheck/linecheck/billing"
)

// Prometheus query_range matrices, saved to a file or fetched live
// (internal/promclient), become series here, by one set of rules:
//
//   - values are bit/s (from rate(x[5m])*8), each stamped with the END of the
//     interval it averages: the value at t is the slot starting at t−step;
//   - a result's direction is its query's (bill --query-in/--query-out), else
//     its "direction" (or "dir") label, in/out (or the two values of
//     --columns); an unlabelled result of a file is inbound (--columns out:
//     outbound);
//   - results are grouped by their labels without the metric name and the
//     direction label; a lone inbound and a lone outbound result pair
//     whatever their labels;
//   - a series is named by its ifName when that names it alone, else by the
//     labels that tell the groups apart (one group: its whole label set);
//   - a time with a value in one direction only, and a NaN, is a gap (counted
//     in the warnings); an infinite, negative or impossible value is refused.

var (
	promInDirs  = []string{"in", "rx", "receive", "inbound", "ingress"}
	promOutDirs = []string{"out", "tx", "transmit", "outbound", "egress"}
)

// readPrometheus reads a saved query_range answer.
// prometheusReader reads a Prometheus query_range response, told by its
// "resultType" or "status".
var prometheusReader = trafficReader{name: "prometheus", rank: 20, jsonTitle: "a Prometheus query_range response",
	detect: func(s []byte) bool { return jsonWith(s, `"resultType"`, `"status"`) },
	read:   func(in readInput) ([]*billing.Series, error) { return readPrometheus(in.br, in.name, in.opts) },
}

func readPrometheus(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	var results []*PromResult
	a, err := DecodePromMatrix(r, file, PromDecodeOptions{KeepLines: true}, func(res *PromResult) error {
		results = append(results, res)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if a.Status != "" && a.Status != "success" {
		return nil, errAt(file, a.StatusLine, "status", "the query failed: %s %s", a.Status, a.Error)
	}
	if a.ResultType != "" && a.ResultType != "matrix" {
		return nil, errAt(file, a.TypeLine, "resultType", "%q: save a query_range response (resultType matrix)", a.ResultType)
	}
	if len(results) == 0 {
		return nil, &ReadError{File: file, Line: int(a.TypeLine), Field: "result", Msg: "no series in the response", Err: ErrEmpty}
	}
	return PromSeries(results, file, opts, PromOptions{})
}

// PromOptions says how PromSeries treats its results.
type PromOptions struct {
	// Step is the query step in seconds; 0 infers it from the points (the
	// smallest spacing in any result).
	Step int64
	// Paired requires both directions for every label set (two queries,
	// one per direction): a label set on one side only is an error.
	Paired bool
	// MaxPoints bounds the points the results may hold (0: no bound).
	MaxPoints int64
	// Queries are the PromQL of the inbound and outbound results, when
	// known (live fetches): a 32-bit counter in them is warned about.
	Queries [2]string
}

// counter32Names are the 32-bit SNMP octet counters (IF-MIB ifInOctets and
// ifOutOctets; the 64-bit ones are ifHCInOctets and ifHCOutOctets), compiled
// on first use rather than in the init of every command.
var counter32Names = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bif(In|Out)Octets\b`) })

// PromLabels renders a label set as Prometheus writes it, {a="x",b="y"} in
// name order, leaving out the names in skip.
func PromLabels(l map[string]string, skip ...string) string {
	names := make([]string, 0, len(l))
	for k := range l {
		if !slices.Contains(skip, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + strconv.Quote(l[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// promGroup is one label set and its two directions.
type promGroup struct {
	key     string
	labels  map[string]string // without the metric name and the direction label
	in, out *PromResult
	dirless bool // an unlabelled result taken as one direction
}

// PromSeries builds one series per label set from the results of a
// query_range matrix (see the rules above). source names the file or the
// server in messages and is each series' Source.
func PromSeries(results []*PromResult, source string, opts ReadOptions, po PromOptions) ([]*billing.Series, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	dirs, err := newPromDirs(opts.Columns)
	if err != nil {
		return nil, err
	}
	if po.MaxPoints > 0 {
		var n int64
		for _, r := range results {
			n += int64(len(r.Points))
		}
		if n > po.MaxPoints {
			return nil, fmt.Errorf("%s: %d points, more than the limit of %d: narrow the query or the period: %w", source, n, po.MaxPoints, ErrTooLarge)
		}
	}
	groups, err := promGroups(results, source, dirs)
	if err != nil {
		return nil, err
	}
	if po.Paired {
		for _, g := range groups {
			switch {
			case g.out == nil:
				return nil, fmt.Errorf("--query-in: series %s has no --query-out series with the same labels", plainOrQuoted(g.key))
			case g.in == nil:
				return nil, fmt.Errorf("--query-out: series %s has no --query-in series with the same labels", plainOrQuoted(g.key))
			}
		}
	}
	step := po.Step
	if step == 0 {
		step = promStep(results)
	}
	sets := make([]map[string]string, len(groups))
	for i, g := range groups {
		sets[i] = g.labels
	}
	names := promNames(sets)
	out := make([]*billing.Series, 0, len(groups))
	for i, g := range groups {
		s, err := promBuild(source, names[i], g, step, opts, len(opts.Columns) == 0)
		if err != nil {
			return nil, err
		}
		warnCounter32(s, po.Queries)
		g.in, g.out = nil, nil // the points are on the grid now: free them
		out = append(out, s)
	}
	return out, nil
}

// promDirs are the direction label's values for in and out (the rules
// above, or --columns), and the direction of a result without one.
type promDirs struct {
	in, out       []string
	unlabelledOut bool
}

func newPromDirs(columns []string) (promDirs, error) {
	d := promDirs{in: promInDirs, out: promOutDirs}
	if len(columns) == 2 {
		d.in, d.out = columns[:1], columns[1:]
	}
	if len(columns) == 1 {
		c := strings.ToLower(columns[0])
		switch {
		case slices.Contains(promOutDirs, c):
			d.unlabelledOut = true
		case !slices.Contains(promInDirs, c):
			return d, fmt.Errorf("columns %q: for Prometheus input name the direction of the results: in or out", columns[0])
		}
	}
	return d, nil
}

// of is a result's direction ("in" or "out") and the label that said so
// ("" when none did).
func (d promDirs) of(r *PromResult, source string) (dir, dirLabel string, err error) {
	if r.Dir != "" {
		return r.Dir, "", nil
	}
	dir = "in"
	if d.unlabelledOut {
		dir = "out"
	}
	eq := func(list []string, v string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, v) })
	}
	for _, k := range []string{"direction", "dir"} {
		v, ok := r.Labels[k]
		if !ok {
			continue
		}
		switch {
		case eq(d.out, v):
			return "out", k, nil
		case eq(d.in, v):
			return "in", k, nil
		}
		return "", "", errAt(source, r.Line, "metric."+k, "%q is neither an inbound (%s) nor an outbound (%s) direction",
			strings.ToLower(v), strings.Join(d.in, ", "), strings.Join(d.out, ", "))
	}
	return dir, "", nil
}

// promGroups pairs the results by their labels less the metric name and
// the direction label, sorted by those labels. A lone inbound and a lone
// outbound result pair whatever their labels.
func promGroups(results []*PromResult, source string, dirs promDirs) ([]*promGroup, error) {
	queryName := map[string]string{"in": "--query-in", "out": "--query-out"}
	var ins, outs []*PromResult
	byKey := map[string]*promGroup{}
	var groups []*promGroup
	for _, r := range results {
		dir, dirLabel, err := dirs.of(r, source)
		if err != nil {
			return nil, err
		}
		key := PromLabels(r.Labels, "__name__", dirLabel)
		g := byKey[key]
		if g == nil {
			g = &promGroup{key: key, labels: map[string]string{}}
			for k, v := range r.Labels {
				if k != "__name__" && k != dirLabel {
					g.labels[k] = v
				}
			}
			byKey[key] = g
			groups = append(groups, g)
		}
		side := &g.in
		if dir == "out" {
			side = &g.out
			outs = append(outs, r)
		} else {
			ins = append(ins, r)
		}
		if *side != nil {
			what := "two results"
			if r.Dir != "" {
				what = queryName[r.Dir] + ": two series"
			}
			return nil, errAt(source, r.Line, "metric", "%s with the labels %s once the metric name is dropped", what, plainOrQuoted(PromLabels(r.Labels, "__name__")))
		}
		*side = r
		g.dirless = dirLabel == "" && r.Dir == ""
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("%s: no series: check the metric names, labels and the period", source)
	}
	if len(ins) == 1 && len(outs) == 1 && len(groups) == 2 {
		g := groups[0]
		if g.in == nil {
			g = groups[1]
		}
		g.out = outs[0]
		groups = []*promGroup{g}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].key < groups[j].key })
	return groups, nil
}

// promStep is the query's step when none was given: one query, one step,
// the smallest spacing in any result, so that a result with a gap between
// its only two points is not taken as coarse.
func promStep(results []*PromResult) int64 {
	var step int64
	for _, r := range results {
		for i := 1; i < len(r.Points); i++ {
			if d := r.Points[i].T - r.Points[i-1].T; d > 0 && (step == 0 || d < step) {
				step = d
			}
		}
	}
	return step
}

// promBuild puts one group on the grid.
func promBuild(source, name string, g *promGroup, step int64, opts ReadOptions, warnDirless bool) (*billing.Series, error) {
	b := newBuilder(source, name, opts)
	line := func(r *PromResult, i int) int64 {
		if r.Lines != nil {
			return r.Lines[i]
		}
		return r.Line
	}
	side := func(r *PromResult) ([]rawPoint, error) {
		pts := make([]rawPoint, len(r.Points))
		for i, p := range r.Points {
			pts[i] = rawPoint{t: p.T, line: line(r, i), in: p.V / 8, unknown: math.IsNaN(p.V)}
			if i > 0 && p.T <= r.Points[i-1].T {
				return nil, orderErr(source, pts[i], pts[i-1], "values")
			}
		}
		return pts, nil
	}
	var pts []rawPoint
	var err error
	nan, oneSided := 0, 0
	switch {
	case g.in != nil && g.out != nil:
		in, err := side(g.in)
		if err != nil {
			return nil, err
		}
		o, err := side(g.out)
		if err != nil {
			return nil, err
		}
		pts, oneSided = promJoin(in, o)
	case g.in != nil:
		if pts, err = side(g.in); err != nil {
			return nil, err
		}
		if g.dirless && warnDirless {
			b.warnf(g.in.Line, "no direction label: values counted as inbound (--columns out to count them as outbound; a direction=\"in\"/\"out\" label pairs both)")
		}
	default:
		if pts, err = side(g.out); err != nil {
			return nil, err
		}
		for i := range pts {
			pts[i].in, pts[i].out = 0, pts[i].in
		}
	}
	for i, p := range pts {
		if math.IsNaN(p.in) || math.IsNaN(p.out) {
			nan++ // one-sided times have zeros here: counted apart
		}
		if p.unknown {
			pts[i].in, pts[i].out = 0, 0
		}
	}
	if err := b.addRegular(pts, regular{step: step, end: true, rate: true, field: "values"}); err != nil {
		return nil, err
	}
	if oneSided > 0 {
		b.warnf(0, "%s: %d slots had a value in one direction only and count as gaps", name, oneSided)
	}
	if nan > 0 {
		b.warnf(0, "%s: %d NaN values count as gaps", name, nan)
	}
	s := b.finish()
	s.Source = source
	s.Format = "prometheus"
	return s, nil
}

// warnCounter32 warns when a query reads a 32-bit counter: rate() takes
// each wrap for a counter reset, so the traffic between the last scrape
// before the wrap and the wrap is lost, once per 2^32 bytes.
func warnCounter32(s *billing.Series, queries [2]string) {
	for d, q := range queries {
		m := counter32Names().FindString(q)
		if m == "" {
			continue
		}
		var total float64
		for _, sl := range s.Slots {
			total += [2]float64{sl.In, sl.Out}[d]
		}
		wraps := math.Floor(total / (1 << 32))
		dir := [2]string{"--query-in", "--query-out"}[d]
		if wraps == 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s: %s reads %s, a 32-bit counter: it did not wrap in this period at this traffic, but rate() would take a wrap for a reset and lose traffic; use the 64-bit ifHC%s",
				s.Source, s.Name, dir, m, m[2:]))
			continue
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s: %s reads %s, a 32-bit counter that wrapped about %.0f times in this period (every 4.29 GB): rate() takes each wrap for a counter reset and loses the traffic between the last scrape before the wrap and the wrap, so these figures are low; use the 64-bit ifHC%s",
			s.Source, s.Name, dir, m, wraps, m[2:]))
	}
}

// promJoin joins an inbound and an outbound side (each ascending) by time; a
// time with only one side is a gap, counted.
func promJoin(in, out []rawPoint) ([]rawPoint, int) {
	pts := make([]rawPoint, 0, max(len(in), len(out)))
	one := 0
	i, j := 0, 0
	for i < len(in) || j < len(out) {
		switch {
		case j == len(out) || i < len(in) && in[i].t < out[j].t:
			p := in[i]
			p.unknown = true
			p.in = 0
			pts = append(pts, p)
			one++
			i++
		case i == len(in) || out[j].t < in[i].t:
			p := out[j]
			p.in, p.out, p.unknown = 0, 0, true
			pts = append(pts, p)
			one++
			j++
		default:
			p := in[i]
			p.out = out[j].in
			p.unknown = in[i].unknown || out[j].unknown
			pts = append(pts, p)
			i++
			j++
		}
	}
	return pts, one
}

// promNames names each label set: by its ifName when no other set has the
// same (the snmp_exporter convention), else by the labels whose values
// differ between the sets; a single set by its whole label set ("prometheus"
// when it has none).
func promNames(sets []map[string]string) []string {
	names := make([]string, len(sets))
	count := map[string]int{}
	for _, s := range sets {
		count[s["ifName"]]++
	}
	var differing []string // labels not equal across all sets
	if len(sets) > 1 {
		all := map[string]bool{}
		for _, s := range sets {
			for k := range s {
				all[k] = true
			}
		}
		for k := range all {
			v0, ok0 := sets[0][k]
			for _, s := range sets[1:] {
				if v, ok := s[k]; ok != ok0 || v != v0 {
					differing = append(differing, k)
					break
				}
			}
		}
	}
	for i, s := range sets {
		switch n := s["ifName"]; {
		case n != "" && count[n] == 1:
			names[i] = n
		case len(sets) == 1:
			names[i] = PromLabels(s)
			if names[i] == "{}" {
				names[i] = "prometheus"
			}
		default:
			keep := map[string]string{}
			for _, k := range differing {
				if v, ok := s[k]; ok {
					keep[k] = v
				}
			}
			names[i] = strings.Trim(PromLabels(keep), "{}")
			if names[i] == "" {
				names[i] = PromLabels(s)
			}
		}
		// A label value is the server's text: a 200 MB one (or control
		// characters) is quoted and cut, as the file readers do with theirs.
		names[i] = plainOrQuoted(names[i])
	}
	return names
}

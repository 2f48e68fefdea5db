package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/linecheck/linecheck/billing"
)

// Prometheus /api/v1/query_range response saved to a file (a "matrix"):
// values are bit/s as strings (from rate(x[5m])*8), each stamped with the END
// of the interval it averages. One Series per result, named by its ifName
// label, else by its label set. Results that differ only in a "direction"
// (or "dir") label, in/out (or the two values of --columns), are paired into
// one Series; a result without one is inbound traffic.

type promResult struct {
	labels map[string]string
	line   int64
	pts    []rawPoint
}

var (
	promInDirs  = []string{"in", "rx", "receive", "inbound", "ingress"}
	promOutDirs = []string{"out", "tx", "transmit", "outbound", "egress"}
)

func readPrometheus(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	d, err := newJSONDoc(r, file)
	if err != nil {
		return nil, err
	}
	var (
		results    []*promResult
		status     string
		statusLine int64 = 1
		errMsg     string
		resultType string
		typeLine   int64 = 1
	)
	err = d.object("", func(key string, line int64) error {
		switch key {
		case "status":
			statusLine = line
			return d.decode(key, &status)
		case "error":
			return d.decode(key, &errMsg)
		case "data":
			return d.object(key, func(k string, line int64) error {
				switch k {
				case "resultType":
					typeLine = line
					return d.decode(k, &resultType)
				case "result":
					return d.array(k, func(i int, line int64) error {
						res := &promResult{line: line}
						results = append(results, res)
						field := fmt.Sprintf("result[%d]", i)
						return d.object(field, func(k string, line int64) error {
							switch k {
							case "metric":
								return d.decode(field+".metric", &res.labels)
							case "value":
								return d.errf(line, field+".value", "an instant query result (vector): save a query_range response (a matrix)")
							case "values":
								return d.array(field+".values", func(j int, line int64) error {
									f := fmt.Sprintf("%s.values[%d]", field, j)
									var pair []any
									if err := d.decode(f, &pair); err != nil {
										return err
									}
									p, err := promPoint(d, pair, line, f)
									if err != nil {
										return err
									}
									res.pts = append(res.pts, p)
									return nil
								})
							}
							return d.skip(field + "." + k)
						})
					})
				}
				return d.skip(k)
			})
		}
		return d.skip(key)
	})
	if err != nil {
		return nil, err
	}
	if status != "" && status != "success" {
		return nil, d.errf(statusLine, "status", "the query failed: %s %s", status, errMsg)
	}
	if resultType != "" && resultType != "matrix" {
		return nil, d.errf(typeLine, "resultType", "%q: save a query_range response (resultType matrix)", resultType)
	}
	if len(results) == 0 {
		return nil, &ReadError{File: file, Line: int(typeLine), Field: "result", Msg: "no series in the response", Err: ErrEmpty}
	}
	return promSeries(file, results, opts)
}

func promPoint(d *jsonDoc, pair []any, line int64, field string) (rawPoint, error) {
	p := rawPoint{line: line}
	if len(pair) != 2 {
		return p, d.errf(line, field, "want [time, \"value\"], got %d elements", len(pair))
	}
	n, ok := pair[0].(json.Number)
	if !ok {
		return p, d.errf(line, field, "time %v is not a number", pair[0])
	}
	t, err := n.Float64()
	if err != nil || t < 0 || t > 1e11 {
		return p, d.errf(line, field, "time %s is not a unix time", n)
	}
	p.t = int64(math.Round(t))
	v, unknown, msg := jsonNumber(pair[1])
	if msg != "" {
		return p, d.errf(line, field, "value %s", msg)
	}
	p.in, p.unknown = v/8, unknown
	return p, nil
}

// labelSet renders labels as {a="b", c="d"}, sorted, without skip.
func labelSet(l map[string]string, skip string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		if k != skip {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", k, l[k])
	}
	b.WriteByte('}')
	return b.String()
}

func promSeries(file string, results []*promResult, opts ReadOptions) ([]*billing.Series, error) {
	inDirs, outDirs := promInDirs, promOutDirs
	if len(opts.Columns) == 2 {
		inDirs, outDirs = opts.Columns[:1], opts.Columns[1:]
	}
	// One --columns value says which direction unlabelled results are.
	unlabelledOut := false
	if len(opts.Columns) == 1 {
		c := strings.ToLower(opts.Columns[0])
		switch {
		case slices.Contains(promOutDirs, c):
			unlabelledOut = true
		case !slices.Contains(promInDirs, c):
			return nil, fmt.Errorf("columns %q: for Prometheus input name the direction of the results: in or out", opts.Columns[0])
		}
	}
	type group struct {
		key     string
		labels  map[string]string
		in, out *promResult
		line    int64
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, r := range results {
		dirLabel, dir := "", ""
		for _, k := range []string{"direction", "dir"} {
			if v, ok := r.labels[k]; ok {
				dirLabel, dir = k, strings.ToLower(v)
				break
			}
		}
		key := labelSet(r.labels, dirLabel)
		g := byKey[key]
		if g == nil {
			g = &group{key: key, labels: r.labels, line: r.line}
			byKey[key] = g
			groups = append(groups, g)
		}
		isOut := dirLabel != "" && slices.ContainsFunc(outDirs, func(s string) bool { return strings.EqualFold(s, dir) }) ||
			dirLabel == "" && unlabelledOut
		if dirLabel != "" && !isOut && !slices.ContainsFunc(inDirs, func(s string) bool { return strings.EqualFold(s, dir) }) {
			return nil, errAt(file, r.line, "metric."+dirLabel, "%q is neither an inbound (%s) nor an outbound (%s) direction", dir, strings.Join(inDirs, ", "), strings.Join(outDirs, ", "))
		}
		slot := &g.in
		if isOut {
			slot = &g.out
		}
		if *slot != nil {
			return nil, errAt(file, r.line, "metric", "two results with the same labels %s", labelSet(r.labels, ""))
		}
		*slot = r
	}
	// One query, one step: the smallest spacing in any result, so that a
	// result with a gap between its only two points is not taken as coarse.
	var step int64
	for _, r := range results {
		for i := 1; i < len(r.pts); i++ {
			if d := r.pts[i].t - r.pts[i-1].t; d > 0 && (step == 0 || d < step) {
				step = d
			}
		}
	}
	// ifName when it names each group alone.
	count := map[string]int{}
	for _, g := range groups {
		count[g.labels["ifName"]]++
	}
	var out []*billing.Series
	for _, g := range groups {
		name := g.key
		if n := g.labels["ifName"]; n != "" && count[n] == 1 {
			name = n
		}
		b := newBuilder(file, name, opts)
		var pts []rawPoint
		switch {
		case g.in != nil && g.out != nil:
			pts = promPair(g.in.pts, g.out.pts)
		case g.in != nil:
			pts = g.in.pts
			if _, ok := g.labels["direction"]; !ok && len(opts.Columns) == 0 {
				if _, ok := g.labels["dir"]; !ok {
					b.warnf(g.line, "no direction label: values counted as inbound (--columns out to count them as outbound; a direction=\"in\"/\"out\" label pairs both)")
				}
			}
		default:
			pts = g.out.pts
			for i := range pts {
				pts[i].in, pts[i].out = 0, pts[i].in
			}
		}
		if err := b.addRegular(pts, regular{step: step, end: true, rate: true, field: "values"}); err != nil {
			return nil, err
		}
		out = append(out, b.finish())
	}
	return out, nil
}

// promPair joins an inbound and an outbound result by timestamp; a time with
// only one side is a gap. Both must be ascending (checked after the join
// through the joined order and the line numbers).
func promPair(in, out []rawPoint) []rawPoint {
	for _, s := range [][]rawPoint{in, out} {
		for i := 1; i < len(s); i++ {
			if s[i].t <= s[i-1].t {
				return s // let addRegular report the order error
			}
		}
	}
	var pts []rawPoint
	i, j := 0, 0
	for i < len(in) || j < len(out) {
		switch {
		case j == len(out) || i < len(in) && in[i].t < out[j].t:
			p := in[i]
			p.unknown = true
			pts = append(pts, p)
			i++
		case i == len(in) || out[j].t < in[i].t:
			p := out[j]
			p.in, p.out, p.unknown = 0, 0, true
			pts = append(pts, p)
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
	return pts
}

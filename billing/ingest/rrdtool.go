package ingest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/billing"
)

// rrdtool xport output (XML, or JSON with --json), with or without
// --showtime. Values are per second, bytes unless the legend says bits
// ("in bps", "bit/s"); each row's time marks the END of its interval
// [t−step, t) (man rrdxport); rows without <t> are at start + i·step; NaN
// (XML) and null (JSON) are gaps.

type rrdDoc struct {
	start, step int64
	legend      []string
	rows        []rrdRow
}

type rrdRow struct {
	line    int64
	t       int64
	hasTime bool
	v       []float64 // NaN = unknown
}

var (
	rrdInWords  = []string{"in", "rx", "inbound", "input", "ingress", "recv", "received"}
	rrdOutWords = []string{"out", "tx", "outbound", "output", "egress", "sent"}
)

func firstWord(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '_' || r == '-' || r == '(' })
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// legendBits says whether a legend entry announces bits per second.
func legendBits(entry string) bool {
	for _, w := range strings.Fields(entry) {
		w = strings.Trim(w, "()[],")
		switch w {
		case "bps", "bit/s", "bits/s", "bits", "b/s", "Mbps", "kbps", "Gbps":
			return true
		}
	}
	return false
}

// rrdColumns picks the in and out columns (out < 0: only one column) and
// whether each holds bits.
func rrdColumns(file string, line int64, legend []string, ncols int, opts ReadOptions) (in, out int, bits [2]bool, note string, err error) {
	in, out = -1, -1
	match := func(name string) int {
		for i, e := range legend {
			if strings.EqualFold(strings.TrimSpace(e), name) || strings.EqualFold(firstWord(e), name) {
				return i
			}
		}
		return -1
	}
	switch {
	case len(opts.Columns) > 0:
		for k, c := range opts.Columns {
			i := match(c)
			if i < 0 {
				return 0, 0, bits, "", errAt(file, line, "legend", "no column named %q (legend: %s)", c, strings.Join(legend, ", "))
			}
			if k == 0 {
				in = i
			} else {
				out = i
			}
		}
	default:
		for i, e := range legend {
			w := firstWord(e)
			if in < 0 && slices.Contains(rrdInWords, w) {
				in = i
			} else if out < 0 && slices.Contains(rrdOutWords, w) {
				out = i
			}
		}
		if in < 0 || out < 0 && ncols > 1 {
			in, out = 0, -1
			if ncols > 1 {
				out = 1
			}
		}
	}
	if ncols == 0 {
		return 0, 0, bits, "", errAt(file, line, "legend", "no columns")
	}
	if out < 0 && len(opts.Columns) < 2 {
		note = "only one column: it is read as inbound, outbound is zero"
	}
	for k, i := range []int{in, out} {
		switch {
		case i < 0:
		case opts.Units == "bps":
			bits[k] = true
		case opts.Units == "bytes":
		case i < len(legend):
			bits[k] = legendBits(legend[i])
		}
	}
	return in, out, bits, note, nil
}

// rrdSeries puts an xport document on the grid.
func rrdSeries(file string, metaLine int64, doc *rrdDoc, opts ReadOptions) ([]*billing.Series, error) {
	if doc.step <= 0 {
		return nil, errAt(file, metaLine, "step", "missing or not positive")
	}
	if len(doc.rows) == 0 {
		return nil, &ReadError{File: file, Line: int(metaLine), Msg: "no data rows", Err: ErrEmpty}
	}
	ncols := len(doc.legend)
	if ncols == 0 {
		ncols = len(doc.rows[0].v)
	}
	in, out, bits, note, err := rrdColumns(file, metaLine, doc.legend, ncols, opts)
	if err != nil {
		return nil, err
	}
	b := newBuilder(file, baseName(file), opts)
	if note != "" {
		b.warnf(metaLine, "%s", note)
	}
	for k, name := range []string{"in", "out"} {
		if bits[k] {
			col := []int{in, out}[k]
			b.warnf(metaLine, "%s: legend %q says bits: values read as bit/s", name, doc.legend[col])
		}
	}
	pts := make([]rawPoint, len(doc.rows))
	withTime := doc.rows[0].hasTime
	for i, r := range doc.rows {
		if r.hasTime != withTime {
			return nil, errAt(file, r.line, "t", "some rows have a timestamp, others do not")
		}
		if len(r.v) != ncols {
			return nil, errAt(file, r.line, "v", "%d values, the legend has %d columns", len(r.v), ncols)
		}
		p := rawPoint{t: doc.start + int64(i)*doc.step, line: r.line}
		if withTime {
			p.t = r.t
		}
		vals := [2]float64{}
		for k, c := range []int{in, out} {
			if c < 0 {
				continue
			}
			v := r.v[c]
			if v != v {
				p.unknown = true
				continue
			}
			if bits[k] {
				v /= 8
			}
			vals[k] = v
		}
		p.in, p.out = vals[0], vals[1]
		pts[i] = p
	}
	if err := b.addRegular(pts, regular{step: doc.step, end: true, rate: true, field: "t"}); err != nil {
		return nil, err
	}
	return []*billing.Series{b.finish()}, nil
}

// rrdXMLReader reads rrdtool xport's XML, told by its root element.
var rrdXMLReader = trafficReader{name: "rrdtool-xml", rank: 40,
	detect: func(s []byte) bool { return s[0] == '<' && bytes.Contains(s, []byte("<xport")) },
	read:   func(in readInput) ([]*billing.Series, error) { return readRRDXML(in.br, in.name, in.opts) },
}

// rrdJSONReader reads rrdtool xport --json: "meta" with a legend or
// rrdtool's name; after vnstat and Prometheus, whose keys decide first.
var rrdJSONReader = trafficReader{name: "rrdtool-json", rank: 30, jsonTitle: "rrdtool xport --json",
	detect: func(s []byte) bool {
		return jsonWith(s, `"meta"`) && (bytes.Contains(s, []byte(`"legend"`)) || bytes.Contains(s, []byte(`RRDtool`)))
	},
	read: func(in readInput) ([]*billing.Series, error) { return readRRDJSON(in.br, in.name, in.opts) },
}

func readRRDXML(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var (
		doc      rrdDoc
		path     []string
		text     strings.Builder
		row      *rrdRow
		metaLine int64 = 1
		gotRoot  bool
	)
	lineNow := func() int64 { l, _ := dec.InputPos(); return int64(l) }
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &ReadError{File: file, Line: max(se.Line, 1), Msg: "invalid XML: " + se.Msg, Err: err}
			}
			return nil, &ReadError{File: file, Line: int(lineNow()), Msg: "invalid XML: " + err.Error(), Err: err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if len(path) == 0 {
				if name != "xport" {
					return nil, errAt(file, lineNow(), name, "root element is <%s>, want <xport>", name)
				}
				gotRoot = true
			}
			path = append(path, name)
			text.Reset()
			if name == "row" && len(path) == 3 && path[1] == "data" {
				doc.rows = append(doc.rows, rrdRow{line: lineNow()})
				row = &doc.rows[len(doc.rows)-1]
			}
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if len(path) == 0 {
				continue
			}
			name := path[len(path)-1]
			val := strings.TrimSpace(text.String())
			text.Reset()
			line := lineNow()
			parent := ""
			if len(path) >= 2 {
				parent = path[len(path)-2]
			}
			switch {
			case parent == "meta" && (name == "start" || name == "step"):
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil || n < 0 {
					return nil, errAt(file, line, name, "%q is not a unix time or a step in seconds", val)
				}
				if name == "start" {
					doc.start = n
				} else {
					doc.step = n
				}
				metaLine = line
			case parent == "legend" && name == "entry":
				doc.legend = append(doc.legend, val)
				metaLine = line
			case parent == "row" && name == "t" && row != nil:
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					return nil, errAt(file, line, "t", "%q is not a unix time", val)
				}
				row.t, row.hasTime = n, true
			case parent == "row" && name == "v" && row != nil:
				v, msg := rrdValue(val)
				if msg != "" {
					return nil, errAt(file, line, fmt.Sprintf("v[%d]", len(row.v)), "%s", msg)
				}
				row.v = append(row.v, v)
			case name == "row":
				row = nil
			}
			path = path[:len(path)-1]
		}
	}
	if !gotRoot {
		return nil, &ReadError{File: file, Line: 1, Msg: "no <xport> element", Err: ErrEmpty}
	}
	return rrdSeries(file, metaLine, &doc, opts)
}

// rrdValue parses an xport value: a non-negative number, or NaN (unknown).
func rrdValue(s string) (float64, string) {
	switch strings.ToLower(s) {
	case "nan", "-nan", "null", "u", "":
		return nan(), ""
	}
	v, unknown, msg := parseValue([]byte(s))
	if unknown {
		return nan(), ""
	}
	return v, msg
}

func nan() float64 { var z float64; return z / z }

func readRRDJSON(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	d, err := newJSONDoc(r, file)
	if err != nil {
		return nil, err
	}
	var (
		doc      rrdDoc
		metaLine int64 = 1
		raws     [][]any
		lines    []int64
	)
	err = d.object("", func(key string, line int64) error {
		switch key {
		case "meta":
			metaLine = line
			return d.object("meta", func(k string, line int64) error {
				switch k {
				case "start", "step":
					var n json.Number
					if err := d.decode(k, &n); err != nil {
						return err
					}
					v, err := n.Int64()
					if err != nil || v < 0 {
						return d.errf(line, k, "%s is not a unix time or a step in seconds", n)
					}
					if k == "start" {
						doc.start = v
					} else {
						doc.step = v
					}
					return nil
				case "legend":
					return d.decode(k, &doc.legend)
				}
				return d.skip(k)
			})
		case "data":
			return d.array("data", func(i int, line int64) error {
				var row []any
				if err := d.decode(fmt.Sprintf("data[%d]", i), &row); err != nil {
					return err
				}
				raws = append(raws, row)
				lines = append(lines, line)
				return nil
			})
		}
		return d.skip(key)
	})
	if err != nil {
		return nil, err
	}
	for i, raw := range raws {
		row := rrdRow{line: lines[i]}
		vals := raw
		if len(raw) > 0 {
			if s, ok := raw[0].(string); ok && !strings.EqualFold(s, "nan") {
				t, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, d.errf(lines[i], fmt.Sprintf("data[%d][0]", i), "%q is not a unix time", s)
				}
				row.t, row.hasTime, vals = t, true, raw[1:]
			}
		}
		for k, v := range vals {
			f, unknown, msg := jsonNumber(v)
			if msg != "" {
				return nil, d.errf(lines[i], fmt.Sprintf("data[%d][%d]", i, k), "%s", msg)
			}
			if unknown {
				f = nan()
			}
			row.v = append(row.v, f)
		}
		doc.rows = append(doc.rows, row)
	}
	return rrdSeries(file, metaLine, &doc, opts)
}

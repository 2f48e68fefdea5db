package exporter

// The metric types of /metrics and their text exposition (Prometheus text
// format 0.0.4), written here rather than with the official client library:
// Go runs the package init of everything a binary links, and the client
// library's (its default registry, protobuf descriptors, procfs) ran for
// every linecheck command, including the one-shot trace and ping whose whole
// run is a few milliseconds. What serve exposes is small (counters, gauges
// and one histogram, with labels), so it is kept here, printed the way the
// client library printed it: families sorted by name, series sorted by their
// label values, labels in name order, numbers in Go's shortest 'g' form.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Labels maps label names to values, as metric vectors take them.
type Labels map[string]string

type metricType int

const (
	counterType metricType = iota
	gaugeType
	histogramType
)

func (t metricType) String() string {
	switch t {
	case counterType:
		return "counter"
	case gaugeType:
		return "gauge"
	}
	return "histogram"
}

// family is one metric name with its series.
type family struct {
	name, help string
	typ        metricType
	labels     []string  // as declared: the order of label values
	order      []int     // indices into labels, in label-name order (how they are printed)
	buckets    []float64 // histogram upper bounds, increasing, without +Inf

	mu     sync.Mutex
	series map[string]*series // by label values joined with \xff
	// plain is the one series of a family without labels: it always exists.
	plain *series
}

// series is one label set's value.
type series struct {
	values []string // label values, in the family's declared order
	v      float64  // counter or gauge value
	counts []uint64 // histogram: observations per bucket, the last one above every bound
	sum    float64
	n      uint64
}

func newFamily(name, help string, typ metricType, labels []string, buckets []float64) *family {
	f := &family{name: name, help: help, typ: typ, labels: append([]string(nil), labels...), buckets: buckets, series: map[string]*series{}}
	f.order = make([]int, len(labels))
	for i := range f.order {
		f.order[i] = i
	}
	sort.Slice(f.order, func(a, b int) bool { return f.labels[f.order[a]] < f.labels[f.order[b]] })
	if len(labels) == 0 {
		f.plain = f.newSeries(nil)
	}
	return f
}

func (f *family) newSeries(values []string) *series {
	s := &series{values: values}
	if f.typ == histogramType {
		s.counts = make([]uint64, len(f.buckets)+1)
	}
	return s
}

func seriesKey(values []string) string { return strings.Join(values, "\xff") }

// get returns the series of values, made on first use; f.mu is held.
func (f *family) get(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("exporter: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	if f.plain != nil {
		return f.plain
	}
	k := seriesKey(values)
	s := f.series[k]
	if s == nil {
		s = f.newSeries(append([]string(nil), values...))
		f.series[k] = s
	}
	return s
}

// valuesOf puts l in the declared label order; every label must be given.
func (f *family) valuesOf(l Labels) []string {
	if len(l) != len(f.labels) {
		panic(fmt.Sprintf("exporter: %s takes labels %v, got %v", f.name, f.labels, l))
	}
	vs := make([]string, len(f.labels))
	for i, n := range f.labels {
		v, ok := l[n]
		if !ok {
			panic(fmt.Sprintf("exporter: %s takes labels %v, got %v", f.name, f.labels, l))
		}
		vs[i] = v
	}
	return vs
}

// vec is what every metric vector shares: series by labels, and deletion.
type vec struct{ f *family }

// Delete removes the series with exactly the labels l; it tells whether one
// existed.
func (v vec) Delete(l Labels) bool {
	if len(l) != len(v.f.labels) {
		return false
	}
	vs := make([]string, len(v.f.labels))
	for i, n := range v.f.labels {
		x, ok := l[n]
		if !ok {
			return false
		}
		vs[i] = x
	}
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	k := seriesKey(vs)
	_, ok := v.f.series[k]
	delete(v.f.series, k)
	return ok
}

// DeletePartialMatch removes every series whose labels include all of l
// and returns how many went.
func (v vec) DeletePartialMatch(l Labels) int {
	idx := map[int]string{}
	for n, x := range l {
		i := indexOf(v.f.labels, n)
		if i < 0 {
			return 0
		}
		idx[i] = x
	}
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	n := 0
next:
	for k, s := range v.f.series {
		for i, x := range idx {
			if s.values[i] != x {
				continue next
			}
		}
		delete(v.f.series, k)
		n++
	}
	return n
}

// Reset removes every series of the vector (the snapshot's families are
// written afresh from it, so nothing stale is left).
func (v vec) Reset() {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	clear(v.f.series)
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// Counter is one counter series.
type Counter struct {
	f *family
	s *series
}

// Inc adds 1.
func (c Counter) Inc() { c.Add(1) }

// Add adds v, which must not be negative (a counter only goes up).
func (c Counter) Add(v float64) {
	if v < 0 {
		panic("exporter: counter " + c.f.name + " cannot decrease")
	}
	c.f.mu.Lock()
	c.s.v += v
	c.f.mu.Unlock()
}

// Gauge is one gauge series.
type Gauge struct {
	f *family
	s *series
}

// Set sets the value.
func (g Gauge) Set(v float64) {
	g.f.mu.Lock()
	g.s.v = v
	g.f.mu.Unlock()
}

// Histogram is one histogram series.
type Histogram struct {
	f *family
	s *series
}

// Observe counts v in the first bucket whose upper bound is at least v (the
// bounds are inclusive), or above every bound.
func (h Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.f.buckets, v)
	h.f.mu.Lock()
	h.s.counts[i]++
	h.s.sum += v
	h.s.n++
	h.f.mu.Unlock()
}

func (f *family) lockedGet(values []string) *series {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.get(values)
}

// CounterVec is a counter with labels.
type CounterVec struct{ vec }

// With returns the series of l (every label given), made at 0 on first use.
func (v CounterVec) With(l Labels) Counter {
	return Counter{v.f, v.f.lockedGet(v.f.valuesOf(l))}
}

// WithLabelValues is With by values in the declared label order.
func (v CounterVec) WithLabelValues(values ...string) Counter {
	return Counter{v.f, v.f.lockedGet(values)}
}

// GaugeVec is a gauge with labels.
type GaugeVec struct{ vec }

// With returns the series of l (every label given), made at 0 on first use.
func (v GaugeVec) With(l Labels) Gauge { return Gauge{v.f, v.f.lockedGet(v.f.valuesOf(l))} }

// WithLabelValues is With by values in the declared label order.
func (v GaugeVec) WithLabelValues(values ...string) Gauge {
	return Gauge{v.f, v.f.lockedGet(values)}
}

// HistogramVec is a histogram with labels.
type HistogramVec struct{ vec }

// With returns the series of l (every label given), empty on first use.
func (v HistogramVec) With(l Labels) Histogram {
	return Histogram{v.f, v.f.lockedGet(v.f.valuesOf(l))}
}

// Registry is the set of metric families one /metrics page shows.
type Registry struct {
	mu        sync.Mutex
	groups    []group
	names     map[string]bool
	gatherers []Gatherer
}

// Gatherer is what a client_golang registry is (prometheus.Gatherer):
// families in Prometheus' data model. serve's Go and process metrics come
// from client_golang's collectors through one; the registry prints them
// in the text format beside its own families.
type Gatherer interface {
	Gather() ([]*dto.MetricFamily, error)
}

// AddGatherer adds g's families to every rendering of r. A family whose
// name r already has is left out (r's own wins), so a name is never
// printed twice.
func (r *Registry) AddGatherer(g Gatherer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gatherers = append(r.gatherers, g)
}

// group is families collected together, under lock when it is set: the
// exporter's own metrics are read under the exporter's lock so that one
// scrape never sees a cycle half applied.
type group struct {
	lock sync.Locker
	fams []*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{names: map[string]bool{}} }

// add registers families, read under lock (nil: none) when written out. A
// name registered twice is a programming error.
func (r *Registry) add(lock sync.Locker, fams ...*family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range fams {
		if r.names[f.name] {
			panic("exporter: metric " + f.name + " registered twice")
		}
		r.names[f.name] = true
	}
	r.groups = append(r.groups, group{lock: lock, fams: fams})
}

// NewCounterVec registers a counter with labels.
func (r *Registry) NewCounterVec(name, help string, labels ...string) CounterVec {
	f := newFamily(name, help, counterType, labels, nil)
	r.add(nil, f)
	return CounterVec{vec{f}}
}

// NewGaugeVec registers a gauge with labels.
func (r *Registry) NewGaugeVec(name, help string, labels ...string) GaugeVec {
	f := newFamily(name, help, gaugeType, labels, nil)
	r.add(nil, f)
	return GaugeVec{vec{f}}
}

// rendered is one family's text, ready to be written.
type rendered struct {
	name string
	text []byte
}

// render prints every family that has a series, sorted by name; only the
// names in filter when it is not nil.
func (r *Registry) render(filter map[string]bool) []rendered {
	r.mu.Lock()
	groups := append([]group(nil), r.groups...)
	gatherers := append([]Gatherer(nil), r.gatherers...)
	names := make(map[string]bool, len(r.names))
	for n := range r.names {
		names[n] = true
	}
	r.mu.Unlock()
	var out []rendered
	for _, g := range gatherers {
		// A collector's error leaves out what it could not read (a
		// process metric on a system without /proc), never the page.
		mfs, _ := g.Gather()
		for _, mf := range mfs {
			n := mf.GetName()
			if names[n] || filter != nil && !filter[n] || len(mf.GetMetric()) == 0 {
				continue
			}
			names[n] = true
			var b bytes.Buffer
			if _, err := expfmt.MetricFamilyToText(&b, mf); err == nil {
				out = append(out, rendered{n, b.Bytes()})
			}
		}
	}
	for _, g := range groups {
		if g.lock != nil {
			g.lock.Lock()
		}
		for _, f := range g.fams {
			if filter != nil && !filter[f.name] {
				continue
			}
			if b := f.text(); b != nil {
				out = append(out, rendered{f.name, b})
			}
		}
		if g.lock != nil {
			g.lock.Unlock()
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// WriteTo writes every family in the text format (for tests and tools).
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, x := range r.render(nil) {
		m, err := w.Write(x.text)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// text is the family in the text format, nil when it has no series (a
// vector nothing was recorded in is not shown, not even its HELP).
func (f *family) text() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ss []*series
	if f.plain != nil {
		ss = []*series{f.plain}
	} else {
		if len(f.series) == 0 {
			return nil
		}
		ss = make([]*series, 0, len(f.series))
		for _, s := range f.series {
			ss = append(ss, s)
		}
		sort.Slice(ss, func(i, j int) bool {
			for _, k := range f.order {
				if a, b := ss[i].values[k], ss[j].values[k]; a != b {
					return a < b
				}
			}
			return false
		})
	}
	var b bytes.Buffer
	b.WriteString("# HELP ")
	b.WriteString(f.name)
	b.WriteByte(' ')
	writeEscaped(&b, f.help, false)
	b.WriteString("\n# TYPE ")
	b.WriteString(f.name)
	b.WriteByte(' ')
	b.WriteString(f.typ.String())
	b.WriteByte('\n')
	for _, s := range ss {
		if f.typ != histogramType {
			f.sample(&b, "", s, "", s.v)
			continue
		}
		var cum uint64
		for i, le := range f.buckets {
			cum += s.counts[i]
			f.sample(&b, "_bucket", s, formatFloat(le), float64(cum))
		}
		f.sample(&b, "_bucket", s, "+Inf", float64(s.n))
		f.sample(&b, "_sum", s, "", s.sum)
		f.sample(&b, "_count", s, "", float64(s.n))
	}
	return b.Bytes()
}

// sample prints one line: name+suffix, the labels in name order (and le
// when it is not empty), the value.
func (f *family) sample(b *bytes.Buffer, suffix string, s *series, le string, v float64) {
	b.WriteString(f.name)
	b.WriteString(suffix)
	sep := byte('{')
	for _, i := range f.order {
		b.WriteByte(sep)
		b.WriteString(f.labels[i])
		b.WriteString(`="`)
		writeEscaped(b, s.values[i], true)
		b.WriteByte('"')
		sep = ','
	}
	if le != "" {
		b.WriteByte(sep)
		b.WriteString(`le="`)
		b.WriteString(le)
		b.WriteByte('"')
		sep = ','
	}
	if sep == ',' {
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

// writeEscaped escapes backslash and newline (HELP text), and the double
// quote too in label values.
func writeEscaped(b *bytes.Buffer, s string, quote bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
}

// formatFloat is the text format's number: +Inf, -Inf, NaN, or Go's
// shortest representation ('g', so 1234567 is 1.234567e+06, as Prometheus's
// own client printed it).
func formatFloat(f float64) string {
	switch {
	case f == 0:
		return "0" // also -0
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

package exporter

// The metric families of /metrics: the exporter keeps its counters, gauges
// and histogram in families of its own (written under the exporter's lock,
// with the series of a target deleted when it leaves the configuration), and
// exposes them through client_golang: each group of families is a
// prometheus.Collector that copies its series into const metrics while it
// holds the group's lock, registered on a prometheus.Registry of its own
// (never the global one), and promhttp.HandlerFor serves them (text format
// 0.0.4, OpenMetrics or protobuf as the scraper asks, gzip, name[]). No
// exposition format is written here: bench/serve/exposition.sh measures this
// against the hand-written text format it replaced (issue 34).

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Labels maps label names to values, as metric vectors take them.
type Labels map[string]string

type metricType int

const (
	counterType metricType = iota
	gaugeType
	histogramType
)

// valueType is the client library's type of a counter's or gauge's samples.
func (t metricType) valueType() prometheus.ValueType {
	if t == counterType {
		return prometheus.CounterValue
	}
	return prometheus.GaugeValue
}

// family is one metric name with its series.
type family struct {
	name, help string
	typ        metricType
	labels     []string  // as declared: the order of label values
	buckets    []float64 // histogram upper bounds, increasing, without +Inf
	desc       *prometheus.Desc

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
	f.desc = prometheus.NewDesc(name, help, f.labels, nil)
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

// collect sends a const metric of each series of f (none for a vector
// nothing was recorded in: the family is then absent, not even its HELP);
// the values are copied while f.mu is held.
func (f *family) collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plain != nil {
		ch <- f.metric(f.plain)
		return
	}
	for _, s := range f.series {
		ch <- f.metric(s)
	}
}

// metric is s as a const metric of f; f.mu is held. A label value the
// client library refuses (not UTF-8) makes an invalid metric: the scrape
// then fails with the reason rather than serving a page no parser reads.
func (f *family) metric(s *series) prometheus.Metric {
	var m prometheus.Metric
	var err error
	if f.typ != histogramType {
		m, err = prometheus.NewConstMetric(f.desc, f.typ.valueType(), s.v, s.values...)
	} else {
		// The client library takes cumulative counts by upper bound
		// and adds the +Inf bucket (the count) itself.
		cum := make(map[float64]uint64, len(f.buckets))
		var n uint64
		for i, le := range f.buckets {
			n += s.counts[i]
			cum[le] = n
		}
		m, err = prometheus.NewConstHistogram(f.desc, s.n, s.sum, cum, s.values...)
	}
	if err != nil {
		return prometheus.NewInvalidMetric(f.desc, err)
	}
	return m
}

// group is families collected together, under lock when it is set: the
// exporter's own metrics are read under the exporter's lock so that one
// scrape never sees a cycle half applied. It is a prometheus.Collector.
type group struct {
	lock sync.Locker
	fams []*family
}

// Describe sends the descriptor of every family.
func (g *group) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range g.fams {
		ch <- f.desc
	}
}

// Collect sends every series of every family, read under g.lock.
func (g *group) Collect(ch chan<- prometheus.Metric) {
	if g.lock != nil {
		g.lock.Lock()
		defer g.lock.Unlock()
	}
	for _, f := range g.fams {
		f.collect(ch)
	}
}

// Registry is the set of metric families one /metrics page shows: a
// client_golang registry of its own, the Gatherers added to it, and the
// handler that serves them.
type Registry struct {
	prom    *prometheus.Registry
	handler func() http.Handler

	mu        sync.Mutex
	gatherers []Gatherer
}

// Gatherer is a source of metric families in Prometheus' data model, as a
// client_golang registry is one.
type Gatherer = prometheus.Gatherer

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{prom: prometheus.NewRegistry()}
	r.handler = sync.OnceValue(func() http.Handler {
		// Registry: promhttp_metric_handler_errors_total{cause} is
		// counted in r. The default error handling stops at the first
		// write that fails (the scraper went away) and counts it once.
		return &metricsHandler{promhttp.HandlerFor(r, promhttp.HandlerOpts{Registry: r.prom})}
	})
	return r
}

// metricsHandler is promhttp's handler behind a pointer, so that the one
// handler of a registry can be told apart from another.
type metricsHandler struct{ http.Handler }

// Handler serves r's families: promhttp's negotiation of the format
// (text 0.0.4, OpenMetrics, protobuf) and of gzip, and name[] parameters
// to pick families. It is made once per registry.
func (r *Registry) Handler() http.Handler { return r.handler() }

// AddGatherer adds g's families to every gathering of r. A family whose
// name r already has is left out (r's own wins), so a name is never
// served twice, and g's errors leave out what it could not read (a
// process metric on a system without /proc), never the page.
func (r *Registry) AddGatherer(g Gatherer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gatherers = append(r.gatherers, g)
}

// Gather collects r's families and those of its Gatherers, sorted by name
// (prometheus.Gatherer).
func (r *Registry) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := r.prom.Gather()
	r.mu.Lock()
	gatherers := append([]Gatherer(nil), r.gatherers...)
	r.mu.Unlock()
	if len(gatherers) == 0 {
		return mfs, err
	}
	names := make(map[string]bool, len(mfs))
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, g := range gatherers {
		more, _ := g.Gather()
		for _, mf := range more {
			if n := mf.GetName(); !names[n] && len(mf.GetMetric()) > 0 {
				names[n] = true
				mfs = append(mfs, mf)
			}
		}
	}
	sort.Slice(mfs, func(i, j int) bool { return mfs[i].GetName() < mfs[j].GetName() })
	return mfs, err
}

// add registers families, read under lock (nil: none) when gathered. A
// name registered twice is a programming error.
func (r *Registry) add(lock sync.Locker, fams ...*family) {
	if err := r.prom.Register(&group{lock: lock, fams: fams}); err != nil {
		names := make([]string, len(fams))
		for i, f := range fams {
			names[i] = f.name
		}
		panic(fmt.Sprintf("exporter: metrics %s: %v", strings.Join(names, ", "), err))
	}
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

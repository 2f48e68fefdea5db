package exporter

// The metric families of /metrics: the exporter keeps its counters, gauges
// and histogram in families of its own (written under the exporter's lock,
// with the series of a target deleted when it leaves the configuration), and
// exposes them through client_golang: the Registry is a prometheus.Gatherer
// that copies each group of families into the client library's data model
// (client_model's MetricFamily) while it holds the group's lock, beside a
// prometheus.Registry of its own (never the global one) for promhttp's error
// counter, and promhttp.HandlerFor serves them (text format 0.0.4 or
// protobuf as the scraper asks, gzip, name[]). No exposition format is
// written here.
//
// The families are gathered directly rather than as a Collector's const
// metrics: at 10 k targets that path cost 2.5x the CPU of the hand-written
// text format per scrape, most of it in NewConstMetric, the registry's
// per-metric checks and its sort of every family on every scrape; here each
// series keeps its label pairs and each family its sorted order between
// scrapes. bench/serve/exposition.sh measures both against the hand-written
// format (issue 34).

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

// dto is the type in the client library's data model.
func (t metricType) dto() dto.MetricType {
	switch t {
	case counterType:
		return dto.MetricType_COUNTER
	case gaugeType:
		return dto.MetricType_GAUGE
	}
	return dto.MetricType_HISTOGRAM
}

// family is one metric name with its series.
type family struct {
	name, help string
	typ        metricType
	labels     []string  // as declared: the order of label values
	order      []int     // indices into labels, in label-name order (the order of label pairs)
	buckets    []float64 // histogram upper bounds, increasing, without +Inf

	mu     sync.Mutex
	series map[string]*series // by label values joined with \xff
	// plain is the one series of a family without labels: it always exists.
	plain *series
	// sorted is every series in the order they are exposed (by label
	// values, labels in name order); nil after a series came or went.
	sorted []*series
}

// series is one label set's value.
type series struct {
	values []string         // label values, in the family's declared order
	pairs  []*dto.LabelPair // the labels, sorted by name: made once, read by every scrape
	v      float64          // counter or gauge value
	counts []uint64         // histogram: observations per bucket, the last one above every bound
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
	if len(values) > 0 {
		// Names point into the family, values into the series: one
		// slab of pairs per series, in label-name order.
		ps := make([]dto.LabelPair, len(values))
		s.pairs = make([]*dto.LabelPair, len(values))
		for i, k := range f.order {
			ps[i].Name, ps[i].Value = &f.labels[k], &s.values[k]
			s.pairs[i] = &ps[i]
		}
	}
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
		f.sorted = nil
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
	if ok {
		delete(v.f.series, k)
		v.f.sorted = nil
	}
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
		v.f.sorted = nil
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
	v.f.sorted = nil
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

// gather is f in the client library's data model, its series sorted by
// label values (labels in name order), as client_golang's registry sorts
// them; nil when it has no series (a vector nothing was recorded in is not
// exposed, not even its HELP). The values are copied while f.mu is held;
// the names, label pairs and bucket bounds are shared, read only.
func (f *family) gather() *dto.MetricFamily {
	f.mu.Lock()
	defer f.mu.Unlock()
	ss := f.sortedSeries()
	if len(ss) == 0 {
		return nil
	}
	n := len(ss)
	mf := &dto.MetricFamily{Name: &f.name, Help: &f.help, Type: f.typ.dto().Enum(), Metric: make([]*dto.Metric, n)}
	// One allocation per kind of object, not per series: a scrape of
	// 100 k targets holds about a million series.
	ms := make([]dto.Metric, n)
	switch f.typ {
	case counterType:
		cs, vs := make([]dto.Counter, n), make([]float64, n)
		for i, s := range ss {
			vs[i] = s.v
			cs[i].Value = &vs[i]
			ms[i].Counter = &cs[i]
		}
	case gaugeType:
		gs, vs := make([]dto.Gauge, n), make([]float64, n)
		for i, s := range ss {
			vs[i] = s.v
			gs[i].Value = &vs[i]
			ms[i].Gauge = &gs[i]
		}
	default:
		nb := len(f.buckets)
		hs, sums, counts := make([]dto.Histogram, n), make([]float64, n), make([]uint64, n)
		bs, bps, cum := make([]dto.Bucket, n*nb), make([]*dto.Bucket, n*nb), make([]uint64, n*nb)
		for i, s := range ss {
			// Cumulative counts by upper bound; the encoders add the
			// +Inf bucket (the count) themselves.
			var c uint64
			for j := range f.buckets {
				k := i*nb + j
				c += s.counts[j]
				cum[k] = c
				bs[k].CumulativeCount = &cum[k]
				bs[k].UpperBound = &f.buckets[j]
				bps[k] = &bs[k]
			}
			sums[i], counts[i] = s.sum, s.n
			hs[i] = dto.Histogram{SampleCount: &counts[i], SampleSum: &sums[i], Bucket: bps[i*nb : (i+1)*nb : (i+1)*nb]}
			ms[i].Histogram = &hs[i]
		}
	}
	for i, s := range ss {
		ms[i].Label = s.pairs
		mf.Metric[i] = &ms[i]
	}
	return mf
}

// sortedSeries is f.sorted, sorted again after series came or went; f.mu
// is held.
func (f *family) sortedSeries() []*series {
	if f.plain != nil {
		return []*series{f.plain}
	}
	if f.sorted == nil && len(f.series) > 0 {
		f.sorted = make([]*series, 0, len(f.series))
		for _, s := range f.series {
			f.sorted = append(f.sorted, s)
		}
		sort.Slice(f.sorted, func(i, j int) bool {
			a, b := f.sorted[i].pairs, f.sorted[j].pairs
			for k := range a {
				if x, y := a[k].GetValue(), b[k].GetValue(); x != y {
					return x < y
				}
			}
			return false
		})
	}
	return f.sorted
}

// group is families gathered together, under lock when it is set: the
// exporter's own metrics are read under the exporter's lock so that one
// scrape never sees a cycle half applied.
type group struct {
	lock sync.Locker
	fams []*family
}

// gather appends the families of g that have series.
func (g group) gather(out []*dto.MetricFamily) []*dto.MetricFamily {
	if g.lock != nil {
		g.lock.Lock()
		defer g.lock.Unlock()
	}
	for _, f := range g.fams {
		if mf := f.gather(); mf != nil {
			out = append(out, mf)
		}
	}
	return out
}

// Registry is the set of metric families one /metrics page shows: a
// client_golang registry of its own, the Gatherers added to it, and the
// handler that serves them.
type Registry struct {
	prom    *prometheus.Registry // promhttp's own counter
	handler func() http.Handler

	mu        sync.Mutex
	groups    []group
	names     map[string]bool
	gatherers []Gatherer
}

// Gatherer is a source of metric families in Prometheus' data model, as a
// client_golang registry is one.
type Gatherer = prometheus.Gatherer

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{prom: prometheus.NewRegistry(), names: map[string]bool{}}
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

// Gather collects r's families, promhttp's counter and the families of
// r's Gatherers, sorted by name (prometheus.Gatherer). The families are
// made afresh on every call; their names and label pairs are shared, so a
// caller must not change them.
func (r *Registry) Gather() ([]*dto.MetricFamily, error) {
	r.mu.Lock()
	groups := append([]group(nil), r.groups...)
	gatherers := append([]Gatherer(nil), r.gatherers...)
	r.mu.Unlock()
	var mfs []*dto.MetricFamily
	for _, g := range groups {
		mfs = g.gather(mfs)
	}
	names := make(map[string]bool, len(mfs))
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	own, err := r.prom.Gather()
	mfs = append(mfs, own...)
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

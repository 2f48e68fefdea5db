package ingest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// rawPoint is one row of a log before it is put on the grid: a timestamp and
// a value per direction (bytes per interval, bytes/s, or, for counters, the
// uint64 reading stored with math.Float64frombits so that 64-bit counters
// keep every bit).
type rawPoint struct {
	t       int64
	line    int64
	in, out float64
	unknown bool // a gap (NaN, null, empty): no value for this row
}

const (
	// maxInterval bounds the length of one sample: MRTG's daily rows are the
	// coarsest input that still means something on a 5-minute grid.
	maxInterval = 7 * 86400
	// implausibleBps is flagged when no port speed is given: no single
	// interface carries a terabit per second.
	implausibleBps = 1e12
	// impossibleBps is refused where a reader checks it (Prometheus
	// values): a petabit per second is beyond any single series.
	impossibleBps = 1e15
	// maxWarnings per series; the rest are counted.
	maxWarnings = 20
)

// window is the part of the timeline a reader keeps.
type window struct {
	from, to int64 // bounded when to > from
	loc      *time.Location
}

func (o ReadOptions) window() window { return window{from: o.From, to: o.To, loc: o.loc()} }

func (w window) bounded() bool { return w.to > w.from }

// floorSlot is the start of the slot holding t: floor(t/300)*300, also for t < 0.
func floorSlot(t int64) int64 {
	m := t % billing.SlotSeconds
	if m < 0 {
		m += billing.SlotSeconds
	}
	return t - m
}

// monthBounds returns the calendar month of t in loc as [start, end).
func monthBounds(t int64, loc *time.Location) (int64, int64) {
	y, m, _ := time.Unix(t, 0).In(loc).Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, loc).Unix(), time.Date(y, m+1, 1, 0, 0, 0, 0, loc).Unix()
}

// builder turns the rows of one interface into a Series.
type builder struct {
	file   string
	win    window
	port   float64
	s      *billing.Series
	nwarn  int
	mStart int64 // unbounded window: the calendar month currently kept
	mEnd   int64
}

func newBuilder(file, name string, opts ReadOptions) *builder {
	b := &builder{file: file, win: opts.window(), port: opts.PortBps, s: &billing.Series{Name: name}}
	if w := b.win; w.bounded() {
		// A slot per 5 minutes of the period, allocated once, not grown.
		b.s.Slots = make([]billing.Slot, 0, min((w.to-w.from)/billing.SlotSeconds+1, 1<<18))
	}
	return b
}

func (b *builder) warnf(line int64, format string, args ...any) {
	b.nwarn++
	if b.nwarn > maxWarnings {
		return
	}
	where := fmt.Sprintf("%s:%d: ", b.file, line)
	if line <= 0 {
		where = b.file + ": " // a live answer has no lines
	}
	b.s.Warnings = append(b.s.Warnings, where+fmt.Sprintf(format, args...))
}

// finish closes the series: notes suppressed warnings.
func (b *builder) finish() *billing.Series {
	if b.nwarn > maxWarnings {
		b.s.Warnings = append(b.s.Warnings, fmt.Sprintf("%s: %d more warnings not shown", b.file, b.nwarn-maxWarnings))
	}
	return b.s
}

// addSlot adds bytes to the slot holding start. Slots normally arrive in
// ascending order; anything else is inserted in place.
func (b *builder) addSlot(start int64, in, out float64) {
	start = floorSlot(start)
	if b.win.bounded() {
		if start < b.win.from || start >= b.win.to {
			return
		}
	} else {
		// Keep only the latest calendar month: bounded memory for any file.
		if b.mEnd == 0 || start >= b.mEnd {
			b.mStart, b.mEnd = monthBounds(start, b.win.loc)
			i := sort.Search(len(b.s.Slots), func(i int) bool { return b.s.Slots[i].Start >= b.mStart })
			b.s.Slots = append(b.s.Slots[:0], b.s.Slots[i:]...)
		} else if start < b.mStart {
			return
		}
	}
	sl := b.s.Slots
	n := len(sl)
	switch {
	case n == 0 || sl[n-1].Start < start:
		b.s.Slots = append(sl, billing.Slot{Start: start, In: in, Out: out})
	case sl[n-1].Start == start:
		sl[n-1].In += in
		sl[n-1].Out += out
	default:
		i := sort.Search(n, func(i int) bool { return sl[i].Start >= start })
		if sl[i].Start == start {
			sl[i].In += in
			sl[i].Out += out
		} else {
			b.s.Slots = slices.Insert(sl, i, billing.Slot{Start: start, In: in, Out: out})
		}
	}
}

// addSpan adds the bytes of the interval [start, start+dur): into its slot
// when dur ≤ 300 s, spread evenly over the slots it covers when coarser.
func (b *builder) addSpan(start, dur int64, in, out float64) {
	if dur <= billing.SlotSeconds {
		b.addSlot(start, in, out)
		return
	}
	first, last := floorSlot(start), floorSlot(start+dur-1)
	n := float64((last-first)/billing.SlotSeconds + 1)
	lo, hi := first, last
	if b.win.bounded() {
		lo, hi = max(lo, b.win.from), min(hi, b.win.to-billing.SlotSeconds)
	}
	for s := lo; s <= hi; s += billing.SlotSeconds {
		b.addSlot(s, in/n, out/n)
	}
}

// addProportional adds the bytes of [a, e) to the slots it overlaps, each in
// proportion to the overlap: counter deltas between unaligned polls.
func (b *builder) addProportional(a, e int64, in, out float64) {
	dur := float64(e - a)
	for s := floorSlot(a); s < e; s += billing.SlotSeconds {
		if b.win.bounded() && (s+billing.SlotSeconds <= b.win.from || s >= b.win.to) {
			continue
		}
		f := float64(min(s+billing.SlotSeconds, e)-max(s, a)) / dur
		b.addSlot(s, in*f, out*f)
	}
}

// checkRate flags an interval whose rate is above the port speed (or
// implausible): flagged, never clamped.
func (b *builder) checkRate(line int64, in, out float64, dur int64) {
	limit := b.port
	if limit <= 0 {
		limit = implausibleBps
	}
	// The common case, once per row: neither direction above the limit
	// (the same comparisons as below; NaN is never above it).
	if fd := float64(dur); !(in*8/fd > limit) && !(out*8/fd > limit) {
		return
	}
	b.warnRate(line, in, out, dur)
}

// warnRate words checkRate's warnings.
func (b *builder) warnRate(line int64, in, out float64, dur int64) {
	limit, what := b.port, "the port speed"
	if limit <= 0 {
		limit, what = implausibleBps, "1 Tbit/s, implausible for one interface"
	}
	for _, d := range [2]struct {
		name string
		v    float64
	}{{"in", in}, {"out", out}} {
		if bps := d.v * 8 / float64(dur); bps > limit {
			b.warnf(line, "%s: %.0f bit/s is above %s (kept, not clamped)", d.name, bps, what)
		}
	}
}

// orderErr reports a timestamp that does not increase.
func orderErr(file string, p, prev rawPoint, field string) *ReadError {
	if p.t == prev.t {
		return errAt(file, p.line, field, "duplicate timestamp %s (line %d has the same)", fmtTime(p.t), prev.line)
	}
	return errAt(file, p.line, field, "timestamp %s is out of order: line %d has the later %s", fmtTime(p.t), prev.line, fmtTime(prev.t))
}

// regular says how the rows of a regularly sampled log become slots.
type regular struct {
	step  int64  // the sample spacing; 0 infers it from the timestamps
	end   bool   // timestamps mark the interval end
	rate  bool   // values are bytes per second, not bytes per interval
	field string // the timestamp field, for messages
}

// addRegular puts regularly spaced samples (ascending; gaps allowed as
// multiples of the step) on the grid.
func (b *builder) addRegular(pts []rawPoint, spec regular) error {
	st := newRegularStream(b, spec)
	for _, p := range pts {
		if err := st.add(p); err != nil {
			return err
		}
	}
	return st.finish()
}

// pointStream puts the rows of one interface on the grid as they are read,
// in file order (addRegular and addCounters feed it a slice): what it holds
// is the builder's slots, bounded by the period (or the latest month), and
// the few rows read before the step is known, not every row (issue 35: a
// month of per-second rows, 2.7 M, took 436 MB).
type pointStream struct {
	b        *builder
	counters bool
	spec     regular // regular rows
	bits     int     // counters: 32, 64 or 0
	n        int     // rows seen
	prev     rawPoint
	step     int64
	seen     int        // regular: diffs equal to the inferred step
	settled  bool       // the step can no longer change
	pending  []rawPoint // rows waiting for the step
	diffs    []int64    // counters: the first diffs, for the median step
	coarse   bool       // regular: the step is over maxInterval (an error at the end)
	lastLine int64

	// counters: the reading before, and the reset census (addCounters)
	havePrev            bool
	a                   rawPoint
	resets32, intervals int
	firstReset          int64
	max32               uint64
}

func newRegularStream(b *builder, spec regular) *pointStream {
	st := &pointStream{b: b, spec: spec, step: spec.step, settled: spec.step > 0, coarse: spec.step > maxInterval}
	if st.settled {
		b.s.Step = st.step
	}
	return st
}

func newCounterStream(b *builder, bits int, field string) *pointStream {
	return &pointStream{b: b, counters: true, bits: bits, spec: regular{field: field}}
}

// maxCounterDiffs is how many poll intervals the counter step is the
// median of.
const maxCounterDiffs = 1024

// add takes the next row; an error ends the stream.
func (st *pointStream) add(p rawPoint) error {
	if st.n > 0 {
		prev := st.prev
		d := p.t - prev.t
		if d <= 0 {
			return orderErr(st.b.file, p, prev, st.spec.field)
		}
		if st.counters {
			if len(st.diffs) < maxCounterDiffs {
				st.diffs = append(st.diffs, d)
			}
		} else if err := st.inferStep(p, prev, d); err != nil {
			return err
		}
	}
	st.n++
	st.prev, st.lastLine = p, p.line
	switch {
	case st.settled:
		st.place(p)
	case st.counters && len(st.diffs) == maxCounterDiffs, !st.counters && st.seen >= 2:
		// The step is known (for regular rows: two diffs equal to it, after
		// which no finer one may replace it).
		st.pending = append(st.pending, p)
		st.settle()
	default:
		st.pending = append(st.pending, p)
	}
	return nil
}

// inferStep follows the spacing of regular rows: the first difference, or
// a finer one that the first ones were whole gaps of.
func (st *pointStream) inferStep(p, prev rawPoint, d int64) error {
	spec, step := st.spec, st.step
	switch {
	case spec.step > 0:
		if d%step != 0 {
			return errAt(st.b.file, p.line, spec.field, "mixed steps: %d s after line %d, not a multiple of the %d s step", d, prev.line, step)
		}
	case step == 0:
		st.step, st.seen = d, 1
	case d == step:
		st.seen++
	case d%step == 0:
		// a gap of whole steps
	case step%d == 0 && st.seen < 2:
		// the first differences were gaps of the finer step
		st.step, st.seen = d, 1
	default:
		return errAt(st.b.file, p.line, spec.field, "mixed steps: %d s after line %d, but the rows before are %d s apart", d, prev.line, step)
	}
	return nil
}

// settle fixes the step and places the rows held until then.
func (st *pointStream) settle() {
	st.settled = true
	if st.counters {
		diffs := slices.Clone(st.diffs)
		slices.Sort(diffs)
		st.step = diffs[len(diffs)/2]
		st.diffs = nil
	} else if st.step > maxInterval {
		st.coarse = true
	}
	st.b.s.Step = st.step
	for _, q := range st.pending {
		st.place(q)
	}
	st.pending = nil
}

// place puts one row on the grid with the settled step.
func (st *pointStream) place(p rawPoint) {
	if st.counters {
		st.placeCounter(p)
		return
	}
	if p.unknown || st.coarse {
		return
	}
	b, spec, step := st.b, st.spec, st.step
	start := p.t
	if spec.end {
		start -= step
	}
	in, out := p.in, p.out
	if spec.rate {
		in, out = in*float64(step), out*float64(step)
	}
	b.checkRate(p.line, in, out, step)
	b.addSpan(start, step, in, out)
}

// finish places what is left and makes the series' last checks.
func (st *pointStream) finish() error {
	if st.counters {
		return st.finishCounters()
	}
	if !st.settled {
		if st.step == 0 {
			st.step = billing.SlotSeconds
			if st.n == 1 {
				st.b.warnf(st.pending[0].line, "a single sample: its interval is taken as %d s", st.step)
			}
		}
		st.settle()
	}
	if st.coarse || st.step > maxInterval {
		return errAt(st.b.file, st.lastLine, st.spec.field, "samples are %d s apart: coarser than 7 days cannot be put on a 5-minute grid", st.step)
	}
	return nil
}

// counterDelta is the increase of a counter from prev to cur. A drop is a
// wrap when the wrapped increase is under half the counter range (the
// counter crossed its top), else a reset. bits is 32, 64, or 0 to decide by
// the values (both below 2^32: a 32-bit counter).
func counterDelta(prev, cur uint64, bits int) (delta uint64, wrapped int, ok bool) {
	if cur >= prev {
		return cur - prev, 0, true
	}
	if bits == 32 || bits == 0 && prev <= math.MaxUint32 {
		if prev > math.MaxUint32 {
			return 0, 0, false
		}
		if w := 1<<32 - prev + cur; w < 1<<31 {
			return w, 32, true
		}
		return 0, 0, false
	}
	if w := cur - prev; w < 1<<63 { // uint64 arithmetic: 2^64 − prev + cur
		return w, 64, true
	}
	return 0, 0, false
}

// addCounters turns SNMP octet counter readings into per-slot bytes: each
// delta is spread over the slots between the two polls in proportion to the
// overlap, so poll jitter does not move bytes between slots. The step is
// the median of the first 1024 poll intervals.
func (b *builder) addCounters(pts []rawPoint, bits int, field string) error {
	st := newCounterStream(b, bits, field)
	for _, p := range pts {
		if err := st.add(p); err != nil {
			return err
		}
	}
	return st.finish()
}

// placeCounter takes the delta from the reading before to p.
func (st *pointStream) placeCounter(p rawPoint) {
	if p.unknown {
		return
	}
	if !st.havePrev {
		st.a, st.havePrev = p, true
		return
	}
	b, bits, step := st.b, st.bits, st.step
	a := st.a
	st.a = p
	span := p.t - a.t
	if span > maxInterval {
		b.warnf(p.line, "counter readings %d s apart: interval left as a gap", span)
		return
	}
	ci, co := math.Float64bits(a.in), math.Float64bits(a.out)
	ni, no := math.Float64bits(p.in), math.Float64bits(p.out)
	di, wi, oki := counterDelta(ci, ni, bits)
	do, wo, oko := counterDelta(co, no, bits)
	st.intervals++
	is32 := bits == 32 || bits == 0 && max(ci, ni, co, no) <= math.MaxUint32
	if is32 && oki && oko {
		st.max32 = max(st.max32, di*uint64(step)/uint64(span), do*uint64(step)/uint64(span))
	}
	if !oki || !oko {
		if is32 {
			if st.resets32 == 0 {
				st.firstReset = p.line
			}
			st.resets32++
		}
		dir, from, to := "in", ci, ni
		if oki {
			dir, from, to = "out", co, no
		}
		b.warnf(p.line, "%s: counter dropped from %d to %d: a reset, interval left as a gap", dir, from, to)
		return
	}
	if wi > 0 {
		b.warnf(p.line, "in: %d-bit counter wrapped from %d to %d", wi, ci, ni)
	}
	if wo > 0 {
		b.warnf(p.line, "out: %d-bit counter wrapped from %d to %d", wo, co, no)
	}
	if span > 2*step {
		b.warnf(p.line, "counter readings %d s apart (step %d s): the delta is spread evenly over the gap", span, step)
	}
	b.checkRate(p.line, float64(di), float64(do), span)
	b.addProportional(a.t, p.t, float64(di), float64(do))
}

// finishCounters places the readings held and judges the resets.
func (st *pointStream) finishCounters() error {
	b := st.b
	if !st.settled {
		if len(st.diffs) == 0 {
			b.s.Step = billing.SlotSeconds
			if st.n == 1 {
				b.warnf(st.pending[0].line, "a single counter reading gives no traffic")
			}
			return nil
		}
		st.settle()
	}
	step, field := st.step, st.spec.field
	limit := float64(uint64(1)<<32) * 8 / float64(step) / 1e6
	// A real reset (a reboot) is rare; more than 3 drops that are 1 % of
	// the intervals or more are a counter too fast for its polling.
	if st.resets32 > 3 && st.resets32*100 >= st.intervals {
		return errAt(b.file, st.firstReset, field, "a 32-bit octet counter polled every %d s can be read up to %.1f Mbit/s (2^32 bytes per poll; a drop of more than half of that, above %.1f Mbit/s, reads as a reset); %d of %d intervals dropped like a reset, the sign of a faster link: the counter wrapped unseen between polls and the volume cannot be recovered. Poll the 64-bit ifHCInOctets/ifHCOutOctets (--units counter64), or poll more often (every 60 s reads up to %.1f Mbit/s)",
			step, limit, limit/2, st.resets32, st.intervals, float64(uint64(1)<<32)*8/60/1e6)
	}
	if st.max32 > 1<<30 {
		// First, not after the per-wrap notes the warning limit may cut.
		b.s.Warnings = slices.Insert(b.s.Warnings, 0, fmt.Sprintf("%s: 32-bit octet counter at up to %.1f Mbit/s, within a factor 2 of the %.1f Mbit/s above which a wrap between polls every %d s reads as a reset (and of the %.1f Mbit/s above which it wraps unseen): a faster burst is lost; poll the 64-bit counters (--units counter64)",
			b.file, float64(st.max32)*8/float64(step)/1e6, limit/2, step, limit))
	}
	return nil
}

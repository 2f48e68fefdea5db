package verdict

import (
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// Window is one target's latest ended probes, oldest first: at most its
// size (0 keeps every probe), duplicates counted apart. compare's recorded
// and live runs, the TUI and serve each keep one per target and read its
// figures with Result, so the statistics of a window (docs/definitions.md)
// are computed by one function whichever surface shows them.
//
// Every probe keeps its time (the record's send time, or the end of its
// sweep cycle), so the same window answers for any span of it
// (ResultBetween): an evening window (issue 30) is a slice of the day's
// window, not a window of its own. Windows are keyed by WindowKey (target
// and address family), so an IPv6 target beside an IPv4 one is one more
// key.
type Window struct {
	size    int
	ring    []windowProbe
	head, n int
	dups    int
	// dupAt are the times of the latest duplicates (at most size of them),
	// for the duplicates of a span; dups counts every one the window saw.
	dupAt []int64
}

// windowProbe is one ended probe: received (with its RTT), lost or late.
// It is kept small (24 bytes) because a recording's window holds every
// probe of the recording: 30 days at one probe a second is 2.6 M of them
// per target (bench/evening).
type windowProbe struct {
	at     int64   // when it was sent (Add) or its cycle ended (AddCycleAt), Unix ns; 0 when unknown
	rtt    float64 // ms, when received
	status ended
	// seq is the record's sequence number while a WindowBuilder sorts
	// (in what would be the struct's padding; WindowBuilder.wide keeps
	// the numbers that do not fit).
	seq uint32
}

// ended is how a probe in a window ended.
type ended uint8

const (
	endedOK ended = iota
	endedLost
	endedLate
)

// NewWindow returns an empty window of at most size probes; size ≤ 0 keeps
// every probe (a recording, a batch run).
func NewWindow(size int) *Window {
	if size < 0 {
		size = 0
	}
	return &Window{size: size}
}

// Size is the most probes the window holds; 0 means unbounded.
func (w *Window) Size() int { return w.size }

// Len is the number of ended probes in the window.
func (w *Window) Len() int { return w.n }

// Add folds one probe record in: a duplicate is counted apart, a lost or
// late probe counts as sent, an answered one adds its RTT. A record that
// is not an ended probe (an answer without its RTT, an unknown status) is
// ignored, as probe.ReadStream refuses them in files. The record's time
// (when the probe was sent) is kept with it.
func (w *Window) Add(r probe.Record) {
	p, dup, ok := probeOf(r)
	switch {
	case dup:
		w.addDups(1, p.at)
	case ok:
		w.push(p)
	}
}

// probeOf is record r as a window holds it: an ended probe (ok), a
// duplicate (dup, its time in p.at), or neither (an answer without its
// RTT, an unknown status), which windows ignore.
func probeOf(r probe.Record) (p windowProbe, dup, ok bool) {
	p.at = unixNano(r.Time)
	switch r.Status {
	case probe.StatusDup:
		return p, true, false
	case probe.StatusLost:
		p.status = endedLost
	case probe.StatusLate:
		p.status = endedLate
	case probe.StatusOK:
		if r.RTTms == nil {
			return p, false, false
		}
		p.rtt = *r.RTTms
	default:
		return p, false, false
	}
	return p, false, true
}

// unixNano is t in Unix ns, 0 for the zero time (a probe without a time).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// addDups counts k duplicates seen at at.
func (w *Window) addDups(k int, at int64) {
	w.dups += k
	for range k {
		w.dupAt = append(w.dupAt, at)
	}
	// Trimmed to the latest size at twice that, so that a stream of
	// duplicates costs no copy of the window per duplicate.
	if w.size > 0 && len(w.dupAt) > 2*w.size {
		w.dupAt = append(w.dupAt[:0], w.dupAt[len(w.dupAt)-w.size:]...)
	}
}

// AddCycle folds in one sweep's counts for the target (serve's cycles): the
// answers in rtts (ms, in send order), then late and lost probes. A sweep
// does not say where its lost probes fell among the answers; that changes
// no figure while the cycle stays in the window, and only which probes of
// the oldest cycle leave first.
func (w *Window) AddCycle(sent, recv, late, dup int, rtts []float64) {
	w.AddCycleAt(time.Time{}, sent, recv, late, dup, rtts)
}

// AddCycleAt is AddCycle with the time the cycle ended, for a window over
// a span of time (DropBefore: serve --window).
func (w *Window) AddCycleAt(t time.Time, sent, recv, late, dup int, rtts []float64) {
	at := unixNano(t)
	w.addDups(dup, at)
	for _, v := range rtts {
		w.push(windowProbe{status: endedOK, rtt: v, at: at})
	}
	for range late {
		w.push(windowProbe{status: endedLate, at: at})
	}
	for range sent - recv - late {
		w.push(windowProbe{status: endedLost, at: at})
	}
}

// DropBefore forgets the probes of cycles that ended before t (oldest
// first): what keeps a window to the last --window of time. It returns how
// many left.
func (w *Window) DropBefore(t time.Time) int {
	cut, k := t.UnixNano(), 0
	for len(w.dupAt) > 0 && w.dupAt[0] < cut {
		w.dupAt = w.dupAt[1:]
	}
	for w.n > 0 {
		i := w.head
		if w.size == 0 {
			i = 0
		}
		if w.ring[i].at >= cut {
			break
		}
		if w.size == 0 {
			w.ring = w.ring[1:]
		} else {
			w.head = (w.head + 1) % w.size
		}
		w.n--
		k++
	}
	return k
}

func (w *Window) push(p windowProbe) {
	if w.size == 0 {
		w.ring = append(w.ring, p)
		w.n++
		return
	}
	if w.ring == nil {
		w.ring = make([]windowProbe, w.size)
	}
	i := (w.head + w.n) % w.size
	if w.n == w.size {
		w.head = (w.head + 1) % w.size
	} else {
		w.n++
	}
	w.ring[i] = p
}

// Result is the target's statistics over the window — the one window
// statistic of compare, the TUI and serve: sent, received, late and loss
// over the probes in the window (duplicates over all the window saw), the
// RTT figures and the three jitters over its answers in send order
// (stats.Summarize; docs/definitions.md). samples, when not nil, is reused
// for Samples. It is ResultBetween over the whole window.
func (w *Window) Result(t candidates.Target, samples []float64) TargetResult {
	return w.summarize(t, samples, span{})
}

// ResultBetween is Result over the probes of the window whose time is in
// [from, to) — from included, to excluded; a zero from or to leaves that
// side open — and the duplicates the window still remembers (the latest
// Size of them) in that span. Probes without a time (AddCycle) belong to
// no span. A span may cross midnight or any other boundary: times are
// instants, not hours of a day.
func (w *Window) ResultBetween(t candidates.Target, from, to time.Time, samples []float64) TargetResult {
	return w.summarize(t, samples, span{bounded: true, from: unixNano(from), to: unixNano(to)})
}

// ResultIn is Result over the probes of the window whose time in
// satisfies (and the duplicates it still remembers in them): the probes of
// an SLA window on every day of a recording (candidates.Window.Contains),
// of one hour of the day. Probes without a time belong to none.
func (w *Window) ResultIn(t candidates.Target, in func(time.Time) bool, samples []float64) TargetResult {
	return w.summarize(t, samples, span{bounded: true, in: in})
}

// Span is the time of the window's first and last probe that have one
// (zero times when none has).
func (w *Window) Span() (first, last time.Time) {
	var lo, hi int64
	for i := range w.n {
		at := w.ring[(w.head+i)%len(w.ring)].at
		if at == 0 {
			continue
		}
		if lo == 0 || at < lo {
			lo = at
		}
		if at > hi {
			hi = at
		}
	}
	if lo == 0 {
		return time.Time{}, time.Time{}
	}
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC()
}

// span is a slice of a window's time; the zero span is the whole window.
type span struct {
	bounded  bool
	from, to int64 // Unix ns; 0: open
	// in, when set, decides instead of from and to.
	in func(time.Time) bool
}

func (s span) holds(at int64) bool {
	if !s.bounded {
		return true
	}
	if at == 0 {
		return false
	}
	if s.in != nil {
		return s.in(time.Unix(0, at))
	}
	return (s.from == 0 || at >= s.from) && (s.to == 0 || at < s.to)
}

// summarize is the one function that computes a window's statistics, over
// the probes sp holds.
func (w *Window) summarize(t candidates.Target, samples []float64, sp span) TargetResult {
	r := TargetResult{Target: t, Duplicates: w.dups}
	if sp.bounded {
		r.Duplicates = 0
		dupAt := w.dupAt
		if w.size > 0 && len(dupAt) > w.size {
			dupAt = dupAt[len(dupAt)-w.size:]
		}
		for _, at := range dupAt {
			if sp.holds(at) {
				r.Duplicates++
			}
		}
	}
	xs := samples[:0]
	for i := range w.n {
		p := w.ring[(w.head+i)%len(w.ring)]
		if !sp.holds(p.at) {
			continue
		}
		r.Sent++
		switch p.status {
		case endedOK:
			r.Recv++
			xs = append(xs, p.rtt)
		case endedLate:
			r.Late++
		}
	}
	if r.Sent > 0 {
		r.Loss = 1 - float64(r.Recv)/float64(r.Sent)
	}
	if len(xs) > 0 {
		r.Samples = xs
	}
	r.RTT, r.Jitter = stats.Summarize(xs)
	return r
}

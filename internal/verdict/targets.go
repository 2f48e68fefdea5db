package verdict

import (
	"math"
	"sort"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// TargetsFromRecords computes per-target statistics from probe records, in
// the order of targets, each over a window of all its records in time order
// (Window.Result). Records of other targets are returned by name.
func TargetsFromRecords(targets []candidates.Target, recs []probe.Record) ([]TargetResult, []string) {
	ws, extra := WindowsFromRecords(targets, recs)
	out := make([]TargetResult, len(targets))
	for i, w := range ws {
		out[i] = w.Result(targets[i], nil)
	}
	return out, extra
}

// WindowsFromRecords is one window per target (in the order of targets) of
// all its records in time order, each probe with its time: what
// TargetsFromRecords and the SLA windows (Measurement.Probes) read. It is
// a WindowBuilder fed recs.
func WindowsFromRecords(targets []candidates.Target, recs []probe.Record) ([]*Window, []string) {
	b := NewWindowBuilder(targets)
	for _, r := range recs {
		b.Add(r)
	}
	return b.Windows()
}

// WindowBuilder sorts probe records into one window per target as they
// are read, keeping of each only what the window statistics need (its
// time, RTT and how it ended: windowProbe), never the record: a month of
// probes is read from its files without holding them (issue 30,
// bench/evening). Windows gives each target's probes in time order, ties
// by sequence number, then in the order they were added.
type WindowBuilder struct {
	targets []candidates.Target
	idx     map[recordKey]int
	byT     []builtTarget
	extra   []string
	seen    map[recordKey]bool
}

// recordKey is a record's or a target's address, protocol and port.
type recordKey struct {
	addr  string
	proto probe.Protocol
	port  int
}

func keyOfRecord(addr string, proto probe.Protocol, port int) recordKey {
	if proto == "" {
		proto = probe.ICMP
	}
	if proto == probe.ICMP {
		port = 0
	}
	return recordKey{addr, proto, port}
}

// builtTarget is one target's probes as added, each with its sequence
// number for the sort (windowProbe.seq, or wide[i] once a number did not
// fit in it); sorted stays true while they came in order.
type builtTarget struct {
	probes []windowProbe
	wide   []int
	dup    []bool
	sorted bool
}

func (t *builtTarget) seq(i int) int {
	if t.wide != nil {
		return t.wide[i]
	}
	return int(t.probes[i].seq)
}

// NewWindowBuilder returns a builder of windows for targets.
func NewWindowBuilder(targets []candidates.Target) *WindowBuilder {
	b := &WindowBuilder{targets: targets, idx: map[recordKey]int{}, byT: make([]builtTarget, len(targets)), seen: map[recordKey]bool{}}
	for i, t := range targets {
		b.idx[keyOfRecord(t.Addr, t.Protocol, t.Port)] = i
		b.byT[i].sorted = true
	}
	return b
}

// Add files record r under its target; a record of another target is
// named once among Windows' extras.
func (b *WindowBuilder) Add(r probe.Record) {
	k := keyOfRecord(r.Addr, r.Protocol, r.Port)
	i, ok := b.idx[k]
	if !ok {
		// A stream may name the target and record the resolved address.
		i, ok = b.idx[keyOfRecord(r.Target, r.Protocol, r.Port)]
	}
	if !ok {
		if !b.seen[k] {
			b.seen[k] = true
			b.extra = append(b.extra, candidates.Target{Addr: k.addr, Protocol: k.proto, Port: k.port}.String())
		}
		return
	}
	p, dup, ok := probeOf(r)
	if !dup && !ok {
		return
	}
	t := &b.byT[i]
	if n := len(t.probes); n > 0 && t.sorted {
		last := t.probes[n-1].at
		t.sorted = last < p.at || last == p.at && t.seq(n-1) <= r.Seq
	}
	if t.wide == nil && (r.Seq < 0 || uint64(r.Seq) > math.MaxUint32) {
		t.wide = make([]int, len(t.probes), cap(t.probes))
		for j := range t.probes {
			t.wide[j] = int(t.probes[j].seq)
		}
	}
	p.seq = uint32(r.Seq)
	t.probes = append(t.probes, p)
	if t.wide != nil {
		t.wide = append(t.wide, r.Seq)
	}
	if dup || t.dup != nil {
		if t.dup == nil {
			t.dup = make([]bool, len(t.probes)-1, cap(t.probes))
		}
		t.dup = append(t.dup, dup)
	}
}

// Windows returns the windows, in the order of the targets, and the
// records' other targets by name. The builder is spent.
func (b *WindowBuilder) Windows() ([]*Window, []string) {
	out := make([]*Window, len(b.targets))
	for i := range b.byT {
		t := &b.byT[i]
		if !t.sorted {
			sort.Stable(t)
		}
		w := NewWindow(0)
		// The window takes the probes' own array: duplicates leave it,
		// the ended probes move up in place.
		kept := t.probes[:0]
		for j, p := range t.probes {
			if t.dup != nil && t.dup[j] {
				w.addDups(1, p.at)
				continue
			}
			kept = append(kept, p)
		}
		w.ring, w.n = kept, len(kept)
		out[i] = w
		*t = builtTarget{}
	}
	return out, b.extra
}

func (t *builtTarget) Len() int { return len(t.probes) }

func (t *builtTarget) Less(a, b int) bool {
	if t.probes[a].at != t.probes[b].at {
		return t.probes[a].at < t.probes[b].at
	}
	return t.seq(a) < t.seq(b)
}

func (t *builtTarget) Swap(a, b int) {
	t.probes[a], t.probes[b] = t.probes[b], t.probes[a]
	if t.wide != nil {
		t.wide[a], t.wide[b] = t.wide[b], t.wide[a]
	}
	if t.dup != nil {
		t.dup[a], t.dup[b] = t.dup[b], t.dup[a]
	}
}

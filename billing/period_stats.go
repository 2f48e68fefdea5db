package billing

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// view is the part of a series inside a period, with the statistics every
// scheme is computed from. Sorted samples are cached per part and subset:
// sorting does not depend on the 95th method, so one sort serves all six.
type view struct {
	p        Period
	from, to int64 // slot starts in [from, to) belong to the period (see Boundary)
	width    int64
	slots    []Slot // present slots inside the period, ascending, scaled
	expected int
	gaps     string // skip or zero

	days      [][2]int64
	dayOf     []int32 // day index of each slot (slotDays makes it when needed)
	dayBytes  []float64
	validDays int
	validExp  int // expected slots in valid days

	cache   map[sampleKey]sortedSample
	scratch []float64 // p95Ranked's unsorted sample, reused across parts
	ranked  map[rankedKey]stat
}

type sampleKey struct {
	part  Direction // a per-slot rule (in, out, max, sum)
	valid bool
}

// newView cuts s to p under the boundary rule and multiplies bytes by scale.
func newView(s *Series, p Period, boundary Boundary, gaps string, scale float64) *view {
	// Readers spread coarse samples evenly over the 300 s slots they cover,
	// so every series is on the 300 s grid whatever its source step.
	width := int64(SlotSeconds)
	a, b := boundary.window(p, width)
	lo := sort.Search(len(s.Slots), func(i int) bool { return s.Slots[i].Start >= a })
	hi := sort.Search(len(s.Slots), func(i int) bool { return s.Slots[i].Start >= b })
	v := &view{p: p, from: a, to: b, width: width, gaps: gaps, cache: map[sampleKey]sortedSample{}}
	// The view only reads its slots: share the series' unless scaled.
	v.slots = s.Slots[lo:hi:hi]
	if scale != 1 {
		v.slots = slices.Clone(v.slots)
		for i := range v.slots {
			v.slots[i].In *= scale
			v.slots[i].Out *= scale
		}
	}
	v.expected = int(max(ceilDiv(b, width)-ceilDiv(a, width), 0))
	v.days = p.Days()
	v.dayBytes = make([]float64, len(v.days))
	// Each day's sum in a local, stored when the day ends: the same
	// additions in the same order as adding to dayBytes[d] slot by slot.
	d, acc := 0, 0.0
	for _, sl := range v.slots {
		for d < len(v.days)-1 && sl.Start >= v.days[d][1] {
			v.dayBytes[d] += acc
			acc = 0
			d++
		}
		acc += sl.In + sl.Out
	}
	if len(v.dayBytes) > 0 {
		v.dayBytes[d] += acc
	}
	for i := range v.days {
		if v.dayBytes[i] > 0 {
			v.validDays++
			v.validExp += v.daySlots(i)
		}
	}
	return v
}

// slotDays returns the day index of each slot, made on first use: only
// offers' valid-day and daily rules read it, not the 95th block.
func (v *view) slotDays() []int32 {
	if v.dayOf == nil {
		v.dayOf = make([]int32, len(v.slots))
		d := 0
		for i, sl := range v.slots {
			for d < len(v.days)-1 && sl.Start >= v.days[d][1] {
				d++
			}
			v.dayOf[i] = int32(d)
		}
	}
	return v.dayOf
}

// daySlots is the number of slots of day d inside the period's window.
func (v *view) daySlots(d int) int {
	a, b := max(v.days[d][0], v.from), min(v.days[d][1], v.to)
	return int(max(ceilDiv(b, v.width)-ceilDiv(a, v.width), 0))
}

// maxVolume is the largest period volume (bytes, in+out) a report can hold:
// the JSON volumes are int64 byte counts.
const maxVolume = float64(math.MaxInt64)

// checkVolume refuses traffic that cannot be billed (ErrTooLarge), naming the
// largest slot and, when the traffic is scaled, the factor.
func (v *view) checkVolume(scale float64) error {
	var total, bigSum float64
	big := -1
	for i, s := range v.slots {
		if math.IsNaN(s.In) || math.IsNaN(s.Out) || s.In < 0 || s.Out < 0 {
			return fmt.Errorf("%w: the slot at %s holds %g bytes in, %g out: not a byte count; check the log", ErrTooLarge, v.stamp(s.Start), s.In, s.Out)
		}
		sum := s.In + s.Out
		total += sum
		if big < 0 || sum > bigSum {
			big, bigSum = i, sum
		}
	}
	if total < maxVolume {
		return nil
	}
	b := v.slots[big]
	what := fmt.Sprintf("the period's volume (in+out %s bytes) is beyond 9.2 EB, more than any link carries; the largest slot, at %s, holds %s bytes in, %s out (%s bit/s)",
		sci(total), v.stamp(b.Start), sci(b.In), sci(b.Out), sci(v.rate(max(b.In, b.Out))))
	if scale != 1 {
		return fmt.Errorf("%w: --scale %g: %s; use a smaller factor", ErrTooLarge, scale, what)
	}
	return fmt.Errorf("%w: %s; check the log's units", ErrTooLarge, what)
}

func (v *view) stamp(t int64) string { return time.Unix(t, 0).In(v.p.location()).Format(time.RFC3339) }

// sci renders a large figure in scientific notation with 3 significant digits.
func sci(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

// rate converts bytes in one slot to bit/s.
func (v *view) rate(bytes float64) float64 { return bytes * 8 / float64(v.width) }

// sample returns the ascending per-slot rates of the per-slot rule part, over
// the slots of valid days only when valid, with the missing slots as zeros
// under gaps zero.
func (v *view) sample(part Direction, valid bool) sortedSample {
	k := sampleKey{part, valid}
	if s, ok := v.cache[k]; ok {
		return s
	}
	vals := make([]float64, 0, len(v.slots))
	dayOf := v.slotDays()
	for i, sl := range v.slots {
		if valid && v.dayBytes[dayOf[i]] <= 0 {
			continue
		}
		vals = append(vals, v.rate(part.of(sl)))
	}
	zeros := 0
	if v.gaps == "zero" {
		exp := v.expected
		if valid {
			exp = v.validExp
		}
		zeros = max(exp-len(vals), 0)
	}
	s := newSortedSample(vals, zeros)
	v.cache[k] = s
	return s
}

// p95Ranked is p95 over all present slots (valid false) without sorting
// when the sample is not already sorted: the report's 95th block, with no
// offer that reads the samples again, needs only one rank per part, which
// selection finds in a fraction of a sort (same keys, same value).
func (v *view) p95Ranked(method Method, direction Direction) stat {
	return v.byRule(direction, func(c Direction) stat {
		if s, ok := v.cache[sampleKey{c, false}]; ok {
			return stat{bps: s.p95(method), n: s.n(), rank: method.Rank(s.n())}
		}
		// The block asks for in and out twice (alone and under greater).
		rk := rankedKey{c, method}
		if st, ok := v.ranked[rk]; ok {
			return st
		}
		if v.scratch == nil {
			if sp, _ := scratchPool.Get().(*[]float64); sp != nil && cap(*sp) >= len(v.slots) {
				v.scratch = *sp
			} else {
				v.scratch = make([]float64, len(v.slots))
			}
		}
		// The bytes per slot, not the rates: a rate is bytes·8/width, which
		// never decreases as the bytes grow, so the rate of the k-th smallest
		// bytes is the k-th smallest rate, bit for bit (the same division,
		// done for two values instead of every slot).
		vals := v.scratch[:len(v.slots)]
		switch c {
		case DirIn:
			for i, sl := range v.slots {
				vals[i] = sl.In
			}
		case DirOut:
			for i, sl := range v.slots {
				vals[i] = sl.Out
			}
		case DirMax: // Direction.Apply's, without its switch per slot
			for i, sl := range v.slots {
				vals[i] = max(sl.In, sl.Out)
			}
		case DirSum:
			for i, sl := range v.slots {
				vals[i] = sl.In + sl.Out
			}
		default:
			for i, sl := range v.slots {
				vals[i] = c.of(sl)
			}
		}
		zeros := 0
		if v.gaps == "zero" {
			zeros = max(v.expected-len(vals), 0)
		}
		n := len(vals) + zeros
		r := method.Rank(n)
		var lo, hi float64 // the values of ranks r and r+1 (capped at n)
		if n > 0 {
			switch {
			case r > zeros:
				lo, hi = rankFloats(vals, r-zeros-1)
				lo, hi = v.rate(lo), v.rate(hi)
			case r+1 > zeros && r+1 <= n:
				hi, _ = rankFloats(vals, 0)
				hi = v.rate(hi)
			}
		}
		at := func(q int) float64 {
			if q == r {
				return lo
			}
			return hi
		}
		st := stat{bps: p95At(method, n, at), n: n, rank: r}
		if v.ranked == nil {
			v.ranked = map[rankedKey]stat{}
		}
		v.ranked[rk] = st
		return st
	})
}

// rankParts finds p95Ranked's figures for the four per-slot parts (in,
// out, max, sum) under method in one pass over the slots (rankSlotParts),
// for the 95th block; a part it cannot settle is left to p95Ranked.
func (v *view) rankParts(method Method) {
	zeros := 0
	if v.gaps == "zero" {
		zeros = max(v.expected-len(v.slots), 0)
	}
	n := len(v.slots) + zeros
	r := method.Rank(n)
	if n == 0 || r <= zeros {
		return
	}
	res := rankSlotParts(v.slots, r-zeros-1)
	for p, c := range [4]Direction{DirIn, DirOut, DirMax, DirSum} {
		if !res[p].ok {
			continue
		}
		if _, ok := v.cache[sampleKey{c, false}]; ok {
			continue // p95Ranked reads the sorted sample
		}
		lo, hi := v.rate(unkey(res[p].first)), v.rate(unkey(res[p].next))
		at := func(q int) float64 {
			if q == r {
				return lo
			}
			return hi
		}
		if v.ranked == nil {
			v.ranked = map[rankedKey]stat{}
		}
		v.ranked[rankedKey{c, method}] = stat{bps: p95At(method, n, at), n: n, rank: r}
	}
}

// scratchPool recycles p95Ranked's sample buffers from series to series
// (~9,000 values each for a month): fresh ones were a tenth of the page
// faults of billing 100 interfaces.
var scratchPool sync.Pool

// releaseScratch hands p95Ranked's buffer back once the view's 95th block is
// done.
func (v *view) releaseScratch() {
	if v.scratch != nil {
		b := v.scratch[:0]
		scratchPool.Put(&b)
		v.scratch = nil
	}
}

// rankedKey names a figure p95Ranked has found: a per-slot rule's 95th
// under a method.
type rankedKey struct {
	part   Direction
	method Method
}

// stat is a figure under a direction rule: the value in bit/s and, for
// percentiles, the sample count and rank behind it (of the deciding part).
type stat struct {
	bps     float64
	n, rank int
	from    Direction // the part that decided under greater (in or out)
}

// byRule applies f to the parts of the direction rule; greater keeps the larger.
func (v *view) byRule(direction Direction, f func(part Direction) stat) stat {
	var best stat
	for i, c := range direction.Parts() {
		s := f(c)
		s.from = c
		if i == 0 || s.bps > best.bps {
			best = s
		}
	}
	return best
}

func (v *view) p95(method Method, direction Direction, valid bool) stat {
	return v.byRule(direction, func(c Direction) stat {
		s := v.sample(c, valid)
		return stat{bps: s.p95(method), n: s.n(), rank: method.Rank(s.n())}
	})
}

func (v *view) peak(nth int, direction Direction, valid bool) stat {
	return v.byRule(direction, func(c Direction) stat {
		s := v.sample(c, valid)
		n := s.n()
		return stat{bps: s.nthLargest(nth), n: n, rank: max(n-max(nth, 1)+1, 1)}
	})
}

// average is the mean rate: over present slots (skip) or over all expected slots (zero).
func (v *view) average(direction Direction, valid bool) stat {
	return v.byRule(direction, func(c Direction) stat {
		s := v.sample(c, valid)
		var sum float64
		for _, x := range s.vals {
			sum += x
		}
		if s.n() == 0 {
			return stat{}
		}
		return stat{bps: sum / float64(s.n()), n: s.n()}
	})
}

// dailyPeakAverage is the mean over days of each day's nth highest sample,
// over the top topDays days when topDays > 0.
func (v *view) dailyPeakAverage(dailyNth, topDays int, direction Direction, valid bool) stat {
	return v.byRule(direction, func(c Direction) stat {
		perDay := make([][]float64, len(v.days))
		dayOf := v.slotDays()
		for i, sl := range v.slots {
			perDay[dayOf[i]] = append(perDay[dayOf[i]], v.rate(c.of(sl)))
		}
		var peaks []float64
		n := 0
		for d, vals := range perDay {
			if valid && v.dayBytes[d] <= 0 {
				continue
			}
			zeros := 0
			if v.gaps == "zero" {
				zeros = max(v.daySlots(d)-len(vals), 0)
			} else if len(vals) == 0 {
				continue
			}
			s := newSortedSample(vals, zeros)
			n += s.n()
			peaks = append(peaks, s.nthLargest(dailyNth))
		}
		if len(peaks) == 0 {
			return stat{}
		}
		slices.Sort(peaks)
		if topDays > 0 && topDays < len(peaks) {
			peaks = peaks[len(peaks)-topDays:]
		}
		var sum float64
		for _, x := range peaks {
			sum += x
		}
		return stat{bps: sum / float64(len(peaks)), n: n, rank: len(peaks)}
	})
}

// daysShorterThan counts the days (with samples; valid days only when valid)
// that have fewer than nth samples, under the gaps policy.
func (v *view) daysShorterThan(nth int, valid bool) int {
	if nth <= 1 {
		return 0
	}
	count := make([]int, len(v.days))
	for _, d := range v.slotDays() {
		count[d]++
	}
	short := 0
	for d, c := range count {
		if (valid && v.dayBytes[d] <= 0) || (c == 0 && v.gaps != "zero") {
			continue
		}
		if v.gaps == "zero" {
			c = max(c, v.daySlots(d))
		}
		if c < nth {
			short++
		}
	}
	return short
}

// volume returns the bytes of the period under a direction rule: the sum of
// the per-slot values, or under greater the larger of the two sums.
func (v *view) volume(direction Direction) float64 {
	var in, out, per float64
	for _, s := range v.slots {
		in += s.In
		out += s.Out
		per += direction.of(s)
	}
	if direction.PerSlot() {
		return per
	}
	return direction.Apply(in, out)
}

// GapRun is a run of consecutive missing slots.
type GapRun struct {
	Start string `json:"start"`
	End   string `json:"end"`
	Slots int    `json:"slots"`
}

// gapRuns lists the runs of missing slots (at most limit), and the number of runs.
func (v *view) gapRuns(limit int) ([]GapRun, int) {
	var runs []GapRun
	total := 0
	loc := v.p.location()
	add := func(from, to int64) { // missing slots start at from, the next present slot at to
		n := int((to - from) / v.width)
		if n <= 0 {
			return
		}
		total++
		if len(runs) < limit {
			runs = append(runs, GapRun{
				Start: time.Unix(from, 0).In(loc).Format(time.RFC3339),
				End:   time.Unix(to, 0).In(loc).Format(time.RFC3339),
				Slots: n,
			})
		}
	}
	next := ceilDiv(v.from, v.width) * v.width
	for _, s := range v.slots {
		if s.Start-next >= v.width { // add's own test, without a call per slot
			add(next, s.Start)
		}
		next = s.Start + v.width
	}
	add(next, ceilDiv(v.to, v.width)*v.width)
	return runs, total
}

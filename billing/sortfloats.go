package billing

import (
	"math"
	"slices"
	"sync"
)

// radixBufs recycles sortFloats' key buffers: billing a month sorts
// several samples per series, and allocating them each time was a fifth
// of the bytes allocated.
var radixBufs = sync.Pool{New: func() any { return new([2][]uint64) }}

// sortFloats sorts v ascending, like slices.Sort, but by an LSD radix sort
// on the values' bits: a month's percentile sample is ~9,000 rates sorted
// several times per series (each direction rule), and comparison sorting
// was the largest cost of billing 100 interfaces (bench/bill/README.md). A
// float's bits, with the sign bit flipped for positives and all bits for
// negatives, order as unsigned integers the way the floats do. Short inputs
// and any NaN go to slices.Sort.
func sortFloats(v []float64) {
	const minRadix = 512
	if len(v) < minRadix {
		slices.Sort(v)
		return
	}
	bp := radixBufs.Get().(*[2][]uint64)
	defer radixBufs.Put(bp)
	if cap(bp[0]) < len(v) {
		bp[0], bp[1] = make([]uint64, len(v)), make([]uint64, len(v))
	}
	keys, tmp := bp[0][:len(v)], bp[1][:len(v)]
	var or, and uint64 = 0, math.MaxUint64
	for i, x := range v {
		if x != x {
			slices.Sort(v)
			return
		}
		b := math.Float64bits(x)
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i] = b
		or |= b
		and &= b
	}
	const bits = 11
	var count [1 << bits]int
	for shift := uint(0); shift < 64; shift += bits {
		if (or^and)>>shift&(1<<bits-1) == 0 {
			continue // every key has the same digit here
		}
		clear(count[:])
		for _, k := range keys {
			count[k>>shift&(1<<bits-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range keys {
			d := k >> shift & (1<<bits - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	for i, b := range keys {
		if b>>63 == 1 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		v[i] = math.Float64frombits(b)
	}
}

// rankFloats returns the k-th and (k+1)-th smallest of v (0-based; the second
// is the first again when k is the last index), the values that sortFloats(v)
// would leave at v[k] and v[k+1], without sorting: a 95th figure that nothing
// else reads needs only its rank (quickselect on the same keys as
// sortFloats, so ties of -0 and +0 resolve alike). v is left in an
// unspecified order. Short inputs and any NaN are sorted instead.
func rankFloats(v []float64, k int) (float64, float64) {
	const minSelect = 512
	if len(v) < minSelect {
		sortFloats(v)
		return v[k], v[min(k+1, len(v)-1)]
	}
	bp := radixBufs.Get().(*[2][]uint64)
	defer radixBufs.Put(bp)
	if cap(bp[0]) < len(v) {
		bp[0], bp[1] = make([]uint64, len(v)), make([]uint64, len(v))
	}
	if first, next, ok := rankFiltered(v, bp[1][:len(v)], k); ok {
		return unkey(first), unkey(next)
	}
	keys := bp[0][:len(v)]
	for i, x := range v {
		if x != x {
			sortFloats(v)
			return v[k], v[min(k+1, len(v)-1)]
		}
		keys[i] = floatKey(x)
	}
	first, next := selectKeys(keys, k)
	return unkey(first), unkey(next)
}

// floatKey is sortFloats' key of x: its bits with the sign bit flipped for
// positives and all bits flipped for negatives, which order as unsigned
// integers the way the floats do (-0 before +0).
func floatKey(x float64) uint64 {
	b := math.Float64bits(x)
	return b ^ (uint64(int64(b)>>63) | 1<<63)
}

// rankFiltered finds the keys of the k-th and (k+1)-th smallest of v (as
// selectKeys does over all keys) for a rank in the upper half, the 95th's:
// a pivot read off a sorted sample of 128 evenly spaced values, a little
// below where the rank falls in it, leaves only the keys at or above it
// (about a tenth) to select among, gathered into buf in the same pass that
// computes them. ok is false when the sample misled (the rank lies below
// the pivot) or v holds a NaN: the caller then selects over all keys. The
// answer is exact either way; the pivot only decides how much work it is.
func rankFiltered(v []float64, buf []uint64, k int) (first, next uint64, ok bool) {
	const (
		sampleN = 128
		margin  = 8 // sample ranks below k's place: ~3 standard deviations at the 95th
	)
	n := len(v)
	if k < n/2 || n < 4*sampleN {
		return 0, 0, false
	}
	var sample [sampleN]uint64
	stride := n / sampleN
	for i := range sample {
		sample[i] = floatKey(v[i*stride])
	}
	slices.Sort(sample[:])
	j := k*sampleN/n - margin
	if j <= 0 {
		return 0, 0, false
	}
	pivot := sample[j]
	m, nan := 0, false
	for _, x := range v {
		b := floatKey(x)
		nan = nan || x != x
		buf[m] = b
		inc := 0 // branch-free: about one key in ten is kept
		if b >= pivot {
			inc = 1
		}
		m += inc
	}
	below := n - m // keys < pivot: the smallest ranks
	if nan || below > k || m == 0 {
		return 0, 0, false
	}
	// The k-th smallest of all is the (k-below)-th of the keys ≥ pivot; the
	// (k+1)-th too, or the k-th again when k is the last index.
	first, next = selectKeys(buf[:m], k-below)
	return first, next, true
}

// selectKeys returns the k-th and (k+1)-th smallest of keys (the k-th again
// when k is the last index) by a three-way quickselect; keys is reordered.
func selectKeys(keys []uint64, k int) (uint64, uint64) {
	lo, hi := 0, len(keys)-1 // keys[k] lies in keys[lo..hi]
	for budget := 64; lo < hi; budget-- {
		if budget == 0 { // adversarial pivots: finish by sorting the rest
			slices.Sort(keys[lo : hi+1])
			break
		}
		// Median of three as the pivot, then a three-way partition
		// (equal keys in the middle, so runs of ties cannot degrade it).
		a, b, c := keys[lo], keys[lo+(hi-lo)/2], keys[hi]
		if a > b {
			a, b = b, a
		}
		if b > c {
			b = c
			if a > b {
				b = a
			}
		}
		pivot := b
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch x := keys[i]; {
			case x < pivot:
				keys[lt], keys[i] = keys[i], keys[lt]
				lt++
				i++
			case x > pivot:
				keys[i], keys[gt] = keys[gt], keys[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			lo, hi = k, k
		}
	}
	first := keys[k]
	next := first
	if k+1 < len(keys) {
		next = keys[k+1]
		for _, x := range keys[k+1:] { // everything after k is >= keys[k]
			next = min(next, x)
		}
	}
	return first, next
}

// unkey inverts sortFloats' key transform.
func unkey(b uint64) float64 {
	if b>>63 == 1 {
		b &^= 1 << 63
	} else {
		b = ^b
	}
	return math.Float64frombits(b)
}

// slotKeyBufs recycles rankSlotParts' four key buffers.
var slotKeyBufs = sync.Pool{New: func() any { return new([4][]uint64) }}

// slotRank is what rankSlotParts found for one per-slot part: the keys of
// the k-th and (k+1)-th smallest values (as rankFloats would return them),
// or ok false when the caller must select on its own.
type slotRank struct {
	first, next uint64
	ok          bool
}

// rankSlotParts does rankFiltered for the four per-slot parts of slots at
// once (in, out, max(in, out), in+out, as Direction.Apply computes them):
// one pass over the slots computes each part's key and keeps those at or
// above its pivot, instead of a pass to gather each part's values and one
// to filter them. The pivots are read off the same evenly spaced samples
// as rankFiltered's, so a part comes out exactly as rankFloats on its
// values would give it; a part whose sample misled is left to the caller.
func rankSlotParts(slots []Slot, k int) (res [4]slotRank) {
	const (
		sampleN = 128
		margin  = 8
	)
	n := len(slots)
	if k < n/2 || n < 4*sampleN {
		return res
	}
	j := k*sampleN/n - margin
	if j <= 0 {
		return res
	}
	var sample [4][sampleN]uint64
	stride := n / sampleN
	for i := range sampleN {
		s := slots[i*stride]
		sample[0][i], sample[1][i] = floatKey(s.In), floatKey(s.Out)
		sample[2][i], sample[3][i] = floatKey(max(s.In, s.Out)), floatKey(s.In+s.Out)
	}
	var pivot [4]uint64
	for p := range sample {
		slices.Sort(sample[p][:])
		pivot[p] = sample[p][j]
	}
	bp := slotKeyBufs.Get().(*[4][]uint64)
	defer slotKeyBufs.Put(bp)
	for p := range bp {
		if cap(bp[p]) < n {
			bp[p] = make([]uint64, n)
		}
	}
	b0, b1, b2, b3 := bp[0][:n], bp[1][:n], bp[2][:n], bp[3][:n]
	p0, p1, p2, p3 := pivot[0], pivot[1], pivot[2], pivot[3]
	m0, m1, m2, m3 := 0, 0, 0, 0
	nan := 0
	for _, s := range slots {
		sum := s.In + s.Out
		nan |= b2i(sum != sum) // NaN in either part makes the sum NaN
		k0, k1, k2, k3 := floatKey(s.In), floatKey(s.Out), floatKey(max(s.In, s.Out)), floatKey(sum)
		b0[m0], b1[m1], b2[m2], b3[m3] = k0, k1, k2, k3
		m0 += b2i(k0 >= p0)
		m1 += b2i(k1 >= p1)
		m2 += b2i(k2 >= p2)
		m3 += b2i(k3 >= p3)
	}
	if nan != 0 {
		return res // rankFloats sorts, NaN first
	}
	for p, m := range [4]int{m0, m1, m2, m3} {
		below := n - m
		if below > k || m == 0 {
			continue
		}
		first, next := selectKeys(bp[p][:m], k-below)
		res[p] = slotRank{first, next, true}
	}
	return res
}

// b2i is 1 for true: a branch-free count.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

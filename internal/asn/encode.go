package asn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"time"
	"unsafe"
)

// The in-place form: what is embedded and what `asn update` caches, searched
// where it lies (issue 35: decoding the old gzip of varint lists cost every
// command that names hops 80 ms of CPU). All numbers little-endian.
//
//	header, 160 bytes:
//	  0  "LCASN2\n\x00"
//	  8  int64  snapshot (Unix seconds)
//	 16  4 × u32  AS ranges IPv4, IPv6; country ranges IPv4, IPv6
//	 32  u32 length of the whole file; 4 bytes zero
//	 40  14 × (u32 offset, u32 records) of the sections below; 8 bytes zero
//	sections, in this order:
//	  source   the source's text (records = bytes)
//	  names    per (AS number, name) pair, sorted: u32 ASN, u32 end of its
//	           name in the name text (the start is the previous end)
//	  text     the names, one after another (records = bytes)
//	  ccs      2 bytes per country code, sorted; code i is index i+1
//	  as4      u32 key, u24 value       } boundary lists: a record says
//	  as6hi    u64 key, u24 value       } "from key on, value", up to the
//	  as6      u64 hi, u64 lo, u24 value} next record's key; value 0 is no
//	  cc4      u32 key, u8 value        } range (a gap), else the index + 1
//	  cc6hi    u64 key, u8 value        } of the name (AS lists) or the
//	  cc6      u64 hi, u64 lo, u8 value } country code (country lists)
//	  ix…      for as4, as6hi, cc4, cc6hi when they hold minIndexed records
//	           or more (else empty): 65,537 u32, entry p the number of
//	           records whose key's top 16 bits are < p, so that a lookup
//	           searches only its /16 (IPv4) or top-16-bit block
//	u32 CRC-32 (IEEE) of everything before it
//
// IPv6 ranges that are whole /64s (almost all: 103,014 of 103,197 AS ranges,
// all country ranges of 2026-06-17) go into the *6hi lists keyed by the
// upper 64 bits, the rest into the full-width lists; a lookup asks the
// full-width list first. A /64 the full-width list touches holds no whole-/64
// range (the ranges are disjoint), so the two never disagree.
//
// Fixed-width records keep a lookup to a binary search of the bytes, with no
// decoding at start; against 2.86 MB for the gzip form they take 11.2 MB
// (bench/asn has the binary sizes). The prefix indexes (1 MB) narrow each
// search to a few records: without them a lookup in the embedded pages was
// 1.5 times one in the decoded arrays of the old form.
const magic = "LCASN2\n\x00"

const (
	headerSize = 160
	nSections  = 14
	// secTable is where the header's section table starts.
	secTable = 40
	// indexSize is the entries of a prefix index: one per 16-bit prefix,
	// and the total.
	indexSize = 1<<16 + 1
	// minIndexed is the shortest list that gets a prefix index.
	minIndexed = 4096
)

// Section numbers, in file order.
const (
	secSource = iota
	secNames
	secText
	secCCs
	secAS4
	secAS6hi
	secAS6
	secCC4
	secCC6hi
	secCC6
	secIxAS4
	secIxAS6hi
	secIxCC4
	secIxCC6hi
)

// recordSize is each section's record width in bytes.
var recordSize = [nSections]int{1, 8, 1, 2, 4 + 3, 8 + 3, 16 + 3, 4 + 1, 8 + 1, 16 + 1, 4, 4, 4, 4}

// indexOf is the prefix index of each list that has one, indexed[ix] the
// list an index belongs to.
var (
	indexOf = map[int]int{secAS4: secIxAS4, secAS6hi: secIxAS6hi, secCC4: secIxCC4, secCC6hi: secIxCC6hi}
	indexed = map[int]int{secIxAS4: secAS4, secIxAS6hi: secAS6hi, secIxCC4: secCC4, secIxCC6hi: secCC6hi}
)

// prefix16 is the top 16 bits of a key of list id.
func prefix16(id int, k u128) int {
	if id == secAS4 || id == secCC4 {
		return int(k.lo >> 16)
	}
	return int(k.lo >> 48)
}

// maxNames is how many (AS number, name) pairs a u24 value can index.
const maxNames = 1<<24 - 1

// lists is a table as separate sorted slices of disjoint, inclusive ranges:
// what Builder makes and the encoder writes.
type lists struct {
	snapshot time.Time
	source   string
	names    []AS
	ccs      []string // country codes; index 0 is "" (none)

	start4, end4 []uint32
	as4          []uint32
	start6, end6 []u128
	as6          []uint32

	cstart4, cend4 []uint32
	cc4            []uint8
	cstart6, cend6 []u128
	cc6            []uint8
}

func sub128(a, b u128) u128 {
	lo := a.lo - b.lo
	borrow := uint64(0)
	if a.lo < b.lo {
		borrow = 1
	}
	return u128{a.hi - b.hi - borrow, lo}
}

func add128(a, b u128) (u128, bool) {
	lo := a.lo + b.lo
	carry := uint64(0)
	if lo < a.lo {
		carry = 1
	}
	hi := a.hi + b.hi + carry
	over := hi < a.hi || (hi == a.hi && (b.hi != 0 || carry != 0))
	return u128{hi, lo}, over
}

func add1(a u128) u128 {
	r, _ := add128(a, u128{0, 1})
	return r
}

// boundary writes one list of sorted, disjoint ranges as boundary records:
// a record at each start, and a gap record (value 0) after each range that
// the next does not follow at once. width is the key width in bytes (4, 8,
// 16); vw the value width (3 or 1).
type boundary struct {
	buf   []byte
	width int
	vw    int
	n     int
}

func (b *boundary) put(k u128, v uint32) {
	switch b.width {
	case 4:
		b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(k.lo))
	case 8:
		b.buf = binary.LittleEndian.AppendUint64(b.buf, k.lo)
	default:
		b.buf = binary.LittleEndian.AppendUint64(b.buf, k.hi)
		b.buf = binary.LittleEndian.AppendUint64(b.buf, k.lo)
	}
	b.buf = append(b.buf, byte(v))
	if b.vw == 3 {
		b.buf = append(b.buf, byte(v>>8), byte(v>>16))
	}
	b.n++
}

// add appends the range [s, e] (keys of the list's width; max is the
// width's last key) with value v ≥ 1; next is the key after the previous
// range, started whether there was one that did not end at max.
func (b *boundary) add(s, e, max u128, v uint32, next *u128, started *bool) {
	if *started && *next != s {
		b.put(*next, 0)
	}
	b.put(s, v)
	*started = e != max
	*next = add1(e)
}

// end closes the list: a gap record after the last range, unless it ends at
// the end of the key space.
func (b *boundary) end(next u128, started bool) {
	if started {
		b.put(next, 0)
	}
}

// encodeLists makes the in-place form of l.
func encodeLists(l *lists) ([]byte, error) {
	if len(l.names) > maxNames {
		return nil, fmt.Errorf("%d (AS number, name) pairs: more than the %d the format holds", len(l.names), maxNames)
	}
	if len(l.ccs) > 256 {
		return nil, fmt.Errorf("%d country codes: more than the 255 the format holds", len(l.ccs)-1)
	}
	var sec [nSections][]byte
	var cnt [nSections]int
	sec[secSource] = []byte(l.source)
	var names, text []byte
	for _, a := range l.names {
		text = append(text, a.Name...)
		if len(text) > math.MaxUint32 {
			return nil, errors.New("names longer than 4 GiB in all")
		}
		names = binary.LittleEndian.AppendUint32(names, a.ASN)
		names = binary.LittleEndian.AppendUint32(names, uint32(len(text)))
	}
	sec[secNames], sec[secText] = names, text
	for _, c := range l.ccs[1:] {
		if len(c) != 2 {
			return nil, fmt.Errorf("country code %q is not two letters", c)
		}
		sec[secCCs] = append(sec[secCCs], c...)
	}
	max4 := u128{0, math.MaxUint32}
	max64 := u128{0, math.MaxUint64}
	max128 := u128{math.MaxUint64, math.MaxUint64}
	v4 := func(s, vw int, starts, ends []uint32, val func(i int) uint32) {
		b := boundary{width: 4, vw: vw}
		var next u128
		started := false
		for i := range starts {
			b.add(u128{0, uint64(starts[i])}, u128{0, uint64(ends[i])}, max4, val(i), &next, &started)
		}
		b.end(next, started)
		sec[s], cnt[s] = b.buf, b.n
	}
	v6 := func(hiSec, fullSec, vw int, starts, ends []u128, val func(i int) uint32) {
		hi := boundary{width: 8, vw: vw}
		full := boundary{width: 16, vw: vw}
		var nh, nf u128
		sh, sf := false, false
		for i := range starts {
			s, e := starts[i], ends[i]
			if s.lo == 0 && e.lo == math.MaxUint64 {
				hi.add(u128{0, s.hi}, u128{0, e.hi}, max64, val(i), &nh, &sh)
			} else {
				full.add(s, e, max128, val(i), &nf, &sf)
			}
		}
		hi.end(nh, sh)
		full.end(nf, sf)
		sec[hiSec], cnt[hiSec] = hi.buf, hi.n
		sec[fullSec], cnt[fullSec] = full.buf, full.n
	}
	v4(secAS4, 3, l.start4, l.end4, func(i int) uint32 { return l.as4[i] + 1 })
	v6(secAS6hi, secAS6, 3, l.start6, l.end6, func(i int) uint32 { return l.as6[i] + 1 })
	v4(secCC4, 1, l.cstart4, l.cend4, func(i int) uint32 { return uint32(l.cc4[i]) })
	v6(secCC6hi, secCC6, 1, l.cstart6, l.cend6, func(i int) uint32 { return uint32(l.cc6[i]) })

	for list, ix := range indexOf {
		if len(sec[list]) < minIndexed*recordSize[list] {
			continue // a short list is searched whole
		}
		var keys []u128
		for at := 0; at < len(sec[list]); at += recordSize[list] {
			k := u128{0, uint64(binary.LittleEndian.Uint32(sec[list][at:]))}
			if list == secAS6hi || list == secCC6hi {
				k.lo = binary.LittleEndian.Uint64(sec[list][at:])
			}
			keys = append(keys, k)
		}
		n := 0
		for p := range indexSize {
			for n < len(keys) && prefix16(list, keys[n]) < p {
				n++
			}
			sec[ix] = binary.LittleEndian.AppendUint32(sec[ix], uint32(n))
		}
	}
	size := headerSize
	for i := range sec {
		if cnt[i] == 0 {
			cnt[i] = len(sec[i]) / recordSize[i]
		}
		size += len(sec[i])
	}
	size += 4
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("a table of %d bytes: more than the 4 GiB the format holds", size)
	}
	out := make([]byte, headerSize, size)
	copy(out, magic)
	binary.LittleEndian.PutUint64(out[8:], uint64(l.snapshot.Unix()))
	for i, n := range []int{len(l.start4), len(l.start6), len(l.cstart4), len(l.cstart6)} {
		binary.LittleEndian.PutUint32(out[16+4*i:], uint32(n))
	}
	binary.LittleEndian.PutUint32(out[32:], uint32(size))
	off := headerSize
	for i := range sec {
		binary.LittleEndian.PutUint32(out[secTable+8*i:], uint32(off))
		binary.LittleEndian.PutUint32(out[secTable+4+8*i:], uint32(cnt[i]))
		off += len(sec[i])
	}
	for i := range sec {
		out = append(out, sec[i]...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out)), nil
}

// Encode writes t in the in-place form (it is held in that form).
func Encode(w io.Writer, t *Table) error {
	_, err := io.WriteString(w, t.data)
	return err
}

// errCorrupt is wrapped by every Open error about the content.
var errCorrupt = errors.New("not a linecheck ASN dataset, or a damaged one")

// Open checks data's header, sections and checksum and every record (keys
// ascending, values in range), then uses it in place: a damaged or foreign
// file gives an error, never a table that answers wrong. The table keeps
// data (no copy): it must not change afterwards.
func Open(data []byte) (*Table, error) {
	t, err := openSealed(data)
	if err != nil {
		return nil, err
	}
	if err := t.verify(); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return t, nil
}

// openSealed checks data's checksum and header only: how a command opens
// the cached copy, whose records Update checked (Open) before it wrote the
// file; the checksum catches damage since (1–3 ms for 11 MB, where checking
// every record takes 10–40 ms). Lookup checks its bounds, so even a forged
// file cannot make it panic.
func openSealed(data []byte) (*Table, error) {
	if len(data) < headerSize+4 {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header", errCorrupt, len(data))
	}
	n := len(data) - 4
	if crc32.ChecksumIEEE(data[:n]) != binary.LittleEndian.Uint32(data[n:]) {
		if string(data[:len(magic)]) != magic {
			return nil, fmt.Errorf("%w: no LCASN2 header", errCorrupt)
		}
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	// No copy: the table reads data where it lies (Open's callers hand it
	// over and never write it again).
	t, err := openString(unsafe.String(&data[0], len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return t, nil
}

// openString reads the header of s and places the sections, checking that
// they lie inside s; it reads no record (the bundled table is checked by
// the tests, a cached one by Open).
func openString(s string) (*Table, error) {
	if len(s) < headerSize+4 || s[:len(magic)] != magic {
		return nil, errors.New("no LCASN2 header")
	}
	if int(le32(s, 32)) != len(s) {
		return nil, fmt.Errorf("the header says %d bytes, the file has %d", le32(s, 32), len(s))
	}
	t := &Table{data: s, Snapshot: time.Unix(int64(le64(s, 8)), 0).UTC()}
	t.r4, t.r6, t.c4, t.c6 = int(le32(s, 16)), int(le32(s, 20)), int(le32(s, 24)), int(le32(s, 28))
	for i := range t.sec {
		off, n := uint64(le32(s, secTable+8*i)), uint64(le32(s, secTable+4+8*i))
		if off < headerSize || off+n*uint64(recordSize[i]) > uint64(len(s)-4) {
			return nil, fmt.Errorf("section %d (%d records at %d) lies outside the file", i, n, off)
		}
		if _, ok := indexed[i]; ok && n != 0 && n != indexSize {
			return nil, fmt.Errorf("index section %d has %d entries, not %d", i, n, indexSize)
		}
		t.sec[i] = section{off: int(off), n: int(n)}
	}
	t.Source = s[t.sec[secSource].off : t.sec[secSource].off+t.sec[secSource].n]
	return t, nil
}

// verify reads every record: keys strictly ascending in each list, values
// naming an existing name or code, names' ends ascending inside the text.
func (t *Table) verify() error {
	s := t.data
	prev := uint32(0)
	text := t.sec[secText].n
	for i := range t.sec[secNames].n {
		e := le32(s, t.sec[secNames].off+8*i+4)
		if e < prev || int(e) > text {
			return fmt.Errorf("name %d ends at %d, outside %d–%d", i, e, prev, text)
		}
		prev = e
	}
	for i := range t.sec[secCCs].n {
		c := s[t.sec[secCCs].off+2*i:][:2]
		if c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
			return fmt.Errorf("country code %q", c)
		}
	}
	for _, id := range []int{secAS4, secAS6hi, secAS6, secCC4, secCC6hi, secCC6} {
		sc, w := t.sec[id], recordSize[id]
		limit := t.sec[secNames].n
		if id >= secCC4 {
			limit = t.sec[secCCs].n
		}
		var last u128
		for i := range sc.n {
			at := sc.off + i*w
			k, v := t.record(id, at)
			if i > 0 && !last.less(k) {
				return fmt.Errorf("list %d: record %d is not after the one before", id, i)
			}
			if int(v) > limit {
				return fmt.Errorf("list %d: record %d names entry %d of %d", id, i, v, limit)
			}
			last = k
		}
		if ix, ok := indexOf[id]; ok && t.sec[ix].n != 0 {
			n := 0
			for p := range indexSize {
				for n < sc.n {
					k, _ := t.record(id, sc.off+n*w)
					if prefix16(id, k) >= p {
						break
					}
					n++
				}
				if got := le32(s, t.sec[ix].off+4*p); int(got) != n {
					return fmt.Errorf("index of list %d: entry %d is %d, the list says %d", id, p, got, n)
				}
			}
		}
	}
	return nil
}

// record is the key and value of the record at byte at of list id.
func (t *Table) record(id, at int) (u128, uint32) {
	s := t.data
	switch id {
	case secAS4:
		return u128{0, uint64(le32(s, at))}, le24(s, at+4)
	case secAS6hi:
		return u128{0, le64(s, at)}, le24(s, at+8)
	case secAS6:
		return u128{le64(s, at), le64(s, at+8)}, le24(s, at+16)
	case secCC4:
		return u128{0, uint64(le32(s, at))}, uint32(s[at+4])
	case secCC6hi:
		return u128{0, le64(s, at)}, uint32(s[at+8])
	default:
		return u128{le64(s, at), le64(s, at+8)}, uint32(s[at+16])
	}
}

// le32, le64 and le24 read little-endian numbers from a string (the
// compiler makes one load of each).
func le32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func le24(s string, i int) uint32 {
	_ = s[i+2]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16
}

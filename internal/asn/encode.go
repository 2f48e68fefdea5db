package asn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// The compact form, gzip-compressed (the gzip CRC also catches a damaged
// cache file):
//
//	"LCASN1\n"
//	varint   snapshot (Unix seconds)
//	string   source                         (uvarint length, bytes)
//	uvarint  number of names; per name: uvarint ASN − previous ASN, string name
//	uvarint  number of country codes; per code: 2 bytes
//	4 range lists: AS v4, AS v6, country v4, country v6; each
//	  uvarint n; per range: gap to the previous range's end + 1, length − 1
//	  (end − start), then the value: uvarint name index (AS lists) or one
//	  byte country index (1-based; country lists). IPv6 numbers are written
//	  as two uvarints, high 64 bits first.
//	"END"
//
// Ranges are sorted and disjoint, so every gap is ≥ 0; a 32-bit list takes
// about 6 bytes a range before compression.
const magic = "LCASN1\n"

// Encode writes t in the compact form.
func Encode(w io.Writer, t *Table) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(x uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], x)]) }
	str := func(s string) { uv(uint64(len(s))); bw.WriteString(s) }
	bw.WriteString(magic)
	bw.Write(tmp[:binary.PutVarint(tmp[:], t.Snapshot.Unix())])
	str(t.Source)
	uv(uint64(len(t.names)))
	prev := uint32(0)
	for _, a := range t.names {
		uv(uint64(a.ASN - prev))
		prev = a.ASN
		str(a.Name)
	}
	uv(uint64(len(t.ccs) - 1))
	for _, c := range t.ccs[1:] {
		bw.WriteString(c)
	}
	put4 := func(starts, ends []uint32, val func(i int)) {
		uv(uint64(len(starts)))
		next := uint64(0)
		for i := range starts {
			uv(uint64(starts[i]) - next)
			uv(uint64(ends[i] - starts[i]))
			val(i)
			next = uint64(ends[i]) + 1
		}
	}
	put6 := func(starts, ends []u128, val func(i int)) {
		uv(uint64(len(starts)))
		next := u128{}
		for i := range starts {
			g := sub128(starts[i], next)
			uv(g.hi)
			uv(g.lo)
			l := sub128(ends[i], starts[i])
			uv(l.hi)
			uv(l.lo)
			val(i)
			next = add1(ends[i])
		}
	}
	put4(t.start4, t.end4, func(i int) { uv(uint64(t.as4[i])) })
	put6(t.start6, t.end6, func(i int) { uv(uint64(t.as6[i])) })
	put4(t.cstart4, t.cend4, func(i int) { bw.WriteByte(t.cc4[i]) })
	put6(t.cstart6, t.cend6, func(i int) { bw.WriteByte(t.cc6[i]) })
	bw.WriteString("END")
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
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

// errCorrupt is wrapped by every Decode error about the content.
var errCorrupt = errors.New("not a linecheck ASN dataset, or a damaged one")

// Decode reads the compact form; every index and range is checked, so a
// damaged file gives an error, never a table that answers wrong.
func Decode(data []byte) (*Table, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	// gzip's trailer holds the decompressed size: one allocation instead of
	// io.ReadAll's doubling and copying (a fifth of the decode time).
	hint := 0
	if n := len(data); n >= 4 {
		if sz := binary.LittleEndian.Uint32(data[n-4:]); sz < 1<<28 {
			hint = int(sz)
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, hint+bytes.MinRead))
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	raw := buf.Bytes()
	d := &decoder{b: raw}
	t, err := d.table()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return t, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, a...)
	}
}

func (d *decoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number at %d bytes from the end", len(d.b))
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("cut short")
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// count reads a list length, bounded by the bytes left (every entry takes
// at least min bytes), so a damaged length cannot ask for a huge slice.
func (d *decoder) count(min int) int {
	n := d.uv()
	if n > uint64(len(d.b)/min) {
		d.fail("list of %d entries in %d bytes", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) table() (*Table, error) {
	if !bytes.HasPrefix(d.b, []byte(magic)) {
		return nil, errors.New("no LCASN1 header")
	}
	d.b = d.b[len(magic):]
	snap, n := binary.Varint(d.b)
	if n <= 0 {
		return nil, errors.New("bad snapshot time")
	}
	d.b = d.b[n:]
	t := &Table{Snapshot: time.Unix(snap, 0).UTC()}
	t.Source = string(d.bytes(d.uv()))
	nn := d.count(2)
	t.names = make([]AS, nn)
	asn := uint64(0)
	for i := range t.names {
		asn += d.uv()
		if asn > 1<<32-1 {
			d.fail("AS number %d out of range", asn)
		}
		t.names[i] = AS{ASN: uint32(asn), Name: string(d.bytes(d.uv()))}
	}
	nc := d.count(2)
	t.ccs = make([]string, 1, nc+1)
	for range nc {
		t.ccs = append(t.ccs, string(d.bytes(2)))
	}
	if d.err != nil {
		return nil, d.err
	}
	get4 := func(val func()) (starts, ends []uint32) {
		n := d.count(3)
		starts, ends = make([]uint32, 0, n), make([]uint32, 0, n)
		next := uint64(0)
		for range n {
			s := next + d.uv()
			e := s + d.uv()
			if e > 1<<32-1 {
				d.fail("IPv4 range past 255.255.255.255")
				return nil, nil
			}
			starts, ends = append(starts, uint32(s)), append(ends, uint32(e))
			val()
			next = e + 1
		}
		return starts, ends
	}
	get6 := func(val func()) (starts, ends []u128) {
		n := d.count(5)
		starts, ends = make([]u128, 0, n), make([]u128, 0, n)
		next, first := u128{}, true
		for range n {
			g := u128{d.uv(), d.uv()}
			l := u128{d.uv(), d.uv()}
			s, o1 := add128(next, g)
			e, o2 := add128(s, l)
			if o1 || o2 || (!first && next == (u128{})) {
				d.fail("IPv6 range past the end of the address space")
				return nil, nil
			}
			first = false
			starts, ends = append(starts, s), append(ends, e)
			val()
			next = add1(e)
		}
		return starts, ends
	}
	asIdx := func(dst *[]uint32) func() {
		return func() {
			i := d.uv()
			if i >= uint64(len(t.names)) {
				d.fail("name index %d of %d", i, len(t.names))
			}
			*dst = append(*dst, uint32(i))
		}
	}
	ccIdx := func(dst *[]uint8) func() {
		return func() {
			b := d.bytes(1)
			if len(b) == 1 && int(b[0]) >= len(t.ccs) {
				d.fail("country index %d of %d", b[0], len(t.ccs))
			}
			if len(b) == 1 {
				*dst = append(*dst, b[0])
			}
		}
	}
	t.start4, t.end4 = get4(asIdx(&t.as4))
	t.start6, t.end6 = get6(asIdx(&t.as6))
	t.cstart4, t.cend4 = get4(ccIdx(&t.cc4))
	t.cstart6, t.cend6 = get6(ccIdx(&t.cc6))
	if d.err != nil {
		return nil, d.err
	}
	if string(d.b) != "END" {
		return nil, fmt.Errorf("%d bytes after the last list instead of END", len(d.b))
	}
	return t, nil
}

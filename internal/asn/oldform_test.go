package asn

// The decoder of the LCASN1 form (gzip of varint-coded range lists) that
// linecheck embedded up to issue 35, kept only as the oracle of
// oracle_test.go: testdata/asn-2026-06-17.lcasn1.gz is the snapshot it
// decoded, and every lookup of the in-place layout must answer as it did.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

const oldMagic = "LCASN1\n"

// oldTable is one snapshot of the dataset, immutable once built.
type oldTable struct {
	// Snapshot is when the source data was made (from the package version
	// or the server's Last-Modified), UTC.
	Snapshot time.Time
	// Source names the data it was built from (package and version or URLs).
	Source string

	names []AS
	ccs   []string // country codes; index 0 is "" (none)

	start4, end4 []uint32
	as4          []uint32
	start6, end6 []u128
	as6          []uint32

	cstart4, cend4 []uint32
	cc4            []uint8
	cstart6, cend6 []u128
	cc6            []uint8
}

// Lookup answers for one address; ok is false when no AS range holds it
// (Country may still be set then: the registries' country lists cover
// ranges no AS announces). It
// does not exclude private or reserved space: the dataset simply has no
// rows for it (callers label such ranges themselves).
func (t *oldTable) lookup(ip netip.Addr) (Info, bool) {
	if t == nil || !ip.IsValid() {
		return Info{}, false
	}
	ip = ip.Unmap()
	var inf Info
	ok := false
	if ip.Is4() {
		k := v4key(ip)
		if i := oldSearch4(t.start4, k); i >= 0 && k <= t.end4[i] {
			a := t.names[t.as4[i]]
			inf.ASN, inf.Name, ok = a.ASN, a.Name, true
		}
		if i := oldSearch4(t.cstart4, k); i >= 0 && k <= t.cend4[i] {
			inf.Country = t.ccs[t.cc4[i]]
		}
	} else {
		k := v6key(ip)
		if i := oldSearch6(t.start6, k); i >= 0 && !t.end6[i].less(k) {
			a := t.names[t.as6[i]]
			inf.ASN, inf.Name, ok = a.ASN, a.Name, true
		}
		if i := oldSearch6(t.cstart6, k); i >= 0 && !t.cend6[i].less(k) {
			inf.Country = t.ccs[t.cc6[i]]
		}
	}
	return inf, ok
}

// search4 is the index of the last start ≤ k, -1 when none.
func oldSearch4(starts []uint32, k uint32) int {
	lo, hi := 0, len(starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if starts[m] <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func oldSearch6(starts []u128, k u128) int {
	lo, hi := 0, len(starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !k.less(starts[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// errOldCorrupt is wrapped by every Decode error about the content.
var errOldCorrupt = errors.New("not a linecheck ASN dataset, or a damaged one")

// Decode reads the compact form; every index and range is checked, so a
// damaged file gives an error, never a table that answers wrong.
func oldDecode(data []byte) (*oldTable, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errOldCorrupt, err)
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
		return nil, fmt.Errorf("%w: %v", errOldCorrupt, err)
	}
	raw := buf.Bytes()
	d := &oldDecoder{b: raw}
	t, err := d.table()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errOldCorrupt, err)
	}
	return t, nil
}

type oldDecoder struct {
	b   []byte
	err error
}

func (d *oldDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, a...)
	}
}

func (d *oldDecoder) uv() uint64 {
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

func (d *oldDecoder) bytes(n uint64) []byte {
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
func (d *oldDecoder) count(min int) int {
	n := d.uv()
	if n > uint64(len(d.b)/min) {
		d.fail("list of %d entries in %d bytes", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *oldDecoder) table() (*oldTable, error) {
	if !bytes.HasPrefix(d.b, []byte(oldMagic)) {
		return nil, errors.New("no LCASN1 header")
	}
	d.b = d.b[len(oldMagic):]
	snap, n := binary.Varint(d.b)
	if n <= 0 {
		return nil, errors.New("bad snapshot time")
	}
	d.b = d.b[n:]
	t := &oldTable{Snapshot: time.Unix(snap, 0).UTC()}
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

// lists is the old table's ranges as the encoder takes them.
func (t *oldTable) lists() *lists {
	return &lists{snapshot: t.Snapshot, source: t.Source, names: t.names, ccs: t.ccs,
		start4: t.start4, end4: t.end4, as4: t.as4, start6: t.start6, end6: t.end6, as6: t.as6,
		cstart4: t.cstart4, cend4: t.cend4, cc4: t.cc4, cstart6: t.cstart6, cend6: t.cend6, cc6: t.cc6}
}

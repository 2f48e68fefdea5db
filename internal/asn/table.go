// Package asn is linecheck's offline IP-to-AS dataset: for an address, the
// autonomous system that announces it, the network's name and the country
// the registries give for the range. A snapshot is embedded in the binary
// (Bundled) and searched where it lies, with no decoding; `linecheck asn
// update` can put a newer one in the user's cache (Update), which Default
// prefers.
//
// The data is the @ip-location-db/asn and @ip-location-db/asn-country npm
// packages (RouteViews, the five RIRs via the NRO, DB-IP's IP to ASN Lite),
// licensed CC BY 4.0: whoever shows its answers credits them (Attribution).
// A Table holds sorted, non-overlapping ranges per address family, each with
// an index into a table of (AS number, name) pairs, and, separately, the
// country ranges, in fixed-width records (encode.go); gen/ and
// scripts/asn-build turn the source CSV files into the form embedded here
// (Builder, Encode, Open).
package asn

import (
	"net/netip"
	"time"
)

//go:generate sh ../../scripts/asn-build

// Attribution is the credit the licence of the data asks for, printed
// wherever linecheck shows the dataset's answers.
const Attribution = "IP-to-AS data: @ip-location-db/asn and asn-country (RouteViews, NRO, DB-IP.com), CC BY 4.0"

// Info is what the dataset knows about an address.
type Info struct {
	ASN  uint32
	Name string
	// Country is the ISO 3166-1 alpha-2 code of the range, "" when the data
	// has none.
	Country string
}

// u128 is an IPv6 address as two 64-bit halves, for compact sorted arrays.
type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

func v6key(ip netip.Addr) u128 {
	b := ip.As16()
	var k u128
	for i := 0; i < 8; i++ {
		k.hi = k.hi<<8 | uint64(b[i])
		k.lo = k.lo<<8 | uint64(b[8+i])
	}
	return k
}

func v4key(ip netip.Addr) uint32 {
	b := ip.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// AS is one entry of the names table.
type AS struct {
	ASN  uint32
	Name string
}

// Table is one snapshot of the dataset in the in-place form (encode.go),
// immutable: lookups search its bytes where they lie.
type Table struct {
	// Snapshot is when the source data was made (from the package version
	// or the server's Last-Modified), UTC.
	Snapshot time.Time
	// Source names the data it was built from (package and version or URLs).
	Source string

	data           string
	sec            [nSections]section
	r4, r6, c4, c6 int
}

// section is where a section of data starts and how many records it holds.
type section struct{ off, n int }

// SnapshotDate is the snapshot's day, as the version text and the JSON
// documents state it.
func (t *Table) SnapshotDate() string {
	if t == nil || t.Snapshot.IsZero() {
		return ""
	}
	return t.Snapshot.UTC().Format("2006-01-02")
}

// Ranges is how many AS ranges the table holds (IPv4 and IPv6): the measure
// Update compares a download against.
func (t *Table) Ranges() (v4, v6 int) { return t.r4, t.r6 }

// CountryRanges is how many country ranges the table holds.
func (t *Table) CountryRanges() (v4, v6 int) { return t.c4, t.c6 }

// Names is how many distinct (AS number, name) pairs the table holds.
func (t *Table) Names() int { return t.sec[secNames].n }

// Lookup answers for one address; ok is false when no AS range holds it
// (Country may still be set then: the registries' country lists cover
// ranges no AS announces). It does not exclude private or reserved space:
// the dataset simply has no rows for it (callers label such ranges
// themselves). It allocates nothing: names are slices of the table.
func (t *Table) Lookup(ip netip.Addr) (Info, bool) {
	if t == nil || !ip.IsValid() {
		return Info{}, false
	}
	ip = ip.Unmap()
	var as, cc uint32
	if ip.Is4() {
		k := v4key(ip)
		as = t.search32(secAS4, k)
		cc = t.search32(secCC4, k)
	} else {
		k := v6key(ip)
		if as = t.search128(secAS6, k); as == 0 {
			as = t.search64(secAS6hi, k.hi)
		}
		if cc = t.search128(secCC6, k); cc == 0 {
			cc = t.search64(secCC6hi, k.hi)
		}
	}
	var inf Info
	ok := false
	if as != 0 && int(as) <= t.sec[secNames].n {
		at := t.sec[secNames].off + 8*int(as-1)
		from := uint32(0)
		if as > 1 {
			from = le32(t.data, at-4)
		}
		to := le32(t.data, at+4)
		if from <= to && int(to) <= t.sec[secText].n {
			text := t.sec[secText].off
			inf.ASN, inf.Name, ok = le32(t.data, at), t.data[text+int(from):text+int(to)], true
		}
	}
	if cc != 0 && int(cc) <= t.sec[secCCs].n {
		at := t.sec[secCCs].off + 2*int(cc-1)
		inf.Country = t.data[at : at+2]
	}
	return inf, ok
}

// search32, search64 and search128 give the value of the last record of
// list id whose key is ≤ k; 0 (none) when there is none.
func (t *Table) search32(id int, k uint32) uint32 {
	sc, w := t.sec[id], recordSize[id]
	lo, hi := t.block(id, int(k>>16))
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le32(t.data, sc.off+m*w) <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0
	}
	return t.value(id, sc.off+(lo-1)*w+4)
}

func (t *Table) search64(id int, k uint64) uint32 {
	sc, w := t.sec[id], recordSize[id]
	lo, hi := t.block(id, int(k>>48))
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le64(t.data, sc.off+m*w) <= k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0
	}
	return t.value(id, sc.off+(lo-1)*w+8)
}

func (t *Table) search128(id int, k u128) uint32 {
	sc, w := t.sec[id], recordSize[id]
	lo, hi := 0, sc.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		at := sc.off + m*w
		if !k.less(u128{le64(t.data, at), le64(t.data, at+8)}) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0
	}
	return t.value(id, sc.off+(lo-1)*w+16)
}

// block is the records of list id whose keys share the top 16 bits p (its
// prefix index); the whole list when the index is not sound (a table opened
// unchecked must not make a lookup panic).
func (t *Table) block(id, p int) (lo, hi int) {
	n := t.sec[id].n
	ix := t.sec[indexOf[id]]
	if ix.n != indexSize {
		return 0, n
	}
	lo, hi = int(le32(t.data, ix.off+4*p)), int(le32(t.data, ix.off+4*p+4))
	if lo > hi || hi > n {
		return 0, n
	}
	return lo, hi
}

// value reads a record's value: u24 in the AS lists, one byte in the
// country lists.
func (t *Table) value(id, at int) uint32 {
	if id >= secCC4 {
		return uint32(t.data[at])
	}
	return le24(t.data, at)
}

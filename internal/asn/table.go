// Package asn is linecheck's offline IP-to-AS dataset: for an address, the
// autonomous system that announces it, the network's name and the country
// the registries give for the range. A snapshot is embedded in the binary
// (Bundled) and decoded on first use only; `linecheck asn update` can put a
// newer one in the user's cache (Update), which Default prefers.
//
// The data is the @ip-location-db/asn and @ip-location-db/asn-country npm
// packages (RouteViews, the five RIRs via the NRO, DB-IP's IP to ASN Lite),
// licensed CC BY 4.0: whoever shows its answers credits them (Attribution).
// A Table holds sorted, non-overlapping ranges per address family, each with
// an index into a table of (AS number, name) pairs, and, separately, the
// country ranges; gen/ and scripts/asn-build turn the source CSV files into
// the compressed form embedded here (Encode, Decode).
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

// Table is one snapshot of the dataset, immutable once built.
type Table struct {
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
func (t *Table) Ranges() (v4, v6 int) { return len(t.start4), len(t.start6) }

// Names is how many distinct (AS number, name) pairs the table holds.
func (t *Table) Names() int { return len(t.names) }

// Lookup answers for one address; ok is false when no AS range holds it
// (Country may still be set then: the registries' country lists cover
// ranges no AS announces). It
// does not exclude private or reserved space: the dataset simply has no
// rows for it (callers label such ranges themselves).
func (t *Table) Lookup(ip netip.Addr) (Info, bool) {
	if t == nil || !ip.IsValid() {
		return Info{}, false
	}
	ip = ip.Unmap()
	var inf Info
	ok := false
	if ip.Is4() {
		k := v4key(ip)
		if i := search4(t.start4, k); i >= 0 && k <= t.end4[i] {
			a := t.names[t.as4[i]]
			inf.ASN, inf.Name, ok = a.ASN, a.Name, true
		}
		if i := search4(t.cstart4, k); i >= 0 && k <= t.cend4[i] {
			inf.Country = t.ccs[t.cc4[i]]
		}
	} else {
		k := v6key(ip)
		if i := search6(t.start6, k); i >= 0 && !t.end6[i].less(k) {
			a := t.names[t.as6[i]]
			inf.ASN, inf.Name, ok = a.ASN, a.Name, true
		}
		if i := search6(t.cstart6, k); i >= 0 && !t.cend6[i].less(k) {
			inf.Country = t.ccs[t.cc6[i]]
		}
	}
	return inf, ok
}

// search4 is the index of the last start ≤ k, -1 when none.
func search4(starts []uint32, k uint32) int {
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

func search6(starts []u128, k u128) int {
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

package asn

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/asn/data"
)

// oracle is the 2026-06-17 snapshot as the old gzip decoder read it.
func oracle(t testing.TB) *oldTable {
	t.Helper()
	raw, err := os.ReadFile("testdata/asn-2026-06-17.lcasn1.gz")
	if err != nil {
		t.Fatal(err)
	}
	o, err := oldDecode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// oracleProbes are, for every range of the old table's four lists, its
// first and last address, its middle, and the addresses just before and
// after it (a gap or the neighbour); then random addresses of both
// families and IPv4-mapped ones. step > 1 takes every step-th range.
func oracleProbes(o *oldTable, step int) []netip.Addr {
	var ps []netip.Addr
	v4 := func(k uint32) netip.Addr { return addr(u128{0, uint64(k)}, true) }
	v6 := func(k u128) netip.Addr { return addr(k, false) }
	for _, l := range [][2][]uint32{{o.start4, o.end4}, {o.cstart4, o.cend4}} {
		for i := 0; i < len(l[0]); i += step {
			s, e := l[0][i], l[1][i]
			ps = append(ps, v4(s), v4(e), v4(s+(e-s)/2))
			if s > 0 {
				ps = append(ps, v4(s-1))
			}
			if e < 1<<32-1 {
				ps = append(ps, v4(e+1))
			}
		}
	}
	for _, l := range [][2][]u128{{o.start6, o.end6}, {o.cstart6, o.cend6}} {
		for i := 0; i < len(l[0]); i += step {
			s, e := l[0][i], l[1][i]
			d := sub128(e, s)
			half := u128{d.hi >> 1, d.lo>>1 | d.hi<<63}
			mid, _ := add128(s, half)
			ps = append(ps, v6(s), v6(e), v6(mid))
			if s != (u128{}) {
				ps = append(ps, v6(sub128(s, u128{0, 1})))
			}
			if e != (u128{^uint64(0), ^uint64(0)}) {
				ps = append(ps, v6(add1(e)))
			}
		}
	}
	rng := rand.New(rand.NewPCG(35, 1))
	for range 20000 {
		a4 := netip.AddrFrom4([4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())})
		var a [16]byte
		a[0], a[1] = 0x20|byte(rng.IntN(16)), byte(rng.Uint32())
		for j := 2; j < 16; j++ {
			a[j] = byte(rng.Uint32())
		}
		ps = append(ps, a4, netip.AddrFrom16(a4.As16()), netip.AddrFrom16(a))
	}
	return ps
}

// TestLookupEqualsTheOldDecoder: the in-place form answers every probe
// exactly as the old decoder's table did (AS number, name, country, ok):
// the table re-encoded from what the old decoder read, and the bundled one
// while it is the same snapshot.
func TestLookupEqualsTheOldDecoder(t *testing.T) {
	o := oracle(t)
	step := 1
	if testing.Short() {
		step = 13
	}
	ps := oracleProbes(o, step)
	enc, err := encodeLists(o.lists())
	if err != nil {
		t.Fatal(err)
	}
	re, err := Open(enc)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*Table{"re-encoded": re}
	if data.Snapshot == o.Snapshot.Format("2006-01-02") {
		tables["bundled"] = bundled(t)
	} else {
		t.Logf("the bundled snapshot is %s, the oracle's %s: only the re-encoded table is compared", data.Snapshot, o.Snapshot.Format("2006-01-02"))
	}
	for name, tb := range tables {
		t.Run(name, func(t *testing.T) {
			if tb.Snapshot != o.Snapshot || tb.Source != o.Source {
				t.Errorf("header %v %q, the old decoder %v %q", tb.Snapshot, tb.Source, o.Snapshot, o.Source)
			}
			if v4, v6 := tb.Ranges(); v4 != len(o.start4) || v6 != len(o.start6) || tb.Names() != len(o.names) {
				t.Errorf("%d + %d ranges, %d names; the old decoder %d + %d, %d", v4, v6, tb.Names(), len(o.start4), len(o.start6), len(o.names))
			}
			bad, hits, cc := 0, 0, 0
			for _, ip := range ps {
				got, gok := tb.Lookup(ip)
				want, wok := o.lookup(ip)
				if got != want || gok != wok {
					if bad++; bad <= 10 {
						t.Errorf("%s: %+v %v, the old decoder %+v %v", ip, got, gok, want, wok)
					}
				}
				if wok {
					hits++
				}
				if want.Country != "" {
					cc++
				}
			}
			t.Logf("%d addresses, %d with an AS, %d with a country, %d differ", len(ps), hits, cc, bad)
			if hits < len(ps)/4 || cc < len(ps)/4 {
				t.Errorf("too few probes hit: %d AS, %d country of %d", hits, cc, len(ps))
			}
		})
	}
}

// TestBundledTableVerifies: the embedded table passes the checks Open makes
// of a cached copy (checksum, every record), and its header agrees with
// the constants gen wrote beside it.
func TestBundledTableVerifies(t *testing.T) {
	tb, err := Open([]byte(bundledData))
	if err != nil {
		t.Fatal(err)
	}
	v4, v6 := tb.Ranges()
	if tb.SnapshotDate() != data.Snapshot || tb.Source != data.Source || v4 != data.Ranges4 || v6 != data.Ranges6 {
		t.Errorf("header %s %q %d %d, snapshot.go %s %q %d %d", tb.SnapshotDate(), tb.Source, v4, v6,
			data.Snapshot, data.Source, data.Ranges4, data.Ranges6)
	}
}

// TestLookupAllocatesNothing: a lookup (IPv4, IPv6 in a whole-/64 range and
// in a full-width one, IPv4-mapped, misses) allocates nothing: names and
// codes are slices of the table.
func TestLookupAllocatesNothing(t *testing.T) {
	tb := bundled(t)
	ips := []netip.Addr{
		netip.MustParseAddr("61.152.8.45"), netip.MustParseAddr("2001:200::1"),
		netip.MustParseAddr("2c0f:4280::33"), netip.MustParseAddr("::ffff:1.0.0.1"),
		netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("fd00::1"), {},
	}
	named := 0
	for _, ip := range ips {
		if inf, ok := tb.Lookup(ip); ok && inf.Name != "" && inf.Country != "" {
			named++
		}
	}
	if named < 3 {
		t.Fatalf("only %d of the probes have a name and a country: the test would not see a name's allocation", named)
	}
	if n := testing.AllocsPerRun(200, func() {
		for _, ip := range ips {
			sink, _ = tb.Lookup(ip)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run of %d lookups, want 0", n, len(ips))
	}
}

// TestOpenRefusesForgedRecords: a file whose checksum is right but whose
// records are not (a prefix index entry off by one, two records swapped) is
// refused by Open's record checks, which the checksum alone would pass.
func TestOpenRefusesForgedRecords(t *testing.T) {
	tb := bundled(t)
	reseal := func(b []byte) []byte {
		n := len(b) - 4
		binary.LittleEndian.PutUint32(b[n:], crc32.ChecksumIEEE(b[:n]))
		return b
	}
	ix := []byte(bundledData)
	at := tb.sec[secIxAS4].off + 4*0x3b2b // 59.43/16
	binary.LittleEndian.PutUint32(ix[at:], binary.LittleEndian.Uint32(ix[at:])+1)
	if _, err := Open(reseal(ix)); err == nil || !strings.Contains(err.Error(), "index of list") {
		t.Errorf("an index entry off by one: %v", err)
	}
	sw := []byte(bundledData)
	w := recordSize[secAS4]
	a := tb.sec[secAS4].off + 1000*w
	tmp := append([]byte(nil), sw[a:a+w]...)
	copy(sw[a:a+w], sw[a+w:a+2*w])
	copy(sw[a+w:a+2*w], tmp)
	if _, err := Open(reseal(sw)); err == nil || !strings.Contains(err.Error(), "is not after the one before") {
		t.Errorf("two records swapped: %v", err)
	}
}

// TestOpeningTheBundledTableDecodesNothing: opening the embedded table
// allocates a few hundred bytes (the Table), whatever its size (issue 35:
// the gzip form's decode allocated 39 MB at every run that named a hop).
func TestOpeningTheBundledTableDecodesNothing(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tb, err := openString(bundledData)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("opening the %d-byte table allocated %d bytes, want under 64 KiB", len(bundledData), n)
	}
	if _, ok := tb.Lookup(netip.MustParseAddr("61.152.8.45")); !ok {
		t.Error("the opened table does not answer")
	}
}

// TestLookupInADamagedUncheckedTableDoesNotPanic: a table opened without
// the record checks (as the bundled one is, and a cached one past its
// checksum) whose records, indexes and names are scrambled still answers
// every lookup without a panic: Lookup checks its own bounds.
func TestLookupInADamagedUncheckedTableDoesNotPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 7))
	ips := oracleProbes(oracle(t), 97)
	for round := range 4 {
		b := []byte(bundledData)
		for range 20000 {
			b[headerSize+rng.IntN(len(b)-headerSize-4)] = byte(rng.Uint32())
		}
		tb, err := openString(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, ip := range ips {
			tb.Lookup(ip)
		}
		if round == 0 {
			t.Logf("%d lookups in each of 4 tables with 20,000 bytes scrambled", len(ips))
		}
	}
}

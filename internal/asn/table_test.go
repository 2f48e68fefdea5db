package asn

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oracleRow is one raw source row as the test reads it, apart from the
// package's own parser.
type oracleRow struct {
	start, end netip.Addr
	value      string // "ASN|name" or the country code
}

// readWindows reads a sample file: runs of consecutive source rows, each
// after a "# window" line. Within a window the addresses between two rows
// are in no row of the source.
func readWindows(t *testing.T, path string) [][]oracleRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]oracleRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# window") {
			out = append(out, nil)
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		r := oracleRow{start: netip.MustParseAddr(rec[0]), end: netip.MustParseAddr(rec[1])}
		if len(rec) == 4 {
			r.value = rec[2] + "|" + strings.TrimSpace(rec[3])
		} else {
			r.value = rec[2]
		}
		out[len(out)-1] = append(out[len(out)-1], r)
	}
	return out
}

// toBig and fromBig do address arithmetic for the random picks.
func toBig(a netip.Addr) *big.Int { return new(big.Int).SetBytes(a.AsSlice()) }

func fromBig(x *big.Int, v4 bool) netip.Addr {
	n := 16
	if v4 {
		n = 4
	}
	b := x.FillBytes(make([]byte, n))
	a, _ := netip.AddrFromSlice(b)
	return a
}

// pick is a random address in [lo, hi].
func pick(rng *rand.Rand, lo, hi netip.Addr) netip.Addr {
	span := new(big.Int).Sub(toBig(hi), toBig(lo))
	span.Add(span, big.NewInt(1))
	r := new(big.Int)
	if span.IsUint64() {
		r.SetUint64(rng.Uint64N(span.Uint64()))
	} else {
		r.SetUint64(rng.Uint64())
		r.Mod(r, span)
	}
	return fromBig(r.Add(r, toBig(lo)), lo.Is4())
}

// probe is an address and what the raw source says for it ("" = no row).
type probe struct {
	ip   netip.Addr
	want string
}

// probesOf makes, per window row, the first and last address and a random
// one inside, and a random address of each gap between consecutive rows.
func probesOf(rng *rand.Rand, windows [][]oracleRow) []probe {
	var ps []probe
	for _, w := range windows {
		for i, r := range w {
			ps = append(ps, probe{r.start, r.value}, probe{r.end, r.value}, probe{pick(rng, r.start, r.end), r.value})
			if i > 0 && w[i-1].end.Next() != r.start {
				ps = append(ps, probe{pick(rng, w[i-1].end.Next(), r.start.Prev()), ""})
			}
		}
	}
	return ps
}

func bundled(t testing.TB) *Table {
	t.Helper()
	tb, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func asAnswer(tb *Table, ip netip.Addr) string {
	inf, ok := tb.Lookup(ip)
	if !ok {
		return ""
	}
	return strings.TrimSpace(strings.Join([]string{itoa(inf.ASN), inf.Name}, "|"))
}

func itoa(n uint32) string { return big.NewInt(int64(n)).String() }

func ccAnswer(tb *Table, ip netip.Addr) string {
	inf, _ := tb.Lookup(ip)
	return inf.Country
}

// TestEmbeddedLookupEqualsTheRawSource checks the embedded table against
// rows of the raw source files (testdata/*-sample.csv: windows of
// consecutive rows cut from the packages the table was built from; the
// whole files are 60 MB). Each row's first and last address and a random one
// inside, and a random address of every gap between rows, must get the raw
// file's answer.
func TestEmbeddedLookupEqualsTheRawSource(t *testing.T) {
	tb := bundled(t)
	rng := rand.New(rand.NewPCG(24, 1))
	for _, c := range []struct {
		file    string
		country bool
	}{
		{"asn-ipv4-sample.csv", false}, {"asn-ipv6-sample.csv", false},
		{"asn-country-ipv4-sample.csv", true}, {"asn-country-ipv6-sample.csv", true},
	} {
		t.Run(c.file, func(t *testing.T) {
			ps := probesOf(rng, readWindows(t, filepath.Join("testdata", c.file)))
			if len(ps) < 1000 {
				t.Fatalf("only %d addresses to check", len(ps))
			}
			bad := 0
			for _, p := range ps {
				got := ""
				if c.country {
					got = ccAnswer(tb, p.ip)
				} else {
					got = asAnswer(tb, p.ip)
				}
				if got != p.want {
					bad++
					if bad < 10 {
						t.Errorf("%s: embedded %q, raw source %q", p.ip, got, p.want)
					}
				}
			}
			t.Logf("%d addresses checked, %d differ", len(ps), bad)
		})
	}
}

// TestEmbeddedLookupEqualsTheWholeSource is the same check over the whole
// source files, when LINECHECK_ASN_SOURCE names a directory holding the
// unpacked packages (asn/package, country/package as scripts/asn-build
// makes them): every row's first and last address, and random ones.
func TestEmbeddedLookupEqualsTheWholeSource(t *testing.T) {
	dir := os.Getenv("LINECHECK_ASN_SOURCE")
	if dir == "" {
		t.Skip("LINECHECK_ASN_SOURCE not set: the whole-file check needs the unpacked npm packages")
	}
	tb := bundled(t)
	rng := rand.New(rand.NewPCG(24, 2))
	for _, c := range []struct {
		file    string
		country bool
	}{
		{"asn/package/asn-ipv4.csv", false}, {"asn/package/asn-ipv6.csv", false},
		{"country/package/asn-country-ipv4.csv", true}, {"country/package/asn-country-ipv6.csv", true},
	} {
		b, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var w []oracleRow
		for _, rec := range recs {
			r := oracleRow{start: netip.MustParseAddr(rec[0]), end: netip.MustParseAddr(rec[1]), value: rec[2]}
			if !c.country {
				r.value += "|" + strings.TrimSpace(rec[3])
			}
			// The one overlap of the source (see Builder.Table): the later row wins.
			if len(w) > 0 && !w[len(w)-1].end.Less(r.start) {
				w[len(w)-1].end = r.start.Prev()
			}
			w = append(w, r)
		}
		ps := probesOf(rng, [][]oracleRow{w})
		bad := 0
		for _, p := range ps {
			got := asAnswer(tb, p.ip)
			if c.country {
				got = ccAnswer(tb, p.ip)
			}
			if got != p.want {
				bad++
				if bad < 10 {
					t.Errorf("%s %s: embedded %q, raw source %q", c.file, p.ip, got, p.want)
				}
			}
		}
		t.Logf("%s: %d addresses checked, %d differ", c.file, len(ps), bad)
	}
}

// TestBundledAnswersForTheSampleCarriers: the addresses the bundled samples
// and the public-route tests use, with what the source rows covering them
// say (looked up by hand in asn-ipv4.csv of 2.3.2026061719).
func TestBundledAnswersForTheSampleCarriers(t *testing.T) {
	tb := bundled(t)
	for _, c := range []struct {
		ip  string
		asn uint32
	}{
		{"59.43.182.141", 4809}, {"202.97.12.1", 4134}, {"219.158.3.1", 4837},
		{"223.120.2.1", 58453}, {"2400:8800::1", 0},
	} {
		inf, ok := tb.Lookup(netip.MustParseAddr(c.ip))
		if c.asn == 0 {
			continue
		}
		if !ok || inf.ASN != c.asn {
			t.Errorf("%s: got AS%d %q (ok %v), want AS%d", c.ip, inf.ASN, inf.Name, ok, c.asn)
		}
	}
}

func TestEncodeOpenRoundTripAndDamage(t *testing.T) {
	var b Builder
	src := "1.0.0.0,1.0.0.255,13335,\"Cloudflare, Inc.\"\n1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd\n" +
		"2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project\n"
	if err := b.AddCSV("a.csv", strings.NewReader(src)); err != nil {
		t.Fatal(err)
	}
	if err := b.AddCSV("c.csv", strings.NewReader("1.0.0.0,1.0.3.255,AU\n2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP\n")); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Table(mustTime(t, "2026-06-17T19:00:00Z"), "test")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, tb); err != nil {
		t.Fatal(err)
	}
	got, err := Open(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ip, want string
	}{
		{"1.0.0.7", "13335 Cloudflare, Inc. AU"}, {"1.0.4.0", "38803 Gtelecom Pty Ltd "}, {"1.0.1.0", "miss"},
		{"1.0.7.255", "38803 Gtelecom Pty Ltd "}, {"1.0.8.0", "miss"}, {"2001:200::1", "2500 WIDE Project JP"},
		{"2001:200:1ba::", "miss"}, {"::ffff:1.0.0.1", "13335 Cloudflare, Inc. AU"},
	} {
		inf, ok := got.Lookup(netip.MustParseAddr(c.ip))
		s := "miss"
		if ok {
			s = itoa(inf.ASN) + " " + inf.Name + " " + inf.Country
		}
		if s != c.want {
			t.Errorf("%s: %q, want %q", c.ip, s, c.want)
		}
	}
	if got.SnapshotDate() != "2026-06-17" || got.Source != "test" {
		t.Errorf("header: %s %q", got.SnapshotDate(), got.Source)
	}
	// Every cut and every flipped byte must give an error (the checksum),
	// never a panic or a table.
	raw := buf.Bytes()
	for i := 0; i < len(raw); i++ {
		if _, err := Open(raw[:i]); err == nil {
			t.Errorf("the file cut to %d bytes opened", i)
		}
		d := append([]byte(nil), raw...)
		d[i] ^= 0x5a
		if _, err := Open(d); err == nil {
			t.Errorf("byte %d flipped: the file opened", i)
		}
	}
	if _, err := Open([]byte("1.0.0.0,1.0.0.255,13335,x\n")); err == nil {
		t.Error("a CSV opened as the in-place form")
	}
}

func TestAddCSVRefusesBadRows(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1.0.0.0,1.0.0.255,13335,x", "x.csv: ends mid-row"},
		{"1.0.0.0,1.0.0.255,13335,x\n1.0.1.0,1.0.1.2\n", "x.csv:2: 2 columns"},
		{"<html>\n", "x.csv:1: 1 columns: not an ip-location-db"},
		{"1.0.0.0,1.0.0.x,13335,x\n", "x.csv:1: column \"ip_range_end\""},
		{"16777216,16777471,13335,x\n", "x.csv:1: column \"ip_range_start\""},
		{"1.0.0.9,1.0.0.1,13335,x\n", "not a range"},
		{"1.0.0.0,1.0.0.255,AS-x,x\n", "column \"autonomous_system_number\""},
		{"1.0.0.0,1.0.0.255,au\n", "column \"country_code\""},
		{"", "x.csv: no rows"},
	} {
		var b Builder
		err := b.AddCSV("x.csv", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

var sink Info

// lookupBenchIPs are the addresses of BenchmarkLookup: IPv4 and IPv6 mixed.
func lookupBenchIPs() []netip.Addr {
	rng := rand.New(rand.NewPCG(1, 2))
	ips := make([]netip.Addr, 4096)
	for i := range ips {
		if i%4 == 3 {
			var a [16]byte
			a[0], a[1] = 0x24, byte(rng.IntN(256))
			for j := 2; j < 16; j++ {
				a[j] = byte(rng.IntN(256))
			}
			ips[i] = netip.AddrFrom16(a)
		} else {
			ips[i] = netip.AddrFrom4([4]byte{byte(1 + rng.IntN(223)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
		}
	}
	return ips
}

// BenchmarkLookup is one lookup in the bundled table, IPv4 and IPv6 mixed
// (bench/asn reports it beside the open time, and beside
// BenchmarkLookupOldForm, the same lookups in the decoded gzip form).
func BenchmarkLookup(b *testing.B) {
	tb := bundled(b)
	ips := lookupBenchIPs()
	for i := 0; b.Loop(); i++ {
		sink, _ = tb.Lookup(ips[i&4095])
	}
}

// BenchmarkLookupOldForm is BenchmarkLookup in the arrays the gzip form
// decoded to (the oracle of oracle_test.go): the anchor of a lookup's cost.
func BenchmarkLookupOldForm(b *testing.B) {
	o := oracle(b)
	ips := lookupBenchIPs()
	for i := 0; b.Loop(); i++ {
		sink, _ = o.lookup(ips[i&4095])
	}
}

// BenchmarkOpenBundled is what a command that names hops pays before its
// first lookup (the gzip form's decode took 0.12–0.19 s).
func BenchmarkOpenBundled(b *testing.B) {
	for b.Loop() {
		if _, err := openString(bundledData); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenCache is the same for a cached copy of the same size, which
// a command opens by its checksum (openSealed).
func BenchmarkOpenCache(b *testing.B) {
	raw := []byte(bundledData)
	for b.Loop() {
		if _, err := openSealed(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is Open's check of every record, which Update runs before
// it writes a copy.
func BenchmarkVerify(b *testing.B) {
	raw := []byte(bundledData)
	for b.Loop() {
		if _, err := Open(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func mustTime(t *testing.T, s string) (tm time.Time) {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

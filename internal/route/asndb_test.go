package route

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testdata/ip2asn-combined.tsv is a hand-written fixture in the iptoasn.com
// layout (range_start, range_end, AS_number, country_code, AS_description),
// including a "Not routed" ASN 0 row and an IPv6 row.
func TestIPToASNTSV(t *testing.T) {
	db, err := LoadASNDB("testdata/ip2asn-combined.tsv")
	if err != nil {
		t.Fatal(err)
	}
	checkASNLookups(t, db)
}

func checkASNLookups(t *testing.T, db ASNDB) {
	t.Helper()
	cases := []struct {
		ip   string
		asn  int
		name string
		ok   bool
	}{
		{"1.0.0.0", 13335, "CLOUDFLARENET", true},
		{"1.0.0.255", 13335, "CLOUDFLARENET", true},
		{"1.0.2.1", 0, "", false}, // ASN 0: not routed
		{"1.0.7.255", 38803, "GTELECOM-AUSTRALIA Gtelecom Pty Ltd", true},
		{"1.0.8.0", 0, "", false}, // gap after the last v4 range of that block
		{"0.255.255.255", 0, "", false},
		{"61.152.24.1", 4812, "CHINANET-SH-AP China Telecom (Group)", true},
		{"101.85.1.1", 4812, "CHINANET-SH-AP China Telecom (Group)", true},
		{"112.65.1.1", 17621, "CNCGROUP-SH China Unicom Shanghai network", true},
		{"::ffff:130.94.7.7", 2914, "NTT-LTD-2914", true}, // IPv4-mapped
		{"2001:200::1", 2500, "WIDE-BB WIDE Project", true},
		{"2001:201::1", 0, "", false},
		{"240e:ff::1", 4134, "CHINANET-BACKBONE No.31,Jin-rong Street", true},
		{"255.255.255.255", 0, "", false},
	}
	for _, c := range cases {
		asn, name, ok := db.Lookup(netip.MustParseAddr(c.ip))
		if asn != c.asn || ok != c.ok || (c.ok && name != c.name) {
			t.Errorf("%s: got %d %q %v, want %d %q %v", c.ip, asn, name, ok, c.asn, c.name, c.ok)
		}
	}
}

func TestIPToASNGzip(t *testing.T) {
	raw, err := os.ReadFile("testdata/ip2asn-combined.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	p := filepath.Join(t.TempDir(), "ip2asn-combined.tsv.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := LoadASNDB(p)
	if err != nil {
		t.Fatal(err)
	}
	checkASNLookups(t, db)
}

func TestIPToASNErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"bad start", "1.0.0.0\t1.0.0.255\t13335\tUS\tX\n1.0.1\t1.0.1.255\t1\tUS\tY\n", `bad.tsv:2: column "range_start": "1.0.1"`},
		{"bad asn", "1.0.0.0\t1.0.0.255\tAS-x\tUS\tX\n", `bad.tsv:1: column "AS_number": "AS-x" is not a number`},
		{"too few columns", "\n1.0.0.0 1.0.0.255 1\n", "bad.tsv:2: want range_start"},
		{"reversed range", "1.0.0.9\t1.0.0.1\t1\tUS\tX\n", "bad.tsv:1: range 1.0.0.9–1.0.0.1 is not a range"},
		{"mixed families", "1.0.0.0\t2001::1\t1\tUS\tX\n", "bad.tsv:1: range"},
		{"overlap", "1.0.0.0\t1.0.0.255\t1\tUS\tX\n1.0.0.128\t1.0.1.0\t2\tUS\tY\n", "overlap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.tsv")
			os.WriteFile(p, []byte(c.body), 0o644)
			_, err := LoadASNDB(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := LoadASNDB(filepath.Join(t.TempDir(), "missing.tsv")); err == nil || !strings.Contains(err.Error(), "missing.tsv") {
		t.Errorf("missing file: err = %v", err)
	}
	p := filepath.Join(t.TempDir(), "junk.mmdb")
	os.WriteFile(p, []byte("not an mmdb"), 0o644)
	if _, err := LoadASNDB(p); err == nil || !strings.Contains(err.Error(), "junk.mmdb") {
		t.Errorf("junk mmdb: err = %v", err)
	}
}

// TestMMDBASN writes a tiny MaxMind DB by hand (format spec:
// maxmind.github.io/MaxMind-DB, 24-bit records, IPv6 tree with IPv4 in
// ::/96) with GeoLite2-ASN and IPinfo-style records and reads it back
// through LoadASNDB (maxminddb-golang/v2). Writing it independently of the
// reader is the point: no mmdb writer module is on the proxy list here.
func TestMMDBASN(t *testing.T) {
	w := newMMDBWriter()
	w.insert("1.0.0.0/24", map[string]any{"autonomous_system_number": uint32(13335), "autonomous_system_organization": "CLOUDFLARENET"})
	w.insert("61.152.0.0/16", map[string]any{"autonomous_system_number": uint32(4812), "autonomous_system_organization": "China Telecom (Group)"})
	w.insert("130.94.0.0/16", map[string]any{"asn": "AS2914", "as_name": "NTT America, Inc."}) // IPinfo Lite style
	w.insert("2001:200::/32", map[string]any{"autonomous_system_number": uint32(2500), "autonomous_system_organization": "WIDE Project"})
	w.insert("9.9.9.0/24", map[string]any{"country": "US"}) // a record without an ASN is a miss
	p := filepath.Join(t.TempDir(), "asn.mmdb")
	if err := os.WriteFile(p, w.bytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := LoadASNDB(p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		ip   string
		asn  int
		name string
		ok   bool
	}{
		{"1.0.0.77", 13335, "CLOUDFLARENET", true},
		{"1.0.1.1", 0, "", false},
		{"61.152.24.1", 4812, "China Telecom (Group)", true},
		{"130.94.1.1", 2914, "NTT America, Inc.", true},
		{"2001:200:1::1", 2500, "WIDE Project", true},
		{"2001:300::1", 0, "", false},
		{"9.9.9.9", 0, "", false},
	}
	for _, c := range cases {
		asn, name, ok := db.Lookup(netip.MustParseAddr(c.ip))
		if asn != c.asn || name != c.name || ok != c.ok {
			t.Errorf("%s: got %d %q %v, want %d %q %v", c.ip, asn, name, ok, c.asn, c.name, c.ok)
		}
	}
	// The db feeds LookupCarrier after the bundled table.
	c, ok := LookupCarrier(netip.MustParseAddr("61.152.24.1"), db)
	if !ok || c.ASN != 4812 || c.Class != ClassChinaNet || c.Source != "asn-db" || c.Backbone {
		t.Errorf("LookupCarrier via mmdb = %+v %v", c, ok)
	}
}

// mmdbWriter builds a MaxMind DB v2.0 file: a binary trie over 128 bits.
type mmdbWriter struct {
	root *trieNode
	data [][]byte
}

type trieNode struct {
	child [2]*trieNode
	data  int // index+1 into data; 0 = none
}

func newMMDBWriter() *mmdbWriter { return &mmdbWriter{root: &trieNode{}} }

func (w *mmdbWriter) insert(cidr string, rec map[string]any) {
	p := netip.MustParsePrefix(cidr)
	bits, a := p.Bits(), p.Addr()
	if a.Is4() {
		bits += 96
		a = netip.AddrFrom16(a.As16()) // ::ffff:a.b.c.d → we want ::a.b.c.d
		b := a.As16()
		b[10], b[11] = 0, 0
		a = netip.AddrFrom16(b)
	}
	b := a.As16()
	n := w.root
	for i := 0; i < bits; i++ {
		bit := (b[i/8] >> (7 - i%8)) & 1
		if n.child[bit] == nil {
			n.child[bit] = &trieNode{}
		}
		n = n.child[bit]
	}
	w.data = append(w.data, encodeMMDB(rec))
	n.data = len(w.data)
}

func (w *mmdbWriter) bytes(t testing.TB) []byte {
	// Number internal nodes breadth-first; leaves with data become pointers.
	var nodes []*trieNode
	index := map[*trieNode]int{}
	queue := []*trieNode{w.root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		index[n] = len(nodes)
		nodes = append(nodes, n)
		for _, c := range n.child {
			if c != nil && c.data == 0 {
				queue = append(queue, c)
			}
		}
	}
	var dataSec []byte
	offsets := make([]int, len(w.data))
	for i, d := range w.data {
		offsets[i] = len(dataSec)
		dataSec = append(dataSec, d...)
	}
	count := len(nodes)
	var tree []byte
	for _, n := range nodes {
		for _, c := range n.child {
			rec := count // empty
			switch {
			case c == nil:
			case c.data != 0:
				if c.child[0] != nil || c.child[1] != nil {
					t.Fatal("fixture prefixes must not nest")
				}
				rec = count + 16 + offsets[c.data-1]
			default:
				rec = index[c]
			}
			tree = append(tree, byte(rec>>16), byte(rec>>8), byte(rec))
		}
	}
	out := append(tree, make([]byte, 16)...)
	out = append(out, dataSec...)
	out = append(out, []byte("\xab\xcd\xefMaxMind.com")...)
	out = append(out, encodeMMDB(map[string]any{
		"node_count":                  uint32(count),
		"record_size":                 uint16(24),
		"ip_version":                  uint16(6),
		"database_type":               "Test-ASN",
		"languages":                   []any{"en"},
		"binary_format_major_version": uint16(2),
		"binary_format_minor_version": uint16(0),
		"build_epoch":                 uint64(1_700_000_000),
		"description":                 map[string]any{"en": "linecheck test fixture"},
	})...)
	return out
}

// encodeMMDB encodes the data-section types the fixture needs.
func encodeMMDB(v any) []byte {
	ctrl := func(typ, size int) []byte {
		var b []byte
		sz := size
		var ext []byte
		switch {
		case size >= 65821:
			sz = 31
			s := size - 65821
			ext = []byte{byte(s >> 16), byte(s >> 8), byte(s)}
		case size >= 285:
			sz = 30
			s := size - 285
			ext = []byte{byte(s >> 8), byte(s)}
		case size >= 29:
			sz = 29
			ext = []byte{byte(size - 29)}
		}
		if typ <= 7 {
			b = append(b, byte(typ<<5|sz))
		} else {
			b = append(b, byte(sz), byte(typ-7))
		}
		return append(b, ext...)
	}
	uintBytes := func(x uint64) []byte {
		var full [8]byte
		binary.BigEndian.PutUint64(full[:], x)
		i := 0
		for i < 8 && full[i] == 0 {
			i++
		}
		return full[i:]
	}
	switch x := v.(type) {
	case string:
		return append(ctrl(2, len(x)), x...)
	case uint16:
		b := uintBytes(uint64(x))
		return append(ctrl(5, len(b)), b...)
	case uint32:
		b := uintBytes(uint64(x))
		return append(ctrl(6, len(b)), b...)
	case uint64:
		b := uintBytes(x)
		return append(ctrl(9, len(b)), b...)
	case []any:
		out := ctrl(11, len(x))
		for _, e := range x {
			out = append(out, encodeMMDB(e)...)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := ctrl(7, len(x))
		for _, k := range keys {
			out = append(out, encodeMMDB(k)...)
			out = append(out, encodeMMDB(x[k])...)
		}
		return out
	}
	panic("encodeMMDB: unsupported type")
}

package asn

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// FuzzAddCSV: any input gives rows or an error naming the file, never a
// panic; a table built from accepted rows encodes and decodes back.
func FuzzAddCSV(f *testing.F) {
	f.Add("1.0.0.0,1.0.0.255,13335,\"Cloudflare, Inc.\"\n")
	f.Add("2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,JP\n")
	f.Add("1.0.0.0,1.0.0.255,13335,x\n1.0.0.9,1.0.1.0,1,y\n")
	f.Add("<html>\n")
	f.Fuzz(func(t *testing.T, in string) {
		var b Builder
		if err := b.AddCSV("f.csv", strings.NewReader(in)); err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		tb, err := b.Table(time.Unix(0, 0), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, tb); err != nil {
			t.Fatal(err)
		}
		back, err := Open(buf.Bytes())
		if err != nil {
			t.Fatalf("a table built from accepted rows does not open: %v", err)
		}
		for _, r := range b.asRows {
			if a, _ := back.Lookup(addr(r.start, r.v4)); a.ASN != r.asn {
				t.Fatalf("%s: AS%d after the round trip, row says AS%d", addr(r.start, r.v4), a.ASN, r.asn)
			}
		}
	})
}

// FuzzOpen: a damaged file is an error, never a panic, and a table that
// opens answers lookups without a panic; so does one opened without the
// checks (as the bundled table is).
func FuzzOpen(f *testing.F) {
	var b Builder
	_ = b.AddCSV("s.csv", strings.NewReader("1.0.0.0,1.0.0.255,13335,x\n2001::,2001::ff,6939,y\n"))
	_ = b.AddCSV("c.csv", strings.NewReader("1.0.0.0,1.0.0.255,AU\n"))
	tb, _ := b.Table(time.Unix(0, 0), "seed")
	var buf bytes.Buffer
	_ = Encode(&buf, tb)
	f.Add(buf.Bytes())
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ip := range []string{"1.0.0.1", "2001::1", "::"} {
			if tb, err := openString(string(data)); err == nil {
				tb.Lookup(netip.MustParseAddr(ip))
			}
		}
		tb, err := Open(data)
		if err != nil {
			return
		}
		for _, ip := range []string{"1.0.0.1", "0.0.0.0", "255.255.255.255", "2001::1", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"} {
			tb.Lookup(netip.MustParseAddr(ip))
		}
	})
}

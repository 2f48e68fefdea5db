package route

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
)

// Malformed iptoasn input gives an error naming the file, never a panic.
func FuzzIPToASN(f *testing.F) {
	f.Add("1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET\n")
	f.Add("2001:200::\t2001:200:ffff:ffff:ffff:ffff:ffff:ffff\t2500\tJP\tWIDE\n1.0.1.0\t1.0.3.255\t0\tNone\tNot routed\n")
	f.Add("1.0.0.9\t1.0.0.1\t1\tUS\tX\n")
	f.Add("\x00\xff\t\t\t\n")
	f.Fuzz(func(t *testing.T, body string) {
		db, err := readIPToASN("fuzz.tsv", strings.NewReader(body))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.tsv") {
				t.Fatalf("error without file name: %v", err)
			}
			return
		}
		for _, a := range []string{"1.0.0.1", "::1", "2001:200::1", "255.255.255.255"} {
			db.Lookup(netip.MustParseAddr(a))
		}
	})
}

// Junk given as an .mmdb is an error, never a panic.
func FuzzMMDB(f *testing.F) {
	f.Add([]byte("\xab\xcd\xefMaxMind.com"))
	f.Add([]byte{})
	w := newMMDBWriter()
	w.insert("1.0.0.0/24", map[string]any{"autonomous_system_number": uint32(13335)})
	f.Add(w.bytes(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := openMMDB("fuzz.mmdb", bytes.Clone(data))
		if err != nil {
			return
		}
		db.Lookup(netip.MustParseAddr("1.0.0.1"))
		db.Lookup(netip.MustParseAddr("2001:db8::1"))
	})
}

// Classify and Annotate take any trace, including nonsense addresses and
// TTLs out of order, without panicking, and always give a class and a rule.
func FuzzClassify(f *testing.F) {
	f.Add("59.43.1.1,*,202.97.1.1|202.97.2.2,10.0.0.1", "203.0.113.10", true)
	f.Add("not-an-ip,,::1,2402:4f00:f000::1", "", false)
	f.Fuzz(func(t *testing.T, hops, addr string, reached bool) {
		tr := mkTrace(addr, reached, strings.Split(hops, ",")...)
		if len(tr.Hops) > 2 {
			tr.Hops[0].TTL, tr.Hops[1].TTL = tr.Hops[1].TTL, tr.Hops[0].TTL
		}
		Annotate(tr, testDB)
		if tr.LineClass == "" || tr.LineEvidence == nil || tr.LineEvidence.Rule == "" {
			t.Fatalf("no class/rule: %+v", tr)
		}
		if LineClassRank(tr.LineClass) == 0 && tr.LineClass != LineUnknown {
			t.Fatalf("class %q not in the list", tr.LineClass)
		}
	})
}

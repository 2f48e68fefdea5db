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

// Target lists, operator prefix tables and backtrace documents: an error
// naming the file, or a result, never a panic.
func FuzzBacktraceInputs(f *testing.F) {
	f.Add("targets:\n  - {name: a, carrier: telecom, city: Shanghai, addr: 192.0.2.1}\n")
	f.Add("targets: [{name: a, carrier: x}]\n")
	f.Add("10.0.0.0/8\t4809\tCN2\tcn2\tyes\tbackbone\tlab\n")
	f.Add(`{"schema":"linecheck.backtrace/v1","vantage":"v","results":[{"name":"a","carrier":"mobile","trace":{"hops":[{"ttl":1}]}}]}`)
	f.Add("targets:\n  - !!binary AAAA\n")
	f.Fuzz(func(t *testing.T, body string) {
		if ts, err := ParseTargets("fuzz.yaml", []byte(body), false); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("targets error without file name: %v", err)
			}
		} else if len(ts) == 0 {
			t.Fatal("no error and no targets")
		}
		if _, err := ParsePrefixTable("fuzz.tsv", body); err != nil && !strings.HasPrefix(err.Error(), "fuzz.tsv") {
			t.Fatalf("prefix table error without file name: %v", err)
		}
		if d, err := ParseBacktrace("fuzz.json", []byte(body)); err == nil {
			for _, r := range d.Results {
				_ = r.EvidencePhrase()
				if r.Trace != nil {
					Classify(r.Trace, nil)
				}
			}
			d.MatchUser(CarrierMobile, "Beijing")
		} else if !strings.HasPrefix(err.Error(), "fuzz.json") {
			t.Fatalf("backtrace error without file name: %v", err)
		}
	})
}

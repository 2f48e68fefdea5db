package route

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
)

func datasetNames(t *testing.T) *Names {
	t.Helper()
	n, _, err := NewNames(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if n.Dataset == nil {
		t.Fatal("no dataset")
	}
	return n
}

// wantASN is what the raw source rows covering each bundled sample network
// say (asn-ipv4.csv of @ip-location-db/asn 2.3.2026061719, looked up by
// hand; the issue names the same): the Shanghai metro hops are AS4812,
// 59.43/16 is CN2 AS4809, 202.97/16 (up to .127) ChinaNet AS4134,
// 219.158.0.0–57.255 Unicom AS4837, 223.120.0.0/17 CMI AS58453.
var wantASN = []struct {
	prefix string
	asn    int
}{
	{"61.152.0.0/16", 4812}, {"101.95.120.0/21", 4812}, {"101.95.88.0/21", 4812}, {"59.43.0.0/16", 4809},
	{"202.97.0.0/17", 4134}, {"219.158.0.0/19", 4837}, {"223.120.0.0/17", 58453}, {"129.250.0.0/16", 2914},
}

func expectedASN(ip netip.Addr) (int, bool) {
	for _, w := range wantASN {
		if netip.MustParsePrefix(w.prefix).Contains(ip) {
			return w.asn, true
		}
	}
	return 0, false
}

// TestSampleHopsNamedByTheDataset: every hop of the bundled recordings gets
// an AS answer or a special range's kind; the networks the issue lists get
// the dataset's AS; hops the carrier table names keep its name and line-class
// role (source carrier-table); the line class is what the carrier table
// alone gives.
func TestSampleHopsNamedByTheDataset(t *testing.T) {
	n := datasetNames(t)
	dir := filepath.Join("..", "..", "samples", "rec")
	files, _ := filepath.Glob(filepath.Join(dir, "*-forward.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "*-return.mtr.json"))
	files = append(files, more...)
	if len(files) < 8 {
		t.Fatalf("%d sample recordings", len(files))
	}
	seen := map[int]bool{}
	for _, f := range files {
		tr, err := ReadTraceFile(f)
		if err != nil {
			t.Fatal(err)
		}
		alone, _ := ReadTraceFile(f)
		Annotate(alone, nil)
		Annotate(tr, n)
		if tr.LineClass != alone.LineClass {
			t.Errorf("%s: class %s with the dataset, %s with the carrier table alone", f, tr.LineClass, alone.LineClass)
		}
		if tr.ASNData == nil || tr.ASNData.Snapshot != "2026-06-17" || !strings.Contains(tr.ASNData.Attribution, "CC BY 4.0") {
			t.Errorf("%s: asn_data %+v", f, tr.ASNData)
		}
		for _, h := range tr.Hops {
			for _, r := range h.Responders {
				ip := netip.MustParseAddr(r.Addr)
				if kind, special := SpecialRange(ip); special {
					if r.ASN != 0 || r.ASName != "" || r.Country != "" || r.ASSource != kind {
						t.Errorf("%s TTL %d %s (%s): annotated %d %q %q %q", f, h.TTL, r.Addr, kind, r.ASN, r.ASName, r.Country, r.ASSource)
					}
					continue
				}
				if r.ASN == 0 || r.ASName == "" || r.Country == "" {
					t.Errorf("%s TTL %d %s: public hop without AS %d %q %q", f, h.TTL, r.Addr, r.ASN, r.ASName, r.Country)
				}
				if w, ok := expectedASN(ip); ok {
					seen[w] = true
					if r.ASN != w {
						t.Errorf("%s TTL %d %s: AS%d, the source says AS%d", f, h.TTL, r.Addr, r.ASN, w)
					}
				}
				if c, ok := TableLookup(ip, nil); ok {
					if r.ASSource != SourceCarrierTable || r.Carrier != c.Name || r.ASN != c.ASN {
						t.Errorf("%s TTL %d %s: %s %q AS%d, the carrier table says %q AS%d", f, h.TTL, r.Addr, r.ASSource, r.Carrier, r.ASN, c.Name, c.ASN)
					}
				} else if r.ASSource != SourceDataset {
					t.Errorf("%s TTL %d %s: source %s, want dataset", f, h.TTL, r.Addr, r.ASSource)
				}
			}
		}
	}
	for _, w := range []int{4812, 4809, 4134, 2914} {
		if !seen[w] {
			t.Errorf("no sample hop of AS%d", w)
		}
	}
}

// TestPublicRoutesWithTheDataset: the published routes keep their class
// when the dataset names the hops the carrier table does not, and the
// networks the issue lists get their AS.
func TestPublicRoutesWithTheDataset(t *testing.T) {
	n := datasetNames(t)
	seen := map[int]int{}
	for _, r := range readPublicRoutes(t) {
		Annotate(r.trace, n)
		if r.trace.LineClass != r.class {
			t.Errorf("%s: class %s with the dataset, want %s (rule %q)", r.id, r.trace.LineClass, r.class, r.trace.LineEvidence.Rule)
		}
		for _, h := range r.trace.Hops {
			for _, rs := range h.Responders {
				if w, ok := expectedASN(netip.MustParseAddr(rs.Addr)); ok {
					seen[w]++
					if rs.ASN != w {
						t.Errorf("%s TTL %d %s: AS%d, the source says AS%d", r.id, h.TTL, rs.Addr, rs.ASN, w)
					}
				}
			}
		}
	}
	for _, w := range []int{4809, 4134, 4837, 58453} {
		if seen[w] == 0 {
			t.Errorf("no public-route hop of AS%d", w)
		}
	}
}

func TestASPathAndItsText(t *testing.T) {
	tr := &Trace{Hops: []Hop{
		{TTL: 1, Responders: []Responder{{Addr: "192.168.1.1"}}},
		{TTL: 2, Responders: []Responder{{Addr: "61.152.8.45"}}},
		{TTL: 3},
		{TTL: 4, Responders: []Responder{{Addr: "202.97.12.41"}}},
		{TTL: 5, Responders: []Responder{{Addr: "202.97.12.42"}}},
		{TTL: 6, Responders: []Responder{{Addr: "59.43.182.198"}}},
		{TTL: 7, Responders: []Responder{{Addr: "223.120.2.1"}}},
	}}
	Annotate(tr, datasetNames(t))
	got := ASPathText(tr.ASPath)
	want := "AS4812 ChinaNet Shanghai (ttl 2) → AS4134 ChinaNet (ttl 4) → AS4809 CN2 (ttl 6) → AS58453 CMI (ttl 7)"
	if got != want {
		t.Errorf("as path\n got %s\nwant %s", got, want)
	}
	off, _, _ := NewNames(nil, false)
	Annotate(tr, off)
	if tr.ASPath != nil || tr.ASNData != nil || tr.Hops[1].Responders[0].ASN != 0 || tr.Hops[3].Responders[0].Carrier != "ChinaNet" {
		t.Errorf("--no-asn: %+v %+v %+v", tr.ASPath, tr.ASNData, tr.Hops[3].Responders[0])
	}
}

type hopFakeDB map[string]int

func (f hopFakeDB) Lookup(ip netip.Addr) (int, string, bool) {
	a, ok := f[ip.String()]
	return a, "FAKE-NET", ok
}

// TestSourceOrder: --prefix-table, then the carrier table, then --asn-db,
// then the dataset; each hop says which answered.
func TestSourceOrder(t *testing.T) {
	pt, err := ParsePrefixTable("ops.tsv", "61.152.8.0/24\t64512\tOps-Metro\tchinanet\tyes\tedge\tours\n")
	if err != nil {
		t.Fatal(err)
	}
	n := datasetNames(t)
	n.Table = pt
	n.File = hopFakeDB{"101.95.120.33": 64500, "59.43.182.198": 64501}
	tr := &Trace{Hops: []Hop{
		{TTL: 1, Responders: []Responder{{Addr: "61.152.8.45"}}},
		{TTL: 2, Responders: []Responder{{Addr: "59.43.182.198"}}},
		{TTL: 3, Responders: []Responder{{Addr: "101.95.120.33"}}},
		{TTL: 4, Responders: []Responder{{Addr: "1.0.0.1"}}},
		{TTL: 5, Responders: []Responder{{Addr: "100.64.1.1"}}},
	}}
	Annotate(tr, n)
	want := []struct {
		asn    int
		source string
	}{{64512, SourcePrefixTable}, {4809, SourceCarrierTable}, {64500, SourceASNDB}, {13335, SourceDataset}, {0, "cgnat"}}
	for i, w := range want {
		r := tr.Hops[i].Responders[0]
		if r.ASN != w.asn || r.ASSource != w.source {
			t.Errorf("TTL %d %s: AS%d from %q, want AS%d from %q", i+1, r.Addr, r.ASN, r.ASSource, w.asn, w.source)
		}
	}
}

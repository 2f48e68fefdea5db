package route

import (
	"net/netip"
	"strings"
	"testing"
)

// mkTrace builds a trace from one string per TTL: "*" is a silent hop, "a|b"
// two ECMP responders; the last entry is the destination when reached.
func mkTrace(addr string, reached bool, hops ...string) *Trace {
	t := &Trace{Schema: TraceSchema, Target: addr, Addr: addr, Protocol: "icmp", Reached: reached}
	for i, h := range hops {
		hop := Hop{TTL: i + 1, Sent: 3, Flags: []string{}, Responders: []Responder{}}
		if h == "*" {
			hop.Loss = 1
		} else {
			for _, a := range strings.Split(h, "|") {
				hop.Responders = append(hop.Responders, Responder{Addr: a, Recv: 3, Samples: []float64{1, 2, 3}})
			}
		}
		if reached && i == len(hops)-1 {
			hop.Flags = append(hop.Flags, "destination")
		}
		t.Hops = append(t.Hops, hop)
	}
	return t
}

// fakeDB is an ASN database given as CIDR → ASN, name.
type fakeDB map[string]struct {
	asn  int
	name string
}

func (f fakeDB) Lookup(ip netip.Addr) (int, string, bool) {
	best, bits := -1, -1
	name := ""
	for cidr, v := range f {
		p := netip.MustParsePrefix(cidr)
		if p.Contains(ip) && p.Bits() > bits {
			best, bits, name = v.asn, p.Bits(), v.name
		}
	}
	return best, name, best >= 0
}

// testDB knows the provincial/destination networks the bundled table does
// not: Shanghai Telecom metro (AS4812), a Telecom broadband user (AS4134), a
// CN2-announced customer prefix (AS4809), a Unicom user (AS4837), a Mobile
// user (AS9808), and a Japanese hoster (AS64500 as a stand-in name).
var testDB = fakeDB{
	"61.152.0.0/16":  {4812, "CHINANET-SH-AP China Telecom (Group)"},
	"101.80.0.0/13":  {4134, "CHINANET-BACKBONE No.31,Jin-rong Street"},
	"218.30.0.0/16":  {4134, "CHINANET-BACKBONE No.31,Jin-rong Street"},
	"183.192.0.0/10": {9808, "CMNET-GD Guangdong Mobile"},
	"112.64.0.0/14":  {4837, "CHINA169-BACKBONE CHINA UNICOM"},
	"117.21.0.0/16":  {4809, "CHINATELECOM-CORE-WAN-CN2"},
	"45.64.0.0/16":   {64500, "EXAMPLE-HOSTER"},
	"130.94.0.0/16":  {2914, "NTT-LTD-2914"},
}

func TestClassifyRoutes(t *testing.T) {
	cases := []struct {
		name       string
		trace      *Trace
		db         ASNDB
		want       string
		confidence string
		evTTLs     []int // TTLs of the evidence hops, when checked
	}{
		{
			name: "GIA: return from HK stays on 59.43 into the provincial network",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9",
				"59.43.130.22", "59.43.80.1", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineCN2GIA, confidence: ConfidenceHigh, evTTLs: []int{3, 4, 5, 6},
		},
		{
			name: "GIA with one 202.97 delivery hop is still GIA (GT needs two)",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "59.43.246.1", "59.43.187.9",
				"202.97.50.1", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineCN2GIA, confidence: ConfidenceHigh,
		},
		{
			name: "GT: forward from Shanghai rides 202.97 then 59.43 abroad",
			trace: mkTrace("203.0.113.10", true, "192.168.1.1", "100.64.0.1", "61.152.24.1", "202.97.29.1",
				"202.97.94.137", "202.97.12.5", "59.43.182.1", "59.43.248.2", "10.10.0.1", "203.0.113.10"),
			db: testDB, want: LineCN2GT, confidence: ConfidenceHigh, evTTLs: []int{4, 5, 6, 7, 8},
		},
		{
			name: "GT: return 59.43 then ≥2 202.97 backbone hops",
			trace: mkTrace("101.85.1.1", true, "45.64.1.1", "59.43.247.1", "59.43.186.2", "202.97.51.2",
				"202.97.24.9", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineCN2GT, confidence: ConfidenceHigh,
		},
		{
			name: "163: HE then 202.97 backbone into a Telecom user",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "72.52.92.1", "202.97.50.234",
				"202.97.91.190", "202.97.12.41", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineChinaNet163, confidence: ConfidenceHigh, evTTLs: []int{4, 5, 6},
		},
		{
			name: "9929: Cogent hands off to 218.105",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "154.54.42.1", "154.54.5.2", "218.105.2.201",
				"218.105.131.9", "210.51.1.3", "112.65.1.1"),
			db: testDB, want: LineCU9929, confidence: ConfidenceHigh, evTTLs: []int{4, 5, 6},
		},
		{
			name: "9929 entered via CUG",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "162.219.34.1", "162.219.34.9", "218.105.2.201",
				"218.105.131.9", "112.65.1.1"),
			db: testDB, want: LineCU9929, confidence: ConfidenceHigh,
		},
		{
			name: "4837: 219.158 backbone into a Unicom user",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "62.115.10.1", "62.115.12.2", "219.158.96.29",
				"219.158.3.177", "219.158.19.81", "112.65.1.1"),
			db: testDB, want: LineCU4837, confidence: ConfidenceHigh, evTTLs: []int{4, 5, 6},
		},
		{
			name: "CMIN2: 223.120.128/17 hops (IPv4 community list → medium)",
			trace: mkTrace("183.192.1.1", true, "10.0.0.1", "223.120.130.6", "223.120.141.2", "221.183.55.22",
				"221.183.39.1", "183.192.1.1"),
			db: testDB, want: LineCMIN2, confidence: ConfidenceMedium, evTTLs: []int{2, 3},
		},
		{
			name: "CMIN2 over IPv6 (2402:4f00:f000::/36) is high",
			trace: mkTrace("2409:8a00::1", false, "fe80::1", "2402:4f00:f001::1", "2402:4f00:f002::5",
				"2409:8080:1::1"),
			want: LineCMIN2, confidence: ConfidenceHigh,
		},
		{
			name: "CMI: 223.120.0/17 remainder (not CMIN2) then CMNET",
			trace: mkTrace("183.192.1.1", true, "10.0.0.1", "129.250.2.1", "223.120.2.5", "223.120.10.70",
				"221.183.55.22", "183.192.1.1"),
			db: testDB, want: LineCMI, confidence: ConfidenceHigh, evTTLs: []int{3, 4},
		},
		{
			name: "plain transit: NTT and IIJ to a Japanese hoster",
			trace: mkTrace("45.64.9.9", true, "10.0.0.1", "129.250.3.1", "129.250.7.9", "58.138.88.1",
				"45.64.1.1", "45.64.9.9"),
			db: testDB, want: LineTransit, confidence: ConfidenceHigh, evTTLs: []int{2, 3, 4},
		},
		{
			name:  "transit with only two carrier hops is medium",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "154.54.1.1", "64.125.1.1", "203.0.113.10"),
			want:  LineTransit, confidence: ConfidenceMedium,
		},
		{
			name:  "one known carrier hop is not transit",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "154.54.1.1", "*", "203.0.113.10"),
			want:  LineUnknown,
		},
		{
			name: "silent hops between CN2 hops: still GIA",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "59.43.246.1", "*", "*", "59.43.80.1",
				"61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineCN2GIA, confidence: ConfidenceHigh,
		},
		{
			name: "private, CGNAT and DoD hops carry no evidence (otherwise silent route: unknown)",
			trace: mkTrace("203.0.113.10", true, "192.168.1.1", "100.64.3.1", "11.0.0.5", "30.1.2.3",
				"172.16.0.1", "203.0.113.10"),
			want: LineUnknown, confidence: ConfidenceLow,
		},
		{
			name:  "all silent",
			trace: mkTrace("203.0.113.10", false, "*", "*", "*"),
			want:  LineUnknown,
		},
		{
			name: "MPLS-hidden middle: 202.97 then a * run then 202.97 is 163",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "184.105.80.2", "202.97.50.234",
				"*", "*", "*", "202.97.12.41", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineChinaNet163, confidence: ConfidenceHigh, evTTLs: []int{4, 8},
		},
		{
			name: "MPLS-hidden long haul: transit, a * run, then only the Telecom user's network → unknown",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "184.105.80.2", "*", "*", "*",
				"61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineUnknown, confidence: ConfidenceLow,
		},
		{
			name: "looks GIA only on its last hops: destination inside CN2 space, transit before → not GIA",
			trace: mkTrace("59.43.2.9", true, "10.0.0.1", "154.54.1.1", "154.54.8.2", "59.43.246.1",
				"59.43.2.9"),
			want: LineUnknown,
		},
		{
			name: "looks GIA only on its last hops: AS4809-announced destination network",
			trace: mkTrace("117.21.5.5", true, "10.0.0.1", "129.250.3.1", "129.250.7.9", "117.21.1.1",
				"117.21.2.1", "117.21.5.5"),
			db: testDB, want: LineUnknown,
		},
		{
			name:  "only reaches a Chinese destination, no backbone evidence → unknown",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "45.64.1.1", "*", "*", "218.30.1.1", "101.85.1.1"),
			db:    testDB, want: LineUnknown,
		},
		{
			name:  "unreached trace ending in Telecom metro: delivery hops are no 163 evidence",
			trace: mkTrace("101.85.1.1", false, "10.0.0.1", "129.250.3.1", "*", "61.152.24.1", "218.30.1.1", "*"),
			db:    testDB, want: LineUnknown,
		},
		{
			name: "the vantage's own metro network (AS4812 by ASN db) is not 163 evidence",
			trace: mkTrace("45.64.9.9", true, "192.168.1.1", "61.152.24.1", "61.152.8.1", "*", "*",
				"129.250.3.1", "129.250.7.9", "45.64.9.9"),
			db: testDB, want: LineTransit, confidence: ConfidenceMedium,
		},
		{
			name:  "unlisted Chinese provincial ASN recognised by its registry name is delivery, not transit",
			trace: mkTrace("36.1.1.1", true, "10.0.0.1", "154.54.1.1", "154.54.2.2", "36.0.0.1", "36.1.1.1"),
			db:    fakeDB{"36.0.0.0/16": {64600, "CHINANET-JS-AS-AP China Telecom (Group)"}},
			want:  LineUnknown,
		},
		{
			name: "tri-net CN2 to a Unicom user: long haul on 59.43, landing on 219.158 → GIA (tri-net premium)",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "59.43.246.1", "59.43.187.9", "59.43.130.22",
				"219.158.3.177", "219.158.19.81", "112.65.1.1"),
			db: testDB, want: LineCN2GIA, confidence: ConfidenceHigh, evTTLs: []int{2, 3, 4},
		},
		{
			name:  "a single 202.97 hop is 163 at low confidence",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "202.97.1.1", "203.0.113.10"),
			want:  LineChinaNet163, confidence: ConfidenceLow,
		},
		{
			name:  "ECMP: responders of one hop on two CN2 addresses count as one hop",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "59.43.1.1|59.43.1.5", "203.0.113.10"),
			want:  LineCN2GIA, confidence: ConfidenceLow,
		},
		{
			name:  "string-prefix trap: 203.220.x is not CTGNet 203.22/16, 61.140.x not CUG",
			trace: mkTrace("203.0.113.10", true, "203.220.1.1", "61.140.1.1", "203.0.113.10"),
			want:  LineUnknown,
		},
		{
			name: "GIA decided without an ASN database",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "61.152.24.1", "59.43.182.1", "59.43.248.2",
				"203.0.113.10"),
			want: LineCN2GIA, confidence: ConfidenceHigh,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := Classify(c.trace, c.db)
			if got != c.want {
				t.Fatalf("class = %s, want %s; evidence %+v", got, c.want, ev)
			}
			if ev == nil || ev.Rule == "" {
				t.Fatalf("no evidence rule: %+v", ev)
			}
			checkRuleCountsListedHops(t, ev)
			if c.confidence != "" && ev.Confidence != c.confidence {
				t.Errorf("confidence = %s, want %s (rule %q, notes %q)", ev.Confidence, c.confidence, ev.Rule, ev.Notes)
			}
			if c.evTTLs != nil {
				var ttls []int
				for _, h := range ev.Hops {
					if len(ttls) == 0 || ttls[len(ttls)-1] != h.TTL {
						ttls = append(ttls, h.TTL)
					}
				}
				if !equalInts(ttls, c.evTTLs) {
					t.Errorf("evidence TTLs = %v, want %v (%+v)", ttls, c.evTTLs, ev.Hops)
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAnnotateFillsRespondersAndClass(t *testing.T) {
	tr := mkTrace("101.85.1.1", true, "192.168.1.1", "100.64.0.9", "59.43.246.1", "59.43.187.9",
		"202.97.50.1", "61.152.24.1", "101.85.1.1")
	Annotate(tr, testDB)
	want := []struct {
		asn     int
		carrier string
	}{{0, "private"}, {0, "cgnat"}, {4809, "CN2"}, {4809, "CN2"}, {4134, "ChinaNet"},
		{4812, "ChinaNet Shanghai"}, {4134, "ChinaNet"}}
	for i, w := range want {
		r := tr.Hops[i].Responders[0]
		if r.ASN != w.asn || r.Carrier != w.carrier {
			t.Errorf("TTL %d %s: asn %d carrier %q, want %d %q", i+1, r.Addr, r.ASN, r.Carrier, w.asn, w.carrier)
		}
	}
	if tr.LineClass != LineCN2GIA || tr.LineEvidence == nil {
		t.Fatalf("line class %q evidence %+v", tr.LineClass, tr.LineEvidence)
	}
	Annotate(nil, nil) // must not panic
}

func TestCombineDirections(t *testing.T) {
	gia := &Trace{LineClass: LineCN2GIA, Hops: []Hop{{TTL: 1}}}
	c163 := &Trace{LineClass: LineChinaNet163, Hops: []Hop{{TTL: 1}}}
	unk := &Trace{LineClass: LineUnknown, Hops: []Hop{{TTL: 1}}}
	cases := []struct {
		name          string
		fwd, ret      *Trace
		class, dir    string
		noteSubstring string
	}{
		{"both agree", gia, gia, LineCN2GIA, "both", ""},
		{"asymmetric reports the weaker", gia, c163, LineChinaNet163, "both", "asymmetric"},
		{"asymmetric the other way", c163, gia, LineChinaNet163, "both", "asymmetric"},
		{"forward only warns about return", gia, nil, LineCN2GIA, "forward", "return path not validated"},
		{"return unknown warns", gia, unk, LineCN2GIA, "forward", "return path not validated"},
		{"return only", nil, c163, LineChinaNet163, "return", "forward path not validated"},
		{"nothing", nil, nil, LineUnknown, "none", "return path not validated"},
		{"unclassified trace is classified",
			mkTrace("203.0.113.10", true, "59.43.1.1", "59.43.2.2", "203.0.113.10"), nil, LineCN2GIA, "forward", "return"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			class, dir, notes := CombineDirections(c.fwd, c.ret)
			if class != c.class || dir != c.dir {
				t.Fatalf("got %s/%s, want %s/%s (notes %q)", class, dir, c.class, c.dir, notes)
			}
			joined := strings.Join(notes, "; ")
			if c.noteSubstring == "" && len(notes) != 0 {
				t.Errorf("unexpected notes %q", notes)
			}
			if c.noteSubstring != "" && !strings.Contains(joined, c.noteSubstring) {
				t.Errorf("notes %q lack %q", notes, c.noteSubstring)
			}
		})
	}
}

func TestClassifyUsesASNsAlreadyInTheRecording(t *testing.T) {
	// mtr -z writes "ASN" per hub; without a database those ASNs still count.
	tr := mkTrace("198.51.100.7", true, "10.0.0.1", "130.94.1.1", "130.94.2.2", "45.64.1.1", "198.51.100.7")
	tr.Hops[1].Responders[0].ASN = 2914
	tr.Hops[2].Responders[0].ASN = 2914
	tr.Hops[3].Responders[0].ASN = 64500
	Annotate(tr, nil)
	if tr.LineClass != LineTransit {
		t.Fatalf("class %s (%+v)", tr.LineClass, tr.LineEvidence)
	}
	if r := tr.Hops[1].Responders[0]; r.Carrier != "NTT" || r.ASN != 2914 {
		t.Errorf("hop 2: %+v", r)
	}
	if r := tr.Hops[3].Responders[0]; r.Carrier != "AS64500" {
		t.Errorf("hop 4: %+v", r)
	}
}

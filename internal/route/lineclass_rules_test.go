package route

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// evidenceCount is the "N evidence hop(s)" figure of a rule.
var evidenceCount = regexp.MustCompile(`(\d+) evidence hop\(s\)`)

// checkRuleCountsListedHops fails when the rule's hop count differs from the
// number of routers in the evidence list, counted by hand: walking the TTLs
// upwards, a TTL is a hop when one of its addresses was not listed at a lower
// TTL (a router answering at two TTLs is one hop, ECMP responders of one TTL
// are one hop).
func checkRuleCountsListedHops(t *testing.T, ev *LineEvidence) {
	t.Helper()
	m := evidenceCount.FindStringSubmatch(ev.Rule)
	if m == nil {
		t.Fatalf("rule %q has no evidence count", ev.Rule)
	}
	n, _ := strconv.Atoi(m[1])
	// Each router is listed once (issue 35: "2 evidence hop(s)" listed
	// three entries, one address twice).
	addrs := map[string]int{}
	for _, h := range ev.Hops {
		if ttl, dup := addrs[h.Addr]; dup {
			t.Errorf("evidence lists %s twice (TTL %d and %d): %+v", h.Addr, ttl, h.TTL, ev.Hops)
		}
		addrs[h.Addr] = h.TTL
	}
	maxTTL := 0
	for _, h := range ev.Hops {
		maxTTL = max(maxTTL, h.TTL)
	}
	listed := map[string]bool{}
	routers := 0
	for ttl := 0; ttl <= maxTTL; ttl++ {
		fresh := false
		for _, h := range ev.Hops {
			if h.TTL == ttl && !listed[h.Addr] {
				fresh = true
			}
		}
		for _, h := range ev.Hops {
			if h.TTL == ttl {
				listed[h.Addr] = true
			}
		}
		if fresh {
			routers++
		}
	}
	if n != routers {
		t.Errorf("rule counts %d hops, evidence lists %d routers: %q %+v", n, routers, ev.Rule, ev.Hops)
	}
}

func TestSharperLineRules(t *testing.T) {
	cases := []struct {
		name       string
		trace      *Trace
		db         ASNDB
		want       string
		confidence string
		landing    string
		note       string // a note that must be present
		noNote     string // a note substring that must be absent
	}{
		{
			name: "tri-network hand-off: 59.43 run, 202.97 backbone, into Unicom 4837 → GIA, lowered",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "45.64.1.1", "59.43.246.1", "59.43.187.9", "59.43.130.22",
				"202.97.50.1", "202.97.24.9", "219.158.3.177", "219.158.19.81", "112.65.1.1"),
			db: testDB, want: LineCN2GIA, confidence: ConfidenceMedium, landing: "Unicom",
			note: "not CN2 GT",
		},
		{
			name: "tri-network hand-off into 9929",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "59.43.246.1", "59.43.187.9", "202.97.50.1",
				"202.97.24.9", "218.105.2.201", "218.105.131.9", "203.0.113.10"),
			want: LineCN2GIA, confidence: ConfidenceMedium, landing: "Unicom 9929", note: "ChinaNet backbone hand-off",
		},
		{
			name: "tri-network hand-off into CMNET (no ASN database)",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "59.43.246.1", "59.43.187.9", "202.97.50.1",
				"202.97.24.9", "221.183.55.22", "221.183.39.1", "203.0.113.10"),
			want: LineCN2GIA, confidence: ConfidenceMedium, landing: "CMNET",
		},
		{
			name: "GT stays GT: the 202.97 run leads into Telecom's own network",
			trace: mkTrace("101.85.1.1", true, "45.64.1.1", "59.43.247.1", "59.43.186.2", "202.97.51.2",
				"202.97.24.9", "61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineCN2GT, confidence: ConfidenceHigh, landing: "ChinaNet",
		},
		{
			name: "forward from a Unicom user: the 4837 leg before the 9929 exit is access",
			trace: mkTrace("45.64.9.9", true, "192.168.1.1", "112.64.1.1", "219.158.106.9", "219.158.32.6",
				"218.105.2.209", "218.105.2.197", "45.64.1.1", "45.64.9.9"),
			db: testDB, want: LineCU9929, confidence: ConfidenceHigh, landing: "EXAMPLE-HOSTER",
			note: "before the 9929 exit: access", noNote: "mixed",
		},
		{
			name: "return with 4837 before 9929 stays a mixed route",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "154.54.1.1", "219.158.96.29", "219.158.3.177",
				"218.105.2.201", "218.105.131.9", "112.65.1.1"),
			db: testDB, want: LineCU9929, confidence: ConfidenceMedium, note: "mixed route",
		},
		{
			name: "CMIN2 with three hops in its IPv4 ranges is high",
			trace: mkTrace("183.192.1.1", true, "10.0.0.1", "223.119.8.1", "223.120.130.6", "223.120.141.2",
				"221.183.55.22", "183.192.1.1"),
			db: testDB, want: LineCMIN2, confidence: ConfidenceHigh, landing: "CMNET",
		},
		{
			name: "CUG hops are counted in the 9929 rule as they are listed",
			trace: mkTrace("112.65.1.1", true, "10.0.0.1", "162.219.85.85", "162.219.85.1", "218.105.2.93",
				"218.105.131.101", "112.65.1.1"),
			db: testDB, want: LineCU9929, confidence: ConfidenceHigh, landing: "Unicom",
		},
		{
			name: "163 names its landing",
			trace: mkTrace("101.85.1.1", true, "10.0.0.1", "184.105.64.1", "202.97.50.234", "202.97.91.190",
				"61.152.24.1", "101.85.1.1"),
			db: testDB, want: LineChinaNet163, landing: "ChinaNet",
		},
		{
			name: "4837 without a database lands on Unicom 4837",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "62.115.10.1", "219.158.96.29", "219.158.3.177",
				"203.0.113.10"),
			want: LineCU4837, landing: "Unicom 4837",
		},
		{
			name: "forward 163 lands abroad, on the carrier after the ChinaNet backbone",
			trace: mkTrace("203.0.113.20", true, "192.168.1.1", "202.97.34.17", "202.97.94.238", "63.218.44.21",
				"63.218.171.54", "203.0.113.20"),
			want: LineChinaNet163, landing: "PCCW",
		},
		{
			name: "CMI lands on CMNET",
			trace: mkTrace("203.0.113.10", true, "10.0.0.1", "129.250.2.1", "223.120.2.5", "223.120.10.70",
				"221.183.55.22", "203.0.113.10"),
			want: LineCMI, landing: "CMNET",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := Classify(c.trace, c.db)
			if got != c.want {
				t.Fatalf("class = %s, want %s; rule %q notes %q", got, c.want, ev.Rule, ev.Notes)
			}
			if c.confidence != "" && ev.Confidence != c.confidence {
				t.Errorf("confidence = %s, want %s (rule %q, notes %q)", ev.Confidence, c.confidence, ev.Rule, ev.Notes)
			}
			if c.landing != "" && ev.Landing != c.landing {
				t.Errorf("landing = %q, want %q", ev.Landing, c.landing)
			}
			notes := strings.Join(ev.Notes, "; ")
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("notes %q lack %q", notes, c.note)
			}
			if c.noNote != "" && strings.Contains(notes+ev.Rule, c.noNote) {
				t.Errorf("notes %q / rule %q contain %q", notes, ev.Rule, c.noNote)
			}
			checkRuleCountsListedHops(t, ev)
		})
	}
}

// The 9929 rule used to say "2 hop(s)" while listing the CUG hop as well.
func TestRuleAndEvidenceCountTheSameHops(t *testing.T) {
	tr := mkTrace("112.65.1.1", true, "10.0.0.1", "162.219.85.85", "218.105.2.93", "218.105.131.101", "112.65.1.1")
	_, ev := Classify(tr, testDB)
	if !strings.Contains(ev.Rule, "3 evidence hop(s) (2 Unicom 9929, 1 Unicom CUG)") {
		t.Errorf("rule %q", ev.Rule)
	}
	checkRuleCountsListedHops(t, ev)
}

// The operator's table is a value carried by the sources (Names.Table):
// a lookup without it never sees its rows.
func TestOperatorPrefixTable(t *testing.T) {
	route := mkTrace("10.77.9.2", true, "10.77.1.1", "10.77.2.1", "10.77.2.5", "10.77.3.1", "10.77.9.2")
	if c, _ := Classify(route, nil); c != LineUnknown {
		t.Fatalf("without a table the lab's private hops carry no evidence, got %s", c)
	}
	tbl, err := ParsePrefixTable("lab.tsv", "# lab\n"+
		"10.77.2.0/24\t4809\tCN2\tcn2\tyes\tbackbone\tlab stand-in\n"+
		"10.77.3.0/24\t4134\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in\n"+
		"10.77.9.0/24\t4134\tChinaNet Shanghai\tchinanet\tyes\tedge\tlab stand-in\n")
	if err != nil {
		t.Fatal(err)
	}
	db := &Names{Table: tbl}
	c, ev := Classify(route, db)
	if c != LineCN2GIA || ev.Landing != "ChinaNet Shanghai" {
		t.Fatalf("with the table: %s landing %q (%q)", c, ev.Landing, ev.Rule)
	}
	if c, _ := Classify(route, nil); c != LineUnknown {
		t.Errorf("a lookup without the table saw its rows: %s", c)
	}
	Annotate(route, db)
	if r := route.Hops[1].Responders[0]; r.ASN != 4809 || r.Carrier != "CN2" {
		t.Errorf("annotated %+v", r)
	}
	if r := route.Hops[0].Responders[0]; r.Carrier != "private" {
		t.Errorf("unlisted private hop: %+v", r)
	}
	// It also takes precedence over the bundled table.
	over, err := ParsePrefixTable("over.tsv", "59.43.246.0/24\t4134\tChinaNet\tchinanet\tyes\tbackbone\toperator\n")
	if err != nil {
		t.Fatal(err)
	}
	db = &Names{Table: over}
	if c, ok := LookupCarrier(netip.MustParseAddr("59.43.246.1"), db); !ok || c.Class != ClassChinaNet || c.Source != "prefix-table" {
		t.Errorf("operator row did not win: %+v", c)
	}
	if c, _ := LookupCarrier(netip.MustParseAddr("59.43.247.1"), db); c.Class != ClassCN2 {
		t.Errorf("bundled row outside the operator's: %+v", c)
	}
}

func TestOperatorPrefixTableErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"10.0.0.0/8\t1\tx\tcn2\tyes\tbackbone\n", "source"}, // 6 columns
		{"10.0.0.1/8\t1\tx\tcn2\tyes\tbackbone\ts\n", "lab.tsv:1: column \"cidr\""},
		{"# c\n10.0.0.0/8\tx\tx\tcn2\tyes\tbackbone\ts\n", "lab.tsv:2: column \"asn\""},
		{"10.0.0.0/8\t1\tx\tgold\tyes\tbackbone\ts\n", "column \"class\""},
		{"10.0.0.0/8\t1\tx\tcn2\tmaybe\tbackbone\ts\n", "column \"china\""},
		{"10.0.0.0/8\t1\tx\tcn2\tyes\tcore\ts\n", "column \"role\""},
		{"# nothing\n", "no prefix rows"},
	} {
		_, err := ParsePrefixTable("lab.tsv", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.text, err, c.want)
		}
	}
}

// A return route whose international leg is silent and whose first China
// hops are CMNET shows Unicom only at the hand-off into the destination's
// network: the long haul is unseen, so the class keeps no more than low
// confidence (issue 35). Unicom before CMNET (the long haul visible, CMNET
// delivering) and a trace leaving China after the Unicom hops keep theirs.
// Addresses from zhucaidan/mtr_trace#1 (Seattle hoster, Unicom, CMNET) and
// the Sharon Hong Kong CMNET hop; the Shanghai Unicom target from the
// PacificRack report.
func TestUnseenLongHaulLowersConfidence(t *testing.T) {
	cases := []struct {
		name       string
		trace      *Trace
		class      string
		confidence string
		note       string // "" when no unseen-long-haul note may appear
	}{
		{
			name: "silent international leg, CMNET first, Unicom at the hand-off",
			trace: mkTrace("58.247.0.49", true, "45.43.29.121", "*", "*", "*", "221.183.89.237", "221.176.22.21",
				"219.158.113.198", "219.158.35.22", "58.247.0.49"),
			class: LineCU4837, confidence: ConfidenceLow,
			note: "the first China hops are CMNET (TTL 5–6), before Unicom 4837 (TTL 7): the route entered China through China Mobile and Unicom 4837 shows only at the hand-off; the international leg (TTL 2–4 silent) and the long haul are unseen; confidence lowered from high to low",
		},
		{
			name: "Unicom long haul, then CMNET delivery",
			trace: mkTrace("120.204.197.126", true, "45.43.29.121", "*", "23.225.225.65", "219.158.116.241",
				"219.158.19.74", "219.158.113.198", "221.176.22.21", "120.204.197.126"),
			class: LineCU4837, confidence: ConfidenceHigh,
		},
		{
			name: "forward from a Mobile user out through Unicom to NTT",
			trace: mkTrace("129.250.3.237", false, "221.183.89.237", "221.176.22.21", "219.158.113.198",
				"219.158.35.22", "129.250.2.105", "129.250.3.237"),
			class: LineCU4837, confidence: ConfidenceHigh,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := Classify(c.trace, nil)
			if got != c.class || ev.Confidence != c.confidence {
				t.Fatalf("%s %s, want %s %s (rule %q, notes %q)", got, ev.Confidence, c.class, c.confidence, ev.Rule, ev.Notes)
			}
			notes := strings.Join(ev.Notes, "\n")
			if c.note != "" && !strings.Contains(notes, c.note) {
				t.Errorf("notes %q lack %q", ev.Notes, c.note)
			}
			if c.note == "" && strings.Contains(notes, "long haul are unseen") {
				t.Errorf("notes %q say the long haul is unseen", ev.Notes)
			}
			checkRuleCountsListedHops(t, ev)
		})
	}
}

package route

import (
	"net/netip"
	"strings"
	"testing"
)

func TestBundledTableParsesAndHasSources(t *testing.T) {
	entries, err := parsePrefixTable("prefixes.tsv", prefixTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 50 {
		t.Fatalf("only %d entries", len(entries))
	}
	seen := map[netip.Prefix]bool{}
	for _, e := range entries {
		if seen[e.prefix] {
			t.Errorf("%s listed twice", e.prefix)
		}
		seen[e.prefix] = true
		if strings.TrimSpace(e.carrier.Ref) == "" {
			t.Errorf("%s has no source", e.prefix)
		}
	}
}

func TestPrefixTableErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"59.43.0.0/16\t4809\tCN2\tcn2\tyes\tbackbone\n", "p.tsv:1: want 7"},
		{"# c\n59.43.0.1/16\t4809\tCN2\tcn2\tyes\tbackbone\tsrc\n", "p.tsv:2: column \"cidr\": 59.43.0.1/16 has host bits set"},
		{"59.43.0.0/16\tx\tCN2\tcn2\tyes\tbackbone\tsrc\n", `p.tsv:1: column "asn"`},
		{"59.43.0.0/16\t1\tCN2\tgold\tyes\tbackbone\tsrc\n", `p.tsv:1: column "class": unknown class "gold"`},
		{"59.43.0.0/16\t1\tCN2\tcn2\tmaybe\tbackbone\tsrc\n", `p.tsv:1: column "china"`},
		{"59.43.0.0/16\t1\tCN2\tcn2\tyes\tcore\tsrc\n", `p.tsv:1: column "role"`},
		{"59.43.0.0/33\t1\tCN2\tcn2\tyes\tbackbone\tsrc\n", `p.tsv:1: column "cidr"`},
	} {
		if _, err := parsePrefixTable("p.tsv", c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.body, err, c.want)
		}
	}
}

// The cases walk the edges of each range: CIDR matching, never string
// prefixes ("203.22" would match 203.220–229), longest prefix wins.
func TestLookupCarrierCIDR(t *testing.T) {
	cases := []struct {
		ip       string
		class    string // "" = no carrier
		asn      int
		backbone bool
	}{
		{"59.43.0.0", ClassCN2, 4809, true},
		{"59.43.255.255", ClassCN2, 4809, true},
		{"59.42.255.255", "", 0, false},
		{"59.44.0.0", "", 0, false},
		{"202.97.1.1", ClassChinaNet, 4134, true},
		{"202.96.209.133", "", 0, false}, // Shanghai Telecom DNS: not the 163 backbone
		{"219.158.113.1", ClassCU4837, 4837, true},
		{"218.105.1.1", ClassCU9929, 9929, true},
		{"210.51.1.1", ClassCU9929, 9929, true},
		{"210.78.1.1", ClassCU9929, 9929, true},
		{"210.140.1.1", "", 0, false}, // "210.14" as a string prefix would catch this
		{"162.219.39.255", ClassCUG, 10099, true},
		{"162.219.40.0", "", 0, false},
		{"61.140.1.1", "", 0, false}, // oneclickvirt's "61.14" CUG string prefix (pitfall 8)
		{"203.22.178.9", ClassCTGNet, 23764, true},
		{"203.22.180.9", "", 0, false},
		{"203.220.1.1", "", 0, false}, // "203.22" string prefix trap
		{"69.194.1.1", ClassCTGNet, 23764, true},
		{"223.120.128.0", ClassCMIN2, 58807, true},
		{"223.120.255.255", ClassCMIN2, 58807, true},
		{"223.120.127.255", ClassCMI, 58453, true}, // the /16 remainder below the CMIN2 /17
		{"223.120.19.1", ClassCMI, 58453, true},
		{"223.120.190.1", ClassCMIN2, 58807, true},
		{"223.119.8.0", ClassCMIN2, 58807, true},
		{"223.119.15.255", ClassCMIN2, 58807, true},
		{"223.119.16.0", ClassCMI, 58453, true},
		{"223.119.101.1", ClassCMI, 58453, true},
		{"223.122.0.1", "", 0, false},
		{"221.183.1.1", ClassCMNET, 9808, true},
		{"111.24.1.1", ClassCMNET, 9808, true},
		{"111.240.1.1", "", 0, false}, // "111.24" string trap: HiNet space
		{"2402:4f00:f000::1", ClassCMIN2, 58807, true},
		{"2402:4f00:efff::1", ClassCMI, 58453, true},
		{"2408:8120:1::1", ClassCU9929, 9929, true},
		{"2408:8000::1", ClassCU4837, 4837, false},
		{"240e:1::1", ClassChinaNet, 4134, false},
		{"2401:8a00::1", ClassCUG, 10099, true},
		{"2400:9380::1", ClassCTGNet, 23764, true},
		{"129.250.2.1", ClassTransit, 2914, true},
		{"154.54.42.1", ClassTransit, 174, true},
		{"62.115.1.1", ClassTransit, 1299, true},
		{"184.105.64.1", ClassTransit, 6939, true},
		{"4.69.1.1", ClassTransit, 3356, true},
		{"64.125.1.1", ClassTransit, 6461, true},
		{"::ffff:59.43.1.1", ClassCN2, 4809, true}, // IPv4-mapped
		{"10.1.1.1", "", 0, false},
		{"100.64.1.1", "", 0, false},
		{"11.1.1.1", "", 0, false},
		{"169.254.1.1", "", 0, false},
		{"fe80::1", "", 0, false},
	}
	for _, c := range cases {
		got, ok := LookupCarrier(netip.MustParseAddr(c.ip), nil)
		if ok != (c.class != "") || got.Class != c.class || got.ASN != c.asn || got.Backbone != c.backbone {
			t.Errorf("%s: got %+v ok=%v, want class %q asn %d backbone %v", c.ip, got, ok, c.class, c.asn, c.backbone)
		}
	}
	if _, ok := LookupCarrier(netip.Addr{}, nil); ok {
		t.Error("zero address found")
	}
}

func TestLookupCarrierTableBeforeDBAndSpecialRangesNeverMatch(t *testing.T) {
	db := fakeDB{
		"59.43.0.0/16":  {64512, "SOMEONE-ELSE"}, // the table must win (59.43 is not in BGP)
		"10.0.0.0/8":    {64513, "PRIVATE-IN-DB"},
		"100.64.0.0/10": {64514, "CGNAT-IN-DB"},
		"45.64.0.0/16":  {64500, "EXAMPLE-HOSTER"},
		"130.94.0.0/16": {2914, "NTT-LTD-2914"},
	}
	c, ok := LookupCarrier(netip.MustParseAddr("59.43.1.1"), db)
	if !ok || c.ASN != 4809 || c.Source != "table" {
		t.Errorf("59.43.1.1: %+v", c)
	}
	for _, ip := range []string{"10.1.1.1", "100.64.9.9"} {
		if c, ok := LookupCarrier(netip.MustParseAddr(ip), db); ok {
			t.Errorf("%s: special range gave %+v", ip, c)
		}
	}
	c, ok = LookupCarrier(netip.MustParseAddr("45.64.1.1"), db)
	if !ok || c.ASN != 64500 || c.Class != ClassOther || c.Name != "EXAMPLE-HOSTER" || c.China {
		t.Errorf("hoster: %+v", c)
	}
	c, ok = LookupCarrier(netip.MustParseAddr("130.94.1.1"), db)
	if !ok || c.Class != ClassTransit || c.Name != "NTT" {
		t.Errorf("NTT by ASN: %+v", c)
	}
}

func TestSpecialRange(t *testing.T) {
	cases := map[string]string{
		"10.0.0.1": "private", "172.31.255.255": "private", "172.32.0.1": "", "192.168.1.1": "private",
		"100.64.0.1": "cgnat", "100.127.255.255": "cgnat", "100.128.0.1": "", "11.0.0.1": "dod",
		"30.1.1.1": "dod", "215.0.0.1": "dod", "216.0.0.1": "", "169.254.0.1": "link-local",
		"fd00::1": "private", "fe80::1": "link-local", "8.8.8.8": "",
	}
	for ip, want := range cases {
		got, ok := SpecialRange(netip.MustParseAddr(ip))
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", ip, got, ok, want)
		}
	}
}

// Nested ranges are deliberate only where a carrier's sub-range is carved
// out of another's block (longest prefix wins); any other overlap is an
// editing mistake.
func TestBundledTableNestingIsDeliberate(t *testing.T) {
	allowed := map[[2]string]bool{
		{ClassCMIN2, ClassCMI}:     true, // 223.120.128/17 etc. inside 223.118–121/16, 2402:4f00:f000::/36 inside /32
		{ClassCU9929, ClassCU4837}: true, // 2408:8120::/32 inside 2408::/16
	}
	entries, _ := parsePrefixTable("prefixes.tsv", prefixTSV)
	for i, a := range entries {
		for _, b := range entries[i+1:] {
			if !a.prefix.Overlaps(b.prefix) {
				continue
			}
			// entries are sorted longest first: a is inside b.
			if !allowed[[2]string{a.carrier.Class, b.carrier.Class}] {
				t.Errorf("%s (%s) overlaps %s (%s)", a.prefix, a.carrier.Class, b.prefix, b.carrier.Class)
			}
		}
	}
}

package route

import (
	_ "embed"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/linecheck/linecheck/internal/tsv"
)

// Carrier classes (backbone tags) used in Carrier.Class.
const (
	ClassCN2      = "cn2"
	ClassChinaNet = "chinanet"
	ClassCU9929   = "cu-9929"
	ClassCU4837   = "cu-4837"
	ClassCUG      = "cu-cug"
	ClassCMIN2    = "cmin2"
	ClassCMI      = "cmi"
	ClassCMNET    = "cmnet"
	ClassCTGNet   = "ctgnet"
	ClassTransit  = "transit"
	ClassPrivate  = "private"
	// ClassOther marks an address an ASN database knows whose network is not
	// in the carrier table (a hoster, an eyeball network abroad …).
	ClassOther = "other"
)

// Carrier is what a hop address belongs to.
type Carrier struct {
	// Name is a short display name ("CN2", "ChinaNet", "NTT", or the ASN
	// database's name for networks the table does not know).
	Name string
	ASN  int
	// Class is the backbone tag: cn2, chinanet, cu-9929, cu-4837, cu-cug,
	// cmin2, cmi, cmnet, ctgnet, transit, private, other.
	Class string
	// China is true for the Chinese carriers' networks (including their
	// international arms CN2, CTGNet, CUG, CMI, CMIN2).
	China bool
	// Backbone is true when the address is a router-interface range of the
	// carrier's long-haul network in the bundled table (line evidence);
	// false for customer/access space and for ASN-database answers.
	Backbone bool
	// Source is where the answer came from: "table" (bundled prefix table,
	// with Ref naming the table's source column), "prefix-table" (the
	// operator's --prefix-table file, Ref its source column), "asn-db",
	// "dataset" (package asn) or "recording".
	Source string
	// Ref is the bundled table's source column, or the prefix for asn-db.
	Ref string
	// ASName is the AS database's name of the network (asn-db and dataset
	// answers), "" for the tables.
	ASName string
}

//go:embed data/prefixes.tsv
var prefixTSV string

type prefixEntry struct {
	prefix  netip.Prefix
	carrier Carrier
}

var (
	tableOnce sync.Once
	table     []prefixEntry // sorted by prefix length, longest first
	tableErr  error
)

// parsePrefixTable reads the bundled table format: cidr, asn, name, class,
// china (yes/no), role (backbone/edge), source; '#' comments.
func parsePrefixTable(name, text string) ([]prefixEntry, error) {
	var out []prefixEntry
	err := tsv.Each(name, text, func(f []string) error {
		if len(f) != 7 {
			return fmt.Errorf("want 7 tab-separated columns (cidr, asn, name, class, china, role, source), got %d", len(f))
		}
		p, err := netip.ParsePrefix(f[0])
		if err != nil {
			return fmt.Errorf("column \"cidr\": %w", err)
		}
		if p != p.Masked() {
			return fmt.Errorf("column \"cidr\": %s has host bits set", f[0])
		}
		asn, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("column \"asn\": %q is not a number", f[1])
		}
		if f[4] != "yes" && f[4] != "no" {
			return fmt.Errorf("column \"china\": %q is not yes/no", f[4])
		}
		if f[5] != "backbone" && f[5] != "edge" {
			return fmt.Errorf("column \"role\": %q is not backbone/edge", f[5])
		}
		if !knownClass(f[3]) {
			return fmt.Errorf("column \"class\": unknown class %q", f[3])
		}
		out = append(out, prefixEntry{prefix: p, carrier: Carrier{
			Name: f[2], ASN: asn, Class: f[3], China: f[4] == "yes",
			Backbone: f[5] == "backbone", Source: "table", Ref: f[6],
		}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].prefix.Bits() > out[b].prefix.Bits() })
	return out, nil
}

func knownClass(c string) bool {
	switch c {
	case ClassCN2, ClassChinaNet, ClassCU9929, ClassCU4837, ClassCUG, ClassCMIN2, ClassCMI,
		ClassCMNET, ClassCTGNet, ClassTransit:
		return true
	}
	return false
}

func bundledTable() []prefixEntry {
	tableOnce.Do(func() {
		table, tableErr = parsePrefixTable("internal/route/data/prefixes.tsv", prefixTSV)
	})
	if tableErr != nil {
		// The table is embedded and checked by a test; a broken build is a bug.
		panic(tableErr)
	}
	return table
}

// PrefixTable is an operator's prefix table (--prefix-table FILE) in the
// bundled table's format. It is consulted before the bundled table and before
// the special-range exclusion, so that an operator's own numbering (or a
// test lab's private ranges) can stand in for carrier ranges.
type PrefixTable struct {
	// Name is the file the table came from (for messages).
	Name    string
	entries []prefixEntry
}

// Len is the number of rows.
func (t *PrefixTable) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// ParsePrefixTable reads a table in the bundled format (tab-separated
// columns cidr, asn, name, class, china, role, source; '#' comments); errors
// name name:line and the column.
func ParsePrefixTable(name, text string) (*PrefixTable, error) {
	es, err := parsePrefixTable(name, text)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("%s: no prefix rows (want tab-separated cidr, asn, name, class, china, role, source)", name)
	}
	for i := range es {
		es[i].carrier.Source = "prefix-table"
	}
	return &PrefixTable{Name: name, entries: es}, nil
}

// LoadPrefixTable reads a --prefix-table file.
func LoadPrefixTable(path string) (*PrefixTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--prefix-table: %w", err)
	}
	return ParsePrefixTable(path, string(b))
}

// lookup looks ip up in t only (nil: no table).
func (t *PrefixTable) lookup(ip netip.Addr) (Carrier, bool) {
	if t == nil {
		return Carrier{}, false
	}
	ip = ip.Unmap()
	for _, e := range t.entries {
		if e.prefix.Contains(ip) {
			return e.carrier, true
		}
	}
	return Carrier{}, false
}

// operatorTable is the operator's prefix table db carries (Names.Table), if
// any: the table is passed with the sources it is consulted before, not
// held by the process.
func operatorTable(db ASNDB) *PrefixTable {
	if n, ok := db.(*Names); ok && n != nil {
		return n.Table
	}
	return nil
}

// TableLookup looks ip up in the operator's table op (may be nil), then the
// bundled prefix table (longest prefix in each).
func TableLookup(ip netip.Addr, op *PrefixTable) (Carrier, bool) {
	if c, ok := op.lookup(ip); ok {
		return c, true
	}
	ip = ip.Unmap()
	for _, e := range bundledTable() {
		if e.prefix.Contains(ip) {
			return e.carrier, true
		}
	}
	return Carrier{}, false
}

// specialRanges carry no carrier evidence: RFC 1918, CGNAT (RFC 6598), the
// US DoD /8s that clouds use internally (NextTrace labels the same /8s),
// benchmarking, documentation, ULA and the like. Parsed on first use: the
// init of every linecheck command, a one-shot trace included, runs
// otherwise.
var specialRanges = sync.OnceValue(func() []struct {
	p    netip.Prefix
	kind string
} {
	list := []struct{ cidr, kind string }{
		{"0.0.0.0/8", "reserved"}, {"10.0.0.0/8", "private"}, {"100.64.0.0/10", "cgnat"},
		{"127.0.0.0/8", "loopback"}, {"169.254.0.0/16", "link-local"}, {"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "reserved"}, {"192.0.2.0/24", "documentation"}, {"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"}, {"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"}, {"224.0.0.0/4", "multicast"}, {"240.0.0.0/4", "reserved"},
		{"::/128", "reserved"}, {"::1/128", "loopback"}, {"fc00::/7", "private"}, {"fe80::/10", "link-local"},
		{"ff00::/8", "multicast"}, {"2001:db8::/32", "documentation"},
	}
	for _, o := range []int{6, 7, 11, 21, 22, 26, 28, 29, 30, 33, 55, 214, 215} {
		list = append(list, struct{ cidr, kind string }{fmt.Sprintf("%d.0.0.0/8", o), "dod"})
	}
	out := make([]struct {
		p    netip.Prefix
		kind string
	}, len(list))
	for i, l := range list {
		out[i].p = netip.MustParsePrefix(l.cidr)
		out[i].kind = l.kind
	}
	return out
})

// SpecialRange reports whether ip is in a range that carries no carrier
// evidence and names it: private, cgnat, dod, link-local, loopback,
// documentation, benchmarking, multicast, reserved.
func SpecialRange(ip netip.Addr) (string, bool) {
	ip = ip.Unmap()
	for _, s := range specialRanges() {
		if s.p.Contains(ip) {
			return s.kind, true
		}
	}
	return "", false
}

// asnCarriers names the networks an ASN database answer can be mapped to.
// Metro/provincial ASNs of the Chinese carriers are their access networks.
// Made on first use (a map literal is built by package init otherwise).
var asnCarriers = sync.OnceValue(func() map[int]Carrier {
	return map[int]Carrier{
		4809:  {Name: "CN2", Class: ClassCN2, China: true},
		4134:  {Name: "ChinaNet", Class: ClassChinaNet, China: true},
		4812:  {Name: "ChinaNet Shanghai", Class: ClassChinaNet, China: true},
		4811:  {Name: "ChinaNet Shanghai", Class: ClassChinaNet, China: true},
		4813:  {Name: "ChinaNet Guangdong", Class: ClassChinaNet, China: true},
		4816:  {Name: "ChinaNet Guangdong", Class: ClassChinaNet, China: true},
		4847:  {Name: "ChinaNet CNIX", Class: ClassChinaNet, China: true},
		58466: {Name: "ChinaNet Guangzhou", Class: ClassChinaNet, China: true},
		23764: {Name: "CTGNet", Class: ClassCTGNet, China: true},
		4837:  {Name: "Unicom", Class: ClassCU4837, China: true},
		4808:  {Name: "Unicom Beijing", Class: ClassCU4837, China: true},
		17621: {Name: "Unicom Shanghai", Class: ClassCU4837, China: true},
		17816: {Name: "Unicom Guangdong", Class: ClassCU4837, China: true},
		9929:  {Name: "Unicom 9929", Class: ClassCU9929, China: true},
		10099: {Name: "Unicom CUG", Class: ClassCUG, China: true},
		58807: {Name: "CMIN2", Class: ClassCMIN2, China: true},
		58453: {Name: "CMI", Class: ClassCMI, China: true},
		9808:  {Name: "CMNET", Class: ClassCMNET, China: true},
		56040: {Name: "CMNET Guangdong", Class: ClassCMNET, China: true},
		56041: {Name: "CMNET Zhejiang", Class: ClassCMNET, China: true},
		56044: {Name: "CMNET Shanghai", Class: ClassCMNET, China: true},
		56046: {Name: "CMNET Jiangsu", Class: ClassCMNET, China: true},
		56047: {Name: "CMNET Hunan", Class: ClassCMNET, China: true},
		56048: {Name: "CMNET Beijing", Class: ClassCMNET, China: true},
		24547: {Name: "CMNET Hebei", Class: ClassCMNET, China: true},
		2914:  {Name: "NTT", Class: ClassTransit},
		174:   {Name: "Cogent", Class: ClassTransit},
		3257:  {Name: "GTT", Class: ClassTransit},
		1299:  {Name: "Arelion", Class: ClassTransit},
		3491:  {Name: "PCCW", Class: ClassTransit},
		6939:  {Name: "HE", Class: ClassTransit},
		3356:  {Name: "Lumen", Class: ClassTransit},
		6453:  {Name: "Tata", Class: ClassTransit},
		17676: {Name: "SoftBank", Class: ClassTransit},
		6461:  {Name: "Zayo", Class: ClassTransit},
		2497:  {Name: "IIJ", Class: ClassTransit},
		4637:  {Name: "Telstra", Class: ClassTransit},
		701:   {Name: "Verizon", Class: ClassTransit},
		7018:  {Name: "AT&T", Class: ClassTransit},
		6762:  {Name: "Sparkle", Class: ClassTransit},
		1273:  {Name: "Vodafone", Class: ClassTransit},
		3320:  {Name: "DTAG", Class: ClassTransit},
		9002:  {Name: "RETN", Class: ClassTransit},
		2516:  {Name: "KDDI", Class: ClassTransit},
		7473:  {Name: "Singtel", Class: ClassTransit},
		4766:  {Name: "KT", Class: ClassTransit},
		3786:  {Name: "LG U+", Class: ClassTransit},
		6830:  {Name: "Liberty Global", Class: ClassTransit},
		5511:  {Name: "Orange", Class: ClassTransit},
	}
})

// chinaAccessByName recognises the Chinese carriers' provincial and metro
// ASNs that the table does not list by the names registries give them
// (CHINANET-xx, CHINA169-xx, CNCGROUP-xx, CMNET-xx …); everything else is
// "other".
func chinaAccessByName(name string) string {
	n := strings.ToUpper(name)
	switch {
	case strings.Contains(n, "CHINANET"), strings.Contains(n, "CHINA TELECOM"), strings.Contains(n, "CHINATELECOM"):
		return ClassChinaNet
	case strings.Contains(n, "CHINA169"), strings.Contains(n, "CNCGROUP"), strings.Contains(n, "CHINA UNICOM"),
		strings.Contains(n, "CHINAUNICOM"), strings.Contains(n, "UNICOM"):
		return ClassCU4837
	case strings.Contains(n, "CMNET"), strings.Contains(n, "CHINA MOBILE"), strings.Contains(n, "CHINAMOBILE"):
		return ClassCMNET
	}
	return ClassOther
}

// CarrierForASN maps an ASN (with the database's name, used when the ASN is
// not a known carrier) to a Carrier; ok is false for ASN 0.
func CarrierForASN(asn int, name string) (Carrier, bool) {
	if asn <= 0 {
		return Carrier{}, false
	}
	c, known := asnCarriers()[asn]
	if !known {
		c = Carrier{Name: name, Class: chinaAccessByName(name)}
		c.China = c.Class != ClassOther
		if c.Name == "" {
			c.Name = "AS" + strconv.Itoa(asn)
		}
	}
	c.ASN = asn
	c.Source = "asn-db"
	return c, true
}

// LookupCarrier maps a hop address to its carrier: the operator's prefix
// table db carries (Names.Table) first, then the bundled prefix table
// (CIDR, longest prefix), then db's AS sources (db may be nil). Private, CGNAT, DoD, link-local and
// other special ranges give ok=false unless the operator's table lists them:
// they carry no evidence (use SpecialRange to label them).
func LookupCarrier(ip netip.Addr, db ASNDB) (Carrier, bool) {
	if !ip.IsValid() {
		return Carrier{}, false
	}
	ip = ip.Unmap()
	op := operatorTable(db)
	if c, ok := op.lookup(ip); ok {
		return c, true
	}
	if _, special := SpecialRange(ip); special {
		return Carrier{}, false
	}
	if c, ok := TableLookup(ip, nil); ok {
		return c, true
	}
	if db == nil {
		return Carrier{}, false
	}
	if n, isNames := db.(*Names); isNames {
		a, name, source, ok := n.lookup(ip)
		if !ok {
			return Carrier{}, false
		}
		c, ok := CarrierForASN(a, name)
		c.Source, c.ASName = source, name
		return c, ok
	}
	asn, name, ok := db.Lookup(ip)
	if !ok {
		return Carrier{}, false
	}
	c, ok := CarrierForASN(asn, name)
	c.ASName = name
	return c, ok
}

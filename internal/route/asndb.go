package route

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/linecheck/linecheck/internal/tsv"
)

// ASNDB answers IP-to-ASN questions from an offline file; it never goes to
// the network.
type ASNDB interface {
	Lookup(ip netip.Addr) (asn int, name string, ok bool)
}

// LoadASNDB opens an offline IP-to-ASN database: an iptoasn.com TSV
// (ip2asn-v4.tsv, ip2asn-v6.tsv, ip2asn-combined.tsv, optionally gzipped) or
// a MaxMind DB (.mmdb) with GeoLite2-ASN fields (autonomous_system_number,
// autonomous_system_organization) or IPinfo-style fields (asn "AS123",
// as_name/name). Errors name the file and, for TSV, the line.
func LoadASNDB(path string) (ASNDB, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("asn db: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(2)
	var r io.Reader = br
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	base := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if strings.HasSuffix(base, ".mmdb") {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return openMMDB(path, data)
	}
	return readIPToASN(path, r)
}

// ipRange is one row of an iptoasn TSV.
type ipRange struct {
	start, end netip.Addr
	asn        int
	name       string
}

// tsvDB is an iptoasn table: non-overlapping ranges sorted by start.
type tsvDB struct {
	ranges []ipRange
}

// readIPToASN parses the iptoasn.com format: range_start, range_end,
// AS_number, country_code, AS_description, tab-separated. ASN 0 rows ("Not
// routed") are kept out of the table.
func readIPToASN(name string, r io.Reader) (*tsvDB, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	db := &tsvDB{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want range_start, range_end, AS_number, country_code, AS_description (tab-separated), got %d columns", name, line, len(f))
		}
		start, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column \"range_start\": %s is not an IP address", name, line, tsv.Quote(f[0]))
		}
		end, err := netip.ParseAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: column \"range_end\": %s is not an IP address", name, line, tsv.Quote(f[1]))
		}
		start, end = start.Unmap(), end.Unmap()
		if start.Is4() != end.Is4() || end.Less(start) {
			return nil, fmt.Errorf("%s:%d: range %s–%s is not a range", name, line, f[0], f[1])
		}
		asn, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(f[2], "AS"), "as"))
		if err != nil || asn < 0 {
			return nil, fmt.Errorf("%s:%d: column \"AS_number\": %s is not a number", name, line, tsv.Quote(f[2]))
		}
		if asn == 0 {
			continue
		}
		desc := ""
		if len(f) >= 5 {
			desc = f[4]
		}
		db.ranges = append(db.ranges, ipRange{start: start, end: end, asn: asn, name: desc})
	}
	if err := sc.Err(); err != nil {
		return nil, tsv.ScanError(name, line+1, 1024*1024, err)
	}
	sort.Slice(db.ranges, func(a, b int) bool { return db.ranges[a].start.Less(db.ranges[b].start) })
	for i := 1; i < len(db.ranges); i++ {
		p, c := db.ranges[i-1], db.ranges[i]
		if p.start.Is4() == c.start.Is4() && !p.end.Less(c.start) {
			return nil, fmt.Errorf("%s: ranges %s–%s and %s–%s overlap", name, p.start, p.end, c.start, c.end)
		}
	}
	return db, nil
}

// Lookup finds the range holding ip.
func (d *tsvDB) Lookup(ip netip.Addr) (int, string, bool) {
	ip = ip.Unmap()
	// First range whose start is after ip; the candidate is the one before.
	i := sort.Search(len(d.ranges), func(i int) bool { return ip.Less(d.ranges[i].start) })
	if i == 0 {
		return 0, "", false
	}
	rg := d.ranges[i-1]
	if rg.start.Is4() != ip.Is4() || rg.end.Less(ip) {
		return 0, "", false
	}
	return rg.asn, rg.name, true
}

// mmdbDB reads ASN records from a MaxMind DB held in memory.
type mmdbDB struct {
	r *maxminddb.Reader
}

func openMMDB(name string, data []byte) (*mmdbDB, error) {
	r, err := maxminddb.OpenBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a MaxMind DB: %w", name, err)
	}
	return &mmdbDB{r: r}, nil
}

// Lookup decodes the record for ip; records without a usable ASN are misses.
func (d *mmdbDB) Lookup(ip netip.Addr) (int, string, bool) {
	res := d.r.Lookup(ip.Unmap())
	if res.Err() != nil || !res.Found() {
		return 0, "", false
	}
	var rec map[string]any
	if err := res.Decode(&rec); err != nil {
		return 0, "", false
	}
	asn, ok := mmdbASN(rec)
	if !ok || asn == 0 {
		return 0, "", false
	}
	name := ""
	for _, k := range []string{"autonomous_system_organization", "as_name", "name", "organization"} {
		if s, ok := rec[k].(string); ok && s != "" {
			name = s
			break
		}
	}
	return asn, name, true
}

func mmdbASN(rec map[string]any) (int, bool) {
	for _, k := range []string{"autonomous_system_number", "asn"} {
		switch v := rec[k].(type) {
		case uint64:
			return int(v), true
		case uint32:
			return int(v), true
		case uint16:
			return int(v), true
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case string:
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(v, "AS"), "as"))
			if err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

package asn

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Builder collects the rows of the source CSV files (AddCSV) and makes a
// Table of them. The files are those of the @ip-location-db packages:
//
//	asn-ipv4.csv, asn-ipv6.csv:                 ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization
//	asn-country-ipv4.csv, asn-country-ipv6.csv: ip_range_start,ip_range_end,country_code
//
// with inclusive ranges; a file may hold either family.
type Builder struct {
	// Trimmed lists the overlaps Table resolved, one line each.
	Trimmed []string

	asRows []asRow
	ccRows []ccRow
}

type asRow struct {
	start, end netip.Addr
	asn        uint32
	name       string
	where      string // file:line, for messages
}

type ccRow struct {
	start, end netip.Addr
	cc         string
	where      string
}

// lastByte remembers the last byte read, so that a file cut mid-row (a
// download that stopped) is told from one that ends with its last row.
type lastByte struct {
	r    io.Reader
	last byte
	n    int64
}

func (l *lastByte) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
		l.n += int64(n)
	}
	return n, err
}

// AddCSV reads one source file; name is used in messages. Each row has
// three columns (a country file) or four (an AS file); the kind is set by
// the first row. Errors name name:line and the column; a file that does not
// end with a newline is refused as cut short.
func (b *Builder) AddCSV(name string, r io.Reader) error {
	lb := &lastByte{r: r}
	cr := csv.NewReader(lb)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	kind := 0
	rows := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: %v (want ip_range_start,ip_range_end,asn,name or ip_range_start,ip_range_end,country_code)", name, pe.Line, pe.Err)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		// FieldPos panics on a record without fields; csv never returns one
		// without an error, but a message is not worth a panic.
		line := 0
		if len(rec) > 0 {
			line, _ = cr.FieldPos(0)
		}
		where := name + ":" + strconv.Itoa(line)
		if kind == 0 {
			kind = len(rec)
			if kind != 3 && kind != 4 {
				return fmt.Errorf("%s: %d columns: not an ip-location-db ASN file (want ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization) or country file (ip_range_start,ip_range_end,country_code)", where, len(rec))
			}
		}
		if len(rec) != kind {
			return fmt.Errorf("%s: %d columns, the file's first row had %d", where, len(rec), kind)
		}
		start, err := netip.ParseAddr(rec[0])
		if err != nil {
			return fmt.Errorf("%s: column \"ip_range_start\": %q is not an IP address (the -num files are not read: use asn-ipv4.csv/asn-ipv6.csv)", where, rec[0])
		}
		end, err := netip.ParseAddr(rec[1])
		if err != nil {
			return fmt.Errorf("%s: column \"ip_range_end\": %q is not an IP address", where, rec[1])
		}
		start, end = start.Unmap(), end.Unmap()
		if start.Is4() != end.Is4() || end.Less(start) || start.Zone() != "" || end.Zone() != "" {
			return fmt.Errorf("%s: %s–%s is not a range", where, rec[0], rec[1])
		}
		rows++
		if kind == 4 {
			n, err := strconv.ParseUint(strings.TrimPrefix(rec[2], "AS"), 10, 32)
			if err != nil {
				return fmt.Errorf("%s: column \"autonomous_system_number\": %q is not a number", where, rec[2])
			}
			if n == 0 {
				continue // "not routed": no AS to name
			}
			b.asRows = append(b.asRows, asRow{start: start, end: end, asn: uint32(n), name: strings.TrimSpace(rec[3]), where: where})
			continue
		}
		cc := rec[2]
		if len(cc) != 2 || cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' {
			return fmt.Errorf("%s: column \"country_code\": %q is not a two-letter ISO 3166 code", where, cc)
		}
		b.ccRows = append(b.ccRows, ccRow{start: start, end: end, cc: cc, where: where})
	}
	if rows == 0 {
		return fmt.Errorf("%s: no rows", name)
	}
	if lb.last != '\n' {
		return fmt.Errorf("%s: ends mid-row (no newline after the last row, byte %d): the file was cut short", name, lb.n)
	}
	return nil
}

// Table sorts the rows, checks that no two ranges of a kind overlap and
// makes the Table.
func (b *Builder) Table(snapshot time.Time, source string) (*Table, error) {
	if len(b.asRows) == 0 {
		return nil, errors.New("no AS rows: give asn-ipv4.csv and asn-ipv6.csv")
	}
	t := &Table{Snapshot: snapshot.UTC(), Source: source, ccs: []string{""}}
	sort.SliceStable(b.asRows, func(i, j int) bool { return b.asRows[i].start.Less(b.asRows[j].start) })
	sort.SliceStable(b.ccRows, func(i, j int) bool { return b.ccRows[i].start.Less(b.ccRows[j].start) })
	// The source has a few overlapping rows (one in the 2026-06-17 IPv4
	// file, in DoD space); the row that starts later is the more specific
	// one and wins from its start on, the earlier keeps what comes before.
	for i := 1; i < len(b.asRows); i++ {
		p, c := &b.asRows[i-1], b.asRows[i]
		if p.start.Is4() != c.start.Is4() || p.end.Less(c.start) {
			continue
		}
		if c.end.Less(p.end) || p.start == c.start {
			return nil, fmt.Errorf("%s and %s: range %s–%s holds %s–%s: not a table of disjoint ranges", p.where, c.where, p.start, p.end, c.start, c.end)
		}
		b.Trimmed = append(b.Trimmed, fmt.Sprintf("%s: %s–%s overlaps %s's %s–%s: cut to end at %s",
			p.where, p.start, p.end, c.where, c.start, c.end, c.start.Prev()))
		p.end = c.start.Prev()
	}
	for i := 1; i < len(b.ccRows); i++ {
		p, c := b.ccRows[i-1], b.ccRows[i]
		if p.start.Is4() == c.start.Is4() && !p.end.Less(c.start) {
			return nil, fmt.Errorf("%s and %s: ranges %s–%s and %s–%s overlap", p.where, c.where, p.start, p.end, c.start, c.end)
		}
	}
	// Names table sorted by (ASN, name): the encoding is the same for the
	// same data, whatever the row order.
	idx := map[AS]uint32{}
	for _, r := range b.asRows {
		idx[AS{r.asn, r.name}] = 0
	}
	for a := range idx {
		t.names = append(t.names, a)
	}
	sort.Slice(t.names, func(i, j int) bool {
		a, b := t.names[i], t.names[j]
		if a.ASN != b.ASN {
			return a.ASN < b.ASN
		}
		return a.Name < b.Name
	})
	for i, a := range t.names {
		idx[a] = uint32(i)
	}
	for _, r := range b.asRows {
		i := idx[AS{r.asn, r.name}]
		if r.start.Is4() {
			t.start4, t.end4, t.as4 = append(t.start4, v4key(r.start)), append(t.end4, v4key(r.end)), append(t.as4, i)
		} else {
			t.start6, t.end6, t.as6 = append(t.start6, v6key(r.start)), append(t.end6, v6key(r.end)), append(t.as6, i)
		}
	}
	ccIdx := map[string]uint8{}
	codes := []string{}
	for _, r := range b.ccRows {
		if _, ok := ccIdx[r.cc]; !ok {
			ccIdx[r.cc] = 0
			codes = append(codes, r.cc)
		}
	}
	if len(codes) > 255 {
		return nil, fmt.Errorf("%d country codes: more than the 255 the format holds", len(codes))
	}
	sort.Strings(codes)
	for i, c := range codes {
		ccIdx[c] = uint8(i + 1)
		t.ccs = append(t.ccs, c)
	}
	for _, r := range b.ccRows {
		if r.start.Is4() {
			t.cstart4, t.cend4, t.cc4 = append(t.cstart4, v4key(r.start)), append(t.cend4, v4key(r.end)), append(t.cc4, ccIdx[r.cc])
		} else {
			t.cstart6, t.cend6, t.cc6 = append(t.cstart6, v6key(r.start)), append(t.cend6, v6key(r.end)), append(t.cc6, ccIdx[r.cc])
		}
	}
	return t, nil
}

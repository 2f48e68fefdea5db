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
	// MaxRows bounds the rows of all files together (default MaxRows).
	MaxRows int

	files  []string
	rows   int
	asRows []asRow
	ccRows []ccRow
	// names interns the network names: a row keeps an index (a download
	// of one name repeated costs one string).
	names  []string
	nameIx map[string]uint32
}

// MaxRows is the most rows Builder takes from all files together: about
// four times the 725,348 ranges of the 2026-06-17 snapshot, so that an
// answer of endless rows is refused at about 150 MB of rows (430 MB from
// the system, TestUpdateRefusesAnExpandingAnswer) instead of
// running out of memory (issue 37).
const MaxRows = 3_000_000

// MaxLine is the longest line AddCSV reads; the source's longest is under
// 200 bytes.
const MaxLine = 4096

// A row is kept as numbers (48 bytes): the download's millions of rows are
// most of Update's memory.
type asRow struct {
	start, end u128
	asn        uint32
	name       uint32 // index into Builder.names
	line       uint32
	file       uint16
	v4         bool
}

type ccRow struct {
	start, end u128
	line       uint32
	file       uint16
	cc         [2]byte
	v4         bool
}

func (b *Builder) where(file uint16, line uint32) string {
	return b.files[file] + ":" + strconv.Itoa(int(line))
}

// key is an address as the number the lists hold.
func key(a netip.Addr) u128 {
	if a.Is4() {
		return u128{0, uint64(v4key(a))}
	}
	return v6key(a)
}

// addr is key's inverse, for messages.
func addr(k u128, v4 bool) netip.Addr {
	if v4 {
		return netip.AddrFrom4([4]byte{byte(k.lo >> 24), byte(k.lo >> 16), byte(k.lo >> 8), byte(k.lo)})
	}
	var a [16]byte
	for i := 0; i < 8; i++ {
		a[i], a[8+i] = byte(k.hi>>(56-8*i)), byte(k.lo>>(56-8*i))
	}
	return netip.AddrFrom16(a)
}

// lineReader remembers the last byte read, so that a file cut mid-row (a
// download that stopped) is told from one that ends with its last row, and
// refuses a line longer than MaxLine (an endless line would grow the CSV
// reader's buffer without bound).
type lineReader struct {
	r     io.Reader
	last  byte
	n     int64
	lines int
	run   int // bytes since the last newline
}

// errLongLine is lineReader's error; AddCSV says where.
var errLongLine = fmt.Errorf("a line longer than %d bytes", MaxLine)

func (l *lineReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.lines++
			l.run = 0
		} else if l.run++; l.run > MaxLine {
			return 0, errLongLine
		}
	}
	if n > 0 {
		l.last = p[n-1]
		l.n += int64(n)
	}
	return n, err
}

// AddCSV reads one source file; name is used in messages. Each row has
// three columns (a country file) or four (an AS file); the kind is set by
// the first row. Errors name name:line and the column; a file that does not
// end with a newline is refused as cut short, and so are a line longer than
// MaxLine and more than MaxRows rows in all.
func (b *Builder) AddCSV(name string, r io.Reader) error {
	if len(b.files) >= 1<<16 {
		return fmt.Errorf("%s: more than %d files", name, 1<<16)
	}
	maxRows := b.MaxRows
	if maxRows <= 0 {
		maxRows = MaxRows
	}
	if b.nameIx == nil {
		b.nameIx = map[string]uint32{}
	}
	file := uint16(len(b.files))
	b.files = append(b.files, name)
	lb := &lineReader{r: r}
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
		if errors.Is(err, errLongLine) {
			return fmt.Errorf("%s:%d: %w: not an ASN CSV file", name, lb.lines+1, err)
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
		where := func() string { return name + ":" + strconv.Itoa(line) }
		if kind == 0 {
			kind = len(rec)
			if kind != 3 && kind != 4 {
				return fmt.Errorf("%s: %d columns: not an ip-location-db ASN file (want ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization) or country file (ip_range_start,ip_range_end,country_code)", where(), len(rec))
			}
		}
		if len(rec) != kind {
			return fmt.Errorf("%s: %d columns, the file's first row had %d", where(), len(rec), kind)
		}
		if b.rows++; b.rows > maxRows {
			return fmt.Errorf("%s: more than %d rows in all the files: not the ASN dataset (the source has under a million)", where(), maxRows)
		}
		start, err := netip.ParseAddr(rec[0])
		if err != nil {
			return fmt.Errorf("%s: column \"ip_range_start\": %q is not an IP address (the -num files are not read: use asn-ipv4.csv/asn-ipv6.csv)", where(), rec[0])
		}
		end, err := netip.ParseAddr(rec[1])
		if err != nil {
			return fmt.Errorf("%s: column \"ip_range_end\": %q is not an IP address", where(), rec[1])
		}
		start, end = start.Unmap(), end.Unmap()
		if start.Is4() != end.Is4() || end.Less(start) || start.Zone() != "" || end.Zone() != "" {
			return fmt.Errorf("%s: %s–%s is not a range", where(), rec[0], rec[1])
		}
		rows++
		if kind == 4 {
			n, err := strconv.ParseUint(strings.TrimPrefix(rec[2], "AS"), 10, 32)
			if err != nil {
				return fmt.Errorf("%s: column \"autonomous_system_number\": %q is not a number", where(), rec[2])
			}
			if n == 0 {
				continue // "not routed": no AS to name
			}
			nm := strings.TrimSpace(rec[3])
			ix, ok := b.nameIx[nm]
			if !ok {
				ix = uint32(len(b.names))
				nm = strings.Clone(nm) // not the whole line the reader made
				b.names = append(b.names, nm)
				b.nameIx[nm] = ix
			}
			b.asRows = append(b.asRows, asRow{start: key(start), end: key(end), asn: uint32(n), name: ix,
				line: uint32(line), file: file, v4: start.Is4()})
			continue
		}
		cc := rec[2]
		if len(cc) != 2 || cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' {
			return fmt.Errorf("%s: column \"country_code\": %q is not a two-letter ISO 3166 code", where(), cc)
		}
		b.ccRows = append(b.ccRows, ccRow{start: key(start), end: key(end), cc: [2]byte{cc[0], cc[1]},
			line: uint32(line), file: file, v4: start.Is4()})
	}
	if rows == 0 {
		return fmt.Errorf("%s: no rows", name)
	}
	if lb.last != '\n' {
		return fmt.Errorf("%s: ends mid-row (no newline after the last row, byte %d): the file was cut short", name, lb.n)
	}
	return nil
}

// before orders rows IPv4 first, then by start.
func before(av4 bool, a u128, bv4 bool, b u128) bool {
	if av4 != bv4 {
		return av4
	}
	return a.less(b)
}

// Table sorts the rows, checks that no two ranges of a kind overlap and
// makes the Table.
func (b *Builder) Table(snapshot time.Time, source string) (*Table, error) {
	l, err := b.lists(snapshot, source)
	if err != nil {
		return nil, err
	}
	data, err := encodeLists(l)
	if err != nil {
		return nil, err
	}
	return openString(string(data))
}

func (b *Builder) lists(snapshot time.Time, source string) (*lists, error) {
	if len(b.asRows) == 0 {
		return nil, errors.New("no AS rows: give asn-ipv4.csv and asn-ipv6.csv")
	}
	t := &lists{snapshot: snapshot.UTC(), source: source, ccs: []string{""}}
	sort.SliceStable(b.asRows, func(i, j int) bool {
		return before(b.asRows[i].v4, b.asRows[i].start, b.asRows[j].v4, b.asRows[j].start)
	})
	sort.SliceStable(b.ccRows, func(i, j int) bool {
		return before(b.ccRows[i].v4, b.ccRows[i].start, b.ccRows[j].v4, b.ccRows[j].start)
	})
	// The source has a few overlapping rows (one in the 2026-06-17 IPv4
	// file, in DoD space); the row that starts later is the more specific
	// one and wins from its start on, the earlier keeps what comes before.
	for i := 1; i < len(b.asRows); i++ {
		p, c := &b.asRows[i-1], b.asRows[i]
		if p.v4 != c.v4 || p.end.less(c.start) {
			continue
		}
		ps, pe, cs, ce := addr(p.start, p.v4), addr(p.end, p.v4), addr(c.start, c.v4), addr(c.end, c.v4)
		if c.end.less(p.end) || p.start == c.start {
			return nil, fmt.Errorf("%s and %s: range %s–%s holds %s–%s: not a table of disjoint ranges",
				b.where(p.file, p.line), b.where(c.file, c.line), ps, pe, cs, ce)
		}
		b.Trimmed = append(b.Trimmed, fmt.Sprintf("%s: %s–%s overlaps %s's %s–%s: cut to end at %s",
			b.where(p.file, p.line), ps, pe, b.where(c.file, c.line), cs, ce, cs.Prev()))
		p.end = key(cs.Prev())
	}
	for i := 1; i < len(b.ccRows); i++ {
		p, c := b.ccRows[i-1], b.ccRows[i]
		if p.v4 == c.v4 && !p.end.less(c.start) {
			return nil, fmt.Errorf("%s and %s: ranges %s–%s and %s–%s overlap", b.where(p.file, p.line), b.where(c.file, c.line),
				addr(p.start, p.v4), addr(p.end, p.v4), addr(c.start, c.v4), addr(c.end, c.v4))
		}
	}
	// Names table sorted by (ASN, name): the encoding is the same for the
	// same data, whatever the row order.
	idx := map[AS]uint32{}
	for _, r := range b.asRows {
		idx[AS{r.asn, b.names[r.name]}] = 0
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
		i := idx[AS{r.asn, b.names[r.name]}]
		if r.v4 {
			t.start4, t.end4, t.as4 = append(t.start4, uint32(r.start.lo)), append(t.end4, uint32(r.end.lo)), append(t.as4, i)
		} else {
			t.start6, t.end6, t.as6 = append(t.start6, r.start), append(t.end6, r.end), append(t.as6, i)
		}
	}
	ccIdx := map[[2]byte]uint8{}
	var codes []string
	for _, r := range b.ccRows {
		if _, ok := ccIdx[r.cc]; !ok {
			ccIdx[r.cc] = 0
			codes = append(codes, string(r.cc[:]))
		}
	}
	if len(codes) > 255 {
		return nil, fmt.Errorf("%d country codes: more than the 255 the format holds", len(codes))
	}
	sort.Strings(codes)
	for i, c := range codes {
		ccIdx[[2]byte{c[0], c[1]}] = uint8(i + 1)
		t.ccs = append(t.ccs, c)
	}
	for _, r := range b.ccRows {
		if r.v4 {
			t.cstart4, t.cend4, t.cc4 = append(t.cstart4, uint32(r.start.lo)), append(t.cend4, uint32(r.end.lo)), append(t.cc4, ccIdx[r.cc])
		} else {
			t.cstart6, t.cend6, t.cc6 = append(t.cstart6, r.start), append(t.cend6, r.end), append(t.cc6, ccIdx[r.cc])
		}
	}
	return t, nil
}

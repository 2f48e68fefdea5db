package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// fastCase is a CSV and how to read it, for comparing parseChunk's one-pass
// row reading (fastRow) and the chunking with the general path.
type fastCase struct {
	name string
	csv  string
	opts ReadOptions
}

// fastFrom and fastTo bound the period the cases bill: two days of July, so
// that the rows a day either side (csvMargin) and beyond are all present.
const (
	fastFrom = 1782864000 // 2026-07-01T00:00:00Z
	fastTo   = fastFrom + 2*86400
)

// fastRows writes rows every 300 s from two days before the period to two
// days after it, for the interfaces named, time then interface, through
// row (which returns the line, or "" to drop it).
func fastRows(header string, ifaces []string, row func(i int, t int64, iface string) string) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	i := 0
	for t := int64(fastFrom - 2*86400); t < fastTo+2*86400; t += 300 {
		for _, ifc := range ifaces {
			if ln := row(i, t, ifc); ln != "" {
				b.WriteString(ln)
				b.WriteByte('\n')
			}
			i++
		}
	}
	return b.String()
}

func fastCases(t *testing.T) []fastCase {
	t.Helper()
	ifs := []string{"eth0", "eth1", "eth2"}
	period := ReadOptions{From: fastFrom, To: fastTo}
	plain := func(i int, t int64, ifc string) string {
		return fmt.Sprintf("%d,%s,%d,%d", t, ifc, 1000+i*7%977, 500+i%13)
	}
	// at changes row k of the plain rows (0-based, over all interfaces).
	at := func(k int, f func(t int64, ifc, ln string) string) func(int, int64, string) string {
		return func(i int, t int64, ifc string) string {
			ln := plain(i, t, ifc)
			if i == k {
				return f(t, ifc, ln)
			}
			return ln
		}
	}
	// Row indexes: the period starts at row 2·288·3 (two days of 3 interfaces).
	in := 2*288*3 + 100
	edgeLo := (2*288 - 288) * 3 // the first row of the margin before the period
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	var cases []fastCase
	add := func(name, csv string, o ReadOptions) { cases = append(cases, fastCase{name, csv, o}) }
	hdr := "timestamp,interface,in_bytes,out_bytes"
	add("plain", fastRows(hdr, ifs, plain), period)
	add("plain, no period", fastRows(hdr, ifs, plain), ReadOptions{})
	add("out of order", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,2", t-600, ifc) })), period)
	add("out of order outside the period", fastRows(hdr, ifs, at(30, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,2", t-600, ifc) })), period)
	add("duplicate", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if i == in {
			return plain(i, t-300, ifc)
		}
		return plain(i, t, ifc)
	}), period)
	add("gaps", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if i%37 == 5 || (i > in && i < in+90) {
			return ""
		}
		return plain(i, t, ifc)
	}), period)
	add("period edges", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if i >= edgeLo-3 && i < edgeLo+3 || t >= fastTo+86400-600 && t < fastTo+86400+600 {
			return fmt.Sprintf("%d,%s,%d,%d", t, ifc, 9000000000, 1)
		}
		return plain(i, t, ifc)
	}), period)
	add("mixed step", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,2", t+7, ifc) })), period)
	add("CRLF", strings.ReplaceAll(fastRows(hdr, ifs, plain), "\n", "\r\n"), period)
	add("some CRLF", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if i%5 == 0 {
			return plain(i, t, ifc) + "\r"
		}
		return plain(i, t, ifc)
	}), period)
	add("no final newline", strings.TrimSuffix(fastRows(hdr, ifs, plain), "\n"), period)
	add("CR but no final newline", strings.TrimSuffix(strings.ReplaceAll(fastRows(hdr, ifs, plain), "\n", "\r\n"), "\n"), period)
	add("stray CR", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,2\rx", t, ifc) })), period)
	add("comments and blank lines", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		switch i % 41 {
		case 3:
			return "# note\n" + plain(i, t, ifc)
		case 4:
			return "\n" + plain(i, t, ifc)
		}
		return plain(i, t, ifc)
	}), period)
	add("quoted fields", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		switch i % 11 {
		case 1:
			return fmt.Sprintf("%d,\"%s\",%d,%d", t, ifc, 1000+i, 7)
		case 2:
			return fmt.Sprintf("\"%d\",%s,%d,%d", t, ifc, 1000+i, 7)
		case 3:
			return fmt.Sprintf("%d,%s,\"%d\",%d", t, ifc, 1000+i, 7)
		}
		return plain(i, t, ifc)
	}), period)
	add("quoted comma and quote in names", fastRows(hdr, []string{`"a,b"`, `"c""d"`, "e"}, plain), period)
	for _, bare := range []string{"a,b", `c"d`} { // the name unquoted, after rows that quote it
		add("unquoted "+bare, fastRows(hdr, []string{"x", bare}, func(i int, t int64, ifc string) string {
			if ifc != "x" && i < in {
				ifc = `"` + strings.ReplaceAll(ifc, `"`, `""`) + `"`
			}
			return plain(i, t, ifc)
		}), period)
	}
	add("bare quote", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1\"0,2", t, ifc) })), period)
	add("spaces", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		switch i % 7 {
		case 1:
			return fmt.Sprintf("%d, %s,%d,%d", t, ifc, 10, 20)
		case 2:
			return fmt.Sprintf("%d,%s ,%d,%d", t, ifc, 10, 20)
		case 3:
			return fmt.Sprintf("%d,%s,%d ,\t%d", t, ifc, 10, 20)
		case 4:
			return fmt.Sprintf(" %d,%s,%d,%d", t, ifc, 10, 20)
		}
		return plain(i, t, ifc)
	}), period)
	add("value shapes", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		v := []string{"", "NaN", "U", "null", "1.5", "1e3", "123456789012345678", "1234567890123456789", "0", "007"}
		return fmt.Sprintf("%d,%s,%s,%s", t, ifc, v[i%len(v)], v[(i/3)%len(v)])
	}), period)
	for _, bad := range []string{"-1", "12,5", "x", "1e400", ""} {
		add("bad value "+bad, fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,%s,", t, ifc, bad) })), period)
	}
	add("too few fields", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1", t, ifc) })), period)
	add("too many fields", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,1,2,3", t, ifc) })), period)
	add("empty interface", fastRows(hdr, ifs, at(in, func(t int64, _, _ string) string { return fmt.Sprintf("%d,,1,2", t) })), period)
	add("new interface midway", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if i > in && ifc == "eth1" {
			ifc = "eth9"
		}
		return plain(i, t, ifc)
	}), period)
	add("interfaces in changing order", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		if (t/300)%3 == 1 {
			ifc = ifs[2-(i%3)]
		}
		return plain(i, t, ifc)
	}), period)
	add("out before in", fastRows("timestamp,interface,out_bytes,in_bytes", ifs, plain), period)
	add("bit rates", fastRows("timestamp,interface,in_bps,out_bps", ifs, plain), period)
	add("end stamps", fastRows("interval_end,interface,in_bytes,out_bytes", ifs, plain), period)
	counter := func(i int, t int64, ifc string) string {
		v := uint64(4294967295-200000) + uint64(i)*997
		return fmt.Sprintf("%d,%s,%d,%d", t, ifc, v%4294967296, v*3%4294967296)
	}
	add("counter32 wraps", fastRows(hdr, ifs, counter), ReadOptions{From: fastFrom, To: fastTo, Units: "counter32"})
	add("counter wraps", fastRows(hdr, ifs, counter), ReadOptions{From: fastFrom, To: fastTo, Units: "counter"})
	add("counter32 too large", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("%d,%s,4294967296,1", t, ifc) })), ReadOptions{From: fastFrom, To: fastTo, Units: "counter32"})
	add("counter64 big", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		v := uint64(18446744073709551615-5000000) + uint64(i)*1999
		return fmt.Sprintf("%d,%s,%d,%d", t, ifc, v, v/2)
	}), ReadOptions{From: fastFrom, To: fastTo, Units: "counter64"})
	iso := func(loc *time.Location, layout string) func(int, int64, string) string {
		return func(i int, t int64, ifc string) string {
			return fmt.Sprintf("%s,%s,%d,%d", time.Unix(t, 0).In(loc).Format(layout), ifc, 1000+i*7%977, 500+i%13)
		}
	}
	add("RFC 3339", fastRows(hdr, ifs, iso(time.UTC, time.RFC3339)), period)
	add("RFC 3339 with offset", fastRows(hdr, ifs, iso(shanghai, time.RFC3339)), period)
	add("RFC 3339 with fraction and offset", fastRows(hdr, ifs, iso(shanghai, "2006-01-02T15:04:05.000000Z07:00")), period)
	add("naive times in a zone", fastRows(hdr, ifs, iso(shanghai, "2006-01-02 15:04:05")),
		ReadOptions{From: fastFrom - 8*3600, To: fastTo - 8*3600, Loc: shanghai})
	add("fractional unix seconds", fastRows(hdr, ifs, func(i int, t int64, ifc string) string {
		return fmt.Sprintf("%d.000,%s,%d,%d", t, ifc, 1000+i*7%977, 500+i%13)
	}), period)
	add("no interface column", fastRows("timestamp,in_bytes,out_bytes", []string{""}, func(i int, t int64, _ string) string {
		return fmt.Sprintf("%d,%d,%d", t, 1000+i, 7)
	}), period)
	add("no interface column, out first", fastRows("timestamp,out_bytes,in_bytes", []string{""}, func(i int, t int64, _ string) string {
		return fmt.Sprintf("%d,%d,%d", t, 1000+i, 7+i%5)
	}), period)
	add("no interface column, values vary", fastRows("timestamp,in_bytes,out_bytes", []string{""}, func(i int, t int64, _ string) string {
		v := []string{"1", "", "2.5", " 3", "4"}
		return fmt.Sprintf("%d,%s,%s", t, v[i%len(v)], v[(i+1)%len(v)])
	}), period)
	add("timestamp with leading zeros", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("00%d,%s,1,2", t, ifc) })), period)
	add("timestamp of 13 digits", fastRows(hdr, ifs, at(in, func(t int64, ifc, _ string) string { return fmt.Sprintf("000%d,%s,1,2", t, ifc) })), period)
	add("timestamp not first", fastRows("interface,timestamp,in_bytes,out_bytes", ifs, func(i int, t int64, ifc string) string {
		return fmt.Sprintf("%s,%d,%d,%d", ifc, t, 1000+i, 7)
	}), period)
	return cases
}

// readVia reads a case through the reader path (Read) or the file path
// (ReadFile: a small file is read whole and cut in place).
func readVia(t *testing.T, c fastCase, file bool) ([]*billing.Series, error) {
	t.Helper()
	if !file {
		return Read(strings.NewReader(c.csv), "t.csv", c.opts)
	}
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(c.csv), 0o644); err != nil {
		t.Fatal(err)
	}
	ss, err := ReadFile(path, c.opts)
	for _, s := range ss {
		s.Source = "t.csv"
		for i, w := range s.Warnings {
			s.Warnings[i] = strings.ReplaceAll(w, path, "t.csv")
		}
	}
	if err != nil {
		err = fmt.Errorf("%s", strings.ReplaceAll(err.Error(), path, "t.csv"))
	}
	return ss, err
}

// The one-pass row reading and any chunking read every tricky input exactly
// as the general path with whole 4 MB chunks does: the same series, slots,
// warnings and line numbers, or the same error.
func TestCSVFastRowsEqualGeneralPath(t *testing.T) {
	defer func(size int, fast, grid bool) { csvChunkSize, csvFastRows, csvGridRows = size, fast, grid }(csvChunkSize, csvFastRows, csvGridRows)
	for _, c := range fastCases(t) {
		csvChunkSize, csvFastRows, csvGridRows = 4<<20, false, false
		want, wantErr := readVia(t, c, false)
		for _, mode := range []struct{ fast, grid bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, size := range []int{4 << 20, 4096, 333, 64} {
				for _, file := range []bool{false, true} {
					csvChunkSize, csvFastRows, csvGridRows = size, mode.fast, mode.grid
					got, err := readVia(t, c, file)
					where := fmt.Sprintf("%s (fast %v, grid %v, chunks of %d, file %v)", c.name, mode.fast, mode.grid, size, file)
					if fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Fatalf("%s: error %v, general path %v", where, err, wantErr)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: series differ from the general path's", where)
					}
				}
			}
		}
	}
}

// Independent of the general path: the plain case's period holds 576 slots
// per interface with the bytes written, and an error names its line.
func TestCSVFastRowsByHand(t *testing.T) {
	var plain, dup fastCase
	for _, c := range fastCases(t) {
		switch c.name {
		case "plain":
			plain = c
		case "duplicate":
			dup = c
		}
	}
	ss, err := Read(strings.NewReader(plain.csv), "t.csv", plain.opts)
	if err != nil || len(ss) != 3 {
		t.Fatalf("%d series, %v", len(ss), err)
	}
	for k, s := range ss {
		if len(s.Slots) != 576 {
			t.Fatalf("%s: %d slots, want 576", s.Name, len(s.Slots))
		}
		var in, out float64
		for j := range 576 {
			i := 2*288*3 + j*3 + k // the row index of slot j of interface k
			in += float64(1000 + i*7%977)
			out += float64(500 + i%13)
		}
		var gin, gout float64
		for _, sl := range s.Slots {
			gin += sl.In
			gout += sl.Out
		}
		if gin != in || gout != out {
			t.Errorf("%s: %v in, %v out; want %v, %v", s.Name, gin, gout, in, out)
		}
	}
	_, err = Read(strings.NewReader(dup.csv), "t.csv", dup.opts)
	line := 1 + 2*288*3 + 100 + 1 // header, rows before, the row itself
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("t.csv:%d: timestamp: duplicate timestamp", line)) {
		t.Errorf("duplicate: %v, want t.csv:%d: timestamp: duplicate timestamp …", err, line)
	}
	if !bytes.Contains([]byte(dup.csv), []byte("\n")) {
		t.Fatal("no rows")
	}
}

// The grid mode reads the plain exports (epoch or RFC 3339 stamps, bytes or
// bit/s, start or end stamps) without falling back to the rows, and falls
// back for what it cannot hold.
func TestCSVGridModeUsedAndStopped(t *testing.T) {
	defer func(grid bool) { csvGridRows = grid }(csvGridRows)
	csvGridRows = true
	want := map[string]bool{ // case → the grid read stops
		"plain": false, "RFC 3339": false, "RFC 3339 with offset": false, "bit rates": false, "end stamps": false,
		"CRLF": false, "quoted fields": false, "no interface column": false, "period edges": false,
		"gaps": false, "out of order": true, "duplicate": true, "mixed step": true, "value shapes": true,
	}
	for _, c := range fastCases(t) {
		stop, ok := want[c.name]
		if !ok {
			continue
		}
		before := csvGridStops.Load()
		readVia(t, c, true)
		if got := csvGridStops.Load() != before; got != stop {
			t.Errorf("%s: grid read stopped %v, want %v", c.name, got, stop)
		}
	}
}

package ingest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// detectBytes is how much of a log detect looks at.
const detectBytes = 64 << 10

// detect names the format of a traffic log from its first bytes, never from
// its file name, asking each reader's detect in rank order: JSON is told
// apart by its keys, XML by its root element, an MRTG log by its line
// shapes (3 then 5 numbers), a CSV by its header row.
func detect(head []byte, file string) (string, error) {
	s := bytes.TrimPrefix(head, []byte("\ufeff"))
	s = bytes.TrimLeft(s, " \t\r\n")
	unknown := func(format string, args ...any) error {
		return &ReadError{File: file, Line: 1, Msg: fmt.Sprintf(format, args...) +
			" (known formats: " + strings.Join(Formats, ", ") + "; force one with --input)", Err: ErrUnknownFormat}
	}
	if len(s) == 0 {
		return "", &ReadError{File: file, Line: 1, Msg: "the input is empty: no traffic data to bill", Err: ErrEmpty}
	}
	byRank := slices.Clone(readers)
	slices.SortStableFunc(byRank, func(a, b trafficReader) int { return a.rank - b.rank })
	for _, r := range byRank {
		if r.detect(s) {
			return r.name, nil
		}
	}
	switch s[0] {
	case '{':
		var js []string
		for _, r := range readers {
			if r.jsonTitle != "" {
				js = append(js, r.jsonTitle)
			}
		}
		return "", unknown("JSON that is neither %s nor %s", strings.Join(js[:len(js)-1], ", "), js[len(js)-1])
	case '<':
		if bytes.Contains(s, []byte("<vnstat")) {
			return "", unknown("vnstat XML is not read; use vnstat --json")
		}
		return "", unknown("XML that is not an rrdtool xport")
	}
	return "", unknown("not a recognised traffic log")
}

// jsonWith tells whether s is a JSON object holding any of keys (quoted).
func jsonWith(s []byte, keys ...string) bool {
	if s[0] != '{' {
		return false
	}
	for _, k := range keys {
		if bytes.Contains(s, []byte(k)) {
			return true
		}
	}
	return false
}

// binaryHead says what a log's first bytes are when they are not text at
// all ("" when they may be): the databases users hand over instead of their
// exports (vnstat's SQLite file, an .rrd, a gzip'd log), or other binary
// data. A text log never holds a NUL byte.
func binaryHead(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return "a SQLite database (vnstat's vnstat.db?), not a traffic log: export it first, vnstat --json -i IFACE > IFACE.json (all its resolutions: 5-minute entries cover 48 h by default), and bill that"
	case bytes.HasPrefix(head, []byte("RRD\x00")):
		// --step 300 alone is not enough: xport also fits the range into
		// --maxrows (400 by default), so a month comes out as 2-hour rows.
		return "an rrdtool database (.rrd), not a traffic log: export it first, rrdtool xport --showtime --step 300 --maxrows 9000 --start START --end END " +
			"DEF:in=FILE.rrd:ds0:AVERAGE DEF:out=FILE.rrd:ds1:AVERAGE XPORT:in:in XPORT:out:out > FILE.xml (MRTG's .rrd names its sources ds0, ds1; " +
			"5-minute rows need an archive of one step per row that holds the period, see rrdtool info FILE.rrd), and bill that"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip-compressed: gunzip it first (a rotated log such as mrtg.log.1.gz), and bill the text"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}) || bytes.HasPrefix(head, []byte("BZh")) && len(head) > 3 && head[3] >= '1' && head[3] <= '9' ||
		bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "compressed (zstd, bzip2 or xz): decompress it first, and bill the text"
	case bytes.IndexByte(head[:min(len(head), 8<<10)], 0) >= 0:
		return "binary data, not a text traffic log (MRTG log, vnstat --json, rrdtool xport, Prometheus JSON or CSV)"
	}
	return ""
}

// firstLines returns up to n non-empty, non-comment lines.
func firstLines(s []byte, n int) [][]byte {
	var out [][]byte
	for len(s) > 0 && len(out) < n {
		var l []byte
		if i := bytes.IndexByte(s, '\n'); i >= 0 {
			l, s = s[:i], s[i+1:]
		} else {
			l, s = s, nil
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			out = append(out, l)
		}
	}
	return out
}

// numericFields counts the space-separated fields of a line if all are
// unsigned integers, else returns -1.
func numericFields(l []byte) int {
	f := bytes.Fields(l)
	for _, x := range f {
		for _, c := range x {
			if c < '0' || c > '9' {
				return -1
			}
		}
	}
	return len(f)
}

package ingest

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Hand-rolled parsers for the CSV hot path: no allocations for the common
// shapes (unix seconds, RFC 3339, plain integers); anything else falls back
// to strconv/time.

// parseStamp parses unix seconds (fraction dropped) or RFC 3339 / ISO 8601
// ("2026-06-01T00:00:00Z", "+08:00", fraction, or a space instead of T). A
// time without a zone is read in loc. It returns "" or what is wrong.
func parseStamp(b []byte, loc *time.Location) (int64, string) {
	if len(b) == 0 {
		return 0, "empty timestamp"
	}
	if b[0] >= '0' && b[0] <= '9' && (len(b) < 5 || b[4] != '-') {
		return parseUnix(b)
	}
	return parseISO(b, loc)
}

func parseUnix(b []byte) (int64, string) {
	var t int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i >= 12 {
			return 0, "timestamp " + quoteShort(b) + " is out of range"
		}
		t = t*10 + int64(b[i]-'0')
	}
	if i < len(b) {
		if b[i] != '.' || i+1 == len(b) {
			return 0, "timestamp " + quoteShort(b) + " is neither unix seconds nor RFC 3339"
		}
		for _, c := range b[i+1:] {
			if c < '0' || c > '9' {
				return 0, "timestamp " + quoteShort(b) + " is neither unix seconds nor RFC 3339"
			}
		}
	}
	return t, ""
}

func digits(b []byte, n int) (int, bool) {
	v := 0
	for _, c := range b[:n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d (proleptic
// Gregorian), H. Hinnant's algorithm.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func parseISO(b []byte, loc *time.Location) (int64, string) {
	bad := func() (int64, string) {
		return 0, "timestamp " + quoteShort(b) + " is neither unix seconds nor RFC 3339"
	}
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return bad()
	}
	y, ok1 := digits(b[0:], 4)
	mo, ok2 := digits(b[5:], 2)
	d, ok3 := digits(b[8:], 2)
	h, ok4 := digits(b[11:], 2)
	mi, ok5 := digits(b[14:], 2)
	s, ok6 := digits(b[17:], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return bad()
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59 {
		return 0, "timestamp " + quoteShort(b) + " is not a valid date and time"
	}
	rest := b[19:]
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return bad()
		}
		rest = rest[i:]
	}
	secs := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+s)
	switch {
	case len(rest) == 0:
		if loc == nil || loc == time.UTC {
			return secs, ""
		}
		return time.Date(y, time.Month(mo), d, h, mi, s, 0, loc).Unix(), ""
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		return secs, ""
	case rest[0] == '+' || rest[0] == '-':
		var oh, om int
		var ok bool
		switch {
		case len(rest) == 6 && rest[3] == ':':
			oh, ok = digits(rest[1:], 2)
			if ok {
				om, ok = digits(rest[4:], 2)
			}
		case len(rest) == 5:
			oh, ok = digits(rest[1:], 2)
			if ok {
				om, ok = digits(rest[3:], 2)
			}
		case len(rest) == 3:
			oh, ok = digits(rest[1:], 2)
		}
		if !ok || oh > 23 || om > 59 {
			return bad()
		}
		off := int64(oh*3600 + om*60)
		if rest[0] == '+' {
			return secs - off, ""
		}
		return secs + off, ""
	}
	return bad()
}

// isUnknown reports the spellings of a missing value: empty, NaN (rrdtool,
// pandas), null, U (rrdtool update).
func isUnknown(b []byte) bool {
	switch len(b) {
	case 0:
		return true
	case 1:
		return b[0] == 'U'
	case 3:
		return bytes.EqualFold(b, []byte("nan"))
	case 4:
		return bytes.EqualFold(b, []byte("null"))
	}
	return false
}

// parseValue parses a non-negative finite number; unknown reports a gap.
func parseValue(b []byte) (v float64, unknown bool, msg string) {
	if isUnknown(b) {
		return 0, true, ""
	}
	if len(b) <= 18 {
		var n int64
		i := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			n = n*10 + int64(b[i]-'0')
		}
		if i == len(b) {
			return float64(n), false, ""
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && !isRange(err):
		return 0, false, quoteShort(b) + " is not a number"
	case math.IsInf(f, 0) || math.IsNaN(f) || err != nil:
		return 0, false, quoteShort(b) + " is not a finite number"
	case f < 0:
		return 0, false, quoteShort(b) + " is negative"
	}
	return f, false, ""
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseCounter parses an octet counter reading (an unsigned integer of at
// most 64 bits, or 32 when bits is 32).
func parseCounter(b []byte, bits int) (v uint64, unknown bool, msg string) {
	if isUnknown(b) {
		return 0, true, ""
	}
	if len(b) > 0 && len(b) <= 19 {
		var n uint64
		i := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			n = n*10 + uint64(b[i]-'0')
		}
		if i == len(b) && (bits != 32 || n <= math.MaxUint32) {
			return n, false, ""
		}
	}
	u, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		if len(b) > 0 && b[0] == '-' {
			return 0, false, quoteShort(b) + " is negative"
		}
		if isRange(err) {
			return 0, false, quoteShort(b) + " is larger than a 64-bit counter"
		}
		return 0, false, quoteShort(b) + " is not a counter (an unsigned integer)"
	}
	if bits == 32 && u > math.MaxUint32 {
		return 0, false, quoteShort(b) + " is larger than a 32-bit counter"
	}
	return u, false, ""
}

// quoteShort quotes an input value for a message, cut to 40 bytes.
func quoteShort(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "…"
	}
	return strconv.Quote(string(b))
}

// plainOrQuoted shows s as it is when it is short, printable text, and
// quoted and cut (quoteShort) otherwise, so that a stray binary header
// cannot garble the terminal.
func plainOrQuoted(s string) string {
	if len(s) <= 200 && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return s
	}
	return quoteShort([]byte(s))
}

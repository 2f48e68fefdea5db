package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
)

// FormatJSON is the document's JSON value, indented.
const FormatJSON Format = "json"

var jsonFormat = formatSpec{
	name:        FormatJSON,
	contentType: "application/json",
	every:       true,
	render:      func(w io.Writer, doc Document, _ Options) error { return WriteJSON(w, doc.JSON()) },
}

// WriteJSON writes v as indented JSON followed by a newline. Fractional
// numbers are written to 12 significant digits, so that the noise of binary
// floating point (0.0020152499999999997) does not reach the reader: no
// figure linecheck measures or computes is that precise. Exact amounts are
// strings and stay as they are.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(CleanFloats(b.Bytes()))
	return err
}

// CleanFloats rewrites every fractional number literal of the JSON text b
// to at most 12 significant digits, in the form encoding/json writes
// floats; integers, strings and layout are left alone.
func CleanFloats(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		if c != '-' && (c < '0' || c > '9') {
			out = append(out, c)
			continue
		}
		j := i
		for j < len(b) && strings.IndexByte("+-0123456789.eE", b[j]) >= 0 {
			j++
		}
		lit := b[i:j]
		i = j - 1
		if !bytes.ContainsAny(lit, ".eE") {
			out = append(out, lit...)
			continue
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			out = append(out, lit...)
			continue
		}
		f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 12, 64), 64)
		out = append(out, jsonFloat(f)...)
	}
	return out
}

// jsonFloat formats f as encoding/json does (ES6 number formatting).
func jsonFloat(f float64) string {
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	s := strconv.FormatFloat(f, fmtc, -1, 64)
	if fmtc == 'e' {
		// clean up e-09 to e-9
		n := len(s)
		if n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
	}
	return s
}

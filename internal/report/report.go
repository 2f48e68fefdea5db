// Package report renders the documents of every command in the formats the
// CLI offers: table (aligned text for a terminal), csv, markdown and json,
// and html for compare. Each command's result is a Document (it knows its
// tables and its JSON value) and Render writes it in a Format: the choice
// of format is made once, here (render.go).
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
)

// Table is a titled grid of cells. Align holds 'l' or 'r' per column (default 'l').
type Table struct {
	// Name is what --table NAME selects among a command's CSV tables.
	Name    string
	Title   string
	Headers []string
	Align   string
	Rows    [][]string
	// Notes are printed under the table (table and markdown only).
	Notes []string
	// Movable names the columns (by header) that move to a detail block
	// under the table, in this order, when the table is wider than
	// Options.Width; further columns move from the right if that is not
	// enough. The first column always stays: it names the row.
	Movable []string
	// HideEmpty leaves out the header line of a text table without rows.
	HideEmpty bool
	// Bare leaves out the header line of a text table: a list of names,
	// one per line (ping -a).
	Bare bool
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

// Options tune the text rendering of WriteWith.
type Options struct {
	// Width is the widest line a text table may print (0: no limit):
	// titles and notes wrap at word boundaries, columns that do not fit move
	// to a detail block under the table (see Table.Movable).
	Width int
	// Wide keeps every column on one line whatever Width says (--wide).
	Wide bool
	// Table names the one CSV table to write (--table) of a document that
	// chooses (CSVChooser); "" is its first.
	Table string
}

// DefaultWidth is the width tables fit when the terminal's is not known.
const DefaultWidth = 120

// Write renders tables in format (table, csv or markdown) without a width
// limit. For csv several tables are separated by an empty line, each with
// its header row.
func Write(w io.Writer, format Format, tables ...Table) error {
	return WriteWith(w, format, Options{}, tables...)
}

// WriteWith is Write with options for the text format.
func WriteWith(w io.Writer, format Format, o Options, tables ...Table) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		var err error
		switch format {
		case FormatTable:
			if o.Width > 0 && !o.Wide {
				err = writeFitted(w, t, o.Width)
			} else {
				err = writeText(w, t)
			}
		case FormatCSV:
			err = writeCSV(w, t)
		case FormatMarkdown:
			err = writeMarkdown(w, t)
		default:
			err = fmt.Errorf("report: format %q cannot render tables", format)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Pick returns the table named name, or the first one when name is empty;
// the error names the tables there are.
func Pick(tables []Table, name string) (Table, error) {
	if len(tables) == 0 {
		return Table{}, fmt.Errorf("no table to write")
	}
	if name == "" {
		return tables[0], nil
	}
	var names []string
	for _, t := range tables {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Table{}, fmt.Errorf("--table %q: use one of %s", name, strings.Join(names, ", "))
}

// Width is the number of terminal columns s takes: East Asian wide runes
// (香港, 東京) take two, combining marks none — counting runes shifted every
// column right of a CJK name by one per character.
func Width(s string) int { return lipgloss.Width(s) }

func width(s string) int { return Width(s) }

func (t Table) align(i int) byte {
	if i < len(t.Align) {
		return t.Align[i]
	}
	return 'l'
}

func writeText(w io.Writer, t Table) error {
	widths := make([]int, len(t.Headers))
	for i, h := range t.Headers {
		widths[i] = width(h)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(widths) && width(c) > widths[i] {
				widths[i] = width(c)
			}
		}
	}
	var out strings.Builder
	if t.Title != "" {
		out.WriteString(t.Title + "\n")
	}
	line := func(cells []string) {
		var b strings.Builder
		defer func() {
			// No trailing blanks when the last cells are empty.
			out.WriteString(strings.TrimRight(b.String(), " ") + "\n")
		}()
		for i := range t.Headers {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", widths[i]-width(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.align(i) == 'r' {
				b.WriteString(pad + c)
			} else if i == len(t.Headers)-1 {
				b.WriteString(c)
			} else {
				b.WriteString(c + pad)
			}
		}
	}
	// A table whose rows are all left out (ping -q over a CIDR) prints
	// no header: only its title and notes.
	if len(t.Headers) > 0 && !t.Bare && (len(t.Rows) > 0 || !t.HideEmpty) {
		line(t.Headers)
	}
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		out.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func writeCSV(w io.Writer, t Table) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Headers); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func writeMarkdown(w io.Writer, t Table) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("### " + t.Title + "\n\n")
	}
	b.WriteString("|")
	for _, h := range t.Headers {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Headers {
		if t.align(i) == 'r' {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for i := range t.Headers {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString(n + "\n\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Package report renders the documents of every command in the formats the
// CLI offers: table (aligned text for a terminal), csv, markdown and json.
// Commands build a Table (or several) from their result and a JSON value;
// the choice of format is made once, here.
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"
)

// Formats every report-producing command accepts (compare adds html).
var Formats = []string{"table", "json", "csv", "markdown"}

// CheckFormat returns an error naming the allowed formats when f is not one of them.
func CheckFormat(f string, allowed ...string) error {
	if len(allowed) == 0 {
		allowed = Formats
	}
	for _, a := range allowed {
		if f == a {
			return nil
		}
	}
	return fmt.Errorf("--format %q: use one of %s", f, strings.Join(allowed, ", "))
}

// Table is a titled grid of cells. Align holds 'l' or 'r' per column (default 'l').
type Table struct {
	Title   string
	Headers []string
	Align   string
	Rows    [][]string
	// Notes are printed under the table (table and markdown only).
	Notes []string
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Write renders tables in format (table, csv or markdown). For csv several
// tables are separated by an empty line, each with its header row.
func Write(w io.Writer, format string, tables ...Table) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		var err error
		switch format {
		case "table":
			err = writeText(w, t)
		case "csv":
			err = writeCSV(w, t)
		case "markdown":
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

// width is the number of terminal columns s takes: East Asian wide runes
// (香港, 東京) take two, combining marks none — counting runes shifted every
// column right of a CJK name by one per character.
func width(s string) int { return lipgloss.Width(s) }

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
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	line := func(cells []string) {
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
		b.WriteString("\n")
	}
	line(t.Headers)
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
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

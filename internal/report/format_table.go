package report

import (
	"io"
	"strings"
)

// FormatTable is aligned text for a person at a terminal.
const FormatTable Format = "table"

var tableFormat = formatSpec{
	name:        FormatTable,
	contentType: "text/plain; charset=utf-8",
	every:       true,
	terminal:    true,
	table: func(w io.Writer, t Table, o Options) error {
		if o.Width > 0 && !o.Wide {
			return writeFitted(w, t, o.Width)
		}
		return writeText(w, t)
	},
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

package report

import (
	"fmt"
	"io"
	"strings"
)

// Format is an output format of the CLI's documents.
type Format string

// The formats. Every document renders as table, json, csv and markdown;
// compare's also as html.
const (
	// FormatTable is aligned text for a person at a terminal.
	FormatTable Format = "table"
	// FormatJSON is the document's JSON value, indented.
	FormatJSON Format = "json"
	// FormatCSV is one table (or every table, for documents that have no
	// choice) in machine form: full-precision figures in base units.
	FormatCSV Format = "csv"
	// FormatMarkdown is the text tables as GitHub-flavoured Markdown.
	FormatMarkdown Format = "markdown"
	// FormatHTML is a standalone page (compare only).
	FormatHTML Format = "html"
)

// Formats are the formats every document renders in.
var Formats = []Format{FormatTable, FormatJSON, FormatCSV, FormatMarkdown}

// ParseFormat returns the format named s when it is one of allowed
// (Formats when none is given), else an error naming them.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	if len(allowed) == 0 {
		allowed = Formats
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if string(a) == s {
			return a, nil
		}
		names[i] = string(a)
	}
	return "", fmt.Errorf("--format %q: use one of %s", s, strings.Join(names, ", "))
}

// CheckFormat returns an error naming the allowed formats when s is not
// one of them (Formats when none is given).
func CheckFormat(s string, allowed ...Format) error {
	_, err := ParseFormat(s, allowed...)
	return err
}

// String is the format's name, as --format takes it.
func (f Format) String() string { return string(f) }

// ForTerminal reports whether f is the aligned text meant for a person
// reading a terminal (not a file format): what is only worth doing for one
// (reverse-DNS names, a TUI, a names-only list) asks this.
func (f Format) ForTerminal() bool { return f == FormatTable }

// ChoosesTable reports whether f writes one table chosen by --table.
func (f Format) ChoosesTable() bool { return f == FormatCSV }

// CheckTableFlag refuses --table beside a format that is not csv; names
// are the command's CSV tables, listed in the message when given.
func CheckTableFlag(f Format, given bool, names ...string) error {
	if !given || f.ChoosesTable() {
		return nil
	}
	if len(names) > 0 {
		return fmt.Errorf("--table chooses the CSV table to write (%s): add --format csv", strings.Join(names, ", "))
	}
	return fmt.Errorf("--table chooses the CSV table to write: add --format csv")
}

// Document is one command's result, ready to render: it knows its tables
// in each text format and the value its JSON is.
type Document interface {
	// Tables are the document's tables in f (table, csv or markdown).
	Tables(f Format) []Table
	// JSON is the value --format json writes.
	JSON() any
}

// CSVChooser is a document whose CSV output is one of its tables, chosen
// by name (--table NAME, "" for its first); the CSV of other documents is
// every table, each with its header row, an empty line between.
type CSVChooser interface {
	CSVTable(name string) (Table, error)
}

// Preamble is a document with text ahead of its tables (compare's header:
// what was compared, on which traffic), fitted to o.Width in table format.
type Preamble interface {
	Preamble(f Format, o Options) string
}

// HTMLPage is a document that also renders as a standalone HTML page.
type HTMLPage interface {
	WriteHTML(w io.Writer) error
}

// Render writes doc to w in format f: its JSON value, its HTML page, or
// its tables (for csv the one o.Table names when doc chooses, see
// CSVChooser); o tunes the text format.
func Render(w io.Writer, doc Document, f Format, o Options) error {
	switch f {
	case FormatJSON:
		return WriteJSON(w, doc.JSON())
	case FormatHTML:
		p, ok := doc.(HTMLPage)
		if !ok {
			return fmt.Errorf("report: this document has no html form: use %s", strings.Join(formatNames(Formats), ", "))
		}
		return p.WriteHTML(w)
	case FormatCSV:
		if c, ok := doc.(CSVChooser); ok {
			t, err := c.CSVTable(o.Table)
			if err != nil {
				return err
			}
			return WriteWith(w, f, o, t)
		}
	case FormatTable, FormatMarkdown:
	default:
		return fmt.Errorf("report: unknown format %q", f)
	}
	if p, ok := doc.(Preamble); ok {
		if _, err := io.WriteString(w, p.Preamble(f, o)); err != nil {
			return err
		}
	}
	return WriteWith(w, f, o, doc.Tables(f)...)
}

func formatNames(fs []Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

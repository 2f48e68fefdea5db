package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format is an output format of the CLI's documents.
type Format string

// formatSpec is one output format: each is one file, format_<name>.go,
// and one line of formats below. A format either renders whole documents
// itself (render: json, html) or writes tables (table: text, csv,
// markdown), which Render fills with the document's tables.
type formatSpec struct {
	name Format
	// contentType is the HTTP Content-Type of the format (serve's /compare).
	contentType string
	// every is true when every document renders in the format; false for
	// a format only some documents have (html: compare's page).
	every bool
	// render writes doc whole; nil for a table format.
	render func(w io.Writer, doc Document, o Options) error
	// table writes one table; nil for a format that renders documents whole.
	table func(w io.Writer, t Table, o Options) error
	// terminal: aligned text for a person at a terminal (Format.ForTerminal).
	terminal bool
	// machine: cells in machine form, full-precision figures in base units
	// and no notes (Format.Machine).
	machine bool
	// chooses: writes the one table --table names (Format.ChoosesTable).
	chooses bool
}

// formats are the output formats, in the order help texts and error
// messages list them. A new format is its file and its line here.
var formats = []formatSpec{
	tableFormat,
	jsonFormat,
	csvFormat,
	markdownFormat,
	htmlFormat,
}

// errNoForm is what a format's render returns for a document it has no
// form of (html for all but compare's); Render names the formats there are.
var errNoForm = errors.New("no form in this format")

// formatOf is the format named f.
func formatOf(f Format) (formatSpec, bool) {
	for _, s := range formats {
		if s.name == f {
			return s, true
		}
	}
	return formatSpec{}, false
}

// formatsWhere lists the formats that satisfy keep, in table order.
func formatsWhere(keep func(formatSpec) bool) []Format {
	var out []Format
	for _, s := range formats {
		if keep(s) {
			out = append(out, s.name)
		}
	}
	return out
}

// Formats are the formats every document renders in (table, json, csv
// and markdown).
var Formats = formatsWhere(func(s formatSpec) bool { return s.every })

// FormatList names the formats for a --format help text: "table, json, csv
// or markdown" (Formats when none is given).
func FormatList(allowed ...Format) string {
	if len(allowed) == 0 {
		allowed = Formats
	}
	n := formatNames(allowed)
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

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
func (f Format) ForTerminal() bool { s, _ := formatOf(f); return s.terminal }

// ChoosesTable reports whether f writes one table chosen by --table.
func (f Format) ChoosesTable() bool { s, _ := formatOf(f); return s.chooses }

// Machine reports whether f writes cells in machine form: full-precision
// figures in base units, loss as a fraction, no notes (csv).
func (f Format) Machine() bool { s, _ := formatOf(f); return s.machine }

// ContentType is f's HTTP Content-Type.
func (f Format) ContentType() string {
	if s, ok := formatOf(f); ok && s.contentType != "" {
		return s.contentType
	}
	return "text/plain; charset=utf-8"
}

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

// Render writes doc to w in format f: its JSON value, its HTML page, or
// its tables (for csv the one o.Table names when doc chooses, see
// CSVChooser); o tunes the text format.
func Render(w io.Writer, doc Document, f Format, o Options) error {
	spec, ok := formatOf(f)
	if !ok {
		return fmt.Errorf("report: unknown format %q", f)
	}
	if spec.render != nil {
		err := spec.render(w, doc, o)
		if errors.Is(err, errNoForm) {
			return fmt.Errorf("report: this document has no %s form: use %s", f, strings.Join(formatNames(Formats), ", "))
		}
		return err
	}
	if c, ok := doc.(CSVChooser); ok && spec.chooses {
		t, err := c.CSVTable(o.Table)
		if err != nil {
			return err
		}
		return WriteWith(w, f, o, t)
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

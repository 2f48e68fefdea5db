// Package report renders the documents of every command in the formats the
// CLI offers: table (aligned text for a terminal), csv, markdown and json,
// and html for compare. Each command's result is a Document (it knows its
// tables and its JSON value) and Render writes it in a Format: the choice
// of format is made once, here (render.go). Each format is one file,
// format_<name>.go, listed once in render.go's table of formats.
package report

import (
	"fmt"
	"io"
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
		spec, ok := formatOf(format)
		if !ok || spec.table == nil {
			return fmt.Errorf("report: format %q cannot render tables", format)
		}
		err := spec.table(w, t, o)
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

package report

import (
	"encoding/csv"
	"io"
)

// FormatCSV is one table (or every table, for documents that have no
// choice) in machine form: full-precision figures in base units.
const FormatCSV Format = "csv"

var csvFormat = formatSpec{
	name:        FormatCSV,
	contentType: "text/plain; charset=utf-8",
	every:       true,
	machine:     true,
	chooses:     true,
	table:       func(w io.Writer, t Table, _ Options) error { return writeCSV(w, t) },
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

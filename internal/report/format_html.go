package report

import "io"

// FormatHTML is a standalone page (compare only).
const FormatHTML Format = "html"

// HTMLPage is a document that also renders as a standalone HTML page.
type HTMLPage interface {
	WriteHTML(w io.Writer) error
}

var htmlFormat = formatSpec{
	name:        FormatHTML,
	contentType: "text/html; charset=utf-8",
	render: func(w io.Writer, doc Document, _ Options) error {
		p, ok := doc.(HTMLPage)
		if !ok {
			return errNoForm
		}
		return p.WriteHTML(w)
	},
}

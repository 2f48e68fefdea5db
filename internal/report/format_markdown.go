package report

import (
	"io"
	"strings"
)

// FormatMarkdown is the text tables as GitHub-flavoured Markdown.
const FormatMarkdown Format = "markdown"

var markdownFormat = formatSpec{
	name:        FormatMarkdown,
	contentType: "text/plain; charset=utf-8",
	every:       true,
	table:       func(w io.Writer, t Table, _ Options) error { return writeMarkdown(w, t) },
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

package trial

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
)

// Verdict is the trial's verdict over its parts: fail when any part
// failed, pass when every checked part passed, and "incomplete" for a
// trial stopped before its end.
func (m *Manifest) Verdict() string {
	for _, p := range m.Parts {
		if p.Status == StatusFail || p.Status == StatusError {
			return StatusFail
		}
	}
	if !m.Complete {
		return "incomplete"
	}
	return StatusPass
}

// summaries are the summary files, one per format.
var summaries = []struct {
	file   string
	render func(*Manifest) ([]byte, error)
}{
	{"summary.txt", summaryText},
	{"summary.md", summaryMarkdown},
	{"summary.json", summaryJSON},
	{"summary.html", summaryHTML},
}

func state(m *Manifest) string {
	switch {
	case m.Interrupted:
		return "interrupted (Ctrl-C): the parts below are what ran"
	case !m.Complete:
		return "running"
	}
	return "complete"
}

func summaryText(m *Manifest) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "linecheck trial on %s (%s), %s to %s UTC: %s\n", m.Host.Hostname, m.Host.Form,
		m.Started.Format("2006-01-02 15:04:05"), m.Ended.Format("2006-01-02 15:04:05"), state(m))
	fmt.Fprintf(&b, "verdict: %s\n\n", m.Verdict())
	for _, p := range m.Parts {
		fmt.Fprintf(&b, "%-10s %s", p.Name, p.Status)
		if p.Reason != "" {
			fmt.Fprintf(&b, ": %s", p.Reason)
		}
		b.WriteByte('\n')
		for _, l := range p.Lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.Bytes(), nil
}

func summaryMarkdown(m *Manifest) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# linecheck trial on %s\n\n", mdEscape(m.Host.Hostname))
	fmt.Fprintf(&b, "%s (%s) to %s UTC, %s. Verdict: **%s**.\n\n", m.Started.Format("2006-01-02 15:04:05"), mdEscape(m.Host.Form),
		m.Ended.Format("2006-01-02 15:04:05"), state(m), m.Verdict())
	b.WriteString("| part | status | reason |\n|---|---|---|\n")
	for _, p := range m.Parts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Name, p.Status, mdEscape(p.Reason))
	}
	for _, p := range m.Parts {
		if len(p.Lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", p.Name)
		for _, l := range p.Lines {
			fmt.Fprintf(&b, "- %s\n", mdEscape(l))
		}
	}
	return b.Bytes(), nil
}

func mdEscape(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

func summaryJSON(m *Manifest) ([]byte, error) {
	v := struct {
		Schema      string   `json:"schema"`
		Verdict     string   `json:"verdict"`
		Complete    bool     `json:"complete"`
		Interrupted bool     `json:"interrupted"`
		Host        Identity `json:"host"`
		Started     string   `json:"started"`
		Ended       string   `json:"ended"`
		Parts       []Part   `json:"parts"`
	}{Schema + "#summary", m.Verdict(), m.Complete, m.Interrupted, m.Host, m.Started.Format("2006-01-02T15:04:05Z"), m.Ended.Format("2006-01-02T15:04:05Z"), m.Parts}
	data, err := json.MarshalIndent(v, "", "  ")
	return append(data, '\n'), err
}

var htmlPage = template.Must(template.New("summary").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>linecheck trial on {{.M.Host.Hostname}}</title>
<style>body{font-family:sans-serif;margin:2em}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}table{border-collapse:collapse}.fail{color:#b00}.pass{color:#070}</style>
</head><body>
<h1>linecheck trial on {{.M.Host.Hostname}}</h1>
<p>{{.Start}} to {{.End}} UTC, {{.State}}. Form: {{.M.Host.Form}}. Verdict: <strong class="{{.M.Verdict}}">{{.M.Verdict}}</strong>.</p>
<table><tr><th>part</th><th>status</th><th>reason</th></tr>
{{range .M.Parts}}<tr><td>{{.Name}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>
{{range .M.Parts}}{{if .Lines}}<h2>{{.Name}}</h2><ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}</body></html>
`))

func summaryHTML(m *Manifest) ([]byte, error) {
	var b bytes.Buffer
	err := htmlPage.Execute(&b, struct {
		M                 *Manifest
		Start, End, State string
	}{m, m.Started.Format("2006-01-02 15:04:05"), m.Ended.Format("2006-01-02 15:04:05"), state(m)})
	return b.Bytes(), err
}

package report

import (
	"bytes"
	"encoding/csv"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// withFormat adds s to the formats for the rest of the test only.
func withFormat(t *testing.T, s formatSpec) {
	t.Helper()
	saved := formats
	t.Cleanup(func() { formats = saved })
	formats = append(append([]formatSpec(nil), formats...), s)
}

// A format added as one entry (its writer and its properties) renders
// every document through Render, ParseFormat takes it and the help list
// names it: here a made-up tab-separated format, machine form as csv is,
// whose output must be the CSV's with tabs for commas.
func TestAddedFormatRendersDocuments(t *testing.T) {
	withFormat(t, formatSpec{
		name:    "tsv",
		every:   true,
		machine: true,
		chooses: true,
		table: func(w io.Writer, tb Table, _ Options) error {
			cw := csv.NewWriter(w)
			cw.Comma = '\t'
			if err := cw.Write(tb.Headers); err != nil {
				return err
			}
			if err := cw.WriteAll(tb.Rows); err != nil {
				return err
			}
			return cw.Error()
		},
	})
	f, err := ParseFormat("tsv", formatsWhere(func(s formatSpec) bool { return s.every })...)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatList(formatsWhere(func(s formatSpec) bool { return s.every })...); got != "table, json, csv, markdown or tsv" {
		t.Errorf("FormatList %q", got)
	}
	results := []probe.PingResult{{Target: "127.0.0.1", Addr: "127.0.0.1", Sent: 4, Recv: 3, RTTs: []float64{1, 2, 1.5}}}
	doc := PingReport{Doc: NewPingDoc(PingSweep{Results: results, Protocol: "icmp", Count: 4, Interval: time.Second, Timeout: time.Second})}
	var c, tsv bytes.Buffer
	if err := Render(&c, doc, FormatCSV, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&tsv, doc, f, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.String(), "\t") || !strings.Contains(c.String(), "0.25") {
		t.Fatalf("csv not as expected (machine-form loss 0.25): %q", c.String())
	}
	if want := strings.ReplaceAll(c.String(), ",", "\t"); tsv.String() != want {
		t.Errorf("tsv:\n%s\nwant the csv with tabs:\n%s", tsv.String(), want)
	}
}

func TestFormatRegistry(t *testing.T) {
	if got := FormatList(); got != "table, json, csv or markdown" {
		t.Errorf("FormatList() = %q", got)
	}
	if got := FormatList(CompareFormats...); got != "table, json, csv, markdown or html" {
		t.Errorf("compare's FormatList = %q", got)
	}
	if _, err := ParseFormat("yaml"); err == nil || err.Error() != `--format "yaml": use one of table, json, csv, markdown` {
		t.Errorf("ParseFormat(yaml): %v", err)
	}
	for _, tc := range []struct {
		f                          Format
		terminal, machine, chooses bool
		ct                         string
	}{
		{FormatTable, true, false, false, "text/plain; charset=utf-8"},
		{FormatJSON, false, false, false, "application/json"},
		{FormatCSV, false, true, true, "text/plain; charset=utf-8"},
		{FormatMarkdown, false, false, false, "text/plain; charset=utf-8"},
		{FormatHTML, false, false, false, "text/html; charset=utf-8"},
	} {
		if tc.f.ForTerminal() != tc.terminal || tc.f.Machine() != tc.machine || tc.f.ChoosesTable() != tc.chooses || tc.f.ContentType() != tc.ct {
			t.Errorf("%s: terminal %v machine %v chooses %v %q", tc.f, tc.f.ForTerminal(), tc.f.Machine(), tc.f.ChoosesTable(), tc.f.ContentType())
		}
	}
	var b bytes.Buffer
	err := Render(&b, PingReport{}, FormatHTML, Options{})
	if err == nil || err.Error() != "report: this document has no html form: use table, json, csv, markdown" {
		t.Errorf("html of ping: %v", err)
	}
}

package report

import (
	"io"
	"strings"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe/bw"
)

// The documents of the commands, each a Document for Render: what the
// command computed, plus the view options that change what is shown (not
// how a format is written).

// PingReport is ping's document: the linecheck.ping/v1 result, the targets
// Filter keeps (-a, -u; in table format only their names, one per line, as
// fping prints them) and Quiet (-q: the rows of a CIDR sweep left out,
// its summary lines kept).
type PingReport struct {
	Doc    PingDoc
	Filter PingFilter
	Quiet  bool
}

// Tables implements Document.
func (p PingReport) Tables(f Format) []Table {
	doc := p.Doc.Filtered(p.Filter)
	if p.Filter != PingAll && f.ForTerminal() {
		t := Table{Headers: []string{"target"}, Bare: true}
		for _, n := range doc.Names() {
			t.Rows = append(t.Rows, []string{n})
		}
		return []Table{t}
	}
	return PingTables(doc, f, p.Quiet)
}

// JSON implements Document.
func (p PingReport) JSON() any { return p.Doc.Filtered(p.Filter) }

// CSVTable implements CSVChooser.
func (p PingReport) CSVTable(name string) (Table, error) { return Pick(p.Tables(FormatCSV), name) }

// TraceReport is trace's document: the trace and how to show it.
type TraceReport struct {
	Trace *route.Trace
	View  TraceView
}

// Tables implements Document.
func (t TraceReport) Tables(f Format) []Table { return TraceTables(t.Trace, f, t.View) }

// JSON implements Document.
func (t TraceReport) JSON() any { return t.Trace }

// CSVTable implements CSVChooser.
func (t TraceReport) CSVTable(name string) (Table, error) { return Pick(t.Tables(FormatCSV), name) }

// TraceSet is the document of trace --replay on a file of several
// vantages (RIPE Atlas results, a Globalping measurement): each trace's
// tables in turn, each titled with its vantage; in machine form (CSV) one
// table of each kind, its rows led by a "vantage" column (the vantage's
// id); its JSON is the list of the trace documents, each with its
// "vantage".
type TraceSet struct {
	Traces []*route.Trace
	View   TraceView
}

// Tables implements Document.
func (s TraceSet) Tables(f Format) []Table {
	var out []Table
	if !f.Machine() {
		for _, t := range s.Traces {
			out = append(out, TraceTables(t, f, s.View)...)
		}
		return out
	}
	for _, tr := range s.Traces {
		id := ""
		if tr.Vantage != nil {
			id = tr.Vantage.ID
		}
		for i, t := range TraceTables(tr, f, s.View) {
			if i == len(out) {
				m := t
				m.Headers, m.Rows = append([]string{"vantage"}, t.Headers...), nil
				out = append(out, m)
			}
			for _, r := range t.Rows {
				out[i].Rows = append(out[i].Rows, append([]string{id}, r...))
			}
		}
	}
	return out
}

// CSVTable implements CSVChooser.
func (s TraceSet) CSVTable(name string) (Table, error) { return Pick(s.Tables(FormatCSV), name) }

// JSON implements Document.
func (s TraceSet) JSON() any { return s.Traces }

// WatchReport is the document of ping --report and trace --report: the
// hourly profile of a watch journal.
type WatchReport struct{ Report journal.Report }

// Tables implements Document.
func (w WatchReport) Tables(f Format) []Table { return WatchTables(w.Report, f) }

// JSON implements Document.
func (w WatchReport) JSON() any { return w.Report }

// CSVTable implements CSVChooser.
func (w WatchReport) CSVTable(name string) (Table, error) { return Pick(w.Tables(FormatCSV), name) }

// BWTest is the document of one throughput test (bw); its CSV is both
// tables, the summary and the intervals. Unit is the rates' unit in the
// tables for people (bw -f; zero: Mbit/s); CSV keeps bit/s.
type BWTest struct {
	Result *bw.Result
	Unit   BWUnit
}

// Tables implements Document.
func (b BWTest) Tables(f Format) []Table { return bwTables(b.Result, f.Machine(), b.Unit) }

// JSON implements Document.
func (b BWTest) JSON() any { return b.Result }

// BWWatchReport is the document of bw --report: the hourly throughput
// profile of a bw watch journal; its CSV is both tables.
type BWWatchReport struct{ Report journal.BWReport }

// Tables implements Document.
func (b BWWatchReport) Tables(f Format) []Table { return bwReportTables(b.Report, f.Machine()) }

// JSON implements Document.
func (b BWWatchReport) JSON() any { return b.Report }

// BacktraceReport is backtrace's document: one row per target.
type BacktraceReport struct{ Doc *route.BacktraceDoc }

// Tables implements Document.
func (b BacktraceReport) Tables(f Format) []Table { return []Table{BacktraceTable(b.Doc, f)} }

// JSON implements Document.
func (b BacktraceReport) JSON() any { return b.Doc }

// BacktraceList is the document of backtrace --list: a target set.
type BacktraceList struct {
	Title   string
	Targets []route.BacktraceTarget
}

// Tables implements Document.
func (b BacktraceList) Tables(Format) []Table {
	return []Table{BacktraceTargetsTable(b.Title, b.Targets)}
}

// JSON implements Document.
func (b BacktraceList) JSON() any {
	return struct {
		Targets []route.BacktraceTarget `json:"targets"`
	}{b.Targets}
}

// BillReport is bill's document: one report per series. JSON is the
// linecheck.bill/v1 document (a "series" list for several); table and
// markdown are rounded for reading (with a port summary ahead of several);
// csv is one machine table (BillCSVNames) with a series column.
type BillReport struct{ Reports []*billing.Report }

// Tables implements Document.
func (b BillReport) Tables(f Format) []Table {
	named := len(b.Reports) > 1
	var tables []Table
	if f.Machine() {
		for _, name := range BillCSVNames {
			t, _ := b.CSVTable(name)
			tables = append(tables, t)
		}
		return tables
	}
	if named {
		tables = append(tables, PortSummary(b.Reports))
	}
	for _, r := range b.Reports {
		tables = append(tables, BillTables(r, named)...)
	}
	return tables
}

// JSON implements Document.
func (b BillReport) JSON() any {
	if len(b.Reports) == 1 {
		return b.Reports[0]
	}
	doc := BillSeriesDoc{Schema: billing.Schema}
	for _, r := range b.Reports {
		c := *r
		c.Schema = ""
		doc.Series = append(doc.Series, &c)
	}
	return doc
}

// CSVTable implements CSVChooser.
func (b BillReport) CSVTable(name string) (Table, error) { return billCSV(name, b.Reports) }

// Tables implements Document: one table per series for reading, or for
// csv one tidy table with a series column.
func (d TrafficDoc) Tables(f Format) []Table { return TrafficTables(d, f) }

// JSON implements Document.
func (d TrafficDoc) JSON() any { return d }

// CompareReport is compare's document: the header (what was compared, on
// which traffic), the ranking, checks, cost items, targets and routes (and
// usage, carriers and throughput when the comparison has them), its JSON,
// and an HTML page.
type CompareReport struct{ Result *compare.Result }

// Tables implements Document.
func (c CompareReport) Tables(f Format) []Table {
	if f.Machine() {
		return CompareCSVTables(c.Result)
	}
	return CompareTables(c.Result, f)
}

// JSON implements Document.
func (c CompareReport) JSON() any { return c.Result }

// CSVTable implements CSVChooser.
func (c CompareReport) CSVTable(name string) (Table, error) {
	return Pick(CompareCSVTables(c.Result), name)
}

// WriteHTML implements HTMLPage.
func (c CompareReport) WriteHTML(w io.Writer) error { return WriteCompareHTML(w, c.Result) }

// Preamble implements Preamble: its lines wrap at o.Width in table format.
func (c CompareReport) Preamble(f Format, o Options) string {
	head := compareHeader(c.Result, f)
	if !f.ForTerminal() || o.Width <= 0 || o.Wide {
		return head
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(head, "\n") {
		if width(strings.TrimSuffix(l, "\n")) <= o.Width {
			b.WriteString(l)
			continue
		}
		b.WriteString(strings.Join(Wrap(strings.TrimSuffix(l, "\n"), o.Width, "  "), "\n") + "\n")
	}
	return b.String()
}

// GPUReport is the document of gpu: the cards, the card-to-card matrix and
// the contract's checks; its CSV is every table.
type GPUReport struct{ Doc gpu.Doc }

// Tables implements Document.
func (g GPUReport) Tables(Format) []Table { return GPUTables(g.Doc) }

// JSON implements Document.
func (g GPUReport) JSON() any { return g.Doc }

// GPUWatchReport is the document of gpu --watch and its report: the
// samples' figures per card and the contract's checks over time; its CSV
// is every table.
type GPUWatchReport struct{ Doc gpu.WatchDoc }

// Tables implements Document.
func (g GPUWatchReport) Tables(Format) []Table { return GPUWatchTables(g.Doc) }

// JSON implements Document.
func (g GPUWatchReport) JSON() any { return g.Doc }

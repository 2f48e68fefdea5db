package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The days of a trial (issue 30): recorded.forward and recorded.return take
// several files (a list, glob patterns) or a `trace --watch` journal, and
// every trace of them is judged, since a route switched to a cheaper line at
// the evening peak is what a buyer must catch.

// readRecordedForward reads recorded.forward into m: the one trace (or one
// file of several vantages) as before, or the traces of the days, the
// earliest standing as m.Forward and all of them as m.ForwardSeries.
func readRecordedForward(c *candidates.Candidate, m *verdict.Measurement) error {
	files := c.Recorded.ForwardFiles
	if len(files) == 0 && c.Recorded.Forward != "" {
		files = []string{c.Recorded.Forward}
	}
	if len(files) == 0 {
		return nil
	}
	if len(files) == 1 && !isJournal(files[0]) {
		var err error
		if m.Forward, m.ForwardVantages, err = readForward(files[0]); err != nil {
			return fmt.Errorf("%s: recorded.forward: %w", c.Name, err)
		}
		if len(m.ForwardVantages) > 1 {
			m.Warnings = append(m.Warnings, fmt.Sprintf("recorded.forward holds %d vantages (%s): the per-carrier table uses each; the candidate's line class uses the first",
				len(m.ForwardVantages), route.VantageIDs(m.ForwardVantages)))
		}
		return nil
	}
	var series []*route.Trace
	for i, p := range files {
		if isJournal(p) {
			ts, err := journalTraces(p)
			if err != nil {
				return fmt.Errorf("%s: recorded.forward: %w", c.Name, err)
			}
			series = append(series, ts...)
			continue
		}
		ts, err := route.ReadTracesFile(p)
		if err != nil {
			return fmt.Errorf("%s: recorded.forward: %w", c.Name, err)
		}
		if len(ts) > 1 {
			if i == 0 {
				m.ForwardVantages = ts
			}
			m.Warnings = append(m.Warnings, fmt.Sprintf("recorded.forward: %s holds %d vantages (%s): the days' routes use the first", p, len(ts), route.VantageIDs(ts)))
		}
		series = append(series, ts[0])
	}
	m.ForwardSeries = inTimeOrder(series)
	m.Forward = m.ForwardSeries[0]
	return nil
}

// readRecordedReturn reads recorded.return into m: one trace or backtrace
// document as before, or the traces of the days (m.ReturnSeries, the
// earliest standing as m.Return). A backtrace document stands alone.
func readRecordedReturn(c *candidates.Candidate, m *verdict.Measurement) error {
	files := c.Recorded.ReturnFiles
	if len(files) == 0 && c.Recorded.Return != "" {
		files = []string{c.Recorded.Return}
	}
	if len(files) == 0 {
		return nil
	}
	if len(files) == 1 && !isJournal(files[0]) {
		var err error
		if m.Return, m.ReturnBacktrace, err = readReturn(files[0]); err != nil {
			return fmt.Errorf("%s: recorded.return: %w", c.Name, err)
		}
		return nil
	}
	var series []*route.Trace
	for _, p := range files {
		if isJournal(p) {
			ts, err := journalTraces(p)
			if err != nil {
				return fmt.Errorf("%s: recorded.return: %w", c.Name, err)
			}
			series = append(series, ts...)
			continue
		}
		tr, doc, err := readReturn(p)
		if err != nil {
			return fmt.Errorf("%s: recorded.return: %w", c.Name, err)
		}
		if doc != nil {
			return fmt.Errorf("%s: recorded.return: %s is a backtrace document: give it alone, or a list of return traces (linecheck JSON, mtr --json, a trace --watch journal)", c.Name, p)
		}
		series = append(series, tr)
	}
	m.ReturnSeries = inTimeOrder(series)
	m.Return = m.ReturnSeries[0]
	return nil
}

// isJournal tells whether the file at path is a linecheck journal: its
// first line names the journal schema.
func isJournal(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	return bytes.Contains(line, []byte(`"`+journal.Schema+`"`))
}

// journalTraces reads a `trace --watch` journal: each cycle's trace, its
// start the cycle's time when the trace does not carry one.
func journalTraces(path string) ([]*route.Trace, error) {
	es, _, err := journal.Read(path)
	if err != nil {
		return nil, err
	}
	var out []*route.Trace
	for _, e := range es {
		if e.Kind != journal.KindTrace {
			return nil, fmt.Errorf("%s: a %s journal, not a trace --watch journal (cycle %d)", path, e.Kind, e.Cycle)
		}
		if e.Trace == nil || len(e.Trace.Hops) == 0 {
			continue // a cycle that could not probe (e.Error)
		}
		if e.Trace.Start == "" {
			e.Trace.Start = e.Time.UTC().Format(time.RFC3339)
		}
		out = append(out, e.Trace)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no traced cycle in the journal", path)
	}
	return out, nil
}

// inTimeOrder sorts traces by their start, those without one after the
// others in the order given.
func inTimeOrder(ts []*route.Trace) []*route.Trace {
	sort.SliceStable(ts, func(i, j int) bool {
		a, okA := verdict.TraceTime(ts[i])
		b, okB := verdict.TraceTime(ts[j])
		if okA != okB {
			return okA
		}
		return okA && a.Before(b)
	})
	return ts
}

package route

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/readlimit"
)

// TraceFormat is one kind of recorded trace file that ReadTrace reads:
// linecheck's own JSON, `mtr --json`, … Each format is one file,
// trace_format_<name>.go, that registers it from init with
// RegisterTraceFormat; ReadTrace, the table footer, KnownFigures and trace's
// --help all ask the registry, so a new format touches no other file.
type TraceFormat struct {
	// Name is the format's short name ("linecheck", "mtr"), as --help lists it.
	Name string
	// Rank orders the formats in --help, in the unrecognised-file message
	// and in detection (lowest first; equal ranks in registration order):
	// linecheck's own 0, mtr 1, the measurement networks' after them.
	Rank int
	// Title says in words what the file is ("the output of mtr --json"),
	// for --help.
	Title string
	// Want names the format in the error for a document no format
	// recognises, with what it lacks (`a linecheck.trace/v1 document (no
	// "schema")`).
	Want string
	// Source is the Trace.Source of the traces Decode returns ("replay",
	// "mtr-json"); it tells KnownFigures and the footer which format a
	// trace came from. Unique among the formats.
	Source string
	// Recognise tells whether doc is this format's. The formats must not
	// claim the same documents; ReadTrace takes the first that does.
	Recognise func(doc TraceDoc) bool
	// Decode reads data, a document Recognise claimed, into a trace whose
	// Source is Source; name begins each error message. A format whose
	// files may hold several vantages' traces sets DecodeAll instead.
	Decode func(data []byte, name string) (*Trace, error)
	// DecodeAll reads data into one trace per vantage (a RIPE Atlas
	// result list, a Globalping measurement), in the file's order, each
	// with its Vantage; nil for formats of one trace per file.
	DecodeAll func(data []byte, name string) ([]*Trace, error)
	// Known says which figures a responder without samples carries in this
	// format (KnownFigures); nil: every figure.
	Known func(r Responder) Known
	// Note is the table footer's remark on what the format lacks; "" for none.
	Note string
}

// TraceDoc is a recorded document as the formats' Recognise sees it: the
// bytes (valid JSON) and, when the top-level value is an object, its
// members.
type TraceDoc struct {
	Data    []byte
	members map[string]json.RawMessage
}

// Member is the top-level member key of the document (an exact match of
// the name first, else one that differs only in case, as encoding/json
// matches struct fields); ok is false when it is absent, null, or the
// document is not an object.
func (d TraceDoc) Member(key string) (v json.RawMessage, ok bool) {
	v, ok = d.members[key]
	if !ok {
		for k, m := range d.members {
			if strings.EqualFold(k, key) {
				v, ok = m, true
				break
			}
		}
	}
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

// traceFormats are the registered formats, by Rank.
var traceFormats []TraceFormat

// RegisterTraceFormat adds f to the formats ReadTrace reads. It is called
// from the init of the format's file; a second format of the same name or
// Source, or one without Name, Source, Recognise or Decode, is a programming
// error and panics.
func RegisterTraceFormat(f TraceFormat) {
	if f.Name == "" || f.Source == "" || f.Recognise == nil || (f.Decode == nil) == (f.DecodeAll == nil) {
		panic(fmt.Sprintf("route: trace format %q: Name, Source, Recognise and one of Decode or DecodeAll are required", f.Name))
	}
	for _, g := range traceFormats {
		if g.Name == f.Name || g.Source == f.Source {
			panic(fmt.Sprintf("route: trace format %q registered twice (name or source %q)", f.Name, f.Source))
		}
	}
	traceFormats = append(traceFormats, f)
	slices.SortStableFunc(traceFormats, func(a, b TraceFormat) int { return a.Rank - b.Rank })
}

// TraceFormats lists the registered trace-file formats, in the order
// ReadTrace tries them.
func TraceFormats() []TraceFormat { return append([]TraceFormat(nil), traceFormats...) }

// TraceFormatTitles is the formats' titles as one phrase for help texts:
// "A, or B"; "A, B, or C".
func TraceFormatTitles() string {
	var t []string
	for _, f := range traceFormats {
		t = append(t, f.Title)
	}
	if len(t) < 2 {
		return strings.Join(t, "")
	}
	return strings.Join(t[:len(t)-1], ", ") + ", or " + t[len(t)-1]
}

// traceFormatOf is the format whose traces carry source.
func traceFormatOf(source string) (TraceFormat, bool) {
	for _, f := range traceFormats {
		if f.Source == source {
			return f, true
		}
	}
	return TraceFormat{}, false
}

// ReadTraceFile reads a recorded trace from path (see ReadTrace).
func ReadTraceFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTrace(f, path)
}

// ReadTrace reads a recorded trace in any registered format (TraceFormats:
// a linecheck.trace/v1 document, whose Source becomes "replay", or the
// output of `mtr --json`, Source "mtr-json", …). name is used in error
// messages. A file of several vantages' traces is an error that names them
// (ReadTraces reads them all).
func ReadTrace(r io.Reader, name string) (*Trace, error) {
	ts, err := ReadTraces(r, name)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, fmt.Errorf("%s: %d vantages (%s), not one trace: pick one (trace --replay FILE --vantage ID)", name, len(ts), VantageIDs(ts))
	}
	return ts[0], nil
}

// ReadTracesFile reads every trace of a recorded file (see ReadTraces).
func ReadTracesFile(path string) ([]*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTraces(f, path)
}

// ReadTraces reads a recorded file in any registered format into its
// traces: one for linecheck's JSON and mtr's, one per vantage for the
// measurement networks' files (a RIPE Atlas result list, a Globalping
// measurement), in the file's order; never none.
func ReadTraces(r io.Reader, name string) ([]*Trace, error) {
	data, err := readlimit.ReadAll(r, name, readlimit.Document)
	if err != nil {
		return nil, err
	}
	doc := TraceDoc{Data: data}
	// A top-level value that is not an object is an error only when no
	// format claims it (one may read a list).
	notObject := json.Unmarshal(data, &doc.members)
	if list, ok := jsonLines(data); ok && notObject != nil {
		// One JSON value per line (the RIPE Atlas API's format=txt, JSON
		// Lines) reads as the list of them, line for line.
		data, doc.Data = list, list
		notObject = json.Unmarshal(data, &doc.members)
	}
	if te := (*json.UnmarshalTypeError)(nil); notObject != nil && !errors.As(notObject, &te) {
		return nil, fmt.Errorf("%s: not a JSON trace: %w", name, jsonErr(data, notObject))
	}
	for _, f := range traceFormats {
		if !f.Recognise(doc) {
			continue
		}
		if f.DecodeAll != nil {
			ts, err := f.DecodeAll(data, name)
			if err == nil && len(ts) == 0 {
				err = fmt.Errorf("%s: %s: no trace in the file", name, f.Title)
			}
			return ts, err
		}
		t, err := f.Decode(data, name)
		if err != nil {
			return nil, err
		}
		return []*Trace{t}, nil
	}
	if notObject != nil {
		return nil, fmt.Errorf("%s: not a JSON trace: %w", name, jsonErr(data, notObject))
	}
	return nil, fmt.Errorf("%s: %s", name, unrecognised())
}

// jsonLines turns data of two or more lines, each one JSON object, into a
// JSON list of them that keeps every value on its line (so that errors name
// the file's lines); ok is false for anything else.
func jsonLines(data []byte) ([]byte, bool) {
	lines := bytes.Split(bytes.TrimRight(data, "\r\n\t "), []byte("\n"))
	if len(lines) < 2 {
		return nil, false
	}
	out := make([]byte, 0, len(data)+len(lines)+2)
	out = append(out, '[')
	for i, l := range lines {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] != '{' || !json.Valid(l) {
			return nil, false
		}
		out = append(out, l...)
		if i < len(lines)-1 {
			out = append(out, ',', '\n')
		}
	}
	return append(out, ']'), true
}

// unrecognised says what a document no format claims is not: "neither A
// nor B", "none of A, B or C".
func unrecognised() string {
	var w []string
	for _, f := range traceFormats {
		w = append(w, f.Want)
	}
	switch len(w) {
	case 0:
		return "no trace format is known"
	case 1:
		return "not " + w[0]
	case 2:
		return "neither " + w[0] + " nor " + w[1]
	}
	return "none of " + strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// jsonErr words a JSON decoding error with its line, element and field
// (jsonmsg), never a Go type.
func jsonErr(data []byte, err error) error { return jsonmsg.Describe(data, err) }

// Known says which of a responder's figures are measurements. A figure that
// is not known is 0 in the trace document and means "not carried", not zero.
type Known struct {
	Percentiles bool // rtt_ms p50, p95, p99
	RFC3550     bool // jitter_ms rfc3550
	MeanAbs     bool // jitter_ms mean_abs
	PDVP95      bool // jitter_ms pdv_p95
}

// KnownFigures reports which figures of r, a responder of t, are known.
// Live traces and linecheck's own JSON keep every figure as written; a
// trace read from a format that carries fewer (its TraceFormat.Known: `mtr
// --json` has no samples, so no percentiles and no pdv_p95) lacks those,
// unless the responder has samples to compute them from.
func KnownFigures(t *Trace, r Responder) Known {
	all := Known{Percentiles: true, RFC3550: true, MeanAbs: true, PDVP95: true}
	if t == nil || len(r.Samples) > 0 {
		return all
	}
	if f, ok := traceFormatOf(t.Source); ok && f.Known != nil {
		return f.Known(r)
	}
	return all
}

// SourceNote is the table footer's remark on what the format t was read
// from lacks ("from mtr --json: no percentiles …"); "" for live traces and
// formats that lack nothing.
func SourceNote(t *Trace) string {
	if f, ok := traceFormatOf(t.Source); ok {
		return f.Note
	}
	return ""
}

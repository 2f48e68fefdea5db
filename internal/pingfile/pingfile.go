// Package pingfile reads recorded probe streams (compare's
// recorded.probes, the TUI's replay) in every format linecheck knows, one
// file per format in one registry, told apart by content as the trace
// readers are (route.TraceFormat): linecheck's own NDJSON (`ping --stream`,
// probe.ReadStream), RIPE Atlas ping results and Globalping ping
// measurements. A measurement network's file holds one stream per vantage
// (the probe that pinged); each keeps its route.Vantage.
//
// A vantage's probes become probe.Records, one per probe sent (ok with its
// RTT, lost, late) plus one per duplicate reply, numbered (Seq) from 0 in
// the order the file gives them and stamped with the run's time, so the
// statistics of internal/verdict and internal/stats read them as they read
// linecheck's own.
package pingfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Stream is one vantage's probes: Vantage is nil for linecheck's own
// stream (the machine that ran ping --stream).
type Stream struct {
	Vantage *route.Vantage
	Records []probe.Record
}

// Format is one probe-stream format.
type Format struct {
	// Rank orders detection (low first); Name and Title name it.
	Rank  int
	Name  string
	Title string
	// Recognise says whether the file is this format from its head.
	Recognise func(h Head) bool
	// Read reads the whole file; name is used in errors.
	Read func(r io.Reader, name string) ([]Stream, error)
	// Scan, when set, gives the file's records to each one at a time,
	// holding none (linecheck's stream: a month of probes is a month of
	// lines); a format without it is read whole by Scan.
	Scan func(r io.Reader, name string, each func(probe.Record)) error
}

var formats []Format

// register adds f to the registry, in rank order.
func register(f Format) {
	formats = append(formats, f)
	sort.SliceStable(formats, func(i, j int) bool { return formats[i].Rank < formats[j].Rank })
}

// Formats are the registered formats in detection order.
func Formats() []Format { return append([]Format(nil), formats...) }

// titles are the formats' titles in detection order.
func titles() []string {
	var t []string
	for _, f := range formats {
		t = append(t, f.Title)
	}
	return t
}

// headSize is how much of a file detection looks at: the first object's
// members are near its start in every format.
const headSize = 64 << 10

// Head is the start of a file as detection sees it: whether it opens a
// JSON list, and the members of its first object (the first element of a
// list) with their values where they are short strings or numbers.
type Head struct {
	List    bool
	Members map[string]string
}

// Has says whether the first object has member key.
func (h Head) Has(key string) bool { _, ok := h.Members[key]; return ok }

// ReadFile reads the probe streams of path (see Read).
func ReadFile(path string) ([]Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a probe-stream file in any registered format. An unrecognised
// file is read as linecheck's stream, whose errors name line and field.
func Read(r io.Reader, name string) ([]Stream, error) {
	br := bufio.NewReaderSize(r, headSize)
	f, err := detect(br, name)
	if err != nil {
		return nil, err
	}
	return f.Read(br, name)
}

// Scan gives every record of a probe-stream file in any registered format
// to each. linecheck's stream is read one line at a time, holding no record
// (so a month of per-second probes costs what the caller keeps of them),
// and Scan returns nil; a measurement network's file is read whole, as
// Read reads it, its records given vantage after vantage, and Scan returns
// its streams (each with its Vantage), which the caller may keep.
func Scan(r io.Reader, name string, each func(probe.Record)) ([]Stream, error) {
	br := bufio.NewReaderSize(r, headSize)
	f, err := detect(br, name)
	if err != nil {
		return nil, err
	}
	if f.Scan != nil {
		return nil, f.Scan(br, name, each)
	}
	ss, err := f.Read(br, name)
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		for _, rec := range s.Records {
			each(rec)
		}
	}
	return ss, nil
}

// detect is the format of the file br starts, from its head: linecheck's
// stream when no format claims it (its errors name line and field), an
// error for a measurement network's file of another kind.
func detect(br *bufio.Reader, name string) (Format, error) {
	b, _ := br.Peek(headSize)
	h := head(b)
	for _, f := range formats {
		if f.Recognise(h) {
			return f, nil
		}
	}
	// A measurement network's file of another kind (a traceroute given as
	// recorded.probes) is named, not read as a stream line by line.
	if t := h.Members["type"]; t != "" && (h.Has("prb_id") || h.Has("probesCount") || h.Has("results")) {
		return Format{}, fmt.Errorf("%s: a %q measurement, not ping results: probe streams are linecheck's (ping --stream) or %s; routes go in recorded.forward or trace --replay",
			name, t, strings.Join(titles()[1:], " or "))
	}
	return formats[0], nil
}

// Records are the streams' records one after the other.
func Records(ss []Stream) []probe.Record {
	var n int
	for _, s := range ss {
		n += len(s.Records)
	}
	out := make([]probe.Record, 0, n)
	for _, s := range ss {
		out = append(out, s.Records...)
	}
	return out
}

// head reads the members of the first object of b, which may end
// anywhere: what the tokens up to there say.
func head(b []byte) Head {
	h := Head{Members: map[string]string{}}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return h
	}
	if tok == json.Delim('[') {
		h.List = true
		if tok, err = d.Token(); err != nil {
			return h
		}
	}
	if tok != json.Delim('{') {
		return h
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return h
		}
		key, _ := k.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			h.Members[key] = ""
			return h
		}
		var s string
		if json.Unmarshal(v, &s) != nil && len(v) <= 64 {
			s = string(v)
		}
		h.Members[key] = s
	}
	return h
}

// errNoProbes is wrapped when a measurement network's file holds no probe.
var errNoProbes = errors.New("no probe in the file")

// where names a record of a file in errors: "FILE: RIPE Atlas results[3]".
func where(name, title string, i int, list string) string {
	return fmt.Sprintf("%s: %s %s[%d]", name, title, list, i)
}

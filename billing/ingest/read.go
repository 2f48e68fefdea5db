package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// trafficReader is one traffic-log format: each is one file (csv.go,
// mrtg.go, vnstat.go, rrdtool.go, prometheus.go) that defines its
// trafficReader beside its parser, and one line of readers below.
type trafficReader struct {
	// name is the format's name: ReadOptions.Format, --input, Series.Format.
	name string
	// rank orders detection: the readers' detect run from the lowest rank
	// up, and the first that claims the input names its format.
	rank int
	// detect tells from a log's first bytes (byte-order mark and leading
	// blanks removed; never empty) whether it is this format's.
	detect func(s []byte) bool
	// jsonTitle, for a JSON format, names it in the message for JSON no
	// reader claims ("vnstat --json").
	jsonTitle string
	// read parses the log.
	read func(in readInput) ([]*billing.Series, error)
}

// readInput is what a reader reads: the buffered log, its name for
// messages, the options, and for a file mapped or read whole its bytes
// (src) or else the stream's tail (tail).
type readInput struct {
	br   *bufio.Reader
	name string
	opts ReadOptions
	src  mapped
	tail *tailWatch
}

// readers are the traffic-log formats, in the order Formats lists them. A
// new format is its file and its line in init below.
var readers []trafficReader

// Formats lists the traffic-log formats Read understands (the values of
// ReadOptions.Format), for --input help. Detection by content picks one of them
// when the format is not forced.
var Formats []string

// init fills readers (not an initializer: the readers' functions reach
// ReadOptions.check, which reads Formats).
func init() {
	readers = []trafficReader{
		csvReader,
		mrtgReader,
		vnstatReader,
		rrdXMLReader,
		rrdJSONReader,
		prometheusReader,
	}
	for _, r := range readers {
		Formats = append(Formats, r.name)
	}
}

// readerOf is the reader of format name.
func readerOf(name string) (trafficReader, bool) {
	for _, r := range readers {
		if r.name == name {
			return r, true
		}
	}
	return trafficReader{}, false
}

// Units lists the values of ReadOptions.Units for CSV input.
var Units = []string{"bytes", "bps", "counter32", "counter64", "counter"}

// ReadOptions tells a reader how to interpret a traffic log. The zero value
// detects the format by content and keeps the latest calendar month (UTC).
type ReadOptions struct {
	// Format forces a reader (one of Formats); "" detects it by content.
	Format string
	// Stamp says whether CSV timestamps mark the "start" (default) or the
	// "end" of their interval. The other formats have a fixed convention
	// (MRTG, rrdtool and Prometheus: end; vnstat: start) and ignore it.
	Stamp string
	// Columns names the in and out columns: rrdtool legend entries, CSV
	// header names, or the values of a Prometheus "direction" label. For
	// Prometheus one value, in or out, says which direction results without
	// a direction label are (default in).
	Columns []string
	// Units of CSV values: "bytes" per interval (default; "bps" when the
	// columns are named in_bps/out_bps), "bps" (bit/s rates), or SNMP octet
	// counters "counter32", "counter64", "counter" (width guessed per drop).
	// For rrdtool input "bytes" or "bps" overrides the unit in the legend.
	Units string
	// From and To (unix seconds, To exclusive) bound the slots kept when
	// To > From; everything else is dropped while reading, so memory is bounded
	// by the period, not the file.
	From, To int64
	// Loc is the time zone of the calendar month kept when From/To are unset
	// (the latest month seen, per series), of naive CSV timestamps and of
	// vnstat output without timestamps. nil means UTC.
	Loc *time.Location
	// PortBps, when > 0, is the port speed in bit/s: slots above it are
	// flagged in Series.Warnings, never clamped. Without it only rates above
	// 1 Tbit/s, implausible for one interface, are flagged.
	PortBps float64
}

// ReadError is the error every reader returns for bad input. It names the
// file, the 1-based line and the field, so that its message reads
// `traffic.csv:812: out_bytes: "12,5" is not a number`. Callers get it with
// errors.As; Err, when set, is the underlying cause (ErrUnknownFormat,
// ErrEmpty, a strconv or JSON error).
type ReadError struct {
	File  string // the name given to Read, or the path given to ReadFile
	Line  int    // 1-based line of the offending input
	Field string // column, key or element, e.g. "in_bytes", "values[3]"; may be empty
	Msg   string // what is wrong
	Err   error  // the cause, may be nil
}

func (e *ReadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// ErrUnknownFormat is wrapped by the ReadError for input no reader recognises.
var ErrUnknownFormat = errors.New("unknown traffic log format")

// ErrEmpty is wrapped by the ReadError for input without any data rows.
var ErrEmpty = errors.New("no traffic data")

// ErrTruncated is wrapped by the ReadError for a file that shrank while it
// was read (logrotate's copytruncate does this to a live log).
var ErrTruncated = errors.New("file truncated while being read")

// ReadFile reads the traffic log at path; see Read. A large regular file is
// mapped into memory rather than read, so that CSV chunks are parsed in place.
func ReadFile(path string, opts ReadOptions) ([]*billing.Series, error) {
	return readFile(path, opts, nil)
}

// readFile is ReadFile; mapped, when set, runs once the file is mapped
// (tests truncate the file there).
func readFile(path string, opts ReadOptions, mappedHook func()) (series []*billing.Series, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, unmap, ok := mapFile(f)
	if !ok {
		// A small regular file (or any under 1 MB where files are not
		// mapped) is read whole, in one allocation of its size:
		// streamed, it would take a 4 MB chunk buffer, which for the 1,000
		// port files of a PoP is 4 GB of buffers to clear.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < 1<<20 {
			data := make([]byte, st.Size()+1) // +1: a file that grew meanwhile still reads to its end
			n, err := io.ReadFull(f, data)
			// io.EOF: the file is empty (read reports that with its name).
			if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
				return nil, err
			}
			if n == len(data) {
				f.Seek(0, io.SeekStart)
				return Read(f, path, opts)
			}
			rd := bytes.NewReader(data[:n])
			return read(rd, path, opts, mapped{data: data[:n], rd: rd, heap: true})
		}
		return Read(f, path, opts)
	}
	defer unmap()
	if mappedHook != nil {
		mappedHook()
	}
	// A mapped file that shrinks under the reader faults (SIGBUS) on the
	// pages past its new end: every goroutine that touches the mapping
	// turns that fault into an error (faultGuard), and a shrink seen after
	// the read wins over whatever the zeros of a cut page parsed as.
	defer func() {
		if st, serr := f.Stat(); serr == nil && st.Size() < int64(len(data)) {
			series, err = nil, truncatedErr(path, int64(len(data)), st.Size())
		}
	}()
	defer recoverFault(catchFaults(), &err, path)
	rd := bytes.NewReader(data)
	return read(rd, path, opts, mapped{data: data, rd: rd})
}

func truncatedErr(path string, was, now int64) *ReadError {
	msg := "the file shrank while it was read (logrotate copytruncate?)"
	if was >= 0 {
		msg = fmt.Sprintf("the file shrank from %d to %d bytes while it was read (logrotate copytruncate?)", was, now)
	}
	return &ReadError{File: path, Line: 1, Msg: msg + ": read the rotated copy, or run again once the rotation is done", Err: ErrTruncated}
}

// catchFaults makes a memory fault in this goroutine a panic (a mapped file
// truncated under the reader), for recoverFault to turn into an error; it
// returns the previous setting.
func catchFaults() bool { return debug.SetPanicOnFault(true) }

// recoverFault, deferred by a goroutine that reads a mapped file after
// catchFaults, restores the setting and turns a memory fault into *err
// instead of a crash; any other panic goes on.
func recoverFault(old bool, err *error, path string) {
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		if _, fault := r.(interface{ Addr() uintptr }); fault {
			*err = truncatedErr(path, -1, -1)
			return
		}
		panic(r)
	}
}

// mapped is a file mapped in memory and the reader over it.
type mapped struct {
	data []byte
	rd   *bytes.Reader
	heap bool // read into memory, not mapped: nothing to release
}

// Read reads one traffic log and returns one Series per interface in it, on
// the 5-minute grid, in the order the interfaces first appear. name is used
// in messages and as the series name when the log does not name its
// interface. Bad input gives a *ReadError.
func Read(r io.Reader, name string, opts ReadOptions) ([]*billing.Series, error) {
	return read(r, name, opts, mapped{})
}

func read(r io.Reader, name string, opts ReadOptions, src mapped) ([]*billing.Series, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	var rr io.Reader = r
	var tail *tailWatch
	if src.data != nil {
		rr = smallReads{r}
	} else {
		tail = &tailWatch{r: r}
		rr = tail
	}
	br := bufio.NewReaderSize(rr, 1<<20)
	format := opts.Format
	head, err := br.Peek(detectBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	// A database or compressed file given in place of its text export is
	// said so, forced --input or not, rather than parsed as garbage.
	if what := binaryHead(head); what != "" {
		return nil, &ReadError{File: name, Line: 1, Msg: what, Err: ErrUnknownFormat}
	}
	if format == "" {
		if format, err = detect(head, name); err != nil {
			return nil, err
		}
	}
	rd, ok := readerOf(format)
	if !ok {
		return nil, fmt.Errorf("format %q: use one of %s", format, strings.Join(Formats, ", "))
	}
	series, err := rd.read(readInput{br: br, name: name, opts: opts, src: src, tail: tail})
	if err != nil {
		return nil, err
	}
	for _, s := range series {
		s.Source = name
		s.Format = format
	}
	return series, nil
}

// tailWatch passes a stream through, counting its newlines and keeping its
// last byte, so that a last line without a newline is found without a
// second pass.
type tailWatch struct {
	r     io.Reader
	lines int64
	last  byte
}

func (t *tailWatch) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
		t.last = p[n-1]
	}
	return n, err
}

// cutLastLine warns when a CSV's last line lacks its newline: a file still
// being written may end in a row cut mid-number ("1790813400,1000000,20"),
// which reads as a valid, smaller figure. Journals treat their last entry
// the same way; a CSV row cannot be told whole, so it is billed and named.
func cutLastLine(series []*billing.Series, name string, src mapped, tail *tailWatch) {
	var line int64
	switch {
	case len(src.data) > 0 && src.data[len(src.data)-1] != '\n':
		line = int64(bytes.Count(src.data, []byte{'\n'})) + 1
	case tail != nil && tail.last != 0 && tail.last != '\n':
		line = tail.lines + 1
	default:
		return
	}
	w := fmt.Sprintf("%s:%d: the last line has no newline: it may be cut (a file still being written) and is billed as read; check it, or bill the file once it is complete", name, line)
	for _, s := range series {
		s.Warnings = append(s.Warnings, w)
	}
}

// smallReads hands out its reader's bytes at most 64 KB per Read. Over a
// file in memory, bufio then copies only what detection and the header
// need (readCSV parses the rest in place), not a whole 1 MB buffer.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 64<<10)]) }

func (o ReadOptions) check() error {
	if o.Format != "" && !slices.Contains(Formats, o.Format) {
		return fmt.Errorf("unknown input format %q (known: %s)", o.Format, strings.Join(Formats, ", "))
	}
	if o.Stamp != "" && o.Stamp != "start" && o.Stamp != "end" {
		return fmt.Errorf("stamp %q: want start or end", o.Stamp)
	}
	if o.Units != "" && !slices.Contains(Units, o.Units) {
		return fmt.Errorf("units %q: want one of %s", o.Units, strings.Join(Units, ", "))
	}
	if len(o.Columns) > 2 {
		return fmt.Errorf("columns: want at most two names (in, out), got %d", len(o.Columns))
	}
	return nil
}

func (o ReadOptions) loc() *time.Location {
	if o.Loc == nil {
		return time.UTC
	}
	return o.Loc
}

// baseName is the series name for a log that does not name its interface.
func baseName(name string) string {
	b := filepath.Base(name)
	if ext := filepath.Ext(b); ext != "" && ext != b {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// errAt builds a ReadError.
func errAt(file string, line int64, field, format string, args ...any) *ReadError {
	if line < 1 {
		line = 1
	}
	return &ReadError{File: file, Line: int(line), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fmtTime renders a unix time for messages.
func fmtTime(t int64) string {
	return time.Unix(t, 0).UTC().Format(time.RFC3339)
}

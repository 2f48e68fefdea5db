package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// StreamSchema names the per-probe NDJSON records written by `ping --stream`.
// The same records are the recorded-probe format that compare replays.
const StreamSchema = "linecheck.probe/v1"

// Record is one probe outcome, one NDJSON line.
type Record struct {
	Schema   string    `json:"schema"`
	Time     time.Time `json:"time"` // when the probe was sent
	Target   string    `json:"target"`
	Addr     string    `json:"addr"`
	Protocol Protocol  `json:"protocol"` // icmp, tcp
	Port     int       `json:"port,omitempty"`
	Seq      int       `json:"seq"`
	Status   Status    `json:"status"`
	RTTms    *float64  `json:"rtt_ms"` // null when lost
}

// StreamError is ReadStream's error for a line that is no JSON record of
// the right shape (Record holds the line, Err encoding/json's error) or
// that the reader could not take (no Record; Err is bufio.Scanner's, such
// as bufio.ErrTooLong past 1 MiB). probe imports no package of this
// module: the callers word Err for people (internal/jsonmsg, tsv.ScanError).
type StreamError struct {
	Name   string
	Line   int
	Record []byte
	Err    error
}

func (e *StreamError) Error() string {
	if e.Record == nil {
		return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: not a probe record: %v", e.Name, e.Line, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// ReadStream reads NDJSON probe records. name is used in error messages
// (file:line: what is wrong).
func ReadStream(r io.Reader, name string) ([]Record, error) {
	var out []Record
	err := ScanStream(r, name, func(rec Record) { out = append(out, rec) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanStream is ReadStream one record at a time: each valid record is
// given to each in file order, none is kept, so a month of probes is read
// in the memory of one line. On an error the records before it have been
// given.
func ScanStream(r io.Reader, name string, each func(Record)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return &StreamError{Name: name, Line: line, Record: append([]byte(nil), b...), Err: err}
		}
		if rec.Schema != StreamSchema {
			return fmt.Errorf("%s:%d: schema %q, want %q", name, line, rec.Schema, StreamSchema)
		}
		if !rec.Status.Valid() {
			return fmt.Errorf("%s:%d: status: %q is not ok, lost, late or dup", name, line, rec.Status)
		}
		// ok and dup may lack it: a reply stamped before its send time (the
		// clock stepped back) has no RTT to give (PingResult.ClockFaults).
		if rec.Status == StatusLate && rec.RTTms == nil {
			return fmt.Errorf("%s:%d: rtt_ms: missing for status %q", name, line, rec.Status)
		}
		each(rec)
	}
	if err := sc.Err(); err != nil {
		return &StreamError{Name: name, Line: line + 1, Err: err}
	}
	return nil
}

// WriteRecord writes one record as an NDJSON line.
func WriteRecord(w io.Writer, rec Record) error {
	rec.Schema = StreamSchema
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

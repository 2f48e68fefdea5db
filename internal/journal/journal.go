// Package journal is the append-only record of a long watch (`ping --watch`,
// `trace --watch`): one NDJSON line per completed cycle, synced to disk before
// the next cycle starts, so that a crash or a reboot loses at most the cycle in
// progress. Reopening a journal resumes it: cycle numbers continue, the run
// number goes up by one, and a torn last line (a write cut short by the crash)
// is dropped and reported rather than treated as corruption.
//
// A journal line (schema linecheck.journal/v1):
//
//	{"schema":"linecheck.journal/v1","kind":"ping","cycle":12,"run":2,
//	 "time":"2026-11-30T04:00:00Z","end":"2026-11-30T04:00:10Z",
//	 "ping":[{"target":"127.0.0.1","addr":"127.0.0.1","protocol":"icmp",
//	          "sent":10,"recv":10,"late":0,"duplicates":0,"rtt_ms":[0.05,…]}]}
//
// A trace journal carries "trace": a linecheck.trace/v1 document of that one
// cycle instead of "ping"; a bw journal (`bw --watch`) carries "bw": the
// linecheck.bw/v1 result of that cycle's throughput test. Summarize (and
// SummarizeBW for bw) turns a journal into the hourly profile. A gpu journal
// (`gpu --watch`) carries "gpu": one sample per card of that cycle, and
// "xid": the Xid errors the kernel logged since the cycle before.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/linecheck/linecheck/internal/readlimit"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe/bw"
)

// Schema names a journal line.
const Schema = "linecheck.journal/v1"

// Kinds of journal.
const (
	KindPing  = "ping"
	KindTrace = "trace"
	KindBW    = "bw"
	KindGPU   = "gpu"
)

// Entry is one completed cycle, one journal line.
type Entry struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	// Cycle numbers the cycles of the journal from 1; they continue across restarts.
	Cycle int `json:"cycle"`
	// Run is 1 for the first process that wrote the journal and goes up by one
	// on every resume, so restarts stay visible in the record.
	Run  int       `json:"run"`
	Time time.Time `json:"time"` // cycle start
	End  time.Time `json:"end"`  // cycle end
	// Ping holds one result per target (kind ping).
	Ping []PingResult `json:"ping,omitempty"`
	// Trace is the trace of this one cycle (kind trace).
	Trace *route.Trace `json:"trace,omitempty"`
	// BW is the throughput test of this cycle (kind bw).
	BW *bw.Result `json:"bw,omitempty"`
	// GPU holds one sample per card (kind gpu); Xid the Xid errors logged
	// during the cycle.
	GPU []gpu.Sample `json:"gpu,omitempty"`
	Xid []gpu.Xid    `json:"xid,omitempty"`
	// Error is set when the cycle could not probe at all (network down, no
	// route): Ping (or Trace) then names the targets with nothing sent, so
	// the cycle counts as down for each and adds nothing to sent or loss.
	Error string `json:"error,omitempty"`
}

// PingResult is one target's outcome over one cycle.
type PingResult struct {
	Target   string    `json:"target"`
	Addr     string    `json:"addr"`
	Protocol string    `json:"protocol"` // icmp, tcp
	Port     int       `json:"port,omitempty"`
	Sent     int       `json:"sent"`
	Recv     int       `json:"recv"`
	Late     int       `json:"late"`
	Dup      int       `json:"duplicates"`
	RTTms    []float64 `json:"rtt_ms"` // RTTs of received replies, in send order
}

// Recovery tells what Open found in an existing journal.
type Recovery struct {
	Entries   int  // complete lines kept
	LastCycle int  // cycle number of the last complete line (0 when new)
	Runs      int  // highest run number found
	Torn      bool // a torn last line was dropped
	TornLine  int  // its line number
	TornBytes int  // its length in bytes (the file was truncated by this much)
	// Warnings are what was left out of kept lines ("path:line: …"), as
	// ReadInfo.Warnings.
	Warnings []string
}

// Writer appends cycles to a journal. It is not safe for concurrent use.
type Writer struct {
	f     *os.File
	path  string
	kind  string
	cycle int // last cycle written
	run   int
}

// Open opens (or creates) the journal at path for appending cycles of kind.
// An existing journal is checked line by line: a torn last line is cut off
// (and reported in Recovery), any other bad line is an error naming it, as is
// a journal of another kind.
func Open(path, kind string) (*Writer, Recovery, error) {
	var rec Recovery
	if kind != KindPing && kind != KindTrace && kind != KindBW && kind != KindGPU {
		return nil, rec, fmt.Errorf("journal: kind %q is not ping, trace, bw or gpu", kind)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, rec, fmt.Errorf("journal: %w", err)
	}
	entries, info, err := scan(f, path)
	if err != nil {
		f.Close()
		return nil, rec, err
	}
	rec = Recovery{Entries: len(entries), Torn: info.Torn, TornLine: info.TornLine, TornBytes: info.TornBytes, Warnings: info.Warnings}
	for _, e := range entries {
		if e.Kind != kind {
			f.Close()
			return nil, rec, fmt.Errorf("%s: holds %s cycles, not %s: use another --journal file", path, e.Kind, kind)
		}
		rec.LastCycle = max(rec.LastCycle, e.Cycle)
		rec.Runs = max(rec.Runs, e.Run)
	}
	if info.Torn {
		if err := f.Truncate(info.Good); err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("journal: cutting the torn last line of %s: %w", path, err)
		}
	}
	if _, err := f.Seek(info.Good, io.SeekStart); err != nil {
		f.Close()
		return nil, rec, fmt.Errorf("journal: %w", err)
	}
	if info.Unterminated {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("journal: ending the last line of %s: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, rec, fmt.Errorf("journal: %w", err)
	}
	// A new file's directory entry must reach the disk too, or a reboot could
	// lose the whole journal although every line was synced.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return &Writer{f: f, path: path, kind: kind, cycle: rec.LastCycle, run: rec.Runs + 1}, rec, nil
}

// Run returns the run number this writer stamps on its lines.
func (w *Writer) Run() int { return w.run }

// LastCycle returns the number of the last cycle written (0 for none).
func (w *Writer) LastCycle() int { return w.cycle }

// Append writes e as the next cycle (setting Schema, Kind, Cycle and Run) in a
// single write and syncs the file before returning the cycle number.
func (w *Writer) Append(e Entry) (int, error) {
	e.Schema, e.Kind, e.Cycle, e.Run = Schema, w.kind, w.cycle+1, w.run
	b, err := json.Marshal(e)
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return 0, fmt.Errorf("journal %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return 0, fmt.Errorf("journal %s: sync: %w", w.path, err)
	}
	w.cycle = e.Cycle
	return e.Cycle, nil
}

// Close closes the journal file.
func (w *Writer) Close() error { return w.f.Close() }

// ReadInfo tells how a journal was read.
type ReadInfo struct {
	Torn      bool  // the last line was torn and dropped
	TornLine  int   // its line number
	TornBytes int   // its length
	Good      int64 // byte length of the complete lines
	// Unterminated is set when the last entry is whole but lacks its
	// newline; it is kept, and Open adds the newline before appending.
	Unterminated bool
	// Warnings name what was left out of lines that were kept
	// ("path:line: …"): RTTs below zero (repairRTTs).
	Warnings []string
}

// Read reads every complete line of the journal at path. A torn last line is
// dropped and reported in ReadInfo; any other bad line is an error
// (path:line: what is wrong).
func Read(path string) ([]Entry, ReadInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ReadInfo{}, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	return scan(f, path)
}

// Decode reads journal lines from r (name is used in messages).
func Decode(r io.Reader, name string) ([]Entry, ReadInfo, error) { return scan(r, name) }

func scan(r io.Reader, name string) ([]Entry, ReadInfo, error) {
	var (
		out  []Entry
		info ReadInfo
	)
	// A bounded line: /dev/zero or a stray binary file has no newline,
	// and ReadBytes would hold all of it (issue 35).
	br := readlimit.NewLineReader(r, readlimit.Line)
	line := 0
	for {
		b, err := br.ReadLine()
		if len(b) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, info, fmt.Errorf("%s:%d: %w", name, line+1, err)
		}
		line++
		complete := err == nil // ends in '\n'
		body := bytes.TrimSpace(b)
		if len(body) == 0 && complete {
			info.Good += int64(len(b))
			continue
		}
		e, warns, perr := parseLine(body)
		for _, w := range warns {
			info.Warnings = append(info.Warnings, fmt.Sprintf("%s:%d: %s", name, line, w))
		}
		if perr == nil && len(out) > 0 && e.Cycle <= out[len(out)-1].Cycle {
			perr = fmt.Errorf("cycle: %d after %d: cycles must increase", e.Cycle, out[len(out)-1].Cycle)
		}
		if perr == nil && complete {
			out = append(out, e)
			info.Good += int64(len(b))
			continue
		}
		if perr == nil {
			// A whole entry that lacks only its newline can only be the last
			// line (ReadBytes stops at EOF): the write reached the disk but
			// for its final byte, so the cycle is kept.
			out = append(out, e)
			info.Good += int64(len(b))
			info.Unterminated = true
			break
		}
		// Only the very last line may be bad: that is a write the crash cut
		// short. A cut-short line is never a whole JSON value, so a last line
		// that is valid JSON but no journal entry (another file, or an
		// impossible entry) is an error.
		if _, peekErr := br.Peek(1); peekErr == io.EOF && !json.Valid(body) {
			info.Torn, info.TornLine, info.TornBytes = true, line, len(b)
			break
		}
		return nil, info, fmt.Errorf("%s:%d: %w", name, line, perr)
	}
	return out, info, nil
}

// parseLine decodes and checks one line; warns says what was left out of
// an entry that is kept (repairRTTs).
func parseLine(b []byte) (e Entry, warns []string, err error) {
	e, err = parseEntry(b)
	if err != nil {
		return e, nil, err
	}
	warns = repairRTTs(&e)
	if err := validate(e); err != nil {
		return e, nil, fmt.Errorf("impossible entry (cycle %d): %w: linecheck never writes this; correct or delete the line, or start another --journal file", e.Cycle, err)
	}
	return e, warns, nil
}

// repairRTTs leaves RTTs below zero out of e and says which: linecheck
// wrote them before issue 35 (a ping send time spread over its sendmmsg
// call could fall after the reply's kernel stamp: −0.002 to −20.8 ms), so
// they are a writer's clock fault, not damage. The reply stays received;
// its RTT is unknown, as a sweep now reports it (probe.PingResult
// .ClockFaults). A trace responder's min/avg/max are taken anew from its
// samples when it has them.
func repairRTTs(e *Entry) []string {
	var warns []string
	for i := range e.Ping {
		p := &e.Ping[i]
		if kept, dropped := nonNegative(p.RTTms); dropped > 0 {
			p.RTTms = kept
			warns = append(warns, fmt.Sprintf("cycle %d: ping %s: %d RTTs below zero (a clock fault of the writer) left out; the replies still count as received", e.Cycle, p.Target, dropped))
		}
	}
	if t := e.Trace; t != nil {
		for h := range t.Hops {
			for j := range t.Hops[h].Responders {
				r := &t.Hops[h].Responders[j]
				kept, dropped := nonNegative(r.Samples)
				if dropped == 0 && r.RTT.Min >= 0 {
					continue
				}
				// Without samples left the figures cannot be taken anew:
				// validate refuses the line.
				if len(kept) > 0 {
					r.Samples = kept
					r.RTT, r.Jitter = stats.Summarize(kept)
					warns = append(warns, fmt.Sprintf("cycle %d: trace hop ttl %d: responder %s: %d RTTs below zero (a clock fault of the writer) left out of its samples and RTT figures", e.Cycle, t.Hops[h].TTL, r.Addr, dropped))
				}
			}
		}
	}
	return warns
}

// nonNegative is v without its values below zero (NaN kept: validate
// refuses it), and how many those were.
func nonNegative(v []float64) ([]float64, int) {
	n := 0
	for _, x := range v {
		if x < 0 {
			n++
		}
	}
	if n == 0 {
		return v, 0
	}
	out := make([]float64, 0, len(v)-n)
	for _, x := range v {
		if !(x < 0) {
			out = append(out, x)
		}
	}
	return out, n
}

// parseEntry decodes one line and checks its frame: schema, kind, cycle.
func parseEntry(b []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&e); err != nil {
		return e, fmt.Errorf("not a journal line: %w", jsonmsg.Record(b, err))
	}
	if dec.More() {
		return e, errors.New("not a journal line: text after the JSON object")
	}
	if e.Schema != Schema {
		return e, fmt.Errorf("not a journal line: schema %q, want %q", e.Schema, Schema)
	}
	switch e.Kind {
	case KindPing:
	case KindTrace:
		if e.Trace == nil && e.Error == "" {
			return e, errors.New("trace: missing in a trace cycle")
		}
	case KindBW:
		if e.BW == nil && e.Error == "" {
			return e, errors.New("bw: missing in a bw cycle")
		}
	case KindGPU:
		if len(e.GPU) == 0 && e.Error == "" {
			return e, errors.New("gpu: no sample in a gpu cycle")
		}
	default:
		return e, fmt.Errorf("kind: %q is not ping, trace, bw or gpu", e.Kind)
	}
	if e.Cycle < 1 {
		return e, fmt.Errorf("cycle: %d is not a positive number", e.Cycle)
	}
	return e, nil
}

// maxRTTms bounds a believable round trip: no probe of linecheck waits an
// hour for its reply, so a larger RTT is damage, not a measurement.
const maxRTTms = 3600e3

// validate refuses counts and times that no probe can produce: they would
// otherwise turn into a negative loss or an absurd percentile in --report.
func validate(e Entry) error {
	for i, p := range e.Ping {
		where := fmt.Sprintf("ping[%d] (%s)", i, p.Target)
		switch {
		case p.Sent < 0 || p.Recv < 0 || p.Late < 0 || p.Dup < 0:
			return fmt.Errorf("%s: negative count (sent %d, recv %d, late %d, duplicates %d)", where, p.Sent, p.Recv, p.Late, p.Dup)
		case p.Recv > p.Sent:
			return fmt.Errorf("%s: recv %d is more than sent %d", where, p.Recv, p.Sent)
		case len(p.RTTms) > p.Recv:
			return fmt.Errorf("%s: %d RTTs for %d replies", where, len(p.RTTms), p.Recv)
		}
		for _, r := range p.RTTms {
			if err := checkRTT(r); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	if t := e.Trace; t != nil {
		for _, h := range t.Hops {
			where := fmt.Sprintf("trace hop ttl %d", h.TTL)
			if h.Sent < 0 || h.Late < 0 || h.Duplicates < 0 {
				return fmt.Errorf("%s: negative count (sent %d, late %d, duplicates %d)", where, h.Sent, h.Late, h.Duplicates)
			}
			recv := 0
			for _, r := range h.Responders {
				if r.Recv < 0 {
					return fmt.Errorf("%s: responder %s: negative recv %d", where, r.Addr, r.Recv)
				}
				recv += r.Recv
				for _, v := range append([]float64{r.RTT.Min, r.RTT.Avg, r.RTT.Max}, r.Samples...) {
					if err := checkRTT(v); err != nil {
						return fmt.Errorf("%s: responder %s: %w", where, r.Addr, err)
					}
				}
			}
			if recv > max(h.Sent, 1) {
				return fmt.Errorf("%s: recv %d is more than sent %d", where, recv, h.Sent)
			}
		}
	}
	if b := e.BW; b != nil {
		if b.Bytes < 0 || b.DurationS < 0 || math.IsInf(b.DurationS, 0) || math.IsNaN(b.DurationS) {
			return fmt.Errorf("bw: bytes %d over %g s", b.Bytes, b.DurationS)
		}
		check := func(what string, v *float64) error {
			if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v) || *v > maxBps) {
				return fmt.Errorf("bw: %s %g bit/s is not a throughput", what, *v)
			}
			return nil
		}
		if err := check("mean", b.Throughput.Mean); err != nil {
			return err
		}
		for i, iv := range b.Intervals {
			v := iv.Bps
			if err := check(fmt.Sprintf("interval %d", i+1), &v); err != nil {
				return err
			}
		}
	}
	for i, g := range e.GPU {
		for _, v := range []struct {
			what     string
			p        *float64
			min, max float64
		}{{"temp_c", g.TempC, -60, 200}, {"power_w", g.PowerW, 0, 5000}, {"util_gpu_pct", g.UtilGPU, 0, 100}, {"sm_clock_mhz", g.SMClockMHz, 0, 10000}} {
			if v.p != nil && (math.IsNaN(*v.p) || *v.p < v.min || *v.p > v.max) {
				return fmt.Errorf("gpu[%d] (card %d): %s %g is not a reading (%g to %g)", i, g.Index, v.what, *v.p, v.min, v.max)
			}
		}
	}
	return nil
}

// maxBps bounds a believable throughput (10 Tbit/s, far above any one host).
const maxBps = 1e13

func checkRTT(v float64) error {
	if math.IsNaN(v) || v < 0 || v > maxRTTms {
		return fmt.Errorf("RTT %g ms is not a round trip (0 to %g ms)", v, maxRTTms)
	}
	return nil
}

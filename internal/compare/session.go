package compare

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/pingfile"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/tsv"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// SessionOptions say how to open a session on a candidates file.
type SessionOptions struct {
	// Offline replays the recordings only; otherwise the caller runs the
	// live loops (engine.MonitorLoops over File and ASN).
	Offline bool
	// Now picks the month of a synthetic traffic profile (the month before it).
	Now time.Time
	// ASNDB is an optional offline IP-to-ASN file; NoASN leaves the
	// bundled offline dataset out (--no-asn), as LoadHopNames does.
	ASNDB string
	NoASN bool
	// PrefixTable is the operator's --prefix-table (nil: none).
	PrefixTable *route.PrefixTable

	// Batch opens the session for one evaluation (compare's report, Run):
	// the traffic is always priced (a file without offers or traffic
	// fails), an offer that cannot be priced fails the session, no probe
	// streams are read and no loops are made; live, Measure measures every
	// candidate once (one Measurement each, in file order) instead of the
	// recordings being replayed.
	Batch   bool
	Measure func(cs []*candidates.Candidate) ([]*verdict.Measurement, error)
	// Billing are the rules every offer is priced under (compare's
	// --usage-hours and --no-projection).
	Billing billing.Options
	// Progress, when set, is told what the session is doing.
	Progress func(format string, a ...any)
}

func (o SessionOptions) progress(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(format, a...)
	}
}

// Session is a run opened on a candidates file, for a surface that shows
// it as it goes (the TUI): the hop names' AS sources loaded (LoadHopNames), the traffic priced
// under the offers when the file has both, every candidate's recordings
// replayed and evaluated as compare evaluates them, the recorded probe
// streams to replay in time, and, live, the loops that measure.
type Session struct {
	File *candidates.File
	ASN  route.ASNDB
	// Pricing is nil when the file names no offers or no traffic (the TUI
	// then shows route quality only).
	Pricing    *verdict.Pricing
	Candidates []SessionCandidate // in file order
}

// SessionCandidate is one candidate as the session opened it.
type SessionCandidate struct {
	Candidate *candidates.Candidate
	// Measurement is what the recordings say (Replay).
	Measurement *verdict.Measurement
	// Evaluation is Evaluate of the recordings, with the offer's Monthly
	// (nil when not priced) and the throughput related to its port.
	Evaluation *verdict.Evaluation
	// Stream is the recorded probe stream (offline), in file order.
	Stream []probe.Record
}

// OpenSession opens f: a live session is refused for a recorded_only file
// or one with documentation targets before anything is read. An offer that
// cannot be priced leaves that candidate's Monthly nil (a surface shows
// "-"); bad recordings, a bad ASN file or bad pricing inputs fail.
func OpenSession(f *candidates.File, o SessionOptions) (*Session, error) {
	if !o.Offline {
		if f.RecordedOnly {
			return nil, candidates.ErrRecordedOnly
		}
		if err := engine.CheckLiveTargets(f); err != nil {
			return nil, err
		}
	}
	db, err := LoadHopNames(o.ASNDB, o.NoASN, o.PrefixTable)
	if err != nil {
		return nil, err
	}
	s := &Session{File: f, ASN: db}
	if o.Batch || f.Offers != "" && (f.Traffic.Log != "" || f.Traffic.MonthlyGB > 0) {
		o.progress("pricing the traffic profile under every offer")
		// Pricing first: without fx: it settles the base currency (NewPricingWith).
		if s.Pricing, err = verdict.NewPricingWith(f, o.Now, o.Billing); err != nil {
			return nil, err
		}
	}
	var live []*verdict.Measurement
	if o.Batch && !o.Offline && o.Measure != nil {
		cs := make([]*candidates.Candidate, len(f.Candidates))
		for i := range f.Candidates {
			cs[i] = &f.Candidates[i]
		}
		if live, err = o.Measure(cs); err != nil {
			return nil, err
		}
	}
	for i := range f.Candidates {
		c := &f.Candidates[i]
		var m *verdict.Measurement
		if live != nil {
			m = live[i]
		} else {
			if o.Batch {
				o.progress("%s: replaying recordings", c.Name)
			}
			if m, err = Replay(c); err != nil {
				return nil, err
			}
		}
		ev := verdict.Evaluate(f, c, m, db)
		if s.Pricing != nil {
			mo, whatIf, err := s.Pricing.Monthly(c)
			if err != nil && o.Batch {
				return nil, err
			}
			if err == nil {
				ev.Monthly, ev.WhatIf = mo, whatIf
				verdict.RelatePort(ev.Throughput, mo)
				if ev.Horizon, err = s.Pricing.Horizon(c); err != nil && o.Batch {
					return nil, err
				}
			}
		}
		sc := SessionCandidate{Candidate: c, Measurement: m, Evaluation: ev}
		if o.Offline && !o.Batch && len(c.Recorded.ProbeFiles) > 0 {
			if sc.Stream, err = readStreams(c.Recorded.ProbeFiles); err != nil {
				return nil, fmt.Errorf("%s: recorded.probes: %w", c.Name, err)
			}
		}
		s.Candidates = append(s.Candidates, sc)
	}
	return s, nil
}

// readStreams reads the probe streams of recorded.probes one after the
// other (the days of a trial), in time order: the windows sort each
// target's records by time, a replay reads them as recorded.
func readStreams(paths []string) ([]probe.Record, error) {
	all, _, err := readVantageStreams(paths)
	return all, err
}

// scanStreams gives every record of the probe streams of recorded.probes
// to each, file after file, and returns the streams of the measurement
// networks' files (RIPE Atlas, Globalping ping results: read whole, one
// stream per vantage). linecheck's own streams are read a line at a time,
// holding no record (Replay: a month of probes costs its windows, not its
// records).
func scanStreams(paths []string, each func(probe.Record)) ([]pingfile.Stream, error) {
	var vantages []pingfile.Stream
	for _, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		ss, err := pingfile.Scan(fh, p, each)
		fh.Close()
		if err != nil {
			return nil, streamError(err)
		}
		for _, s := range ss {
			if s.Vantage != nil {
				vantages = append(vantages, s)
			}
		}
	}
	return vantages, nil
}

// readVantageStreams is readStreams with the vantages of the measurement
// networks' files (RIPE Atlas, Globalping ping results), in file order.
func readVantageStreams(paths []string) ([]probe.Record, []*route.Vantage, error) {
	var all []probe.Record
	var vs []*route.Vantage
	for _, p := range paths {
		ss, err := readStream(p)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range ss {
			all = append(all, s.Records...)
			if s.Vantage != nil {
				vs = append(vs, s.Vantage)
			}
		}
	}
	if len(paths) > 1 || len(vs) > 1 {
		sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	}
	return all, vs, nil
}

func readStream(path string) ([]pingfile.Stream, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// Any format of the registry: linecheck's stream, RIPE Atlas or
	// Globalping ping results (a stream per vantage).
	ss, err := pingfile.Read(fh, path)
	return ss, streamError(err)
}

// streamError words a probe stream's reading error for people: a record of
// the wrong shape by its field (jsonmsg), a line over the reader's 1 MiB
// by its length, never Go's parser ("json: cannot unmarshal …", "bufio.Scanner:
// token too long").
func streamError(err error) error {
	var se *probe.StreamError
	switch {
	case !errors.As(err, &se):
		return err
	case se.Record != nil:
		return fmt.Errorf("%s:%d: not a probe record: %w", se.Name, se.Line, jsonmsg.Record(se.Record, se.Err))
	}
	return tsv.ScanError(se.Name, se.Line, 1<<20, se.Err)
}

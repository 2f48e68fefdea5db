package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/probe/bw"
)

// Throughput is a candidate's measured throughput: one live test, a
// recorded linecheck.bw/v1 document, or a `bw --watch` journal (recorded.bw).
// Rates in bit/s; nil = not measured.
type Throughput struct {
	// Source is "live" or the recording's path.
	Source    string `json:"source"`
	Server    string `json:"server"`
	Direction string `json:"direction"`
	Tests     int    `json:"tests"`
	// P5 is the 5th percentile of the interval rates: the figure
	// sla.min_throughput_mbps is checked on.
	P5   *float64 `json:"p5_bps"`
	P50  *float64 `json:"p50_bps"`
	Mean *float64 `json:"mean_bps"`
	// Oversell = 1 − worst-hour p50 / best-hour p50, from a journal only.
	Oversell  *float64 `json:"oversell"`
	WorstHour *int     `json:"worst_hour,omitempty"`
	BestHour  *int     `json:"best_hour,omitempty"`
	// PortBps is the port the offer sells (its port_mbps); Achieved = Mean
	// / PortBps, the share of the sold port the line really carried.
	PortBps  *float64 `json:"port_bps"`
	Achieved *float64 `json:"achieved"`
	// P95OfCarried = the traffic profile's 95th / P5: above 1, the line as
	// measured cannot carry the traffic's 95th.
	P95OfCarried *float64 `json:"p95_of_carried"`
	// Error is why a live test gave no figures.
	Error string `json:"error,omitempty"`

	// entries are a journal's tests with their times, for the figures of
	// an SLA window (Within); nil for a single test.
	entries []journal.Entry
	info    journal.ReadInfo
}

// Within is the throughput of the journal's tests that started in the SLA
// window w (its p5 for min_throughput_mbps, its oversell between the
// window's own hours); nil for a single test, which has no hours to judge
// a window on, and for a journal with no test in w (no data).
func (t *Throughput) Within(w candidates.Window) *Throughput {
	if t == nil || t.entries == nil {
		return nil
	}
	var in []journal.Entry
	for _, e := range t.entries {
		if w.Contains(e.Time) {
			in = append(in, e)
		}
	}
	if len(in) == 0 {
		return nil
	}
	return ThroughputFromJournal(in, t.info, t.Source)
}

// Hourly tells whether the throughput has hours (a journal), so that an SLA
// window can be judged on it.
func (t *Throughput) Hourly() bool { return t != nil && t.entries != nil }

// ThroughputFromResult summarises one bw test.
func ThroughputFromResult(r *bw.Result, source string) *Throughput {
	t := &Throughput{Source: source, Server: r.Server, Direction: r.Direction, Tests: 1,
		P5: r.Throughput.P5, P50: r.Throughput.P50, Mean: r.Throughput.Mean}
	return t
}

// ThroughputFromJournal summarises a bw journal: p5 and p50 over every
// interval of every test, the mean of the tests' means, and the oversell
// of the hourly profile.
func ThroughputFromJournal(entries []journal.Entry, info journal.ReadInfo, path string) *Throughput {
	rep := journal.SummarizeBW(entries, info, path, time.UTC, journal.BWReportOptions{Share: 1, FromHour: 19, ToHour: 23})
	t := &Throughput{Source: path, Server: rep.Server, Direction: rep.Direction, Tests: rep.Cycles - rep.ErrorCycles,
		P5: rep.Throughput.P5, P50: rep.Throughput.P50, Mean: rep.Throughput.Mean, Oversell: rep.Oversell,
		entries: entries, info: info}
	if rep.Worst != nil {
		w, b := rep.Worst.Hour, rep.Best.Hour
		t.WorstHour, t.BestHour = &w, &b
	}
	return t
}

// ReplayThroughput reads recorded.bw: a linecheck.bw/v1 document (`bw
// --format json`) or a bw journal (`bw --watch --journal`).
func ReplayThroughput(path string) (*Throughput, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	first, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if err := json.Unmarshal(first, &head); err == nil && head.Schema == journal.Schema {
		entries, info, err := journal.Decode(bytes.NewReader(b), path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Kind != journal.KindBW {
				return nil, fmt.Errorf("%s: a %s journal, not a bw one: give the journal of `linecheck bw --watch`", path, e.Kind)
			}
		}
		return ThroughputFromJournal(entries, info, path), nil
	}
	var r bw.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a bw result (linecheck.bw/v1) nor a bw journal: %w", path, jsonmsg.Describe(b, err))
	}
	if r.Schema != bw.Schema {
		return nil, fmt.Errorf("%s: schema %q: want %s (`linecheck bw --format json`) or a bw journal", path, r.Schema, bw.Schema)
	}
	return ThroughputFromResult(&r, path), nil
}

// RelatePort relates a throughput test to the candidate's offer: the port it
// sells and the traffic's 95th (compare and the TUI alike). Nothing happens
// without a test or without a port.
func RelatePort(t *Throughput, m *Monthly) {
	if t != nil && m != nil && m.Carry != nil {
		t.SetPort(m.Carry.PortMbps, m.Carry.P95Mbps*1e6)
	}
}

// SetPort relates the throughput to the port sold and the traffic's 95th.
func (t *Throughput) SetPort(portMbps, trafficP95Bps float64) {
	if portMbps > 0 {
		p := portMbps * 1e6
		t.PortBps = &p
		if t.Mean != nil {
			a := round(*t.Mean/p, 4)
			t.Achieved = &a
		}
	}
	if trafficP95Bps > 0 && t.P5 != nil && *t.P5 > 0 {
		u := round(trafficP95Bps / *t.P5, 4)
		t.P95OfCarried = &u
	}
}

package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe/bw"
)

// SLA check names of the throughput thresholds.
const (
	CheckMinThroughput = "min_throughput_mbps"
	CheckMaxOversell   = "max_oversell"
)

// DefaultBWTime is the live throughput test's measured time (compare
// --bw-time): short, because compare tests every candidate in turn.
const DefaultBWTime = 5 * time.Second

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
}

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
		P5: rep.Throughput.P5, P50: rep.Throughput.P50, Mean: rep.Throughput.Mean, Oversell: rep.Oversell}
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

// defaultBusyRetries is how long RunBandwidthTest waits before each new try
// when the server says it is busy: an iperf3 server serves one client at a
// time, and a connection that has only just closed (a TCP probe of the same
// port, the previous candidate's test) can hold it for a moment.
var defaultBusyRetries = []time.Duration{250 * time.Millisecond, time.Second, 3 * time.Second}

// MeasureThroughput runs one live test against the candidate's iperf3
// server for d, in direction (download: the server sends), through
// RunBandwidthTest. A test that cannot run gives a Throughput with Error
// and no figures.
func MeasureThroughput(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string) *Throughput {
	return measureThroughput(ctx, t, d, direction, defaultBusyRetries)
}

// RunBandwidthTest is the one live throughput test of compare, the TUI and
// serve --bw-every: d measured after 1 s of warm-up (omitted), in direction,
// against the candidate's iperf3 server; a busy server is tried again after
// 0.25 s, 1 s and 3 s. The result may come with an error (a test cut short
// gives the figures of what ran).
func RunBandwidthTest(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string) (*bw.Result, error) {
	return runBandwidthTest(ctx, t, d, direction, defaultBusyRetries)
}

func runBandwidthTest(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string, busyRetries []time.Duration) (*bw.Result, error) {
	cfg := bw.Config{Percentile: stats.NearestRank, Port: t.Port, Duration: d, Reverse: direction != bw.Upload, Omit: time.Second}
	r, err := bw.Run(ctx, t.Addr, cfg)
	for _, wait := range busyRetries {
		if !errors.Is(err, bw.ErrBusy) || pacing.Sleep(ctx, pacing.RealClock{}, wait) != nil {
			break
		}
		r, err = bw.Run(ctx, t.Addr, cfg)
	}
	return r, err
}

func measureThroughput(ctx context.Context, t candidates.BandwidthTest, d time.Duration, direction string, busyRetries []time.Duration) *Throughput {
	r, err := runBandwidthTest(ctx, t, d, direction, busyRetries)
	if r == nil {
		return &Throughput{Source: "live", Server: t.Addr, Direction: direction, Error: err.Error()}
	}
	tp := ThroughputFromResult(r, "live")
	if err != nil {
		tp.Error = err.Error()
	}
	return tp
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

// CheckThroughput checks min_throughput_mbps on the p5 of the intervals and
// max_oversell on the journal's oversell. No measurement fails the check
// with a note, as every other SLA check does.
func CheckThroughput(minMbps, maxOversell *float64, t *Throughput) []Check {
	var checks []Check
	if minMbps != nil {
		c := Check{Name: CheckMinThroughput, Required: *minMbps, Unit: "Mbps"}
		switch {
		case t == nil:
			c.Note, c.Unmeasured = NoData+": no throughput test: give the candidate bandwidth_test: {addr, port} (live) or recorded.bw", true
		case t.P5 == nil:
			c.Unmeasured = true
			c.Note = NoData + ": the throughput test gave no intervals"
			if t.Error != "" {
				c.Note = NoData + ": the throughput test failed: " + t.Error
			}
		default:
			mbps := round(*t.P5/1e6, 3)
			c.Measured, c.Pass = mbps, mbps >= *minMbps
			if t.Direction != "" && t.Direction != bw.Download {
				c.Note = "measured " + t.Direction + ", not download"
			}
		}
		checks = append(checks, c)
	}
	if maxOversell != nil {
		c := Check{Name: CheckMaxOversell, Required: *maxOversell, Unit: "fraction"}
		switch {
		case t == nil || t.Oversell == nil:
			c.Unmeasured = true
			c.Note = NoData + ": oversell needs tests around the clock: record `linecheck bw --watch --journal FILE` and give it as recorded.bw"
		default:
			c.Measured, c.Pass = round(*t.Oversell, 4), *t.Oversell <= *maxOversell
		}
		checks = append(checks, c)
	}
	return checks
}

// measureThroughputs runs the live throughput test of every candidate that
// declares a bandwidth_test, one after another (each fills the line; an
// iperf3 server serves one test at a time), download direction.
func measureThroughputs(ctx context.Context, cs []*candidates.Candidate, ms []*Measurement, opt Options) {
	d := opt.BWTime
	if d <= 0 {
		d = DefaultBWTime
	}
	for i, c := range cs {
		if c.BandwidthTest == nil || ctx.Err() != nil {
			continue
		}
		opt.progress("%s: throughput test (download, %v) against %s port %d", c.Name, d, c.BandwidthTest.Addr, c.BandwidthTest.Port)
		tp := MeasureThroughput(ctx, *c.BandwidthTest, d, bw.Download)
		if tp.Error != "" {
			ms[i].Warnings = append(ms[i].Warnings, "throughput test: "+tp.Error)
		}
		ms[i].Throughput = tp
	}
}

// RelatePort relates a throughput test to the candidate's offer: the port it
// sells and the traffic's 95th (compare and the TUI alike). Nothing happens
// without a test or without a port.
func RelatePort(t *Throughput, m *Monthly) {
	if t != nil && m != nil && m.Carry != nil {
		t.SetPort(m.Carry.PortMbps, m.Carry.P95Mbps*1e6)
	}
}

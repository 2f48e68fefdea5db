package trial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/percentile"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// Files of the line part. compare reads a bundle's backtrace as the
// candidate's recorded.return and its journal as recorded.bw.
const (
	LineDir       = "line"
	BacktraceFile = "backtrace.json" // a linecheck.backtrace/v1 document
	BWJournalFile = "bw.journal"     // a kind-bw journal: one entry a test served
)

// Line is the line part's options: the return routes toward the users'
// carriers, and the throughput server the buyer's office tests against.
type Line struct {
	// Targets are the backtrace's targets (a --targets file's), TargetsFrom
	// where they came from; none: the backtrace is not run.
	Targets     []route.BacktraceTarget
	TargetsFrom string
	// Trace is each target's trace, Rate the probes a second of all
	// together; ASN names the hops (nil: unnamed).
	Trace probe.TraceConfig
	Rate  float64
	ASN   route.ASNDB
	// Vantage names this server in the backtrace document.
	Vantage string
	// Listen is the throughput server's [host]:port ("": not served);
	// Duration how long it serves; SyncEvery how often the bundle's
	// manifest is rewritten meanwhile (0: every hour).
	Listen    string
	Duration  time.Duration
	SyncEvery time.Duration
	// OnListen, when set, is told the address the server bound.
	OnListen func(net.Addr)
}

// backtraceBurst is how many probes may leave at once before Rate
// applies: one TTL sweep of a target (backtrace's own).
const backtraceBurst = 16

// runLine traces the return routes toward Line.Targets into
// line/backtrace.json, then serves iperf3-protocol tests on Line.Listen
// for Line.Duration, each test appended to line/bw.journal as it ends and
// the bundle's manifest rewritten every SyncEvery, so the bundle is whole
// hour by hour. Ctrl-C stops it as an interrupted part with what was
// journalled kept.
func runLine(ctx context.Context, b *Bundle, o *Options) Part {
	p := Part{Name: PartLine}
	l := o.Line
	var notRun []string
	if len(l.Targets) == 0 {
		notRun = append(notRun, "backtrace not run (no --targets FILE)")
	} else {
		doc, err := traceTargets(ctx, l)
		rel := path.Join(LineDir, BacktraceFile)
		if err == nil {
			err = b.WriteJSON(filepath.FromSlash(rel), doc)
		}
		if err != nil {
			p.Status, p.Reason = StatusError, "backtrace: "+err.Error()
			return p
		}
		p.Files = append(p.Files, rel)
		b.manifest.Line.Backtrace = rel
		traced := 0
		for _, r := range doc.Results {
			if r.Trace != nil {
				traced++
			}
		}
		p.Lines = append(p.Lines, fmt.Sprintf("backtrace: %d of %d targets of %s traced (%s)", traced, len(doc.Results), l.TargetsFrom, rel))
		if doc.Partial {
			p.Status, p.Reason = StatusInterrupted, "stopped during the backtrace"
			return p
		}
	}
	if l.Listen == "" {
		notRun = append(notRun, "throughput server not run (no --listen)")
	} else {
		served, failed, err := serveBW(ctx, b, o)
		rel := path.Join(LineDir, BWJournalFile)
		if _, serr := os.Stat(filepath.Join(b.Dir, filepath.FromSlash(rel))); serr == nil {
			p.Files = append(p.Files, rel)
			b.manifest.Line.BWJournal = rel
		}
		if err != nil {
			p.Status, p.Reason = StatusError, "throughput server: "+err.Error()
			return p
		}
		p.Lines = append(p.Lines, fmt.Sprintf("throughput server on %s: %d tests served, %d failed or cut short", l.Listen, served, failed))
		if ctx.Err() != nil {
			p.Status, p.Reason = StatusInterrupted, fmt.Sprintf("the throughput server was stopped before its %v", l.Duration)
			return p
		}
	}
	switch {
	case len(p.Files) == 0:
		p.Status, p.Reason = StatusNotChecked, strings.Join(notRun, "; ")
	default:
		// The line is judged by compare against the candidate's SLA, from
		// the bundle; the trial records it.
		p.Status, p.Reason = StatusRan, strings.Join(notRun, "; ")
	}
	return p
}

// traceTargets traces every target under one rate budget, as backtrace
// does, into a backtrace document.
func traceTargets(ctx context.Context, l Line) (*route.BacktraceDoc, error) {
	names, addrs := make([]string, len(l.Targets)), make([]netip.Addr, len(l.Targets))
	for i, t := range l.Targets {
		a, err := netip.ParseAddr(t.Addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an IP address", t.Name, t.Addr)
		}
		names[i], addrs[i] = t.Addr, a
	}
	res, err := pacing.TraceAll(ctx, names, addrs, l.Trace, pacing.NewBurstBudget(l.Rate, backtraceBurst), func() {})
	if err != nil {
		return nil, err
	}
	doc := &route.BacktraceDoc{Schema: route.BacktraceSchema, Vantage: l.Vantage, ASNData: route.DataInfo(l.ASN), Results: []route.BacktraceResult{}}
	for i, t := range l.Targets {
		doc.Results = append(doc.Results, route.BacktraceOf(t, res[i].Run, res[i].Err, l.ASN, false))
	}
	doc.Partial = ctx.Err() != nil
	return doc, nil
}

// serveBW runs the throughput server for Line.Duration (or until ctx
// ends), journalling every test as it ends; served and failed count them.
func serveBW(ctx context.Context, b *Bundle, o *Options) (served, failed int, err error) {
	l := o.Line
	jpath := filepath.Join(b.Dir, LineDir, BWJournalFile)
	if err := os.MkdirAll(filepath.Dir(jpath), 0o755); err != nil {
		return 0, 0, err
	}
	var w *journal.Writer // opened once the server is bound: no test comes before
	var mu sync.Mutex     // the journal and the bundle's manifest
	var werr error
	srv, err := bw.Listen(bw.ServerConfig{Addr: l.Listen, Network: "tcp", Percentile: percentile.NearestRank,
		OnResult: func(res *bw.Result, err error) {
			if errors.Is(err, bw.ErrNoClient) {
				return // a port check, no test
			}
			mu.Lock()
			defer mu.Unlock()
			e := journal.Entry{End: o.now().UTC(), BW: res, Time: o.now().UTC()}
			if res != nil && !res.Start.IsZero() {
				e.Time = res.Start.UTC()
			}
			if err != nil {
				e.Error = err.Error()
				failed++
			} else {
				served++
			}
			if _, aerr := w.Append(e); aerr != nil && werr == nil {
				werr = aerr
			}
		}})
	if err != nil {
		return 0, 0, fmt.Errorf("--listen %s: %w", l.Listen, err)
	}
	if w, _, err = journal.Open(jpath, journal.KindBW); err != nil {
		done, cancel := context.WithCancel(ctx)
		cancel()
		_ = srv.Serve(done) // closes the port at once
		return 0, 0, err
	}
	defer w.Close()
	if l.OnListen != nil {
		l.OnListen(srv.Addr())
	}
	a := srv.Addr()
	o.progress("line: throughput server on %s for %v: from the office, linecheck bw --port %d THIS-SERVER (or iperf3 -c THIS-SERVER -p %d)", a, l.Duration, a.Port, a.Port)
	sctx, cancel := context.WithTimeout(ctx, l.Duration)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	every := l.SyncEvery
	if every <= 0 {
		every = time.Hour
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			mu.Lock()
			defer mu.Unlock()
			return served, failed, errors.Join(err, werr)
		case <-tick.C:
			mu.Lock()
			b.SetPart(Part{Name: PartLine, Status: StatusRunning, Reason: fmt.Sprintf("serving throughput tests: %d so far", served+failed)})
			serr := b.Sync(o.now(), false)
			mu.Unlock()
			if serr != nil {
				cancel()
				<-done
				return served, failed, serr
			}
		}
	}
}

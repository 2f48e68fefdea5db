package tui

import (
	"context"
	"fmt"
	"math"
	"net"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
	"github.com/linecheck/linecheck/probe"
)

// The same recordings (samples/) go to compare (a replayed run), to the
// TUI (every record and trace through Update) and to serve (each record a
// probe outcome of its target, the forward recording its trace): all three
// state the same figures — loss, RTT percentiles, the SLA's jitter, line
// class, every SLA check — and compare and the TUI the same monthly cost.
// Serve exports no RTT percentile but p95 and no cost; what it exports is
// compared: its checks (rtt_p95_ms, loss, jitter_ms, line_class,
// stretch) and linecheck_jitter_seconds.
func TestSamplesGiveTheSameFiguresInCompareTheTUIAndServe(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	f, err := candidates.Load(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Run(context.Background(), f, compare.Options{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}

	// The TUI, fed every recorded trace and probe record.
	feed, err := FeedFromFile(samplesFile, FeedOptions{Offline: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	m := NewLoaded(context.Background(), nil, feed.Snapshot, Options{Width: 100, Height: 30, NoColor: true})
	var msgs UpdatesMsg
	for _, tr := range feed.Traces {
		msgs = append(msgs, tr)
	}
	for name, recs := range feed.Streams {
		for _, r := range recs {
			msgs = append(msgs, ProbeMsg{Candidate: name, Record: r})
		}
	}
	m = step(t, m, msgs)

	// serve, fed each record as one probe outcome of its target, in time
	// order, and the forward recording as its first target's last trace.
	// The samples are recorded_only, which serve's loader refuses (it
	// probes): its configuration is built here as exporter.LoadConfig
	// builds it — every target, the sla block, each candidate's floor.
	var targets []exporter.Target
	floor := map[string]float64{}
	for i, c := range f.Candidates {
		for _, tg := range c.Targets {
			targets = append(targets, exporter.Target{Candidate: c.Name, Addr: tg.Addr, Protocol: tg.Protocol, Port: tg.Port})
		}
		if fl, ok := verdict.FloorMs(f, &f.Candidates[i]); ok {
			floor[c.Name] = fl
		}
	}
	// serve's clock is each record's time, and its window holds the whole
	// recording: its latest evening is then the recording's one evening,
	// the one compare judges (issue 30).
	var clock time.Time
	e := exporter.New(nil)
	e.SetWindow(0, 1000, func() time.Time { return clock })
	e.SetTargets(targets, now)
	e.SetSLA(f.SLA, floor)
	for _, c := range f.Candidates {
		recs := append([]probe.Record(nil), feed.Streams[c.Name]...)
		sort.SliceStable(recs, func(a, b int) bool { return recs[a].Time.Before(recs[b].Time) })
		if len(recs) > 1000 {
			t.Fatalf("%s: %d records, more than serve's window of 1000 here", c.Name, len(recs))
		}
		for _, r := range recs {
			clock = r.Time
			tg := exporter.Target{Candidate: c.Name, Addr: r.Addr, Protocol: r.Protocol, Port: r.Port}
			if r.Protocol == probe.ICMP {
				tg.Port = 0
			}
			o := exporter.PingOutcome{Sent: 1}
			switch r.Status {
			case probe.StatusOK:
				o.Recv, o.RTTms = 1, []float64{*r.RTTms}
			case probe.StatusLate:
				o.Late = 1
			case probe.StatusDup:
				o = exporter.PingOutcome{Dup: 1}
			}
			e.ObservePing(tg, o)
		}
		tr, err := route.ReadTraceFile(c.Recorded.Forward)
		if err != nil {
			t.Fatal(err)
		}
		route.Annotate(tr, nil)
		first := c.Targets[0]
		e.ObserveTrace(exporter.Target{Candidate: c.Name, Addr: first.Addr, Protocol: first.Protocol, Port: first.Port}, tr, nil)
	}
	serveVerdicts := map[string]verdict.Verdict{}
	for _, s := range e.SLA() {
		serveVerdicts[s.Candidate] = s.Verdict
	}

	for _, ev := range res.Candidates {
		want := ev.Route
		c := m.Candidate(ev.Name)
		if c == nil {
			t.Fatalf("%s: not in the TUI", ev.Name)
		}
		got := c.q
		// Figures: compare's route block and the TUI's quality.
		if got.Sent != want.Sent || got.Recv != want.Recv || got.Loss != want.Loss {
			t.Errorf("%s: TUI sent/recv/loss %d/%d/%v, compare %d/%d/%v", ev.Name, got.Sent, got.Recv, got.Loss, want.Sent, want.Recv, want.Loss)
		}
		if got.RTT != want.RTT {
			t.Errorf("%s: TUI RTT %+v, compare %+v", ev.Name, got.RTT, want.RTT)
		}
		if got.Jitter != want.Jitter {
			t.Errorf("%s: TUI jitter %+v, compare %+v", ev.Name, got.Jitter, want.Jitter)
		}
		if c.LineClass != want.LineClass || got.Stretch != want.Stretch {
			t.Errorf("%s: TUI class %s stretch %v, compare %s %v", ev.Name, c.LineClass, got.Stretch, want.LineClass, want.Stretch)
		}
		// Every SLA check, as compare states it.
		if !reflect.DeepEqual(c.SLA, ev.SLA) {
			t.Errorf("%s: TUI verdict %+v, compare %+v", ev.Name, c.SLA, ev.SLA)
		}
		// Monthly cost in the offer's currency and in the base currency.
		if ev.Monthly == nil || c.Cost.Total.Text() != ev.Monthly.Total || c.Cost.TotalBase.Text() != ev.Monthly.Converted.Text() {
			t.Errorf("%s: TUI monthly %+v / %+v, compare %+v", ev.Name, c.Cost.Total, c.Cost.TotalBase, ev.Monthly)
		}

		// serve: every check compare makes, with the same measured
		// figure and verdict. The line class is the forward trace's
		// (serve cannot trace the return path), so its note differs.
		sv, ok := serveVerdicts[ev.Name]
		if !ok {
			t.Errorf("%s: serve judged nothing", ev.Name)
			continue
		}
		// serve judges its window (all) and the evening's latest
		// occurrence, which is the recording's one evening: every check
		// of compare, window by window.
		whole := ev.SLA.Checks
		if len(sv.Checks) != len(whole) || sv.Pass != ev.SLA.Pass {
			t.Errorf("%s: serve pass %v with %d checks, compare %v with %d", ev.Name, sv.Pass, len(sv.Checks), ev.SLA.Pass, len(whole))
			continue
		}
		for i, w := range whole {
			g := sv.Checks[i]
			if g.Name != w.Name || g.Window != w.Window || g.Pass != w.Pass || !reflect.DeepEqual(g.Measured, w.Measured) {
				t.Errorf("%s: serve check %+v, compare %+v", ev.Name, g, w)
			}
		}
		// linecheck_jitter_seconds of each target: compare's per-target figure.
		for _, tg := range ev.Targets {
			v, ok := gaugeValue(t, e, "linecheck_jitter_seconds", ev.Name, tg.Target)
			if !ok || math.Abs(v*1000-tg.Jitter.MeanAbs) > 1e-9 {
				t.Errorf("%s %s: serve jitter %v s (present %v), compare %v ms", ev.Name, tg.Target, v, ok, tg.Jitter.MeanAbs)
			}
		}
	}
}

// gaugeValue reads one per-target gauge of serve's /metrics text.
func gaugeValue(t *testing.T, e *exporter.Exporter, name, cand string, tg candidates.Target) (float64, bool) {
	t.Helper()
	var b strings.Builder
	if _, err := e.Registry().WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	target := tg.Addr
	if tg.Protocol == probe.TCP {
		target = net.JoinHostPort(tg.Addr, strconv.Itoa(tg.Port))
	}
	proto := tg.Protocol
	if proto == "" {
		proto = probe.ICMP
	}
	prefix := fmt.Sprintf("%s{candidate=%q,protocol=%q,target=%q} ", name, cand, proto, target)
	for _, l := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

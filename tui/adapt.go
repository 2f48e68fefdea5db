package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
)

// This file is the one place that knows compare's, billing's and probe's
// types: it turns a candidates file into a Snapshot, a replay and a
// CostFunc.

// FeedOptions say how to build the feed of a candidates file.
type FeedOptions struct {
	// Offline replays the recordings only; otherwise the candidates' targets
	// are probed live (ping every target, trace the first one) and each
	// bandwidth_test is run (engine.ThroughputLoop; Live.BWTime,
	// Live.BWEvery; Live.NoBW leaves them out).
	Offline bool
	// Speed is the replay speed factor (300: a recorded 5-minute interval
	// plays in one second).
	Speed float64
	// Now picks the month of a synthetic traffic profile (the month before it).
	Now time.Time
	// Live configures the live loops (interval, timeout, the prober).
	Live engine.Options
	// ASNDB is an optional offline IP-to-ASN file.
	ASNDB string
	// PrefixTable is the operator's --prefix-table (nil: none).
	PrefixTable *route.PrefixTable
	// NoASN leaves the offline dataset and the AS columns out (--no-asn).
	NoASN bool
	// UsageHours prices every offer at these used hours of the GPU machine
	// (--usage-hours; unset: the offers file's usage); the `u` key changes it.
	UsageHours billing.Dec
	// NoProjection leaves out the month projected from a partial traffic
	// recording (--no-projection); otherwise the cost detail notes it.
	NoProjection bool
	// HideHops masks the hops at TTL 1..N of every route the UI shows
	// (--hide-hops N, route.HopMask): the evaluations through
	// compare.HideHops, every trace, recorded or live, as it enters the
	// feed; classes and verdicts stay the real hops'. The mode in the
	// status bar says so. 0 = off.
	HideHops int
}

// FeedFromFile loads a candidates file with compare's strict loader (every
// key and value checked, with file:line; offers, traffic, sla, vantage and
// regions optional for the TUI) and builds the
// feed: the snapshot evaluated from the recordings as compare does, the
// recorded probe streams and traces to replay, live feeders unless
// Offline, and a CostFunc that re-bills the traffic under other rules.
func FeedFromFile(path string, o FeedOptions) (*Feed, error) {
	f, err := candidates.LoadWith(path, LoadOptions())
	if err != nil {
		return nil, err
	}
	return FeedFromCompare(f, o)
}

// LoadOptions are what the TUI requires of a candidates file: targets.
// A live run's refusals (recorded_only, documentation addresses) come
// from FeedFromCompare, which says to run with --offline.
func LoadOptions() candidates.LoadOptions {
	return candidates.LoadOptions{TargetsOnly: true}
}

// FeedFromCompare is FeedFromFile for a file already loaded. The core
// opens the run (compare.OpenSession: the ASN database, pricing, the
// recordings replayed and evaluated, the probe streams) and the engine the
// live loops (engine.MonitorLoops); this maps them to the UI's rows and
// messages.
func FeedFromCompare(f *candidates.File, o FeedOptions) (*Feed, error) {
	mode := "live"
	if o.Offline {
		mode = fmt.Sprintf("replay %s", scaleText(speedOr1(o.Speed)))
	}
	feed := &Feed{Speed: o.Speed, Loop: true, Streams: map[string][]engine.Record{}}
	live := o.Live
	if !o.Offline && !live.NoBW && live.BWNow == nil {
		for _, c := range f.Candidates {
			if c.BandwidthTest != nil {
				// The t key asks the throughput loop for a round now.
				feed.BWNow = make(chan struct{}, 1)
				live.BWNow = feed.BWNow
				break
			}
		}
	}
	sess, err := compare.OpenSession(f, compare.SessionOptions{Offline: o.Offline, Now: o.Now, ASNDB: o.ASNDB, NoASN: o.NoASN, PrefixTable: o.PrefixTable})
	if err != nil {
		return nil, err
	}
	var loops []engine.Loop
	if !o.Offline {
		live.ASNDB = sess.ASN
		if loops, err = engine.MonitorLoops(f, live); err != nil {
			return nil, err
		}
	}
	opts := DefaultCostOptions()
	if o.UsageHours.Set {
		opts.UsageHours, opts.UsageSet = o.UsageHours.InexactFloat64(), true
	}
	snap := Snapshot{Title: f.Path, Mode: mode, Cost: opts, SLA: f.SLA}
	// Offers and traffic are optional for the TUI: without them the rows
	// show route quality only and the costs are absent ("-").
	costs := map[string]Cost{}
	if sess.Pricing != nil {
		pr := newPricer(f, sess.Pricing)
		pr.noProjection = o.NoProjection
		if costs, err = pr.costs(opts); err != nil {
			return nil, err
		}
		feed.CostFunc = pr.costs
		snap.Currency, snap.Traffic = pr.base, pr.traffic
	}
	monthly := map[string]*verdict.Monthly{} // each candidate's offer, for RelatePort
	for _, sc := range sess.Candidates {
		c, m, ev := sc.Candidate, sc.Measurement, sc.Evaluation
		if o.HideHops > 0 {
			ev = compare.HideHops(&compare.Result{Candidates: []*verdict.Evaluation{ev}}, o.HideHops).Candidates[0]
		}
		if ev.Monthly != nil {
			monthly[c.Name] = ev.Monthly
		}
		if err := verdict.EvaluateDelivery(ev, c, false); err != nil {
			return nil, err
		}
		cand := candidateFrom(f, c, ev)
		cand.DeliveryFailed = ev.DeliveryFailed
		if c.BandwidthTest != nil && !o.Offline && !o.Live.NoBW {
			cand.BWTest = fmt.Sprintf("%s port %d", c.BandwidthTest.Addr, c.BandwidthTest.Port)
		}
		cand.Carriers = carrierRoutesOf(ev)
		cand.Cost = costs[c.Name]
		snap.Candidates = append(snap.Candidates, cand)
		// Live, the forward route is traced: a recording of it would show
		// an old route as if it were current.
		if m.Forward != nil && o.Offline {
			feed.Traces = append(feed.Traces, hideTraceHops(TraceMsg{Candidate: c.Name, Direction: "forward", Trace: *m.Forward}, o.HideHops))
		}
		if m.Return != nil {
			feed.Traces = append(feed.Traces, hideTraceHops(TraceMsg{Candidate: c.Name, Direction: "return", Trace: *m.Return}, o.HideHops))
		}
		if sc.Stream != nil {
			feed.Streams[c.Name] = sc.Stream
		}
	}
	for _, l := range loops {
		feed.Live = append(feed.Live, HideHopsFeeder(relatePorts(LoopFeeder(l), monthly), o.HideHops))
	}
	if o.HideHops > 0 {
		snap.Mode += fmt.Sprintf(" · hops 1–%d hidden (--hide-hops)", o.HideHops)
	}
	snap.Tracing = !o.Offline
	feed.Snapshot = snap
	return feed, nil
}

func speedOr1(s float64) float64 {
	if s <= 0 {
		return 1
	}
	return s
}

// candidateFrom maps compare's evaluation of the recordings to a row.
func candidateFrom(f *candidates.File, c *candidates.Candidate, ev *verdict.Evaluation) Candidate {
	q := ev.Route
	out := Candidate{Name: c.Name, Provider: c.Provider, Region: c.Region.String(),
		LineClass: q.LineClass, Direction: q.Direction, Recorded: q, Throughput: q.Throughput, RecordedHourly: ev.Hourly}
	if fl, ok := verdict.FloorMs(f, c); ok {
		out.FloorMs = fl
	}
	if t, ok := c.RouteTarget(); ok {
		out.Target = t.String()
		out.family = candidates.AddrFamily(t.Addr)
	}
	// A dual-stack candidate's families, side by side (issue 32).
	out.Families = ev.Families
	if q.Evidence != nil {
		out.Rule, out.Confidence = q.Evidence.Rule, q.Evidence.Confidence
	}
	if out.Direction == "none" {
		out.Direction = ""
	}
	return out
}

// pricer is the TUI's side of compare.Pricing: the core bills and
// converts (the rules compare reports with); pricer maps a Rebill to each
// candidate's Cost and the traffic to chart rates.
type pricer struct {
	file    *candidates.File
	pr      *verdict.Pricing
	base    string
	traffic *verdict.TrafficSummary
	// noProjection: --no-projection (no projected month in the notes).
	noProjection bool
}

func newPricer(f *candidates.File, pr *verdict.Pricing) *pricer {
	p := &pricer{file: f, pr: pr, base: pr.FX().Base}
	p.traffic = pr.Traffic
	return p
}

// costs re-bills every offer under o and assembles each candidate's Cost.
func (p *pricer) costs(o CostOptions) (map[string]Cost, error) {
	r, err := p.pr.Rebill(billing.Options{Method: o.Method, Direction: o.Direction, Scale: o.Scale, UsageHours: usageOptions(o), NoProjection: p.noProjection,
		HorizonMonths: p.pr.HorizonMonths()})
	if err != nil {
		return nil, err
	}
	// The chart draws what each offer bills: the direction the cost view
	// chose, else the offer's own (an offer billed on sum draws the sum).
	levelsFor := func(dir billing.Direction) []Level {
		var levels []Level
		if b := r.Report.P95; b != nil {
			for _, part := range dir.Parts() {
				levels = append(levels, Level{"95th " + string(part), b.Of(part) / 1e6})
			}
		}
		return levels
	}
	out := map[string]Cost{}
	for _, c := range p.file.Candidates {
		if c.Offer == "" {
			out[c.Name] = Cost{Opts: o} // no offer named: not priced
			continue
		}
		q, ok := r.Quote(c.Offer)
		if !ok {
			out[c.Name] = Cost{Opts: o, Offer: c.Offer, Err: "offer " + c.Offer + " was not billed"}
			continue
		}
		b := q.Bill
		dir := o.Direction
		if dir == "" && q.Offer != nil {
			dir = q.Offer.Bandwidth.Direction
		}
		cost := Cost{Opts: o, Offer: c.Offer, Total: moneyOf(b.Amount, b.Currency), Levels: levelsFor(dir), Direction: dir, FX: 1}
		if q.Offer != nil && q.Offer.Bandwidth.CommitMbps.Set {
			cost.CommitMbps = q.Offer.Bandwidth.CommitMbps.InexactFloat64()
		}
		if q.Err == nil {
			cost.TotalBase = q.Converted.Rounded()
			cost.FX = q.RateValue.InexactFloat64()
			fillUsage(&cost, b, q.RateValue, q.Converted.Currency)
			if h := b.Horizon; h != nil {
				cost.Horizon = &HorizonCost{Months: h.Months, Total: h.Total,
					Base: billing.MoneyOf(h.ExactTotal().Mul(q.RateValue), q.Converted.Currency).Rounded()}
			}
			if pr := q.Projected; pr != nil {
				cost.Notes = append(cost.Notes, fmt.Sprintf("projected month (not a bill): %s from %d of %d days of traffic recorded (bandwidth: %s)",
					pr.Converted, pr.RecordedDays, pr.PeriodDays, pr.Basis))
			}
		} else {
			cost.Notes = append(cost.Notes, q.Err.Error())
		}
		for _, it := range b.Items {
			if it.Kind == "bandwidth" {
				continue
			}
			detail := ""
			if it.Quantity != "" {
				detail = strings.TrimSpace(fmt.Sprintf("%s %s × %s", it.Quantity, it.Unit, it.UnitPrice))
			}
			cost.Items = append(cost.Items, CostItem{Name: it.Name, Detail: detail, Amount: moneyOf(it.Amount, b.Currency)})
		}
		for _, name := range append([]string{c.Offer}, c.WhatIf...) {
			w, ok := r.Quote(name)
			if !ok {
				continue
			}
			wb := w.Bill
			cost.Schemes = append(cost.Schemes, SchemeCost{Scheme: wb.Scheme, Offer: wb.Offer, Detail: wb.Rule.Text,
				Amount: moneyOf(wb.Bandwidth, wb.Currency), Total: moneyOf(wb.Amount, wb.Currency), Offered: name == c.Offer,
				CannotCarry: !wb.CanCarry(), Carry: carryText(wb)})
		}
		cost.Notes = append(cost.Notes, b.Flags...)
		out[c.Name] = cost
	}
	return out, nil
}

// carryText is the bill's verdict on its port, "" when every slot fits.
func carryText(b billing.Bill) string {
	if b.Carry == nil {
		return ""
	}
	return b.Carry.Reason
}

// LoopFeeder runs one of the core's live loops (engine.PingLoop,
// engine.TraceLoop, engine.ThroughputLoop) as a Feeder: records become
// ProbeMsg, trace snapshots TraceMsg, throughput tests ThroughputStartMsg
// and ThroughputMsg, failures FeedErrMsg.
func LoopFeeder(loop engine.Loop) Feeder {
	return func(ctx context.Context, emit func(tea.Msg)) error {
		loop(ctx, func(ev engine.Event) {
			switch {
			case ev.Err != nil:
				emit(FeedErrMsg{Candidate: ev.Candidate, Direction: ev.Direction, Err: ev.Err})
			case ev.Record != nil:
				emit(ProbeMsg{Candidate: ev.Candidate, Record: *ev.Record})
			case ev.Trace != nil:
				emit(TraceMsg{Candidate: ev.Candidate, Direction: ev.Direction, Trace: *ev.Trace})
			case ev.BWStart != nil:
				emit(ThroughputStartMsg{Candidate: ev.Candidate, Start: *ev.BWStart})
			case ev.Throughput != nil:
				emit(ThroughputMsg{Candidate: ev.Candidate, Throughput: ev.Throughput})
			}
		})
		return nil
	}
}

// HideHopsFeeder masks the hops at TTL 1..n of every trace fd emits
// (hideTraceHops); fd itself when n is 0. cmd wraps the feeders it adds
// (the loopback row) with it too.
func HideHopsFeeder(fd Feeder, n int) Feeder {
	if n <= 0 {
		return fd
	}
	return func(ctx context.Context, emit func(tea.Msg)) error {
		return fd(ctx, func(m tea.Msg) {
			if t, ok := m.(TraceMsg); ok {
				m = hideTraceHops(t, n)
			}
			emit(m)
		})
	}
}

// hideTraceHops is t with its trace's hops at TTL 1..n masked
// (route.HopMask; the trace keeps its line class).
func hideTraceHops(t TraceMsg, n int) TraceMsg {
	if n > 0 {
		t.Trace = *route.NewHopMask(n, &t.Trace).Trace(&t.Trace)
	}
	return t
}

// relatePorts relates each live throughput test to the port the
// candidate's offer sells and the traffic's 95th (compare.RelatePort, as
// compare does and as the recordings are related above).
func relatePorts(fd Feeder, monthly map[string]*verdict.Monthly) Feeder {
	return func(ctx context.Context, emit func(tea.Msg)) error {
		return fd(ctx, func(m tea.Msg) {
			if t, ok := m.(ThroughputMsg); ok {
				verdict.RelatePort(t.Throughput, monthly[t.Candidate])
			}
			emit(m)
		})
	}
}

// carrierRoutesOf maps compare's per-carrier view to the route screen's
// carrier routes: the backtrace route matched to each user carrier.
func carrierRoutesOf(ev *verdict.Evaluation) []CarrierRoute {
	var out []CarrierRoute
	for _, u := range ev.Route.Carriers {
		cr := CarrierRoute{Carrier: u.Carrier, City: u.City, Target: u.ReturnTarget, TargetCity: u.ReturnCity,
			Forward: u.Forward, Return: u.Return}
		if u.Pass != nil {
			cr.Verdict = map[bool]string{true: "pass", false: "FAIL"}[*u.Pass]
		}
		// The evaluation's own recording: masked with --hide-hops.
		if bt := ev.Route.Backtrace; bt != nil {
			for _, r := range bt.Results {
				if r.Name == u.ReturnTarget && r.Trace != nil {
					cr.Route = routeFromTrace("return", *r.Trace)
				}
			}
		}
		out = append(out, cr)
	}
	return out
}

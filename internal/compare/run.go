package compare

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Options control a compare run.
type Options struct {
	// Offline uses only the recordings and never sends a probe.
	Offline bool
	// Now is the time the run is stamped with (and, for a synthetic traffic
	// profile without a period, the month before it is billed); zero means
	// the wall clock.
	Now time.Time
	// Progress, when set, receives one line per step (for stderr on a terminal).
	Progress func(string)
	// Live probing: probes per target (default 20), interval between them per
	// target (default 200ms), reply timeout (default 1s), trace cycles (default 3).
	Count       int
	Interval    time.Duration
	Timeout     time.Duration
	TraceCycles int
	// ASNDB is an optional offline IP-to-ASN file (iptoasn TSV or mmdb).
	ASNDB string
	// PrefixTable is the operator's --prefix-table (nil: none), looked up
	// ahead of the bundled carrier table.
	PrefixTable *route.PrefixTable
	// NoASN leaves the offline dataset out and the AS fields and paths out
	// of the document (--no-asn).
	NoASN bool
	// BWTime is the measured time of each candidate's live throughput test
	// (bandwidth_test); 0 means DefaultBWTime.
	BWTime time.Duration
	// Prober sends the live probes; nil means ProbeSender (package probe).
	// Tests inject their own.
	Prober Prober
	// PathMTU searches the path MTU after each live forward trace (Run
	// sets it when the SLA has min_path_mtu); the Prober must be a
	// PathMTUProber.
	PathMTU bool
	// UsageHours prices every offer at these used hours of the GPU machine
	// (--usage-hours; unset: the offers file's usage).
	UsageHours billing.Dec
	// HorizonMonths prices every offer over this many months (--horizon;
	// 0: the file's horizon_months, else one month).
	HorizonMonths int
	// Lint checks every candidate's offer (billing.LintOffers) into its
	// warnings (--lint); Market adds the card-hour bands (--market).
	Lint   bool
	Market *billing.MarketFile
	// NoProjection leaves out the month projected from a partial traffic
	// recording (compare --no-projection; Monthly.Projected stays nil).
	NoProjection bool
	// AdvisoryDelivery keeps a failed recorded delivery (recorded.gpu
	// against the gpu: block) a warning on the candidate instead of a
	// failure of it (compare --advisory-delivery).
	AdvisoryDelivery bool
}

func (o *Options) defaults() {
	if o.Now.IsZero() {
		// compare is not one of the pure packages: a caller that does not
		// pin the time (the demo) gets the wall clock.
		o.Now = time.Now().UTC()
	}
	if o.Count <= 0 {
		o.Count = 20
	}
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.TraceCycles <= 0 {
		o.TraceCycles = 3
	}
	if o.Prober == nil {
		o.Prober = ProbeSender{}
	}
}

func (o *Options) progress(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

// Measurement is what the probes (live or replayed) say about one candidate,
// before any verdict: per-target statistics and the traces of each direction.
type Measurement struct {
	Targets []TargetResult
	// Forward is the vantage → server trace, Return the server → users trace;
	// nil when not available.
	Forward, Return *route.Trace
	// ReturnBacktrace is set when recorded.return is a backtrace document
	// (one route per user carrier); Return is then the route toward the
	// first user (readReturn, Evaluate).
	ReturnBacktrace *route.BacktraceDoc
	// Throughput is the candidate's bw test, when it has one.
	Throughput *Throughput
	Warnings   []string
}

// Run evaluates every candidate of f (probing live, or replaying the
// recordings with Offline), prices its offer on the traffic profile, checks
// the SLA and ranks. It fails on bad input (unreadable recordings or logs,
// an unknown offer, a missing fx rate); a candidate that merely fails its SLA
// is part of the result.
func Run(ctx context.Context, f *candidates.File, opt Options) (*Result, error) {
	opt.defaults()
	opt.PathMTU = opt.PathMTU || f.SLA.MinPathMTU != nil
	// The run is opened as every surface opens it (OpenSession): the same
	// refusals, hop names, pricing and evaluation; live, the candidates
	// are measured once here instead of by the loops.
	partial := false
	sess, err := OpenSession(f, SessionOptions{
		Offline: opt.Offline, Now: opt.Now, ASNDB: opt.ASNDB, NoASN: opt.NoASN, PrefixTable: opt.PrefixTable,
		Batch: true,
		Billing: billing.Options{UsageHours: opt.UsageHours, NoProjection: opt.NoProjection, HorizonMonths: opt.HorizonMonths,
			Lint: opt.Lint, Market: opt.Market},
		Progress: opt.progress,
		Measure: func(cs []*candidates.Candidate) ([]*Measurement, error) {
			live, err := probeAll(ctx, cs, opt)
			if err != nil {
				return nil, err
			}
			measureThroughputs(ctx, cs, live, opt)
			// Interrupted (Ctrl-C) after the probes began: what was
			// measured is evaluated and reported, marked partial.
			partial = ctx.Err() != nil
			return live, nil
		},
	})
	if err != nil {
		return nil, err
	}
	pr := sess.Pricing
	r := NewResult(f, opt)
	r.useFX(pr.FX())
	r.Traffic = pr.Traffic
	r.Partial = partial
	r.Horizon = pr.HorizonBasis()
	if !opt.NoASN {
		r.ASNData = route.DataInfo(sess.ASN)
	}
	for _, sc := range sess.Candidates {
		c, e := sc.Candidate, sc.Evaluation
		if err := ctx.Err(); err != nil && !r.Partial {
			return nil, err
		}
		e.Warnings = append(e.Warnings, carryWarnings(e.Monthly, e.WhatIf)...)
		e.Warnings = append(e.Warnings, pr.Lint(c)...)
		e.Usage = pr.candidateUsage(c)
		if err := EvaluateDelivery(e, c, opt.AdvisoryDelivery); err != nil {
			return nil, err
		}
		if e.GPU != nil {
			var hours float64
			if r.Traffic != nil {
				hours = r.Traffic.PeriodEnd.Sub(r.Traffic.PeriodStart).Hours()
			}
			e.GPU.PerDeliveredCardHour = perDeliveredCardHour(e, hours)
		}
		r.Candidates = append(r.Candidates, e)
	}
	Rank(r)
	if r.Usage, err = pr.usageSummary(f); err != nil {
		return nil, err
	}
	if r.Partial {
		r.Verdict = "interrupted, partial measurements: " + r.Verdict
	}
	return r, nil
}

// carryWarnings says when an offer's port is exceeded: by the 95th (it
// cannot carry the traffic and is never recommended) or by the peak only.
func carryWarnings(m *Monthly, whatIf []SchemeCost) []string {
	var out []string
	if m != nil && m.Carry != nil && m.Carry.Reason != "" {
		w := "offer " + m.Offer + ": " + m.Carry.Reason
		if !m.Carry.CanCarry {
			w += "; never recommended"
		}
		out = append(out, w)
	}
	for _, s := range whatIf {
		if s.Carry != nil && s.Carry.Reason != "" {
			out = append(out, "what-if offer "+s.Offer+": "+s.Carry.Reason)
		}
	}
	return out
}

// NewResult starts an empty result for f (no candidates evaluated yet).
func NewResult(f *candidates.File, opt Options) *Result {
	r := &Result{Schema: Schema, Generated: opt.Now, Mode: "live", Source: f.Path, Vantage: f.Vantage.String(),
		FXBase: f.FX.Base, SLA: SLASpec(f.SLA), Ranking: []string{}}
	if opt.Offline {
		r.Mode = "offline"
	}
	for _, u := range f.Users {
		r.Users = append(r.Users, u.String())
	}
	r.useFX(f.FX)
	return r
}

// useFX states the exchange the result is ranked in: the file's fx:, or
// the one its pricing settled (Pricing.FX).
func (r *Result) useFX(fx candidates.FX) {
	r.FXBase, r.FX = fx.Base, nil
	if len(fx.Rates) > 0 {
		r.FX = map[string]string{}
		for cur := range fx.Rates {
			_, r.FX[cur], _ = fx.Rate(cur)
		}
	}
}

// Evaluate turns one candidate's measurement into its evaluation: line class
// per direction (classified with db, which may be nil), RTT, loss, jitter,
// stretch and the SLA verdict. Monthly cost is filled in by the caller
// (Pricing.Monthly); the TUI calls this as measurements arrive.
func Evaluate(f *candidates.File, c *candidates.Candidate, m *Measurement, db route.ASNDB) *Evaluation {
	e := &Evaluation{Name: c.Name, Provider: c.Provider, Region: c.Region.String(), Targets: m.Targets, Warnings: m.Warnings}
	if e.Targets == nil {
		e.Targets = []TargetResult{}
	}
	q := &e.Route
	ret := m.Return
	if m.ReturnBacktrace != nil {
		var note string
		ret, note = backtraceReturn(m.ReturnBacktrace, f.Users, db)
		if note != "" {
			e.Warnings = append(e.Warnings, note)
		}
		if m.Return == nil {
			// The route that stands for the users is the candidate's
			// return trace from now on (the TUI shows it, for one).
			m.Return = ret
		}
	}
	q.LineClass, q.Direction, q.Evidence, q.ForwardClass, q.ReturnClass, q.Notes = classify(m.Forward, ret, db)
	var pathWarnings []string
	q.Paths, q.PathsSummary, pathWarnings = multipathRoutes(c, m.Forward, ret, db)
	e.Warnings = append(e.Warnings, pathWarnings...)
	q.Forward, q.Return, q.Backtrace = m.Forward, ret, m.ReturnBacktrace
	if m.Forward != nil {
		q.ForwardASPath = m.Forward.ASPath
		if m.Forward.MTU != nil {
			q.PathMTU = m.Forward.MTU.PathMTU
		}
	}
	if ret != nil {
		q.ReturnASPath = ret.ASPath
	}
	q.Carriers = carrierRoutes(f, m)
	e.Warnings = append(e.Warnings, q.AddTargets(m.Targets)...)
	if floor, ok := FloorMs(f, c); ok {
		q.SetFloor(floor)
	}
	q.Throughput, e.Throughput = m.Throughput, m.Throughput
	e.SLA = CheckSLA(f.SLA, *q)
	return e
}

// AddTargets fills the figures of q from per-target results — the one
// aggregation rule of compare, the TUI and serve: the worst over the targets
// for what the SLA bounds (RTT percentiles, loss, jitter), the best minimum
// for the floor comparison, since physics bounds the fastest reply; counts
// are summed. It returns a warning per target without results when others
// have them, and one when no target has any.
func (q *RouteQuality) AddTargets(targets []TargetResult) []string {
	var warnings []string
	first := true
	minRTT := 0.0
	for _, t := range targets {
		if t.Sent == 0 && len(targets) > 1 {
			warnings = append(warnings, fmt.Sprintf("target %s: no probe results; the figures come from the other targets", t.Target))
		}
		q.Sent += t.Sent
		q.Recv += t.Recv
		if t.Sent > 0 && t.Loss > q.Loss {
			q.Loss = t.Loss
		}
		if t.Recv == 0 {
			continue
		}
		if first {
			q.Samples, q.SamplesOf = t.Samples, t.Target.String()
			q.RTT = RTTSummary{Min: t.RTT.Min, P50: t.RTT.P50, P95: t.RTT.P95, P99: t.RTT.P99, Max: t.RTT.Max}
			q.Jitter = t.Jitter
			minRTT = t.RTT.Min
			first = false
			continue
		}
		q.RTT.P50 = max(q.RTT.P50, t.RTT.P50)
		q.RTT.P95 = max(q.RTT.P95, t.RTT.P95)
		q.RTT.P99 = max(q.RTT.P99, t.RTT.P99)
		q.RTT.Max = max(q.RTT.Max, t.RTT.Max)
		q.Jitter.RFC3550 = max(q.Jitter.RFC3550, t.Jitter.RFC3550)
		q.Jitter.MeanAbs = max(q.Jitter.MeanAbs, t.Jitter.MeanAbs)
		q.Jitter.PDVP95 = max(q.Jitter.PDVP95, t.Jitter.PDVP95)
		minRTT = min(minRTT, t.RTT.Min)
	}
	q.RTT.Min = minRTT
	q.Jitter = JitterSummary{RFC3550: round(q.Jitter.RFC3550, 4), MeanAbs: round(q.Jitter.MeanAbs, 4), PDVP95: round(q.Jitter.PDVP95, 4)}
	if q.Sent == 0 {
		warnings = append(warnings, "no probe results (live probes or recorded.probes): RTT, loss and jitter are unknown")
	}
	return warnings
}

// SetFloor sets FloorMs, Stretch and StretchFlags from the physical floor
// between the vantage and the region (FloorMs) and q's minimum RTT. Without
// an answered probe the stretch stays unknown (0) and the only flag kept is
// same-city, which the places decide.
func (q *RouteQuality) SetFloor(floorMs float64) {
	st := geo.StretchOverFloor(floorMs, q.RTT.Min)
	q.FloorMs, q.Stretch, q.StretchFlags = round(st.FloorMs, 2), round(st.Stretch, 3), st.Flags
	if q.Recv == 0 {
		q.Stretch, q.StretchFlags = 0, nil
		if slices.Contains(st.Flags, geo.FlagSameCity) {
			q.StretchFlags = []string{geo.FlagSameCity}
		}
	}
}

// FloorMs is the physical floor RTT between f's vantage and c's region
// (2·great-circle distance at 200 km/ms), unrounded; false when either place
// is unknown.
func FloorMs(f *candidates.File, c *candidates.Candidate) (float64, bool) {
	a, ok1 := candidates.Location(f.Vantage)
	b, ok2 := candidates.Location(c.Region)
	if !ok1 || !ok2 {
		return 0, false
	}
	return geo.FloorRTTms(a, b), true
}

// Replay reads a candidate's recordings: the probe stream and the forward and
// return traces. It never sends anything.
func Replay(c *candidates.Candidate) (*Measurement, error) {
	m := &Measurement{}
	if c.Recorded.Probes != "" {
		fh, err := os.Open(c.Recorded.Probes)
		if err != nil {
			return nil, fmt.Errorf("%s: recorded.probes: %w", c.Name, err)
		}
		recs, err := probe.ReadStream(fh, c.Recorded.Probes)
		fh.Close()
		if err != nil {
			return nil, streamError(err)
		}
		var extra []string
		m.Targets, extra = TargetsFromRecords(c.Targets, recs)
		for _, x := range extra {
			m.Warnings = append(m.Warnings, fmt.Sprintf("recorded probes for %s ignored: not one of the candidate's targets", x))
		}
	} else {
		m.Warnings = append(m.Warnings, "no recorded probe stream (recorded.probes): nothing to measure offline")
		for _, t := range c.Targets {
			m.Targets = append(m.Targets, TargetResult{Target: t})
		}
	}
	var err error
	if c.Recorded.Forward != "" {
		if m.Forward, err = readTrace(c.Recorded.Forward); err != nil {
			return nil, fmt.Errorf("%s: recorded.forward: %w", c.Name, err)
		}
	}
	if c.Recorded.Return != "" {
		if m.Return, m.ReturnBacktrace, err = readReturn(c.Recorded.Return); err != nil {
			return nil, fmt.Errorf("%s: recorded.return: %w", c.Name, err)
		}
	}
	if c.Recorded.BW != "" {
		if m.Throughput, err = ReplayThroughput(c.Recorded.BW); err != nil {
			return nil, fmt.Errorf("%s: recorded.bw: %w", c.Name, err)
		}
	}
	return m, nil
}

// TargetsFromRecords computes per-target statistics from probe records, in
// the order of targets, each over a window of all its records in time order
// (Window.Result). Records of other targets are returned by name.
func TargetsFromRecords(targets []candidates.Target, recs []probe.Record) ([]TargetResult, []string) {
	type key struct {
		addr  string
		proto probe.Protocol
		port  int
	}
	keyOf := func(addr string, proto probe.Protocol, port int) key {
		if proto == "" {
			proto = probe.ICMP
		}
		if proto == probe.ICMP {
			port = 0
		}
		return key{addr, proto, port}
	}
	idx := map[key]int{}
	out := make([]TargetResult, len(targets))
	for i, t := range targets {
		out[i].Target = t
		idx[keyOf(t.Addr, t.Protocol, t.Port)] = i
	}
	byTarget := make([][]probe.Record, len(targets))
	var extra []string
	seenExtra := map[key]bool{}
	for _, r := range recs {
		k := keyOf(r.Addr, r.Protocol, r.Port)
		i, ok := idx[k]
		if !ok {
			// A stream may name the target and record the resolved address.
			i, ok = idx[keyOf(r.Target, r.Protocol, r.Port)]
		}
		if !ok {
			if !seenExtra[k] {
				seenExtra[k] = true
				extra = append(extra, candidates.Target{Addr: k.addr, Protocol: k.proto, Port: k.port}.String())
			}
			continue
		}
		byTarget[i] = append(byTarget[i], r)
	}
	for i, rs := range byTarget {
		sort.SliceStable(rs, func(a, b int) bool {
			if !rs[a].Time.Equal(rs[b].Time) {
				return rs[a].Time.Before(rs[b].Time)
			}
			return rs[a].Seq < rs[b].Seq
		})
		w := NewWindow(0)
		for _, r := range rs {
			w.Add(r)
		}
		out[i] = w.Result(out[i].Target, nil)
	}
	return out, extra
}

// CheckLiveTargets refuses a live run whose targets probe's safety gate
// refuses (documentation addresses, illustrative data, are only ever
// replayed), naming the candidate's line.
func CheckLiveTargets(f *candidates.File) error {
	for _, c := range f.Candidates {
		for _, t := range c.Targets {
			a, err := netip.ParseAddr(t.Addr)
			if err != nil {
				continue
			}
			if err := probe.CheckTarget(t.Addr, a, "it is never probed"); err != nil {
				if errors.Is(err, probe.ErrDocumentation) {
					return fmt.Errorf("%s:%d: candidate %s: %v, or run with --offline", f.Path, c.Line, c.Name, err)
				}
				return fmt.Errorf("%s:%d: candidate %s: %v", f.Path, c.Line, c.Name, err)
			}
		}
	}
	return nil
}

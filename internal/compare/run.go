package compare

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/verdict"
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
	// Prober sends the one-shot run's live probes: engine.Sender (cmd sets
	// it); tests inject their own. A live run without one fails with
	// ErrNoProber.
	Prober engine.Prober
	// PathMTU searches the path MTU after each live forward trace (Run
	// sets it when the SLA has min_path_mtu); the Prober must also have
	// PathMTU (as engine.Sender has).
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
}

func (o *Options) progress(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
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
		Measure: func(cs []*candidates.Candidate) ([]*verdict.Measurement, error) {
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
		e.Usage = pr.CandidateUsageOf(c)
		if err := verdict.EvaluateDelivery(e, c, opt.AdvisoryDelivery); err != nil {
			return nil, err
		}
		if e.GPU != nil {
			var hours float64
			if r.Traffic != nil {
				hours = r.Traffic.PeriodEnd.Sub(r.Traffic.PeriodStart).Hours()
			}
			e.GPU.PerDeliveredCardHour = verdict.PerDeliveredCardHour(e, hours)
		}
		r.Candidates = append(r.Candidates, e)
	}
	Rank(r)
	if r.Usage, err = pr.UsageSummaryOf(f); err != nil {
		return nil, err
	}
	if r.Partial {
		r.Verdict = "interrupted, partial measurements: " + r.Verdict
	}
	return r, nil
}

// carryWarnings says when an offer's port is exceeded: by the 95th (it
// cannot carry the traffic and is never recommended) or by the peak only.
func carryWarnings(m *verdict.Monthly, whatIf []verdict.SchemeCost) []string {
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

// Replay reads a candidate's recordings: the probe stream and the forward and
// return traces. It never sends anything.
func Replay(c *candidates.Candidate) (*verdict.Measurement, error) {
	m := &verdict.Measurement{}
	if len(c.Recorded.ProbeFiles) > 0 {
		b := verdict.NewWindowBuilder(c.Targets)
		vstreams, err := scanStreams(c.Recorded.ProbeFiles, b.Add)
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe):
			return nil, fmt.Errorf("%s: recorded.probes: %w", c.Name, err)
		case err != nil:
			// A record's error names its file and line already.
			return nil, err
		}
		var extra []string
		m.Probes, extra = b.Windows()
		m.Targets = make([]verdict.TargetResult, len(c.Targets))
		for i, w := range m.Probes {
			m.Targets[i] = w.Result(c.Targets[i], nil)
		}
		for _, x := range extra {
			m.Warnings = append(m.Warnings, fmt.Sprintf("recorded probes for %s ignored: not one of the candidate's targets", x))
		}
		if len(vstreams) > 0 {
			vs := make([]*route.Vantage, len(vstreams))
			for i, s := range vstreams {
				vs[i] = s.Vantage
			}
			m.Warnings = append(m.Warnings, fmt.Sprintf("recorded.probes holds %d vantages (%s): each target's figures pool their probes",
				len(vs), probeVantages(vs)))
			m.PingVantages = pingVantages(c.Targets, vstreams)
		}
	} else {
		m.Warnings = append(m.Warnings, "no recorded probe stream (recorded.probes): nothing to measure offline")
		for _, t := range c.Targets {
			m.Targets = append(m.Targets, verdict.TargetResult{Target: t})
		}
	}
	if err := readRecordedForward(c, m); err != nil {
		return nil, err
	}
	if err := readRecordedReturn(c, m); err != nil {
		return nil, err
	}
	var err error
	if c.Recorded.BW != "" {
		if m.Throughput, err = verdict.ReplayThroughput(c.Recorded.BW); err != nil {
			return nil, fmt.Errorf("%s: recorded.bw: %w", c.Name, err)
		}
	}
	return m, nil
}

// probeVantages names the vantages of recorded.probes: "ripe-atlas 2001,
// ripe-atlas 2002".
func probeVantages(vs []*route.Vantage) string {
	var n []string
	for _, v := range vs {
		n = append(n, v.Platform+" "+v.ID)
	}
	return strings.Join(n, ", ")
}

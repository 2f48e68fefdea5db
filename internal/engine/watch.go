package engine

import (
	"context"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/probe/bw"
)

// This file holds the loops of the commands that run until stopped: ping
// --watch, trace --watch and bw --watch (Watch, with PingCycle, TraceCycle
// and BWCycle) and ping --loop (PingRounds). cmd keeps their flags, their journal and what
// they print.

// Watch runs cycle (first: this run's first cycle) until it returns an
// error or no more, or until max cycles (0: until stopped).
func Watch(max int, cycle func(first bool) (more bool, err error)) error {
	for n := 1; max == 0 || n <= max; n++ {
		more, err := cycle(n == 1)
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	return nil
}

// SleepUntil waits until t; false when ctx ended meanwhile.
func SleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}

// PingCycle is one cycle of ping --watch: every target cfg.Count times
// (probe.PingTargets), onRecord (when not nil) told each outcome.
func PingCycle(ctx context.Context, targets []probe.Target, cfg probe.PingConfig, onRecord func(probe.Record)) ([]probe.PingResult, error) {
	return probe.PingTargets(ctx, targets, cfg, onRecord)
}

// TraceCycle is one cycle of trace --watch: a trace of target
// (probe.Trace), its document built and annotated with names (may be nil).
func TraceCycle(ctx context.Context, target string, cfg probe.TraceConfig, names route.ASNDB) (*route.Trace, error) {
	run, err := probe.Trace(ctx, target, cfg, nil)
	if err != nil {
		return nil, err
	}
	tr := route.BuildTrace(run)
	route.Annotate(tr, names)
	return tr, nil
}

// BWCycle is the test of bw, and one cycle of bw --watch: one throughput
// test against server (bw.Run), tried again after 0.25 s, 1 s and 3 s while
// the server says it is busy, as compare's test is: a watch's tests follow
// each other, and a server still closing the last test answers busy for a
// moment. onBusy (when not nil) is told each wait before it begins, for
// the terminal's status line.
func BWCycle(ctx context.Context, server string, cfg bw.Config, onBusy func(wait time.Duration)) (*bw.Result, error) {
	return runBusyRetried(ctx, server, cfg, defaultBusyRetries, onBusy)
}

// PingRounds is ping --loop (fping -l): rounds of cfg.Count probes to
// every target until ctx ends, each round lasting span from its start, the
// results summed per target. After each round's wait, each (when not nil)
// gets the round's results and start (ping -Q's interim summary). It
// returns the sums and the most probes sent to one target; an error of a
// round is returned unless ctx ended.
func PingRounds(ctx context.Context, targets []probe.Target, cfg probe.PingConfig, span time.Duration, onRecord func(probe.Record),
	each func(res []probe.PingResult, start time.Time)) ([]probe.PingResult, int, error) {
	sum := make([]probe.PingResult, len(targets))
	for i, t := range targets {
		sum[i].Target, sum[i].Addr = t.Name, t.Addr.String()
	}
	for ctx.Err() == nil {
		start := time.Now()
		res, err := probe.PingTargets(ctx, targets, cfg, onRecord)
		if err != nil && ctx.Err() == nil {
			return nil, 0, err
		}
		for i, r := range res {
			s := &sum[i]
			s.Sent += r.Sent
			s.Recv += r.Recv
			s.Late += r.Late
			s.Dup += r.Dup
			s.Foreign += r.Foreign
			s.Refused += r.Refused
			s.ClockFaults += r.ClockFaults
			s.RTTs = append(s.RTTs, r.RTTs...)
			if s.Blocked == nil {
				s.Blocked = r.Blocked
			}
		}
		// A round lasts span, as fping -Q's period: its last probe is
		// answered (Count−1)·iv after the first, and the next round is not
		// due before the interval after it. Without the wait a one-probe
		// round (-Q 1 at -i 1) began again at once, thousands a second.
		if !SleepUntil(ctx, start.Add(span)) {
			break
		}
		if each != nil {
			each(res, start)
		}
	}
	sent := 0
	for _, r := range sum {
		sent = max(sent, r.Sent)
	}
	return sum, sent, nil
}

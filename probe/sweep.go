package probe

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// SweepTarget is one target of a mixed-protocol sweep: a resolved address
// and how it is probed.
type SweepTarget struct {
	Target
	Protocol Protocol // ICMP (or "") for echo, TCP for connect time
	Port     int      // tcp: the port connected to
}

// SweepResult is one target's outcome of Sweep.
type SweepResult struct {
	PingResult
	// Err is set when the sweep of this target's protocol and port failed
	// as a whole (a socket or privilege error): nothing was measured for it;
	// or, for this target alone, to its Blocked error.
	Err error
}

// sweepGroup is the targets of a Sweep that share a protocol and port.
type sweepGroup struct {
	proto   Protocol
	port    int // of a protocol whose targets name one
	targets []Target
	idx     []int // positions in the Sweep's input
}

// Sweep probes targets of mixed protocols: one Ping sweep per protocol and
// port (every ICMP target in one, TCP targets in one per port), the sweeps
// side by side. cfg applies to all of them except Protocol and TCPPort,
// which each target's Protocol and Port replace. The global cfg.Rate is shared among the sweeps in
// proportion to their sizes, and each starts at its first target's slot in
// one interleaved sweep of all, so every target is probed at the interval
// one sweep of all of them would use (Schedule(len(ts), cfg)) and the
// sweeps together keep to the cap. Results are in input order. onRecord,
// when not nil, gets every probe's outcome; calls are serialized across
// the sweeps. The error is for bad input only (an unknown protocol, a port
// out of range); a sweep that fails sets Err on its targets' results, and a
// target the safety gate refuses (CheckTarget) gets its refusal as Err and
// is not probed while the others are.
func Sweep(ctx context.Context, ts []SweepTarget, cfg PingConfig, onRecord func(Record)) ([]SweepResult, error) {
	if cfg.Rate != 0 {
		if err := CheckRate(cfg.Rate); err != nil {
			return nil, err
		}
	}
	cfg = cfg.withDefaults()
	groups, err := groupSweep(ts)
	if err != nil {
		return nil, err
	}
	out := make([]SweepResult, len(ts))
	gt := newGate(cfg.AllowBroadcast, "a sweep of listed targets probes unicast addresses only")
	for _, g := range groups {
		g.gate(gt, out)
	}
	if onRecord != nil {
		var mu sync.Mutex
		inner := onRecord
		onRecord = func(r Record) {
			mu.Lock()
			defer mu.Unlock()
			inner(r)
		}
	}
	// Each sweep starts at the slot its first target would have in one
	// interleaved sweep of all, so that the sweeps interleave too: twenty
	// one-target sweeps (twenty TCP ports) must not all send at once.
	iv, _ := Schedule(len(ts), cfg)
	var wg sync.WaitGroup
	pos := 0
	for _, g := range groups {
		gc := cfg
		gc.Protocol, gc.TCPPort = g.proto, g.port
		gc.Rate = cfg.Rate * float64(len(g.targets)) / float64(len(ts))
		offset := iv * time.Duration(pos) / time.Duration(len(ts))
		pos += len(g.targets)
		if len(g.targets) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res []PingResult
			err := sleepCtx(ctx, offset)
			if err == nil {
				res, err = pingTargets(ctx, g.targets, gc, onRecord)
			}
			for k, i := range g.idx {
				if err != nil {
					out[i].Err = err
					out[i].Target, out[i].Addr = g.targets[k].Name, g.targets[k].Addr.String()
					continue
				}
				out[i].PingResult = res[k]
				if res[k].Blocked != nil {
					out[i].Err = res[k].Blocked
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// gate leaves out of g the targets the safety gate refuses, their refusal
// set as Err in out.
func (g *sweepGroup) gate(gt *gate, out []SweepResult) {
	kept := 0
	for k, t := range g.targets {
		if err := gt.check(t.Name, t.Addr); err != nil {
			i := g.idx[k]
			out[i].Err = err
			out[i].Target, out[i].Addr = t.Name, t.Addr.String()
			continue
		}
		g.targets[kept], g.idx[kept] = t, g.idx[k]
		kept++
	}
	g.targets, g.idx = g.targets[:kept], g.idx[:kept]
}

// SweepSpan is how long after its start Sweep sends its last probe (by the
// schedule): the latest, over the protocol-and-port sweeps, of a sweep's
// start slot plus its last probe's slot. A caller that starts the next
// sweep of the same targets no sooner than SweepSpan + cfg.Interval after
// this one keeps every target's interval across the two, however the
// targets are grouped in either. 0 for input Sweep refuses.
func SweepSpan(ts []SweepTarget, cfg PingConfig) time.Duration {
	cfg = cfg.withDefaults()
	groups, err := groupSweep(ts)
	if err != nil || len(ts) == 0 {
		return 0
	}
	iv, _ := Schedule(len(ts), cfg)
	var span time.Duration
	pos := 0
	for _, g := range groups {
		n := len(g.targets)
		gc := cfg
		gc.Rate = cfg.Rate * float64(n) / float64(len(ts))
		giv, _ := Schedule(n, gc)
		last := iv*time.Duration(pos)/time.Duration(len(ts)) + time.Duration(cfg.Count-1)*giv + giv*time.Duration(n-1)/time.Duration(n)
		span = max(span, last)
		pos += n
	}
	return span
}

// sleepCtx waits d, or returns ctx's error when it ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// groupSweep groups ts by protocol and port, groups in order of first appearance.
func groupSweep(ts []SweepTarget) ([]*sweepGroup, error) {
	type key struct {
		proto Protocol
		port  int
	}
	byKey := map[key]*sweepGroup{}
	var groups []*sweepGroup
	for i, t := range ts {
		proto := t.Protocol
		if proto == "" {
			proto = ICMP
		}
		pp, ok := pingProtocolOf(proto)
		if !ok {
			return nil, fmt.Errorf("target %s: protocol %q: a sweep probes %s", t.Name, t.Protocol, pingProtocolNames())
		}
		port := 0
		if pp.port {
			if t.Port < 1 || t.Port > 65535 {
				return nil, fmt.Errorf("target %s: %s port %d: use 1..65535", t.Name, proto, t.Port)
			}
			port = t.Port
		}
		if !t.Addr.IsValid() {
			return nil, fmt.Errorf("target %q: no address (resolve it first)", t.Name)
		}
		k := key{proto, port}
		g := byKey[k]
		if g == nil {
			g = &sweepGroup{proto: proto, port: port}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.targets = append(g.targets, t.Target)
		g.idx = append(g.idx, i)
	}
	return groups, nil
}

package compare

import (
	"context"
	"errors"
	"sync"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// fakeProber (the one-shot run's tests: carriers, SLA, multipath; the live
// loops have their own in internal/engine) answers without sending anything: Ping emits one ok record per
// probe; Trace emits cfg.Cycles one-hop documents, or fails while fail > 0.
type fakeProber struct {
	mu     sync.Mutex
	runs   int
	cycles []int
	fail   int
}

func (p *fakeProber) Sweep(ctx context.Context, ts []probe.SweepTarget, cfg probe.PingConfig, on func(probe.Record)) ([]probe.SweepResult, error) {
	out := make([]probe.SweepResult, len(ts))
	for i := 0; i < cfg.Count && ctx.Err() == nil; i++ {
		for k, t := range ts {
			rtt := 1.5 + float64(k)
			out[k].Sent++
			out[k].Recv++
			out[k].RTTs = append(out[k].RTTs, rtt)
			if on != nil {
				on(probe.Record{Target: t.Name, Addr: t.Addr.String(), Protocol: "icmp", Seq: i, Status: probe.StatusOK, RTTms: &rtt})
			}
		}
	}
	return out, ctx.Err()
}

func (p *fakeProber) Trace(ctx context.Context, addr string, cfg probe.TraceConfig, on func(*route.Trace)) error {
	p.mu.Lock()
	p.runs++
	p.cycles = append(p.cycles, cfg.Cycles)
	failing := p.fail > 0
	p.fail--
	p.mu.Unlock()
	if failing {
		return errors.New("no privilege")
	}
	for c := 0; c < cfg.Cycles; c++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		on(&route.Trace{Addr: addr, Protocol: cfg.Proto, Reached: true,
			Hops: []route.Hop{{TTL: 1, Sent: c + 1, Responders: []route.Responder{{Addr: addr, Recv: c + 1}}}}})
	}
	return nil
}

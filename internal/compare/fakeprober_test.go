package compare

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/linecheck/linecheck/internal/candidates"
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

// The one-shot live run sends only through the prober it is given (cmd
// gives engine.Sender): without one it refuses before any target is
// resolved or probed.
func TestLiveRunWithoutAProberIsRefused(t *testing.T) {
	c := &candidates.Candidate{Name: "lo", Targets: []candidates.Target{{Addr: "127.0.0.1", Protocol: "icmp"}}}
	if _, err := Probe(t.Context(), c, Options{}); !errors.Is(err, ErrNoProber) {
		t.Fatalf("Probe without a prober: %v, want ErrNoProber", err)
	}
	m, err := Probe(t.Context(), c, Options{Prober: &fakeProber{}, Count: 2, TraceCycles: 1})
	if err != nil || len(m.Targets) != 1 || m.Targets[0].Sent != 2 {
		t.Fatalf("Probe with the fake: %+v, %v; want one target with 2 probes sent", m, err)
	}
}

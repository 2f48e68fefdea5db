package route

import (
	"github.com/linecheck/linecheck/internal/stats"
)

// hopBuilder gathers one TTL's replies, as the measurement networks' files
// list them one by one, into a Hop: responders in the order they first
// answered, each with its RTT samples (so every figure is computed, as for a
// live trace), the loss over the probes sent.
type hopBuilder struct {
	hop     Hop
	samples [][]float64
	idx     map[string]int
}

func newHopBuilder(ttl int) *hopBuilder {
	return &hopBuilder{hop: Hop{TTL: ttl, Flags: []string{}, Responders: []Responder{}}, idx: map[string]int{}}
}

// responder is addr's index among the hop's responders, added if new.
func (b *hopBuilder) responder(addr string) int {
	i, ok := b.idx[addr]
	if !ok {
		i = len(b.hop.Responders)
		b.idx[addr] = i
		b.hop.Responders = append(b.hop.Responders, Responder{Addr: addr})
		b.samples = append(b.samples, nil)
	}
	return i
}

// reply counts one received reply from addr after rtt ms.
func (b *hopBuilder) reply(addr string, rtt float64) {
	i := b.responder(addr)
	b.samples[i] = append(b.samples[i], rtt)
}

// done is the hop, its loss 1 − received/sent (0 when nothing was sent:
// the file did not say).
func (b *hopBuilder) done() Hop {
	recv := 0
	for i := range b.hop.Responders {
		r := &b.hop.Responders[i]
		r.Recv = len(b.samples[i])
		recv += r.Recv
		if r.Recv > 0 {
			r.RTT, r.Jitter = stats.Summarize(b.samples[i])
			r.Samples = b.samples[i]
		}
	}
	if b.hop.Sent > 0 {
		b.hop.Loss = 1 - float64(min(recv, b.hop.Sent))/float64(b.hop.Sent)
	}
	return b.hop
}

// finishTrace marks the destination (the last hop, when one of its
// responders is the trace's address) and flags the hops.
func finishTrace(t *Trace) {
	if t.Hops == nil {
		t.Hops = []Hop{}
	}
	if n := len(t.Hops); n > 0 && t.Addr != "" {
		for _, r := range t.Hops[n-1].Responders {
			if r.Addr == t.Addr && r.Recv > 0 {
				t.Reached = true
				t.Hops[n-1].Flags = append(t.Hops[n-1].Flags, FlagDestination)
				break
			}
		}
	}
	FlagHops(t.Hops)
}

package probe

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeTrace is a trace protocol registered by the tests alone. Without raw
// sockets it answers its own probes, as if the path were 127.0.0.11,
// 127.0.0.12, then the target, each hop ttl milliseconds away; with raw
// sockets it sends ICMP echo requests of its own payload size (fakeEchoSize) and
// leaves the matching to icmpTrace. It counts what the drivers ask of it.
type fakeTrace struct {
	icmpTrace
	mu      sync.Mutex
	flows   int
	probes  []TraceProbe
	sizes   []int
	replies int
}

const fakeEchoSize = 48

func (f *fakeTrace) flowField(TraceConfig) FlowField { return FlowUDPSrcPort }
func (f *fakeTrace) unprivileged() TraceMode         { return ModeRecverr }

func (f *fakeTrace) rawProbe(d *rawDriver, p TraceProbe) (*sock, []byte, bool) {
	b := parisEcho(d.v6, d.id, p.Key, p.Flow, fakeEchoSize)
	f.mu.Lock()
	f.probes = append(f.probes, p)
	f.sizes = append(f.sizes, len(b))
	f.mu.Unlock()
	return d.icmp, b, false
}

func (f *fakeTrace) rawReply(d *rawDriver, r TraceReply, b []byte, l4 bool) (TraceReply, bool, error) {
	r, ok, err := f.icmpTrace.rawReply(d, r, b, l4)
	if ok {
		f.mu.Lock()
		f.replies++
		f.mu.Unlock()
	}
	return r, ok, err
}

func (f *fakeTrace) recverrFlow(_ *recverrDriver, fl *recverrFlow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl.port = 41000 + f.flows
	f.flows++
	return nil
}

func (f *fakeTrace) recverrSend(d *recverrDriver, _ *recverrFlow, p TraceProbe) (time.Time, error) {
	f.mu.Lock()
	f.probes = append(f.probes, p)
	f.mu.Unlock()
	at := time.Now()
	r := TraceReply{Key: p.Key, From: netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + p.TTL)}), At: at.Add(time.Duration(p.TTL) * time.Millisecond)}
	if p.TTL >= 3 {
		r.From, r.Dest = d.dst, true
	}
	d.in <- r
	return at, nil
}

// register adds f to the protocol table as "fake" for the test.
func (f *fakeTrace) register(t *testing.T) {
	saved := protocols
	t.Cleanup(func() { protocols = saved })
	protocols = append(append([]protocolSpec(nil), protocols...),
		protocolSpec{name: "fake", trace: f, port: true, tracePort: 7})
}

// A trace protocol registered in the table is the one the socket-mode
// drivers build probes and match replies with: the recverr driver (here
// picked because raw sockets are refused) opens the fake's flows and sends
// through it, and the raw driver sends the fake's packets and matches the
// replies with its code. Nothing of the fake leaves the host but echo
// requests to 127.0.0.1.
func TestTraceDriversUseARegisteredProtocol(t *testing.T) {
	t.Run("recverr", func(t *testing.T) {
		f := &fakeTrace{}
		f.register(t)
		noRaw := func(domain, typ, proto int) (int, error) {
			if typ&0xf == unix.SOCK_RAW {
				return -1, unix.EPERM
			}
			return unix.Socket(domain, typ, proto)
		}
		tr, err := Trace(context.Background(), "127.0.0.1", TraceConfig{Proto: "fake", Flows: 2, MaxTTL: 5, OpenSocket: noRaw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Mode != ModeRecverr || tr.Port != 7 || f.flows != 2 || len(f.probes) != 10 {
			t.Fatalf("mode %s port %d, %d flows opened, %d probes sent; want recverr, 7, 2 and 2×5", tr.Mode, tr.Port, f.flows, len(f.probes))
		}
		// What the fake path answers: hops 127.0.0.11, .12, then the
		// target at TTL 3, ttl milliseconds each; TTLs 4 and 5 only reach
		// the target again and are left out.
		got := map[string]bool{}
		for _, r := range tr.Results {
			if r.Addr != "" {
				got[fmt.Sprintf("flow %d ttl %d %s %.3f ms dest %v", r.Flow, r.TTL, r.Addr, r.RTTms, r.Dest)] = true
			}
		}
		want := map[string]bool{}
		for flow := range 2 {
			want[fmt.Sprintf("flow %d ttl 1 127.0.0.11 1.000 ms dest false", flow)] = true
			want[fmt.Sprintf("flow %d ttl 2 127.0.0.12 2.000 ms dest false", flow)] = true
			want[fmt.Sprintf("flow %d ttl 3 127.0.0.1 3.000 ms dest true", flow)] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("answered probes\n got %v\nwant %v", got, want)
		}
		d, err := OpenTraceDriver(TraceConfig{Proto: "fake", Mode: ModeRecverr, Flows: 2}, netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if fi := d.(FlowNamer).FlowIdent(0); fi.SrcPort != 41002 || fi.DstPort != 7 {
			t.Errorf("flow 0: %+v, want the fake's port 41002 (its third flow) to port 7", fi)
		}
	})
	t.Run("raw", func(t *testing.T) {
		needRaw(t)
		f := &fakeTrace{}
		f.register(t)
		tr, err := Trace(context.Background(), "127.0.0.1", TraceConfig{Proto: "fake", Mode: ModeRaw, MaxTTL: 3, Cycles: 2, Interval: 20 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Cycle 1 sends TTLs 1..3, all of which reach the loopback
		// target; cycle 2 knows it at TTL 1 and sends TTL 1 only.
		if len(f.probes) != 4 || f.replies != 4 {
			t.Fatalf("%d probes through the fake, %d replies matched by it; want 4 and 4", len(f.probes), f.replies)
		}
		for _, n := range f.sizes {
			if n != 8+fakeEchoSize {
				t.Errorf("probe of %d bytes, want the fake's 8+%d", n, fakeEchoSize)
			}
		}
		reached := 0
		for _, r := range tr.Results {
			if r.TTL == 1 && r.Dest && r.Addr == "127.0.0.1" {
				reached++
			}
		}
		if reached != 2 {
			t.Errorf("the target answered %d TTL 1 probes, want 2: %+v", reached, tr.Results)
		}
	})
}

package probe

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// closedPort returns a loopback port nothing listens on (it was free a moment ago).
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

func lo(s string) Target { return Target{Name: s, Addr: netip.MustParseAddr(s)} }

// One call probes ICMP and TCP targets on several ports; each result lands
// at its target's position, and each record carries its target's protocol
// and port.
func TestSweepMixedProtocolsInInputOrder(t *testing.T) {
	needRaw(t)
	a := testbin.TCPListener(t)
	b := testbin.TCPListener(t)
	closed := closedPort(t)
	ts := []SweepTarget{
		{Target: lo("127.0.0.1"), Protocol: "tcp", Port: a},
		{Target: lo("127.0.0.1")}, // icmp
		{Target: lo("127.0.0.1"), Protocol: "tcp", Port: b},
		{Target: lo("127.0.0.1"), Protocol: "tcp", Port: closed},
		{Target: lo("127.0.0.2"), Protocol: "icmp"},
		{Target: lo("127.0.0.1"), Protocol: "tcp", Port: a}, // same port again: same sweep
	}
	var mu sync.Mutex
	perPort := map[int]int{}
	res, err := Sweep(context.Background(), ts, PingConfig{Count: 3, Interval: 10 * time.Millisecond, Timeout: time.Second, Rate: 1000},
		func(r Record) {
			mu.Lock()
			defer mu.Unlock()
			if (r.Protocol == "tcp") != (r.Port != 0) {
				t.Errorf("record %+v: protocol and port disagree", r)
			}
			perPort[r.Port]++
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ts) {
		t.Fatalf("%d results for %d targets", len(res), len(ts))
	}
	for i, r := range res {
		wantRecv := 3
		if ts[i].Port == closed {
			wantRecv = 0
		}
		if r.Err != nil || r.Addr != ts[i].Addr.String() || r.Sent != 3 || r.Recv != wantRecv {
			t.Errorf("target %d (%s %d): %+v, want 3 sent, %d received", i, ts[i].Protocol, ts[i].Port, r, wantRecv)
		}
	}
	if res[3].Refused != 3 {
		t.Errorf("closed port: refused %d, want 3", res[3].Refused)
	}
	// 2 icmp + 2 on port a + 1 on b + 1 closed, 3 probes each.
	want := map[int]int{0: 6, a: 6, b: 3, closed: 3}
	for p, n := range want {
		if perPort[p] != n {
			t.Errorf("port %d: %d records, want %d (all: %v)", p, perPort[p], n, perPort)
		}
	}
}

// The global cap holds over the sweeps together: the k-th probe of the call
// (in send order) leaves no earlier than (k − sweeps)/rate after the first,
// the slack being one simultaneous first probe per sweep. Were each sweep
// given the whole cap, three sweeps would send three times as fast.
func TestSweepSharesTheRateCap(t *testing.T) {
	ports := []int{testbin.TCPListener(t), testbin.TCPListener(t), testbin.TCPListener(t)}
	var ts []SweepTarget
	for i, n := range []int{1, 2, 3} {
		for range n {
			ts = append(ts, SweepTarget{Target: lo("127.0.0.1"), Protocol: "tcp", Port: ports[i]})
		}
	}
	const rate = 200.0
	var mu sync.Mutex
	var sent []time.Time
	res, err := Sweep(context.Background(), ts, PingConfig{Count: 4, Interval: time.Millisecond, Timeout: time.Second, Rate: rate},
		func(r Record) {
			mu.Lock()
			sent = append(sent, r.Time)
			mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || r.Sent != 4 || r.Recv != 4 {
			t.Fatalf("target %d: %+v", i, r)
		}
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	if len(sent) != 24 {
		t.Fatalf("%d probes, want 24", len(sent))
	}
	for k, at := range sent {
		// Pacing may let a probe leave up to paceSlack early.
		min := time.Duration(float64(k-3)/rate*float64(time.Second)) - paceSlack
		if el := at.Sub(sent[0]); el < min {
			t.Fatalf("probe %d left %v after the first: the cap of %.0f/s allows no earlier than %v", k, el, rate, min)
		}
	}
}

// Sweeps start staggered, as their targets' slots in one interleaved sweep:
// twenty one-target sweeps (twenty TCP ports) at 200/s send one probe every
// 5 ms, not twenty at once.
func TestSweepStaggersItsSweeps(t *testing.T) {
	var ts []SweepTarget
	for range 20 {
		ts = append(ts, SweepTarget{Target: lo("127.0.0.1"), Protocol: "tcp", Port: testbin.TCPListener(t)})
	}
	const rate = 200.0
	var mu sync.Mutex
	var sent []time.Time
	if _, err := Sweep(context.Background(), ts, PingConfig{Count: 2, Interval: time.Millisecond, Timeout: time.Second, Rate: rate},
		func(r Record) {
			mu.Lock()
			sent = append(sent, r.Time)
			mu.Unlock()
		}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
	if len(sent) != 40 {
		t.Fatalf("%d probes, want 40", len(sent))
	}
	for k, at := range sent {
		min := time.Duration(float64(k-1)/rate*float64(time.Second)) - paceSlack
		if el := at.Sub(sent[0]); el < min {
			t.Fatalf("probe %d left %v after the first: at %.0f/s no earlier than %v", k, el, rate, min)
		}
	}
}

// SweepSpan is the last probe's slot: worked out by hand for one group and
// for staggered groups.
func TestSweepSpan(t *testing.T) {
	icmp := SweepTarget{Target: lo("127.0.0.1")}
	tcp := func(p int) SweepTarget { return SweepTarget{Target: lo("127.0.0.1"), Protocol: "tcp", Port: p} }
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		ts   []SweepTarget
		cfg  PingConfig
		want time.Duration
	}{
		// One target, 3 probes 100 ms apart: the last at 200 ms.
		{"one", []SweepTarget{icmp}, PingConfig{Count: 3, Interval: 100 * ms, Rate: 1000}, 200 * ms},
		// Four targets in one sweep, 2 probes 100 ms apart: the last at 100 + 3·25 = 175 ms.
		{"one sweep", []SweepTarget{icmp, icmp, icmp, icmp}, PingConfig{Count: 2, Interval: 100 * ms, Rate: 1000}, 175 * ms},
		// 20 one-target sweeps at 20/s, 1 probe: iv = 1 s, sweep 19 starts at 950 ms.
		{"staggered", func() []SweepTarget {
			var ts []SweepTarget
			for i := range 20 {
				ts = append(ts, tcp(1000+i))
			}
			return ts
		}(), PingConfig{Count: 1, Interval: 10 * ms, Rate: 20}, 950 * ms},
		// icmp ×1 then tcp/80 ×3, 2 probes, interval 100 ms, no stretch: the tcp
		// sweep starts at 25 ms and its last probe is at 25 + 100 + 2·33.3 ms.
		{"mixed", []SweepTarget{icmp, tcp(80), tcp(80), tcp(80)}, PingConfig{Count: 2, Interval: 100 * ms, Rate: 1000},
			25*ms + 100*ms + 200*ms/3},
		{"refused", []SweepTarget{{Target: lo("127.0.0.1"), Protocol: "udp"}}, PingConfig{}, 0},
	} {
		if got := SweepSpan(tc.ts, tc.cfg); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSweepRefusesWhatItCannotProbe(t *testing.T) {
	for _, ts := range [][]SweepTarget{
		{{Target: lo("127.0.0.1"), Protocol: "udp", Port: 53}},
		{{Target: lo("127.0.0.1"), Protocol: "tcp"}},
		{{Target: Target{Name: "unresolved"}}},
	} {
		if _, err := Sweep(context.Background(), ts, PingConfig{Count: 1}, nil); err == nil {
			t.Errorf("%+v: no error", ts)
		}
	}
}

package probe

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// newTestSweep has two targets and two rounds sent at t0 (4 probes pending).
func newTestSweep(t0 time.Time) (*sweep, *[]Record) {
	var recs []Record
	ts := []Target{{Name: "a", Addr: netip.MustParseAddr("10.77.0.2")}, {Name: "b", Addr: netip.MustParseAddr("10.77.1.2")}}
	r := &sweep{cfg: PingConfig{Count: 2, Timeout: 100 * time.Millisecond}.withDefaults(), targets: ts,
		onRecord: func(rec Record) { recs = append(recs, rec) }, proto: ICMP}
	r.results = make([]PingResult, 2)
	r.byAddr = map[netip.Addr]int{ts[0].Addr: 0, ts[1].Addr: 1}
	r.probes = make([]probeState, 4)
	for i := range r.probes {
		r.probes[i] = probeState{sent: t0, state: stPending}
	}
	r.sent = 4
	return r, &recs
}

// reply is an ICMPv4 echo reply as an ICMP datagram socket delivers it.
func reply(nonce string, i uint32) []byte {
	b := make([]byte, 8+12)
	b[0] = icmp4EchoReply
	copy(b[8:], nonce)
	binary.BigEndian.PutUint32(b[16:], i)
	return b
}

func TestSweepCountsLateDuplicateAndForeignApart(t *testing.T) {
	t0 := time.Now()
	r, recs := newTestSweep(t0)
	s := &sock{dgram: true}
	d := &icmpDriver{r: r}
	copy(d.nonce[:], "testnonc")
	handle := func(p packet) { r.mu.Lock(); defer r.mu.Unlock(); d.handleLocked(s, p) }
	a, b := r.targets[0].Addr, r.targets[1].Addr
	ms := func(v float64) time.Time { return t0.Add(time.Duration(v * float64(time.Millisecond))) }

	handle(packet{data: reply("testnonc", 0), from: a, at: ms(5)})   // a#0 ok, 5 ms
	handle(packet{data: reply("testnonc", 0), from: a, at: ms(6)})   // a#0 duplicate
	handle(packet{data: reply("testnonc", 1), from: b, at: ms(150)}) // b#0 late (timeout 100 ms)
	handle(packet{data: reply("othernon", 2), from: a, at: ms(7)})   // another run's reply from a
	handle(packet{data: reply("testnonc", 3), from: a, at: ms(8)})   // b#1's number but from a: foreign
	r.reap(ms(100 + 50 + 1))                                         // a#1 and b#1 lost
	handle(packet{data: reply("testnonc", 2), from: a, at: ms(90)})  // a#1 stamped in time, read after the reaper: received
	res := r.finish()

	want := []PingResult{
		{Target: "a", Sent: 2, Recv: 2, Dup: 1, Foreign: 2, RTTs: []float64{5, 90}},
		{Target: "b", Sent: 2, Recv: 0, Late: 1},
	}
	for i, w := range want {
		g := res[i]
		if g.Sent != w.Sent || g.Recv != w.Recv || g.Late != w.Late || g.Dup != w.Dup || g.Foreign != w.Foreign || len(g.RTTs) != len(w.RTTs) {
			t.Errorf("%s: %+v, want %+v", w.Target, g, w)
			continue
		}
		for j := range w.RTTs {
			if g.RTTs[j] != w.RTTs[j] {
				t.Errorf("%s: rtts %v, want %v", w.Target, g.RTTs, w.RTTs)
			}
		}
	}
	if res[1].Loss() != 1 || res[0].Loss() != 0 {
		t.Errorf("loss a %v b %v, want 0 and 1", res[0].Loss(), res[1].Loss())
	}
	var statuses []string
	for _, rec := range *recs {
		statuses = append(statuses, rec.Target+":"+string(rec.Status))
	}
	wantS := []string{"a:ok", "a:dup", "b:late", "a:lost", "b:lost", "a:ok"}
	if len(statuses) != len(wantS) {
		t.Fatalf("records %v, want %v", statuses, wantS)
	}
	for i := range wantS {
		if statuses[i] != wantS[i] {
			t.Errorf("records %v, want %v", statuses, wantS)
			break
		}
	}
}

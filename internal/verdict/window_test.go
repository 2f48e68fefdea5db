package verdict

import (
	"math"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// rec is an ICMP record of 127.0.0.1 sent at at: answered in rtt ms, or
// lost when rtt < 0.
func rec(at time.Time, rtt float64) probe.Record {
	r := probe.Record{Time: at, Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: probe.ICMP, Status: probe.StatusLost}
	if rtt >= 0 {
		r.Status, r.RTTms = probe.StatusOK, &rtt
	}
	return r
}

// Ten probes one second apart; the slice [3 s, 7 s) holds probes 3 to 6:
// 20, 14, lost, 30 ms. By hand: 4 sent, 3 answered, loss 1/4; sorted
// 14, 20, 30, so the nearest-rank p95 is rank ⌈0.95·3⌉ = 3 → 30 and p50
// rank ⌈0.5·3⌉ = 2 → 20; min 14; mean |D| = (|14−20| + |30−14|) / 2 = 11.
// The whole window: 10 sent, 8 answered, loss 0.2; sorted 10 11 12 14 16
// 18 20 30: p95 rank ⌈7.6⌉ = 8 → 30, p50 rank 4 → 14.
func TestWindowSliceByHand(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)
	rtts := []float64{10, 12, -1, 20, 14, -1, 30, 16, 18, 11}
	w := NewWindow(0)
	for i, v := range rtts {
		w.Add(rec(t0.Add(time.Duration(i)*time.Second), v))
	}
	tg := candidates.Target{Addr: "127.0.0.1", Protocol: probe.ICMP}
	s := w.ResultBetween(tg, t0.Add(3*time.Second), t0.Add(7*time.Second), nil)
	if s.Sent != 4 || s.Recv != 3 || s.Loss != 0.25 || s.RTT.P95 != 30 || s.RTT.P50 != 20 || s.RTT.Min != 14 || s.Jitter.MeanAbs != 11 {
		t.Errorf("slice: sent %d recv %d loss %v p95 %v p50 %v min %v jitter %v; want 4 3 0.25 30 20 14 11",
			s.Sent, s.Recv, s.Loss, s.RTT.P95, s.RTT.P50, s.RTT.Min, s.Jitter.MeanAbs)
	}
	all := w.Result(tg, nil)
	if all.Sent != 10 || all.Recv != 8 || math.Abs(all.Loss-0.2) > 1e-12 || all.RTT.P95 != 30 || all.RTT.P50 != 14 {
		t.Errorf("whole: sent %d recv %d loss %v p95 %v p50 %v; want 10 8 0.2 30 14", all.Sent, all.Recv, all.Loss, all.RTT.P95, all.RTT.P50)
	}
	// Result is the whole-window case of the one statistic: open on both
	// sides, a span gives the same figures.
	open := w.ResultBetween(tg, time.Time{}, time.Time{}, nil)
	if open.Sent != all.Sent || open.RTT != all.RTT || open.Jitter != all.Jitter || open.Loss != all.Loss {
		t.Errorf("open span %+v differs from Result %+v", open, all)
	}
	// from is included, to excluded: [9 s, 10 s) is the last probe only.
	if last := w.ResultBetween(tg, t0.Add(9*time.Second), t0.Add(10*time.Second), nil); last.Sent != 1 || last.RTT.Max != 11 {
		t.Errorf("last probe: %+v", last)
	}
}

// An evening window in Beijing time (UTC+8) that crosses local midnight,
// and the year: [23:59, 00:01) holds the probes at 23:59:00, 23:59:30
// and 00:00:30 — 40, lost, 44 ms: 3 sent, 2 answered, loss 1/3, p95 44,
// mean |D| 4. The probes at 23:58 and 00:01 stay out.
func TestWindowSliceAcrossMidnight(t *testing.T) {
	cst := time.FixedZone("CST", 8*3600)
	at := func(y int, mo time.Month, d, h, m, s int) time.Time { return time.Date(y, mo, d, h, m, s, 0, cst) }
	w := NewWindow(0)
	for _, p := range []struct {
		t   time.Time
		rtt float64
	}{
		{at(2026, 12, 31, 23, 58, 0), 90},
		{at(2026, 12, 31, 23, 59, 0), 40},
		{at(2026, 12, 31, 23, 59, 30), -1},
		{at(2027, 1, 1, 0, 0, 30), 44},
		{at(2027, 1, 1, 0, 1, 0), 95},
	} {
		w.Add(rec(p.t, p.rtt))
	}
	s := w.ResultBetween(candidates.Target{Addr: "127.0.0.1"}, at(2026, 12, 31, 23, 59, 0), at(2027, 1, 1, 0, 1, 0), nil)
	if s.Sent != 3 || s.Recv != 2 || math.Abs(s.Loss-1.0/3) > 1e-12 || s.RTT.P95 != 44 || s.RTT.Max != 44 || s.Jitter.MeanAbs != 4 {
		t.Errorf("sent %d recv %d loss %v p95 %v max %v jitter %v; want 3 2 1/3 44 44 4", s.Sent, s.Recv, s.Loss, s.RTT.P95, s.RTT.Max, s.Jitter.MeanAbs)
	}
}

// Add keeps each record's time: a window filled from records drops by
// time (DropBefore) as a window of sweep cycles does; duplicates in a
// span are those seen in it.
func TestWindowAddKeepsTheRecordsTime(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	w := NewWindow(0)
	for i := range 6 {
		w.Add(rec(t0.Add(time.Duration(i)*time.Minute), float64(10+i)))
	}
	dup := rec(t0.Add(4*time.Minute), 14)
	dup.Status = probe.StatusDup
	w.Add(dup)
	if s := w.ResultBetween(candidates.Target{}, t0.Add(4*time.Minute), time.Time{}, nil); s.Duplicates != 1 || s.Sent != 2 {
		t.Errorf("from 12:04: %d sent, %d duplicates; want 2, 1", s.Sent, s.Duplicates)
	}
	if s := w.ResultBetween(candidates.Target{}, time.Time{}, t0.Add(4*time.Minute), nil); s.Duplicates != 0 || s.Sent != 4 {
		t.Errorf("until 12:04: %d sent, %d duplicates; want 4, 0", s.Sent, s.Duplicates)
	}
	if k := w.DropBefore(t0.Add(2 * time.Minute)); k != 2 || w.Len() != 4 {
		t.Errorf("DropBefore 12:02 dropped %d, %d left; want 2 dropped, 4 left", k, w.Len())
	}
	if r := w.Result(candidates.Target{}, nil); r.RTT.Min != 12 {
		t.Errorf("min after the drop %v, want 12 (the probe of 12:02)", r.RTT.Min)
	}
}

// Windows are keyed by target and address family: the same name probed
// over IPv4 and IPv6 is two windows, ::1 is IPv6, an IPv4-mapped address
// IPv4, a name not yet resolved has no family.
func TestWindowKeyFamilies(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"127.0.0.1", IPv4}, {"::1", IPv6}, {"::ffff:127.0.0.1", IPv4}, {"fd00:77::2", IPv6}, {"lo.test", ""}, {"", ""},
	} {
		if got := Family(c.addr); got != c.want {
			t.Errorf("Family(%q) = %q, want %q", c.addr, got, c.want)
		}
	}
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ws := NewWindows(0)
	v4, v6 := rec(t0, 10), rec(t0, 30)
	v4.Target, v6.Target, v6.Addr = "lo.test", "lo.test", "::1"
	ws.Add(v4)
	ws.Add(v6)
	ws.Add(rec(t0.Add(time.Second), -1)) // 127.0.0.1 by address: a third key
	if ws.Len() != 3 {
		t.Fatalf("%d windows, want 3", ws.Len())
	}
	k6 := WindowKey{Target: "lo.test icmp", Family: IPv6}
	if RecordKey(v6) != k6 {
		t.Errorf("RecordKey = %+v, want %+v", RecordKey(v6), k6)
	}
	w6, w4 := ws.Get(k6), ws.Get(WindowKey{Target: "lo.test icmp", Family: IPv4})
	if w6 == nil || w4 == nil {
		t.Fatal("a family's window is missing")
	}
	if r := w6.Result(candidates.Target{}, nil); r.Sent != 1 || r.RTT.Min != 30 {
		t.Errorf("IPv6 window %+v, want the 30 ms probe only", r)
	}
	if r := w4.Result(candidates.Target{}, nil); r.Sent != 1 || r.RTT.Min != 10 {
		t.Errorf("IPv4 window %+v, want the 10 ms probe only", r)
	}
	if k := KeyOf(candidates.Target{Addr: "::1", Protocol: probe.TCP, Port: 443}, ""); k != (WindowKey{Target: "::1 tcp/443", Family: IPv6}) {
		t.Errorf("KeyOf ::1 tcp/443 = %+v", k)
	}
}

// A span counts the duplicates among the latest Size the window saw: a
// window of 3 that saw 5 duplicates at 0..4 s counts those at 2, 3 and 4 s.
func TestWindowSpanDuplicatesAreTheLatestSize(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	w := NewWindow(3)
	for i := range 5 {
		d := rec(t0.Add(time.Duration(i)*time.Second), 10)
		d.Status = probe.StatusDup
		w.Add(d)
	}
	if s := w.ResultBetween(candidates.Target{}, t0, time.Time{}, nil); s.Duplicates != 3 {
		t.Errorf("span duplicates %d, want 3", s.Duplicates)
	}
	if s := w.ResultBetween(candidates.Target{}, t0.Add(3*time.Second), time.Time{}, nil); s.Duplicates != 2 {
		t.Errorf("from 3 s: %d duplicates, want 2", s.Duplicates)
	}
	if r := w.Result(candidates.Target{}, nil); r.Duplicates != 5 {
		t.Errorf("whole window: %d duplicates, want all 5 it saw", r.Duplicates)
	}
}

package verdict

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"
	"unsafe"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// TestWindowProbeIsSmall: a recording's window holds every probe of it (30
// days at 1/s is 2.6 M a target, bench/evening), so a probe costs its
// time, its RTT and how it ended, 24 bytes; the status string it held
// before made it 32.
func TestWindowProbeIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(windowProbe{}); n > 24 {
		t.Errorf("windowProbe is %d bytes, want at most 24", n)
	}
}

// TestWindowBuilderFiguresAsSortedRecords: windows built record by record
// (WindowBuilder, what compare's replay streams into) give the figures
// of the records held whole and sorted as compare read them before
// (every file's records stably by time, then each target's stably by
// time and sequence number, each added to a window in that order): the
// whole window, time spans, hours of the day and duplicates, RTT samples
// in the same order, on streams out of time order with ties, duplicates,
// late, lost, answers without an RTT, sequence numbers past 32 bits and
// records of other targets.
func TestWindowBuilderFiguresAsSortedRecords(t *testing.T) {
	targets := []candidates.Target{
		{Addr: "127.0.0.1", Protocol: probe.ICMP},
		{Addr: "127.0.0.2", Protocol: probe.TCP, Port: 443},
		{Addr: "127.0.0.3", Protocol: probe.ICMP}, // never recorded
	}
	rng := rand.New(rand.NewPCG(30, 1))
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	var files [][]probe.Record
	for f := range 3 {
		var recs []probe.Record
		for i := range 2000 {
			r := probe.Record{Schema: probe.StreamSchema, Seq: i % 700, Status: probe.StatusOK}
			switch rng.IntN(3) {
			case 0:
				r.Addr, r.Target, r.Protocol = "127.0.0.1", "127.0.0.1", probe.ICMP
			case 1:
				r.Addr, r.Target, r.Protocol, r.Port = "127.0.0.2", "127.0.0.2", probe.TCP, 443
			default:
				r.Addr, r.Target, r.Protocol = "127.0.0.9", "127.0.0.9", probe.ICMP
			}
			// Seconds over two days, few of them: many records share a
			// time, some a time and a sequence number.
			r.Time = t0.Add(time.Duration(rng.IntN(300)) * 577 * time.Second)
			if f == 1 && i%50 == 0 {
				r.Time = time.Time{} // a record without a time
			}
			if f == 2 && i%97 == 0 {
				// Sequence numbers past 32 bits, and below 0.
				r.Seq = 5_000_000_000 - 5_000_000_000*(i%2) - i%3
			}
			rtt := float64(rng.IntN(100000)) / 1000
			switch k := rng.IntN(20); {
			case k == 0:
				r.Status = probe.StatusLost
			case k == 1:
				r.Status, r.RTTms = probe.StatusLate, &rtt
			case k == 2:
				r.Status, r.RTTms = probe.StatusDup, &rtt
			case k == 3:
				// an answer without its RTT: ignored
			default:
				r.RTTms = &rtt
			}
			recs = append(recs, r)
		}
		files = append(files, recs)
	}

	// The oracle: the records whole, sorted as before.
	var all []probe.Record
	for _, f := range files {
		all = append(all, f...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	want := make([]*Window, len(targets))
	for i, tg := range targets {
		var rs []probe.Record
		for _, r := range all {
			if r.Addr == tg.Addr && r.Protocol == tg.Protocol && r.Port == tg.Port {
				rs = append(rs, r)
			}
		}
		sort.SliceStable(rs, func(a, b int) bool {
			if !rs[a].Time.Equal(rs[b].Time) {
				return rs[a].Time.Before(rs[b].Time)
			}
			return rs[a].Seq < rs[b].Seq
		})
		want[i] = NewWindow(0)
		for _, r := range rs {
			want[i].Add(r)
		}
	}

	b := NewWindowBuilder(targets)
	for _, f := range files {
		for _, r := range f {
			b.Add(r)
		}
	}
	got, extra := b.Windows()
	if len(extra) != 1 || extra[0] != "127.0.0.9 icmp" {
		t.Errorf("extra %q, want [127.0.0.9 icmp]", extra)
	}
	if got[0].Len() < 1000 || got[1].Len() < 1000 || got[2].Len() != 0 {
		t.Fatalf("windows of %d, %d, %d probes: the scenario lost its records", got[0].Len(), got[1].Len(), got[2].Len())
	}
	evening := func(at time.Time) bool { return at.Hour() >= 12 && at.Hour() < 15 }
	for i, tg := range targets {
		if got[i].Len() != want[i].Len() {
			t.Errorf("%s: %d probes, want %d", tg, got[i].Len(), want[i].Len())
		}
		cases := map[string][2]TargetResult{
			"whole": {got[i].Result(tg, nil), want[i].Result(tg, nil)},
			"span": {got[i].ResultBetween(tg, t0.Add(3*time.Hour), t0.Add(20*time.Hour), nil),
				want[i].ResultBetween(tg, t0.Add(3*time.Hour), t0.Add(20*time.Hour), nil)},
			"hours": {got[i].ResultIn(tg, evening, nil), want[i].ResultIn(tg, evening, nil)},
		}
		for name, c := range cases {
			if !reflect.DeepEqual(c[0], c[1]) {
				t.Errorf("%s %s: %+v\nwant %+v", tg, name, c[0], c[1])
			}
		}
		if tg.Addr != "127.0.0.3" && cases["whole"][0].Duplicates == 0 {
			t.Errorf("%s: no duplicates: the scenario lost them", tg)
		}
		gf, gl := got[i].Span()
		wf, wl := want[i].Span()
		if !gf.Equal(wf) || !gl.Equal(wl) {
			t.Errorf("%s: span %s–%s, want %s–%s", tg, gf, gl, wf, wl)
		}
	}
}

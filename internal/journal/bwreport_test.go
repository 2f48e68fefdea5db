package journal

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe/bw"
)

func bwEntry(at time.Time, rates ...float64) Entry {
	r := &bw.Result{Schema: bw.Schema, Server: "127.0.0.1", Port: 5201, Protocol: "tcp", Direction: bw.Download}
	sum := 0.0
	for i, v := range rates {
		r.Intervals = append(r.Intervals, bw.Interval{StartS: float64(i), EndS: float64(i + 1), Bps: v})
		sum += v
	}
	m := sum / float64(len(rates))
	r.Throughput.Mean = &m
	return Entry{Kind: KindBW, Time: at, End: at.Add(10 * time.Second), BW: r}
}

// Hand-computed: hour 10 has samples 90..100 (20 of them: p5 = the 1st, p50
// = the 10th smallest); hour 21 has 40..59.
func TestSummarizeBWHourlyProfileAndVerdict(t *testing.T) {
	day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	var es []Entry
	var morning, evening []float64
	for i := range 10 {
		morning = append(morning, 100e6-float64(i)*1e6)
		evening = append(evening, 40e6+float64(i)*1e6)
	}
	es = append(es, bwEntry(day.Add(10*time.Hour), morning...), bwEntry(day.Add(24*time.Hour+10*time.Hour+5*time.Minute), morning...))
	es = append(es, bwEntry(day.Add(21*time.Hour), evening...), bwEntry(day.Add(21*time.Hour+30*time.Minute), evening[:5]...))
	es = append(es, Entry{Kind: KindBW, Time: day.Add(22 * time.Hour), Error: "server busy"})
	r := SummarizeBW(es, ReadInfo{}, "x", time.UTC, BWReportOptions{Floor: 100e6, Share: 0.8, FromHour: 19, ToHour: 23})
	if len(r.Hours) != 2 || r.Hours[0].Hour != 10 || r.Hours[1].Hour != 21 || r.ErrorCycles != 1 || r.Cycles != 5 {
		t.Fatalf("hours %+v error cycles %d", r.Hours, r.ErrorCycles)
	}
	h10, h21 := r.Hours[0], r.Hours[1]
	// Hour 10: 20 samples, 91..100 twice; p5 = ceil(1) = 1st = 91, p50 = 10th = 95.
	if h10.Samples != 20 || *h10.P5 != 91e6 || *h10.P50 != 95e6 {
		t.Errorf("hour 10: %d samples p5 %v p50 %v", h10.Samples, *h10.P5, *h10.P50)
	}
	// Hour 21: 15 samples 40..49 and 40..44; p5 = 1st = 40, p50 = 8th: 40 40 41 41 42 42 43 43 → 43.
	if h21.Samples != 15 || *h21.P5 != 40e6 || *h21.P50 != 43e6 {
		t.Errorf("hour 21: %d samples p5 %v p50 %v", h21.Samples, *h21.P5, *h21.P50)
	}
	if r.Worst.Hour != 21 || r.Best.Hour != 10 || math.Abs(*r.Oversell-(1-43.0/95)) > 1e-12 {
		t.Errorf("worst %d best %d oversell %v", r.Worst.Hour, r.Best.Hour, *r.Oversell)
	}
	if r.Verdict != "oversold" || *r.Evening.P5 != 40e6 || r.Evening.Tests != 2 {
		t.Errorf("verdict %q evening %+v", r.Verdict, r.Evening)
	}
	r = SummarizeBW(es, ReadInfo{}, "x", time.UTC, BWReportOptions{Floor: 45e6, Share: 0.8, FromHour: 19, ToHour: 23})
	if r.Verdict != "ok" {
		t.Errorf("40 >= 0.8·45: verdict %q, want ok", r.Verdict)
	}
	r = SummarizeBW(es, ReadInfo{}, "x", time.UTC, BWReportOptions{Share: 0.8, FromHour: 19, ToHour: 23})
	if r.Verdict != "" || r.Evening.FloorBps != nil {
		t.Errorf("no floor: verdict %q", r.Verdict)
	}
	// Across midnight: 22-2 holds hours 22, 23, 0, 1.
	if !InEvening(23, 22, 2) || !InEvening(1, 22, 2) || InEvening(2, 22, 2) || InEvening(21, 22, 2) {
		t.Error("InEvening across midnight")
	}
}

// A bw cycle with an impossible throughput is refused on read with its line,
// as ping's are; a real one passes.
func TestImpossibleBWEntriesAreRefused(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	if err := validate(bwEntry(t0, 90e6, 95e6)); err != nil {
		t.Fatalf("a real test refused: %v", err)
	}
	for name, e := range map[string]Entry{
		"negative interval": bwEntry(t0, 90e6, -5e6),
		"absurd interval":   bwEntry(t0, 1e300),
	} {
		if err := validate(e); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	neg := bwEntry(t0, 1e6)
	neg.BW.Bytes = -1
	if err := validate(neg); err == nil {
		t.Errorf("negative bytes accepted")
	}
	// Through the journal: written, then read back with file:line.
	path := t.TempDir() + "/bw.ndjson"
	w, _, err := Open(path, KindBW)
	if err != nil {
		t.Fatal(err)
	}
	w.Append(bwEntry(t0, 90e6))
	w.Append(bwEntry(t0.Add(time.Hour), 90e6, -1))
	w.Close()
	if _, _, err := Read(path); err == nil || !strings.Contains(err.Error(), path+":2: impossible entry (cycle 2): bw: interval 2") {
		t.Errorf("read: %v", err)
	}
}

// One hour of the day measured gives no oversell (there is no other hour to
// compare it with): absent, shown "-", where it read "oversell 0.00%".
func TestSummarizeBWOneHourHasNoOversell(t *testing.T) {
	day := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	es := []Entry{bwEntry(day, 90e6, 95e6), bwEntry(day.Add(20*time.Minute), 80e6)}
	r := SummarizeBW(es, ReadInfo{}, "x", time.UTC, BWReportOptions{Share: 0.8, FromHour: 19, ToHour: 23})
	if len(r.Hours) != 1 || r.Oversell != nil {
		t.Errorf("hours %+v oversell %v: want one hour and no oversell", r.Hours, r.Oversell)
	}
	// Two hours with the same p50 do measure an oversell of 0.
	es = append(es, bwEntry(day.Add(2*time.Hour), 90e6, 95e6), bwEntry(day.Add(2*time.Hour+20*time.Minute), 80e6))
	r = SummarizeBW(es, ReadInfo{}, "x", time.UTC, BWReportOptions{Share: 0.8, FromHour: 19, ToHour: 23})
	if r.Oversell == nil || *r.Oversell != 0 {
		t.Errorf("two equal hours: oversell %v, want 0", r.Oversell)
	}
}

package compare

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/verdict"
)

// A bw journal is judged per SLA window on the tests that started in it:
// 200 Mbit/s at 10:00 UTC (18:00 Shanghai), 50 at 13:00 UTC (21:00
// Shanghai): the evening's p5 is 50 Mbit/s and fails a 100 Mbit/s floor the
// whole recording's p5 (50) fails too; a window with no test is no data.
func TestThroughputJournalIsJudgedPerWindow(t *testing.T) {
	jpath := filepath.Join(t.TempDir(), "watch.ndjson")
	w, _, err := journal.Open(jpath, journal.KindBW)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	w.Append(journal.Entry{Time: day.Add(10 * time.Hour), BW: bwDoc(200e6, 200e6)})
	w.Append(journal.Entry{Time: day.Add(13 * time.Hour), BW: bwDoc(50e6, 50e6)})
	w.Close()
	tp, err := verdict.ReplayThroughput(jpath)
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := time.LoadLocation("Asia/Shanghai")
	evening := candidates.Window{Name: "evening", From: 20 * 60, To: 23 * 60, TZ: sh.String(), Loc: sh}
	afternoon := candidates.Window{Name: "afternoon", From: 17 * 60, To: 19 * 60, TZ: sh.String(), Loc: sh}
	night := candidates.Window{Name: "night", From: 2 * 60, To: 3 * 60, TZ: sh.String(), Loc: sh}
	if e := tp.Within(evening); e == nil || e.Tests != 1 || *e.P5 != 50e6 {
		t.Errorf("evening throughput %+v, want the 21:00 test (p5 50 Mbit/s)", e)
	}
	if a := tp.Within(afternoon); a == nil || *a.P5 != 200e6 {
		t.Errorf("afternoon throughput %+v, want the 18:00 test (p5 200 Mbit/s)", a)
	}
	if n := tp.Within(night); n != nil {
		t.Errorf("night throughput %+v, want none", n)
	}
	floor := 100.0
	s := candidates.SLA{MinThroughputMbps: &floor}
	cs := verdict.CheckSLAWindow(s, verdict.RouteQuality{Throughput: tp.Within(night)}, night)
	if len(cs) != 1 || cs[0].Pass || !cs[0].Unmeasured || cs[0].Window != "night" {
		t.Errorf("night checks %+v, want no data", cs)
	}
	cs = verdict.CheckSLAWindow(s, verdict.RouteQuality{Throughput: tp.Within(afternoon)}, afternoon)
	if len(cs) != 1 || !cs[0].Pass || cs[0].Measured != 200.0 {
		t.Errorf("afternoon checks %+v, want 200 ≥ 100", cs)
	}
	if got := verdict.Failures(verdict.CheckSLAWindow(s, verdict.RouteQuality{Throughput: tp.Within(evening)}, evening)); len(got) != 1 ||
		got[0] != "min_throughput_mbps 50.0 Mbps < 100 Mbps in evening, 20:00–23:00 Asia/Shanghai" {
		t.Errorf("evening failures %q", got)
	}
}

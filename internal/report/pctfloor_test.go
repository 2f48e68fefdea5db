package report

import (
	"math"
	"slices"
	"testing"

	"github.com/linecheck/linecheck/internal/journal"
)

// A share that is a promise is never rounded up into one: by hand,
// 3599 of 3600 cycles up is 99.97222… %, which rounds to "100.0%" at one
// decimal and to "99.972%" at three; floored it is "99.9%" and "99.972%".
func TestPctFloorNeverRoundsUpToAFullShare(t *testing.T) {
	cases := []struct {
		frac float64
		prec int
		want string
	}{
		{3599.0 / 3600, 1, "99.9%"},
		{3599.0 / 3600, 3, "99.972%"},
		{999999.0 / 1000000, 3, "99.999%"},
		{1, 1, "100.0%"},
		{1, 3, "100.000%"},
		{0, 1, "0.0%"},
		{0.0004, 1, "<0.1%"},
		{0.29, 1, "29.0%"}, // 0.29*100*10 is 289.99999999999994 in floats: not 28.9
		{0.5, 2, "50.00%"},
		{math.NaN(), 1, "-"},
	}
	for _, c := range cases {
		if got := PctFloor(c.frac, c.prec); got != c.want {
			t.Errorf("PctFloor(%v, %d) = %q, want %q", c.frac, c.prec, got, c.want)
		}
	}
}

// The watch report's hours and summary say an hour with one cycle down
// in 3600 is below 100 %.
func TestWatchReportShowsAnHourWithAnOutageBelowAFullShare(t *testing.T) {
	av := 3599.0 / 3600
	r := journal.Report{Kind: "ping", TZ: "UTC", Cycles: 3600, Runs: 1, Targets: []journal.Target{{
		Target: "127.0.0.1", Addr: "127.0.0.1", Protocol: "icmp", Cycles: 3600, UpCycles: 3599, Availability: av,
		Hours: []journal.Hour{{Hour: 3, Cycles: 3600, Availability: av}},
	}}}
	tables := WatchTables(r, FormatTable)
	if len(tables) != 2 {
		t.Fatalf("%d tables, want the summary and one hourly table", len(tables))
	}
	if i := slices.Index(tables[0].Headers, "availability"); tables[0].Rows[0][i] != "99.972%" {
		t.Errorf("summary availability %q, want 99.972%%", tables[0].Rows[0][i])
	}
	if i := slices.Index(tables[1].Headers, "availability"); tables[1].Rows[0][i] != "99.9%" {
		t.Errorf("hourly availability %q, want 99.9%% (not 100.0%%)", tables[1].Rows[0][i])
	}
}

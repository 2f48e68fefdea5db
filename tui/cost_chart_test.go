package tui

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// tenDays is 10 days of 5-minute slots at 100 Mbps in and out, with days
// 4 to 6 missing (NaN, as adapt.go places a log's gaps on the grid).
func tenDays() *trafficGrid {
	n := 10 * 288
	tr := &trafficGrid{Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Step: 5 * time.Minute,
		InMbps: make([]float64, n), OutMbps: make([]float64, n)}
	for i := range n {
		tr.InMbps[i], tr.OutMbps[i] = 100, 100
		if d := i / 288; d >= 3 && d < 6 {
			tr.InMbps[i], tr.OutMbps[i] = math.NaN(), math.NaN()
		}
	}
	return tr
}

// chartRows returns the chart's rows above the X axis, the Y label and
// axis of each cut off.
func chartRows(lines []string) []string {
	var rows []string
	for _, l := range lines[1:] {
		if strings.Contains(l, "└") {
			break
		}
		if _, after, ok := strings.Cut(l, "│"); ok {
			rows = append(rows, after)
		}
	}
	return rows
}

func isBraille(r rune) bool { return r >= 0x2801 && r <= 0x28ff }

// Missing days are a gap in the cost chart, not zero traffic: at a steady
// 100 Mbps nothing may be drawn on the lower rows (the old chart dropped
// the line to 0 for the three missing days and drew it along the bottom).
func TestCostChartDrawsMissingDaysAsAGap(t *testing.T) {
	st := newStylesPtr(false)
	lines := renderTrafficPanel(tenDays(), Cost{Direction: billing.Direction("greater")}, CostOptions{}, 80, 16, st)
	rows := chartRows(lines)
	if len(rows) < 6 {
		t.Fatalf("chart rows %d:\n%s", len(rows), strings.Join(lines, "\n"))
	}
	data := func(r string) bool {
		return strings.ContainsFunc(r, func(c rune) bool { return isBraille(c) || c == '•' })
	}
	first := slices.IndexFunc(rows, data)
	if first < 0 {
		t.Fatalf("no data drawn:\n%s", strings.Join(lines, "\n"))
	}
	for i := first + 1; i < len(rows); i++ {
		if data(rows[i]) {
			t.Fatalf("row %d, below the 100 Mbps line, has data: the missing days were drawn as traffic:\n%s", i, strings.Join(lines, "\n"))
		}
	}
	// The 100 Mbps line itself stops for the three missing days (of 10:
	// about 22 of the 75 columns).
	if line := strings.TrimSpace(rows[first]); !strings.Contains(line, strings.Repeat(" ", 15)) {
		t.Errorf("no gap in the line:\n%s", strings.Join(lines, "\n"))
	}
}

// The 95th line's row is labelled with its value: at 80×24 a 95th of
// 390.8 sat on the row labelled 600.
func TestCostChartLabelsTheRowOfThe95th(t *testing.T) {
	st := newStylesPtr(false)
	tr := tenDays()
	for i := range tr.InMbps {
		if !math.IsNaN(tr.InMbps[i]) {
			tr.InMbps[i], tr.OutMbps[i] = 390.8, float64(i%1000)
		}
	}
	lines := renderTrafficPanel(tr, Cost{Direction: billing.Direction("out"), Levels: []Level{{Name: "95th out", Mbps: 390.8}}}, CostOptions{}, 80, 10, st)
	found := false
	for _, l := range lines[1:] {
		if label, after, ok := strings.Cut(l, "│"); ok && strings.Count(after, "─") > 20 {
			found = true
			if strings.TrimSpace(label) != "391" {
				t.Errorf("the 95th line (390.8) is on the row labelled %q:\n%s", strings.TrimSpace(label), strings.Join(lines, "\n"))
			}
		}
	}
	if !found {
		t.Errorf("no 95th line:\n%s", strings.Join(lines, "\n"))
	}
}

// A replay says how far it has got on the status line, so its interim
// figures read as interim (the demo's replay showed them with no sign of
// progress); once it is done the line says so instead.
func TestReplayStatusShowsProgress(t *testing.T) {
	m, feed := offlineSampleModel(t, "../samples/candidates.yaml")
	feed.Speed, feed.MaxGap = 1e6, time.Millisecond
	status := func(m Model) string {
		lines := strings.Split(strings.TrimRight(plain(m), "\n "), "\n")
		return lines[len(lines)-1]
	}
	if !strings.HasPrefix(strings.TrimSpace(status(m)), "▶ · replay 0%") {
		t.Fatalf("before the replay: %q", status(m))
	}
	ctx := context.Background()
	seen := false
	for i := 0; i < 200 && !seen; i++ {
		m = step(t, m, feed.Next(ctx))
		if st := status(m); strings.Contains(st, "replay ") && !strings.Contains(st, "replay 0%") {
			seen = true
		}
	}
	if !seen {
		t.Errorf("the status never showed the replay's progress: %q", status(m))
	}
}

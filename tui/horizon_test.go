package tui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// The cost screen of a file with horizon_months: 24 shows the offer over
// the horizon. hk-cn2-gia's offer has only monthly items, so by hand it is
// 24 × 144,691.5366868 = 3,472,596.88 CNY; without a horizon the line is
// absent.
func TestCostScreenShowsTheHorizon(t *testing.T) {
	if _, err := os.Stat(samplesFile); err != nil {
		t.Skip("samples not present")
	}
	frame := func(months int) string {
		f, err := candidates.LoadWith(samplesFile, LoadOptions())
		if err != nil {
			t.Fatal(err)
		}
		f.HorizonMonths = months
		feed, err := FeedFromCompare(f, FeedOptions{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 140, Height: 48, NoColor: true})
		m.selected, m.moved = "hk-cn2-gia", true
		nm, _ := m.Update(keyMsg("c"))
		m = nm.(Model)
		if m.Screen() != ScreenCost {
			t.Fatalf("screen %v", m.Screen())
		}
		return plain(m)
	}
	got := frame(24)
	if !strings.Contains(got, "OVER 24 MONTHS (730 h a month)") || !strings.Contains(got, "3,472,596.88") {
		t.Errorf("cost screen lacks the horizon:\n%s", got)
	}
	if got := frame(0); strings.Contains(got, "OVER ") {
		t.Errorf("horizon line without a horizon:\n%s", got)
	}
}

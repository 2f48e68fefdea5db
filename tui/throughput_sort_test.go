package tui

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/verdict"
)

// thruSnapshot is the fixture with throughput tests of three candidates
// (p5 in Mbit/s); hk-cn2-gia has none.
func thruSnapshot() Snapshot {
	snap := FixtureSnapshot()
	p5 := map[string]float64{"hk-bgp": 300, "tokyo-ntt": 80, "la-cu9929": 500}
	for i := range snap.Candidates {
		c := &snap.Candidates[i]
		if v, ok := p5[c.Name]; ok {
			bps := v * 1e6
			c.Throughput = &verdict.Throughput{Source: "live", Direction: "download", Tests: 1, P5: &bps, Mean: &bps}
		}
	}
	return snap
}

// THRU, when shown, is one of the columns s cycles through (after STR,
// before SLA, as on screen) and --sort accepts: most throughput first,
// untested last.
func TestSortByThroughput(t *testing.T) {
	m := NewLoaded(context.Background(), FixtureFeed(1), thruSnapshot(), Options{Width: 120, Height: 30, NoColor: true})
	var cols []string
	for range 8 {
		m = press(t, m, "s")
		cols = append(cols, m.sortCol)
	}
	if want := []string{"name", "line", "rtt", "jitter", "loss", "stretch", "thru", "sla"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("s cycles %v, want %v", cols, want)
	}
	m = press(t, m, "S") // back to thru
	// 500 > 300 > 80, then the one without a test.
	if got, want := m.Order(), []string{"la-cu9929", "hk-bgp", "tokyo-ntt", "hk-cn2-gia"}; m.sortCol != "thru" || !reflect.DeepEqual(got, want) {
		t.Errorf("sort %s: order %v, want %v", m.sortCol, got, want)
	}
	if !strings.Contains(plain(m), "THRU↑") {
		t.Errorf("the THRU title does not show the sort:\n%s", plain(m))
	}
	m = press(t, m, "i")
	if got, want := m.Order(), []string{"hk-cn2-gia", "tokyo-ntt", "hk-bgp", "la-cu9929"}; !reflect.DeepEqual(got, want) {
		t.Errorf("inverted: order %v, want %v", got, want)
	}

	if !slices.Contains(SortColumns(), "thru") {
		t.Errorf("--sort accepts %v, not thru", SortColumns())
	}
	m = NewLoaded(context.Background(), FixtureFeed(1), thruSnapshot(), Options{Width: 120, Height: 30, NoColor: true, Sort: "thru"})
	if got, want := m.Order(), []string{"la-cu9929", "hk-bgp", "tokyo-ntt", "hk-cn2-gia"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--sort thru: order %v, want %v", got, want)
	}
}

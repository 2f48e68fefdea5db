package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// On the route screen, n walks the return routes toward each user carrier of
// a backtrace recording (samples/three-networks.yaml: hk-cn2-gia's routes to
// Shanghai Telecom, Beijing Unicom and Guangzhou Mobile, by design GIA, the
// GIA tri-network hand-off through 202.97 into 219.158, and CMI).
func TestRouteScreenSwitchesCarriers(t *testing.T) {
	m, feed := offlineSampleModel(t, "../samples/three-networks.yaml")
	for _, tr := range feed.Traces {
		m = step(t, m, tr)
	}
	for m.Selected() != "hk-cn2-gia" {
		before := m.Selected()
		m = press(t, m, "down")
		if m.Selected() == before {
			t.Fatalf("no hk-cn2-gia row: %v", m.Order())
		}
	}
	m = press(t, m, "enter", "w")
	steps := []struct{ carrier, hop string }{
		{"telecom users (Shanghai", "59.43.130.101"},
		{"unicom users (Beijing", "219.158.3.177"},
		{"mobile users (Guangzhou", "223.120.10.70"},
		{"telecom users (Shanghai", "59.43.130.101"},
	}
	for i, s := range steps {
		if i > 0 {
			m = press(t, m, "w")
		}
		v := m.View().Content
		if !strings.Contains(v, "return → ") || !strings.Contains(v, "toward "+s.carrier) || !strings.Contains(v, s.hop) {
			t.Fatalf("step %d: want the return route toward %s with hop %s:\n%s", i, s.carrier, s.hop, v)
		}
	}
	m = press(t, m, "v")
	if v := m.View().Content; !strings.Contains(v, "forward → ") {
		t.Errorf("v goes back to the forward path:\n%s", v)
	}
}

// The TUI's verdict is compare's: with CMI toward Mobile users, hk-cn2-gia
// fails sla.line_classes_by_carrier, also after live-style records arrive.
func TestTUIVerdictHasThePerCarrierChecks(t *testing.T) {
	m, feed := offlineSampleModel(t, "../samples/three-networks.yaml")
	var msgs UpdatesMsg
	for _, r := range feed.Streams["hk-cn2-gia"][:50] {
		msgs = append(msgs, ProbeMsg{Candidate: "hk-cn2-gia", Record: r})
	}
	m = step(t, m, msgs)
	c := m.find("hk-cn2-gia")
	if c == nil || c.SLA.Pass {
		t.Fatalf("hk-cn2-gia %+v", c)
	}
	found := false
	for _, ch := range c.SLA.Checks {
		if ch.Name == "line_class:mobile" {
			found = !ch.Pass
		}
	}
	if !found {
		t.Errorf("no failing line_class:mobile check in %+v", c.SLA.Checks)
	}
}

// offlineSampleModel loads a bundled candidates file as compare does and
// opens the TUI on its recordings, offline, at 120×40 without colour.
func offlineSampleModel(t *testing.T, path string) (Model, *Feed) {
	t.Helper()
	f, err := candidates.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromCompare(f, FeedOptions{Offline: true, Now: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 120, Height: 40, NoColor: true}), feed
}

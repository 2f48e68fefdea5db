package tui

import (
	"context"
	"os"
	"path/filepath"
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

// The proof on the route screen: a recorded.forward of three
// carriers' published forward routes (internal/route/testdata/vantage:
// Shanghai Telecom over CN2 GIA, Linyi Unicom into 9929, Wuxi Mobile over
// CMIN2) shows, toward each carrier's users, that forward class next to the
// return class of the backtrace sample (GIA, GIA, CMI).
func TestRouteScreenShowsEachCarriersForwardClass(t *testing.T) {
	rec, err := filepath.Abs("../samples/rec")
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := filepath.Abs("../internal/route/testdata/vantage/atlas-three-carriers.json")
	if err != nil {
		t.Fatal(err)
	}
	yml := `vantage: {city: Hangzhou}
users: [{city: Shanghai, carrier: telecom}, {city: Beijing, carrier: unicom}, {city: Guangzhou, carrier: mobile}]
candidates:
  - name: hk
    targets: [{addr: 192.0.2.10, protocol: icmp}]
    recorded: {forward: FWD, return: REC/hk-cn2-gia-backtrace.json, probes: REC/hk-cn2-gia-ping.ndjson}
`
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(strings.NewReplacer("REC", rec, "FWD", fwd).Replace(yml)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := candidates.LoadWith(path, candidates.LoadOptions{TargetsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	feed, err := FeedFromCompare(f, FeedOptions{Offline: true, Now: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 160, Height: 40, NoColor: true})
	for _, tr := range feed.Traces {
		m = step(t, m, tr)
	}
	m = press(t, m, "enter", "w")
	for i, want := range []string{
		"toward telecom users (Shanghai, measured to sh-telecom Shanghai) · forward cn2-gia, return cn2-gia",
		"toward unicom users (Beijing, measured to bj-unicom Beijing) · forward cu-9929, return cn2-gia",
		"toward mobile users (Guangzhou, measured to gz-mobile Guangzhou) · forward cmin2, return cmi",
	} {
		if i > 0 {
			m = press(t, m, "w")
		}
		if v := m.View().Content; !strings.Contains(v, want) {
			t.Errorf("carrier %d: want %q in\n%s", i, want, v)
		}
	}
}

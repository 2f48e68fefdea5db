package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// recordedAddrs reads the addresses of the bundled routes at TTL 1..n and
// past n straight from the files (linecheck JSON hops, mtr hubs, backtrace
// results), not through the readers the UI uses.
func recordedAddrs(t *testing.T, n int) (hidden, shown map[string]bool) {
	t.Helper()
	hidden, shown = map[string]bool{}, map[string]bool{}
	add := func(ttl int, addr string) {
		if addr == "" || addr == "???" {
			return
		}
		if ttl <= n {
			hidden[addr] = true
		} else {
			shown[addr] = true
		}
	}
	type hops []struct {
		TTL        int                     `json:"ttl"`
		Responders []struct{ Addr string } `json:"responders"`
	}
	files, _ := filepath.Glob("../samples/rec/*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Hops   hops `json:"hops"`
			Report struct {
				Hubs []struct {
					Count int    `json:"count"`
					Host  string `json:"host"`
				} `json:"hubs"`
			} `json:"report"`
			Results []struct {
				Trace struct {
					Hops hops `json:"hops"`
				} `json:"trace"`
			} `json:"results"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all := doc.Hops
		for _, r := range doc.Results {
			all = append(all, r.Trace.Hops...)
		}
		for _, h := range all {
			for _, r := range h.Responders {
				add(h.TTL, r.Addr)
			}
		}
		for _, h := range doc.Report.Hubs {
			add(h.Count, h.Host)
		}
	}
	return hidden, shown
}

// tui --hide-hops 2 on the bundled candidates: the route screen of every
// candidate, both directions, shows no address of the recordings' first two
// hops, says that they are hidden, still shows TTL 3, and every row keeps
// the line class the unmasked feed gives.
func TestRouteScreenHidesTheFirstHops(t *testing.T) {
	hidden, shown := recordedAddrs(t, 2)
	if len(hidden) < 4 {
		t.Fatalf("the recordings' first two hops: %v", hidden)
	}
	f, err := candidates.Load("../samples/candidates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)
	model := func(n int) (Model, *Feed) {
		feed, err := FeedFromCompare(f, FeedOptions{Offline: true, Now: now, HideHops: n})
		if err != nil {
			t.Fatal(err)
		}
		m := NewLoaded(context.Background(), feed, feed.Snapshot, Options{Width: 160, Height: 50, NoColor: true})
		for _, tr := range feed.Traces {
			m = step(t, m, tr)
		}
		return m, feed
	}
	plain, _ := model(0)
	m, _ := model(2)
	seen := 0
	for range m.Order() {
		name := m.Selected()
		if got, want := m.find(name).LineClass, plain.find(name).LineClass; got != want || got == "" {
			t.Errorf("%s: line class %q with --hide-hops 2, %q without", name, got, want)
		}
		r := press(t, m, "enter")
		for _, dir := range []string{"forward", "return"} {
			v := r.View().Content
			if !strings.Contains(v, dir+" → ") {
				t.Fatalf("%s: no %s route screen:\n%s", name, dir, v)
			}
			for a := range hidden {
				if !shown[a] && strings.Contains(v, a) {
					t.Errorf("%s %s: the route screen shows %s, a hidden hop's address:\n%s", name, dir, a, v)
				}
			}
			if !strings.Contains(v, "hidden") || !strings.Contains(v, "hops 1–2 hidden") {
				t.Errorf("%s %s: the screen does not say the hops are hidden:\n%s", name, dir, v)
			}
			for a := range shown {
				if strings.Contains(v, a) {
					seen++
					break
				}
			}
			r = press(t, r, "v")
		}
		m = press(t, m, "down")
	}
	if seen < 4 {
		t.Errorf("only %d route screens show any address of TTL 3 or later", seen)
	}
}

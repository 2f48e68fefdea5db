package tui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// freshRender renders m with every memo of a drawing dropped: what the
// frame would be if nothing had been kept from earlier frames.
func freshRender(m Model) string {
	m.rows = map[*Candidate]*rowMemo{}
	m.sparks = map[string]sparkMemo{}
	m.chart = &chartCache{}
	m.rttChart = &chartCache{}
	m.hopChart = &chartCache{}
	m.details = &detailMemo{}
	m.help = &helpMemo{}
	m.hopRows = &hopRowMemo{}
	m.breakdown = &breakdownMemo{}
	return m.Render()
}

// TestMemoisedFramesEqualFreshOnes drives a model of 50 candidates (and the
// monochrome fixture) through probe batches, trace snapshots, new costs,
// resizes, sort changes, cursor moves and every screen, and checks after
// each step that the frame drawn from the memos is the frame drawn afresh.
func TestMemoisedFramesEqualFreshOnes(t *testing.T) {
	steps := []string{"s", "s", "i", "down", "S", "size 200x60", "enter", "down", "down", "down", "up", "v", "v", "up", "esc",
		"size 300x80", "c", "m", "+", "0", "esc", "]", "[", "?", "?", "s", "s", "s", "size 80x24", "enter", "n",
		"esc", "i", "size 60x20", "up", "down", "down", "size 100x30", "r", "c", "tab", "space", "space", "s"}
	for _, sc := range []struct {
		name string
		m    func() Model
	}{
		{"50 candidates, colour", func() Model { return benchModel(t, 100, 30) }},
		{"fixture, monochrome", func() Model { return fixtureModel(t, 100, 30) }},
		{"50 candidates, every one passing", func() Model {
			// Without thresholds every candidate passes: the cheapest
			// mark moves between rows as costs change.
			m := benchModel(t, 100, 30)
			m.snap.SLA = candidates.SLA{}
			for _, c := range m.cands {
				c.evaluate(m.snap.SLA)
			}
			if m.cheapestPassing() == "" {
				t.Fatal("no candidate passes without thresholds")
			}
			return m
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			m := sc.m()
			rng := rand.New(rand.NewPCG(14, 3))
			clock := FixtureStart().Add(time.Hour)
			check := func(what string) {
				t.Helper()
				if got, want := m.Render(), freshRender(m); got != want {
					t.Fatalf("after %s the memoised frame differs from a fresh one:\n%s\n---- fresh:\n%s", what, got, want)
				}
				// And the ranking from the memoised keys is the ranking
				// from keys worked out afresh.
				got := m.Order()
				for _, c := range m.cands {
					c.rankKeyed = false
				}
				m.resort()
				if want := m.Order(); !slices.Equal(got, want) {
					t.Fatalf("after %s the order from memoised rank keys is\n%v, afresh\n%v", what, got, want)
				}
			}
			check("loading")
			for i, s := range steps {
				// A batch of probe records for a few candidates (some
				// lost, RTTs that reorder rows), sometimes a trace
				// snapshot and sometimes new costs.
				var batch UpdatesMsg
				for k := 0; k < 1+rng.IntN(6); k++ {
					c := m.cands[rng.IntN(len(m.cands))]
					clock = clock.Add(100 * time.Millisecond)
					rtt := 5 + rng.Float64()*200
					rec := probe.Record{Time: clock, Addr: "203.0.113.1", Protocol: "icmp", Seq: i*10 + k, Status: probe.StatusOK, RTTms: &rtt}
					if c.Target != "" && !strings.HasPrefix(c.Target, "203.0.113.1 ") && c.Target != "203.0.113.1" {
						rec.Addr, rec.Protocol = strings.Fields(c.Target)[0], "icmp"
					}
					if rng.IntN(8) == 0 {
						rec.Status, rec.RTTms = probe.StatusLost, nil
					}
					batch = append(batch, ProbeMsg{Candidate: c.Name, Record: rec})
				}
				if i%3 != 1 {
					// Mostly the selected candidate's route: its hop charts
					// get a history.
					c := m.cands[rng.IntN(len(m.cands))]
					if cur := m.current(); cur != nil && rng.IntN(3) > 0 {
						c = cur
					}
					tr := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.1", Protocol: "icmp", Reached: i%2 == 0,
						LineClass: []string{"transit", "cn2-gia", "cu-9929"}[i%3/1%3], Start: clock.Format(time.RFC3339)}
					hops := 30 // often the same length as the route before: only the figures change
					if rng.IntN(2) == 0 {
						hops = 5 + rng.IntN(26)
					}
					for ttl := 1; ttl <= hops; ttl++ {
						v := float64(ttl)*4 + rng.Float64()*5
						tr.Hops = append(tr.Hops, hop(ttl, fmt.Sprintf("198.51.100.%d", ttl), 64500+ttl, "Example", 0.02*float64(rng.IntN(3)), nil,
							v, v-1, v, v, v+2, v+3, 0.8))
					}
					batch = append(batch, TraceMsg{Candidate: c.Name, Direction: []string{"forward", "return"}[rng.IntN(2)], Trace: tr})
					// And probes of the selected one: its RTT chart is redrawn.
					if cur := m.current(); cur != nil {
						clock = clock.Add(time.Second)
						rtt := 30 + rng.Float64()*20
						batch = append(batch, ProbeMsg{Candidate: cur.Name, Record: probe.Record{Time: clock, Addr: "203.0.113.1",
							Protocol: "icmp", Seq: 1000 + i, Status: probe.StatusOK, RTTms: &rtt}})
					}
				}
				m = step(t, m, batch)
				check(fmt.Sprintf("step %d (batch before %q)", i, s))
				if i%3 == 2 {
					costs := map[string]Cost{}
					// One or two candidates repriced, often below all
					// others: the cheapest mark moves off rows that did
					// not change.
					for k := 0; k < 1+rng.IntN(2); k++ {
						c := m.cands[rng.IntN(len(m.cands))]
						if cur := m.current(); k == 0 && cur != nil && rng.IntN(2) == 0 {
							c = cur // the one the cost screen shows
						}
						nc := c.Cost
						nc.Total = moneyOf(fmt.Sprintf("%d.%02d", 10+rng.IntN(200000)*rng.IntN(2), rng.IntN(100)), nc.Total.Currency)
						nc.TotalBase = billing.Money{}
						costs[c.Name] = nc
					}
					m = step(t, m, CostMsg{Opts: m.CostOptions(), Costs: costs})
					check(fmt.Sprintf("step %d (new costs)", i))
				}
				var w, h int
				if n, _ := fmt.Sscanf(s, "size %dx%d", &w, &h); n == 2 {
					m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
				} else {
					m = press(t, m, s)
				}
				check(fmt.Sprintf("step %d (%q)", i, s))
			}
		})
	}
}

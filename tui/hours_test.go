package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
)

// hoursModel is the fixture with the users in Shanghai and an evening
// window, and hk-cn2-gia probed again at 17:30, 20:10 and 21:10 Shanghai
// time (the fixture's own probes are at 17:00): 40 answers of 23 ms, then
// 70 and 70 ms, then 40, 45, 50 and 55 ms, nothing lost.
func hoursModel(t *testing.T) Model {
	t.Helper()
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	m := fixtureModel(t, 100, 40)
	sla := fixtureSLA()
	sla.Zone = sh
	sla.Windows = []candidates.Window{{Name: "evening", From: 20 * 60, To: 23 * 60, TZ: "Asia/Shanghai", Loc: sh}}
	m.snap.SLA = sla
	var msgs UpdatesMsg
	add := func(at time.Time, rtts ...float64) {
		for i, v := range rtts {
			rtt := v
			msgs = append(msgs, ProbeMsg{Candidate: "hk-cn2-gia", Record: engine.Record{Schema: engine.StreamSchema,
				Time: at.Add(time.Duration(i) * time.Second), Target: fixtureAddr["hk-cn2-gia"], Addr: fixtureAddr["hk-cn2-gia"],
				Protocol: engine.ICMP, Seq: 100 + len(msgs), Status: engine.StatusOK, RTTms: &rtt}})
		}
	}
	var clean []float64
	for range 40 {
		clean = append(clean, 23)
	}
	add(time.Date(2026, 11, 30, 17, 30, 0, 0, sh), clean...)
	add(time.Date(2026, 11, 30, 20, 10, 0, 0, sh), 70, 70)
	add(time.Date(2026, 11, 30, 21, 10, 0, 0, sh), 40, 45, 50, 55)
	m = step(t, m, msgs)
	m.selected, m.moved = "hk-cn2-gia", true
	return m
}

// Issue 30: the route screen shows the users' day in 24 hours — loss and
// p95 per hour, an hour without probes "·" (never 0), the hour of the latest
// probe marked. By hand: 17:00 holds the fixture's 10 answers (22, 23,
// 24, 22, 25, 23, 23, 22, 26, 24) and the 40 of 23 ms, sorted 22×3, 23×43,
// 24×2, 25, 26: p95 the 48th of 50 = 24; 20:00 two of 70 ms: p95 70;
// 21:00 four answers, the 4th of 4 = 55; no loss in any.
func TestRouteScreenShowsTheHourOfDay(t *testing.T) {
	frame := plain(press(t, hoursModel(t), "enter"))
	var hour, loss, p95 []rune
	for _, l := range strings.Split(frame, "\n") {
		switch {
		case strings.HasPrefix(l, " hour "):
			hour = []rune(l)
		case strings.HasPrefix(l, " loss%"):
			loss = []rune(l)
		case strings.HasPrefix(l, " p95ms"):
			p95 = []rune(l)
		}
	}
	if len(hour) < 6+72 || len(loss) < 6+72 || len(p95) < 6+72 {
		t.Fatalf("no hour-of-day profile (hour, loss%%, p95ms lines of 24 cells):\n%s", frame)
	}
	cell := func(l []rune, h int) string { return strings.TrimSpace(string(l[6+3*h : 9+3*h])) }
	want := map[int][2]string{17: {"0", "24"}, 20: {"0", "70"}, 21: {"0", "55"}}
	for h := range 24 {
		w, ok := want[h]
		if !ok {
			w = [2]string{"·", "·"}
		}
		if cell(loss, h) != w[0] || cell(p95, h) != w[1] {
			t.Errorf("hour %d: loss %q p95 %q, want %q %q", h, cell(loss, h), cell(p95, h), w[0], w[1])
		}
		mark := "▼"
		if h != 21 {
			mark = ""
		}
		if got := cell(hour, h); got != mark+strconv.Itoa(h) {
			t.Errorf("hour %d's label %q, want %q", h, got, mark+strconv.Itoa(h))
		}
	}
	if !strings.Contains(frame, "Asia/Shanghai") {
		t.Errorf("the profile does not name the users' zone:\n%s", frame)
	}
}

// Without a users' zone there are no hours to show: nothing is drawn.
func TestRouteScreenHasNoHoursWithoutAZone(t *testing.T) {
	frame := plain(press(t, fixtureModel(t, 100, 40), "enter"))
	if strings.Contains(frame, " loss%") {
		t.Errorf("hours drawn without a zone:\n%s", frame)
	}
}

// Issue 30: the overview's SLA cell names the window that fails when the
// whole run passes. By hand: the evening (20:00 and 21:00) holds 70, 70,
// 40, 45, 50, 55 ms: p95 the 6th of 6 = 70 > 60 ms; the whole run's 56
// answers (22×3, 23×43, 24×2, 25, 26, 40, 45, 50, 55, 70, 70) have p95 the
// 54th = 55 ms, a pass.
func TestOverviewNamesTheFailingWindow(t *testing.T) {
	m := hoursModel(t)
	c := m.Candidate("hk-cn2-gia")
	for _, ch := range c.SLA.Checks {
		if ch.Window == "all" && !ch.Pass {
			t.Fatalf("the whole run fails %+v: the test wants it to pass", ch)
		}
	}
	frame := plain(m)
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(l, "hk-cn2-gia ") && strings.Contains(l, "cn2-gia⇄") {
			if !strings.Contains(l, "FAIL@evening") {
				t.Errorf("hk-cn2-gia's row does not name the evening: %q", l)
			}
			return
		}
	}
	t.Errorf("no hk-cn2-gia row:\n%s", frame)
}

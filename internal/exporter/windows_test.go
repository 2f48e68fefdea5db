package exporter

import (
	"math"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// windowCheck is the measured figure serve's report gives candidate's
// check in window (nil without one).
func windowCheck(t *testing.T, e *Exporter, cand, check, window string) *verdict.Check {
	t.Helper()
	for _, ev := range e.Report(time.Now()).Candidates {
		if ev.Name != cand {
			continue
		}
		for _, c := range ev.SLA.Checks {
			if c.Name == check && c.Window == window {
				return &c
			}
		}
	}
	return nil
}

func windowGauge(t *testing.T, e *Exporter, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	m := metric(t, e, name, labels)
	if m == nil {
		return 0, false
	}
	return m.GetGauge().GetValue(), true
}

// Issue 30: serve judges the evening (the default window in the users'
// zone) over its most recent occurrence — yesterday's at 10:00, tonight's
// once it has begun — beside its --window (window="all"), and exports
// linecheck_sla_pass{window} and the per-window checks. The figures are
// worked out by hand: the lossy evening has 3 cycles of 10 probes, 8
// answered each (loss 6/30 = 0.2), answers 6×60 ms, 110, 120 per cycle;
// the p95 of its 24 answers is the 23rd smallest (nearest rank ⌈0.95·24⌉),
// 120 ms.
func TestServeJudgesTheLatestEvening(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	loss, p95 := 0.01, 80.0
	now := time.Date(2026, 12, 1, 19, 0, 0, 0, sh)
	e := New(nil)
	e.SetWindow(5*time.Minute, 100, func() time.Time { return now })
	a := tgt("a", "127.0.0.1")
	e.SetTargets([]Target{a}, now)
	e.SetSLA(candidates.SLA{Loss: &loss, RTTP95ms: &p95, Zone: sh}, nil)
	clean := PingOutcome{Sent: 10, Recv: 10, RTTms: []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50}}
	lossy := PingOutcome{Sent: 10, Recv: 8, RTTms: []float64{60, 60, 60, 60, 60, 60, 110, 120}}
	pass := func(window string) (float64, bool) {
		return windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": window})
	}

	e.ObservePing(a, clean)
	if v, ok := pass("all"); !ok || v != 1 {
		t.Fatalf("19:00: pass{all} = %v (present %v), want 1", v, ok)
	}
	if _, ok := pass("evening"); ok {
		t.Error("19:00: an evening that has not come has a pass series")
	}
	if m := metric(t, e, "linecheck_sla_window_check_nodata", map[string]string{"window": "evening"}); m != nil {
		t.Error("19:00: the default evening is judged before serve probed in one")
	}
	for _, at := range []time.Time{
		time.Date(2026, 12, 1, 20, 10, 0, 0, sh), time.Date(2026, 12, 1, 21, 10, 0, 0, sh), time.Date(2026, 12, 1, 22, 10, 0, 0, sh),
	} {
		now = at
		e.ObservePing(a, lossy)
	}
	// 23:00 is past the evening ([20:00, 23:00)); the next morning is clean.
	now = time.Date(2026, 12, 1, 23, 0, 0, 0, sh)
	e.ObservePing(a, clean)
	now = time.Date(2026, 12, 2, 10, 0, 0, 0, sh)
	e.ObservePing(a, clean)

	if v, ok := pass("all"); !ok || v != 1 {
		t.Errorf("10:00: pass{all} = %v (present %v), want 1 (the last 5 minutes are clean)", v, ok)
	}
	if v, ok := pass("evening"); !ok || v != 0 {
		t.Errorf("10:00: pass{evening} = %v (present %v), want 0 (last evening lost 20 %%)", v, ok)
	}
	for _, c := range []struct {
		check string
		want  float64
	}{{verdict.CheckLoss, 0.2}, {verdict.CheckRTTP95, 120}} {
		v, ok := windowGauge(t, e, "linecheck_sla_window_check_pass", map[string]string{"candidate": "a", "check": c.check, "window": "evening"})
		if !ok || v != 0 {
			t.Errorf("10:00: %s in evening = %v (present %v), want 0", c.check, v, ok)
		}
		if v, ok := windowGauge(t, e, "linecheck_sla_window_check_pass", map[string]string{"candidate": "a", "check": c.check, "window": "all"}); !ok || v != 1 {
			t.Errorf("10:00: %s in all = %v (present %v), want 1", c.check, v, ok)
		}
		// The series of before the windows stays the whole window's.
		if v, ok := slaGauge(t, e, "a", c.check); !ok || v != 1 {
			t.Errorf("10:00: linecheck_sla_check_pass{check=%s} = %v (present %v), want 1 (window all)", c.check, v, ok)
		}
		ch := windowCheck(t, e, "a", c.check, "evening")
		if ch == nil || ch.Measured == nil || math.Abs(ch.Measured.(float64)-c.want) > 1e-9 {
			t.Errorf("10:00: %s in evening measured %v, want %v", c.check, ch, c.want)
		}
	}

	// Tonight's evening has begun: it is the one judged, clean so far.
	now = time.Date(2026, 12, 2, 20, 5, 0, 0, sh)
	e.ObservePing(a, clean)
	if v, ok := pass("evening"); !ok || v != 1 {
		t.Errorf("20:05 next day: pass{evening} = %v (present %v), want 1 (tonight's, in progress)", v, ok)
	}
	if ch := windowCheck(t, e, "a", verdict.CheckLoss, "evening"); ch == nil || ch.Measured != 0.0 {
		t.Errorf("20:05 next day: loss in evening %v, want 0", ch)
	}
	// Bounded: one occurrence of 3 h is held, in at most 37 windows of
	// 5 minutes' worth of probes (100 each here).
	if oc := e.occ[a.key()]["evening"]; oc == nil || oc.probes.Size() != 37*100 || oc.probes.Len() != 10 {
		t.Errorf("the evening's store: %+v, want 3700 probes at most and this evening's 10", oc)
	}
}

// A window without probes (sla.windows, not yet come): its pass series is
// absent and its checks say no data, the whole window is judged as before.
func TestServeWindowWithoutProbesIsAbsent(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	loss := 0.01
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, sh)
	e := New(nil)
	e.SetWindow(5*time.Minute, 100, func() time.Time { return now })
	a := tgt("a", "127.0.0.1")
	e.SetTargets([]Target{a}, now)
	night := candidates.Window{Name: "night", From: 22 * 60, To: 2 * 60, TZ: "Asia/Shanghai", Loc: sh}
	e.SetSLA(candidates.SLA{Loss: &loss, Zone: sh, Windows: []candidates.Window{night}}, nil)
	e.ObservePing(a, PingOutcome{Sent: 10, Recv: 10, RTTms: []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}})
	if _, ok := windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": "night"}); ok {
		t.Error("pass{night} present without a probe in the night")
	}
	if v, ok := windowGauge(t, e, "linecheck_sla_window_check_nodata", map[string]string{"candidate": "a", "check": verdict.CheckLoss, "window": "night"}); !ok || v != 1 {
		t.Errorf("nodata{loss, night} = %v (present %v), want 1", v, ok)
	}
	if v, ok := windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": "all"}); !ok || v != 1 {
		t.Errorf("pass{all} = %v (present %v), want 1", v, ok)
	}
	// Across midnight: a cycle at 01:30 belongs to the night that began at
	// 22:00 the day before.
	now = time.Date(2026, 12, 3, 1, 30, 0, 0, sh)
	e.ObservePing(a, PingOutcome{Sent: 10, Recv: 5, RTTms: []float64{5, 5, 5, 5, 5}})
	if v, ok := windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": "night"}); !ok || v != 0 {
		t.Errorf("01:30: pass{night} = %v (present %v), want 0 (loss 0.5)", v, ok)
	}
	if oc := e.occ[a.key()]["night"]; oc == nil || !oc.from.Equal(time.Date(2026, 12, 2, 22, 0, 0, 0, sh)) {
		t.Errorf("01:30's night: %+v, want the one from 22:00 on 2 Dec", oc)
	}
}

// A reload that drops a window gives its probes back at the next cycle,
// and its series go.
func TestServeForgetsAWindowAReloadRemoved(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	loss := 0.01
	now := time.Date(2026, 12, 2, 21, 0, 0, 0, sh)
	e := New(nil)
	e.SetWindow(5*time.Minute, 100, func() time.Time { return now })
	a := tgt("a", "127.0.0.1")
	e.SetTargets([]Target{a}, now)
	e.SetSLA(candidates.SLA{Loss: &loss, Zone: sh}, nil)
	o := PingOutcome{Sent: 2, Recv: 2, RTTms: []float64{5, 5}}
	e.ObservePing(a, o)
	if _, ok := windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": "evening"}); !ok {
		t.Fatal("no evening at 21:00")
	}
	e.SetSLA(candidates.SLA{Loss: &loss, Zone: sh, WindowsOff: true}, nil)
	now = now.Add(time.Minute)
	e.ObservePing(a, o)
	if _, ok := e.occ[a.key()]["evening"]; ok {
		t.Error("the evening's probes kept after windows: {}")
	}
	if _, ok := windowGauge(t, e, "linecheck_sla_pass", map[string]string{"candidate": "a", "window": "evening"}); ok {
		t.Error("pass{evening} after windows: {}")
	}
}

package verdict

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
)

// WindowSummary is the route's figures over one SLA window (issue 30): the
// worst target's, as RouteQuality aggregates them (AddTargets), over every
// probe of the recording whose time falls in the window; null figures
// without probes (sent 0) or answers.
type WindowSummary struct {
	Name string `json:"name"`
	// Hours are the window in words: "20:00–23:00 Asia/Shanghai".
	Hours string `json:"hours"`
	// Default is true for the evening compare judges without sla.windows.
	Default bool `json:"default"`
	// Occurrences counts the window's spans the recording holds whole.
	Occurrences int     `json:"occurrences"`
	Sent        int     `json:"sent"`
	Recv        int     `json:"recv"`
	Loss        float64 `json:"loss"`
	RTTP50      float64 `json:"rtt_p50_ms"`
	RTTP95      float64 `json:"rtt_p95_ms"`
	Jitter      float64 `json:"jitter_ms"`
	// Pass is the window's SLA checks all passing; false with no data.
	Pass bool `json:"pass"`
}

// HourSummary is one hour of the users' day (0–23 in the users' zone) over
// every day of the recording: the worst target's figures, null without
// probes in that hour.
type HourSummary struct {
	Hour   int     `json:"hour"`
	Sent   int     `json:"sent"`
	Loss   float64 `json:"loss"`
	RTTP50 float64 `json:"rtt_p50_ms"`
	RTTP95 float64 `json:"rtt_p95_ms"`
	Jitter float64 `json:"jitter_ms"`
	// Recv is the hour's answered probes: without one its RTT figures are
	// absent (null).
	Recv int `json:"-"`
}

// SLAWindows are the windows the recording m is judged over besides its
// whole: sla.windows, else the evening in the users' zone when the
// recorded probes hold a whole evening (candidates.SLA.Evening); none
// without probe times.
func SLAWindows(s candidates.SLA, m *Measurement) []candidates.Window {
	ws := s.JudgedWindows()
	if len(ws) == 1 && ws[0].Default {
		first, last := m.probeSpan()
		if first.IsZero() || !ws[0].CoveredBy(first, last) {
			return nil
		}
	}
	return ws
}

// probeSpan is the time of the first and last probe over m's windows.
func (m *Measurement) probeSpan() (first, last time.Time) {
	for _, w := range m.Probes {
		if w == nil {
			continue
		}
		a, b := w.Span()
		if a.IsZero() {
			continue
		}
		if first.IsZero() || a.Before(first) {
			first = a
		}
		if b.After(last) {
			last = b
		}
	}
	return first, last
}

// quality is the route's figures over the probes in reports true for, as
// AddTargets aggregates them (the worst target), its stretch over floorMs
// (negative: unknown).
func (m *Measurement) quality(in func(time.Time) bool, floorMs float64) RouteQuality {
	var q RouteQuality
	trs := make([]TargetResult, 0, len(m.Probes))
	for i, w := range m.Probes {
		if w == nil || i >= len(m.Targets) {
			continue
		}
		trs = append(trs, w.ResultIn(m.Targets[i].Target, in, nil))
	}
	q.AddTargets(trs)
	if floorMs >= 0 {
		q.SetFloor(floorMs)
	}
	return q
}

// judgeWindows adds to e the checks of each SLA window over m (the
// measured figures only), its summary, and with withHours the day in 24
// hours; floorMs is the physical floor (negative: unknown).
func judgeWindows(e *Evaluation, s candidates.SLA, m *Measurement, floorMs float64, withHours bool) {
	if len(m.Probes) == 0 {
		return
	}
	for _, w := range SLAWindows(s, m) {
		q := m.quality(w.Contains, floorMs)
		if m.Throughput.Hourly() {
			q.Throughput = m.Throughput.Within(w)
		}
		checks := windowChecks(s, q, w, m.Throughput)
		e.SLA.Checks = append(e.SLA.Checks, checks...)
		sum := WindowSummary{Name: w.Name, Hours: w.Hours(), Default: w.Default, Sent: q.Sent, Recv: q.Recv,
			Loss: round(q.Loss, 6), RTTP50: q.RTT.P50, RTTP95: q.RTT.P95, Jitter: q.Jitter.MeanAbs, Pass: q.Sent > 0}
		first, last := m.probeSpan()
		for _, o := range w.Occurrences(first, last) {
			if !o[0].Before(first) && !o[1].After(last.Add(time.Minute)) {
				sum.Occurrences++
			}
		}
		for _, c := range checks {
			if !c.Pass {
				sum.Pass = false
			}
		}
		if len(checks) == 0 && q.Sent == 0 {
			sum.Pass = false
		}
		e.Windows = append(e.Windows, sum)
		if q.Sent == 0 {
			e.Warnings = append(e.Warnings, fmt.Sprintf("SLA window %s (%s): no recorded probe falls in it: no data, not a pass", w.Name, w.Hours()))
		}
	}
	e.SLA.settle()
	if loc := s.Zone; loc != nil && withHours {
		e.Hourly = hourly(m, loc)
	}
}

// windowChecks are the checks of the SLA window w over q; a single
// throughput test (tp without hours) is not judged in it.
func windowChecks(s candidates.SLA, q RouteQuality, w candidates.Window, tp *Throughput) []Check {
	checks := CheckSLAWindow(s, q, w)
	if tp != nil && !tp.Hourly() {
		// A single test has no hours: the window's throughput is not
		// judged (the whole recording's check stands for it).
		kept := checks[:0]
		for _, c := range checks {
			if c.Name != CheckMinThroughput && c.Name != CheckMaxOversell {
				kept = append(kept, c)
			}
		}
		checks = kept
	}
	return checks
}

// hourly is the day in 24 hours of loc over m's probes.
func hourly(m *Measurement, loc *time.Location) []HourSummary {
	if first, _ := m.probeSpan(); first.IsZero() {
		return nil
	}
	out := make([]HourSummary, 24)
	for h := range out {
		q := m.quality(func(t time.Time) bool { return t.In(loc).Hour() == h }, -1)
		out[h] = HourSummary{Hour: h, Sent: q.Sent, Loss: round(q.Loss, 6), RTTP50: q.RTT.P50, RTTP95: q.RTT.P95, Jitter: q.Jitter.MeanAbs, Recv: q.Recv}
	}
	return out
}

// MarshalJSON writes the figures as null without probes (loss) or answers
// (RTT, jitter).
func (s WindowSummary) MarshalJSON() ([]byte, error) {
	have := s.Recv > 0
	return json.Marshal(struct {
		Name        string   `json:"name"`
		Hours       string   `json:"hours"`
		Default     bool     `json:"default"`
		Occurrences int      `json:"occurrences"`
		Sent        int      `json:"sent"`
		Recv        int      `json:"recv"`
		Loss        *float64 `json:"loss"`
		RTTP50      *float64 `json:"rtt_p50_ms"`
		RTTP95      *float64 `json:"rtt_p95_ms"`
		Jitter      *float64 `json:"jitter_ms"`
		Pass        bool     `json:"pass"`
	}{s.Name, s.Hours, s.Default, s.Occurrences, s.Sent, s.Recv, num(s.Loss, s.Sent > 0), num(s.RTTP50, have), num(s.RTTP95, have), num(s.Jitter, have), s.Pass})
}

// MarshalJSON writes an hour's figures as null without probes or answers.
func (h HourSummary) MarshalJSON() ([]byte, error) {
	have := h.Recv > 0
	return json.Marshal(struct {
		Hour   int      `json:"hour"`
		Sent   int      `json:"sent"`
		Loss   *float64 `json:"loss"`
		RTTP50 *float64 `json:"rtt_p50_ms"`
		RTTP95 *float64 `json:"rtt_p95_ms"`
		Jitter *float64 `json:"jitter_ms"`
	}{h.Hour, h.Sent, num(h.Loss, h.Sent > 0), num(h.RTTP50, have), num(h.RTTP95, have), num(h.Jitter, have)})
}

// Failures names the failed checks in the verdict's sentence: a check of
// the whole recording by its name; those of an SLA window by the figure
// against the threshold, then the window and its hours once ("loss 4.44 %
// > 1.00 %, rtt_p95_ms 106.0 ms > 80 ms in evening, 20:00–23:00
// Asia/Shanghai").
func Failures(checks []Check) []string {
	var out []string
	var order []string
	byWindow := map[string][]string{}
	hours := map[string]string{}
	for _, c := range checks {
		if c.Pass {
			continue
		}
		if c.Window == "" || c.Window == WindowAll {
			out = append(out, c.Label())
			continue
		}
		if _, ok := byWindow[c.Window]; !ok {
			order = append(order, c.Window)
		}
		byWindow[c.Window] = append(byWindow[c.Window], c.figure())
		hours[c.Window] = c.Hours
	}
	for _, w := range order {
		out = append(out, fmt.Sprintf("%s in %s, %s", strings.Join(byWindow[w], ", "), w, hours[w]))
	}
	return out
}

// figure is a failed window check's figure against its threshold.
func (c Check) figure() string {
	m, ok1 := c.Measured.(float64)
	r, ok2 := c.Required.(float64)
	if c.Unmeasured || !ok1 || !ok2 {
		return c.Name + ": " + NoData
	}
	op := ">"
	if c.Name == CheckMinThroughput {
		op = "<"
	}
	switch c.Unit {
	case "fraction":
		return fmt.Sprintf("%s %.2f %% %s %.2f %%", c.Name, m*100, op, r*100)
	case "ms":
		return fmt.Sprintf("%s %.1f ms %s %g ms", c.Name, m, op, r)
	case "Mbps":
		return fmt.Sprintf("%s %.1f Mbps %s %g Mbps", c.Name, m, op, r)
	}
	return fmt.Sprintf("%s %.2f %s %g", c.Name, m, op, r)
}

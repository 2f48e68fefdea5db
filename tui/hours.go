package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/verdict"
)

// hoursOf is the candidate's day in 24 hours of the users' zone loc
// (issue 30): over its live windows once a probe was sent (the hours
// verdict.HourlyLive gives), else the recording's (compare's hourly), and
// the hour of its latest probe in loc (-1 when none has a time).
func hoursOf(c *Candidate, loc *time.Location) (hours []verdict.HourSummary, now int) {
	now = -1
	if loc == nil {
		return nil, now
	}
	l := c.liveRoute()
	if len(l.Probes) == 0 {
		return c.RecordedHourly, now
	}
	var last time.Time
	for _, w := range l.Probes {
		if w == nil {
			continue
		}
		if _, b := w.Span(); b.After(last) {
			last = b
		}
	}
	if !last.IsZero() {
		now = last.In(loc).Hour()
	}
	return verdict.HourlyLive(l, loc), now
}

// renderHours is the route screen's hour-of-day profile: a line naming the
// zone, then the hours 0–23 (▼ marks the current one: the latest probe's),
// the loss in per cent and the RTT p95 in ms of each, three columns an
// hour; "·" for an hour without probes (loss) or answers (p95), never 0.
// Nothing without hours.
func renderHours(s *state, hours []verdict.HourSummary, now int, zone string, width int) []string {
	if len(hours) != 24 {
		return nil
	}
	var h, loss, p95 strings.Builder
	h.WriteString(" hour ")
	loss.WriteString(" loss%")
	p95.WriteString(" p95ms")
	for i, x := range hours {
		if i == now {
			fmt.Fprintf(&h, "▼%2d", i)
		} else {
			fmt.Fprintf(&h, "%3d", i)
		}
		switch {
		case x.Sent == 0:
			loss.WriteString("  ·")
		case x.Loss == 0:
			loss.WriteString("  0")
		case x.Loss < 0.01:
			loss.WriteString(" <1")
		default:
			fmt.Fprintf(&loss, "%3.0f", math.Min(x.Loss*100, 100))
		}
		switch {
		case x.Recv == 0:
			p95.WriteString("  ·")
		case x.RTTP95 >= 999.5:
			p95.WriteString("1k+")
		default:
			fmt.Fprintf(&p95, "%3.0f", x.RTTP95)
		}
	}
	head := fmt.Sprintf(" The users' day (%s): loss and p95 per hour, ▼ the hour of the latest probe, · none in that hour", zone)
	return []string{s.st.render(styleDim, line(head, width)), line(h.String(), width), line(loss.String(), width), line(p95.String(), width)}
}

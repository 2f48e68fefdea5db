package verdict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/route"
)

// SeenRoute is one distinct route among a direction's traces over the days
// of a trial (recorded.forward or recorded.return as a list of files or a
// `trace --watch` journal; issue 30): its AS path and line class, and when
// it was seen. RouteQuality.RoutesSeen lists them, earliest first.
type SeenRoute struct {
	// Direction is "forward" or "return".
	Direction string `json:"direction"`
	// ASPath is the chain of networks, "AS4134 → AS4809"; "" when no hop
	// had an AS number.
	ASPath    string `json:"as_path"`
	LineClass string `json:"line_class"`
	// Carrier is the vantage's carrier for a forward route (the users of
	// that carrier are judged on it by sla.line_classes_by_carrier).
	Carrier string `json:"carrier,omitempty"`
	// First and Last are the earliest and latest start of its traces, in
	// the users' zone; nil when none of them carries a time.
	First *time.Time `json:"first"`
	Last  *time.Time `json:"last"`
	// Count is how many traces took it; Untimed how many of them carry no
	// time.
	Count   int `json:"count"`
	Untimed int `json:"untimed,omitempty"`
}

// TraceTime is when trace t started (its "start"); false when it does not
// say.
func TraceTime(t *route.Trace) (time.Time, bool) {
	if t == nil || t.Start == "" {
		return time.Time{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, t.Start)
	return ts, err == nil
}

// routesSeen annotates the traces of m's days with db and groups them,
// times in the users' zone.
func routesSeen(f *candidates.File, m *Measurement, db route.ASNDB) []SeenRoute {
	var out []SeenRoute
	for _, d := range []struct {
		dir, carrier string
		ts           []*route.Trace
	}{{"forward", f.Vantage.Carrier, m.ForwardSeries}, {"return", "", m.ReturnSeries}} {
		for _, t := range d.ts {
			route.Annotate(t, db)
		}
		out = append(out, seenRoutes(d.dir, d.carrier, d.ts, f.SLA.Zone)...)
	}
	return out
}

// seenRoutes groups a direction's annotated traces by AS path and line
// class, with times in loc (UTC when nil).
func seenRoutes(direction, carrier string, ts []*route.Trace, loc *time.Location) []SeenRoute {
	if loc == nil {
		loc = time.UTC
	}
	var out []SeenRoute
	for _, t := range ts {
		cls := t.LineClass
		if cls == "" {
			cls = "unknown"
		}
		var asns []string
		for _, h := range route.ASPath(t) {
			asns = append(asns, "AS"+strconv.Itoa(h.ASN))
		}
		path := strings.Join(asns, " → ")
		i := slices.IndexFunc(out, func(s SeenRoute) bool { return s.ASPath == path && s.LineClass == cls })
		if i < 0 {
			out = append(out, SeenRoute{Direction: direction, ASPath: path, LineClass: cls, Carrier: carrier})
			i = len(out) - 1
		}
		s := &out[i]
		s.Count++
		at, ok := TraceTime(t)
		if !ok {
			s.Untimed++
			continue
		}
		at = at.In(loc)
		if s.First == nil || at.Before(*s.First) {
			s.First = &at
		}
		if s.Last == nil || at.After(*s.Last) {
			l := at
			s.Last = &l
		}
	}
	slices.SortStableFunc(out, func(a, b SeenRoute) int {
		switch {
		case a.First == nil && b.First == nil:
			return 0
		case a.First == nil:
			return 1
		case b.First == nil:
			return -1
		}
		return a.First.Compare(*b.First)
	})
	return out
}

// seenFailure says which of a direction's seen routes take a class not in
// allowed, naming the time ("chinanet-163 at 21:05 on 2 Nov, cn2-gia
// otherwise"); ok is false when every route's class is allowed. Routes of
// other directions, or (carrier non-empty) of another carrier, are left
// out.
func seenFailure(routes []SeenRoute, allowed []string, carrier string) (class, note string, failed bool) {
	for _, dir := range []string{"forward", "return"} {
		var bad []string
		var good []string
		total := 0
		for _, r := range routes {
			if r.Direction != dir || (carrier != "" && r.Carrier != carrier) {
				continue
			}
			total += r.Count
			if slices.Contains(allowed, r.LineClass) {
				if !slices.Contains(good, r.LineClass) {
					good = append(good, r.LineClass)
				}
				continue
			}
			if !failed {
				class, failed = r.LineClass, true
			}
			bad = append(bad, seenWhen(r))
		}
		if len(bad) == 0 {
			continue
		}
		s := dir + " route over the days: " + strings.Join(bad, "; ")
		if len(good) > 0 {
			s += ", " + strings.Join(good, " or ") + " otherwise"
		}
		unit := "traces"
		if total == 1 {
			unit = "trace"
		}
		s += fmt.Sprintf(" (%d %s); must hold on every trace", total, unit)
		if note != "" {
			note += "; "
		}
		note += s
	}
	return class, note, failed
}

// seenWhen is a route's class with when it was seen: "chinanet-163 at
// 21:05 on 2 Nov", "… and 2 more times until 21:40 on 4 Nov".
func seenWhen(r SeenRoute) string {
	if r.First == nil {
		return fmt.Sprintf("%s in %d trace(s) without a time", r.LineClass, r.Count)
	}
	s := r.LineClass + " at " + clockDay(*r.First)
	if timed := r.Count - r.Untimed; timed > 1 {
		s += fmt.Sprintf(" and %d more time(s) until %s", timed-1, clockDay(*r.Last))
	}
	if r.Untimed > 0 {
		s += fmt.Sprintf(" and in %d trace(s) without a time", r.Untimed)
	}
	return s
}

// clockDay writes t as "21:05 on 2 Nov" (t is in the users' zone
// already); "21:05 UTC on 2 Nov" when no users' zone is known.
func clockDay(t time.Time) string {
	if t.Location() == time.UTC {
		return t.Format("15:04 UTC on 2 Jan")
	}
	return t.Format("15:04 on 2 Jan")
}

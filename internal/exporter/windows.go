package exporter

import (
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The SLA windows of serve (issue 30): each target keeps, beside its
// --window, the probes of each SLA window's most recent occurrence (the
// current one while it is in progress, else the last one: at 17:00 the
// evening judged is yesterday's 20:00–23:00), and each candidate is judged
// over it (verdict.JudgeOccurrences). An occurrence's probes replace the
// previous one's when its first cycle ends, so a target holds one
// occurrence per window: at most windowProbes of them (about the window's
// length over --interval), whatever the time serve has run.

// occurrence is one target's probes in the latest occurrence of an SLA
// window: [from, to), and the window's hours when it was kept (a reload
// that changes them starts again).
type occurrence struct {
	hours    string
	from, to time.Time
	probes   *verdict.Window
}

// slaWindows are the windows serve judges besides --window: sla.windows,
// else the evening in the users' zone (judged once serve has probed in
// one: a candidate is not failed for an evening that has not come yet).
// e.mu is held.
func (e *Exporter) slaWindows() []candidates.Window {
	return e.file.SLA.JudgedWindows()
}

// observeWindows adds a cycle that ended at now to the occurrences of the
// SLA windows it falls in. e.mu is held.
func (e *Exporter) observeWindows(t Target, now time.Time, o PingOutcome) {
	windows := e.slaWindows()
	// A window a reload removed or changed gives its probes back.
	for name, oc := range e.occ[t.key()] {
		keep := false
		for _, w := range windows {
			keep = keep || (w.Name == name && w.Hours() == oc.hours)
		}
		if !keep {
			delete(e.occ[t.key()], name)
		}
	}
	for _, w := range windows {
		if !w.Contains(now) {
			continue
		}
		from, to, ok := occurrenceAt(w, now)
		if !ok {
			continue
		}
		byName := e.occ[t.key()]
		if byName == nil {
			byName = map[string]*occurrence{}
			e.occ[t.key()] = byName
		}
		oc := byName[w.Name]
		if oc == nil || oc.hours != w.Hours() || !oc.from.Equal(from) {
			oc = &occurrence{hours: w.Hours(), from: from, to: to, probes: verdict.NewWindow(e.windowProbes(to.Sub(from)))}
			byName[w.Name] = oc
		}
		oc.probes.AddCycleAt(now, o.Sent, o.Recv, o.Late, o.Dup, o.RTTms)
	}
}

// occurrenceAt is the occurrence of w that holds t.
func occurrenceAt(w candidates.Window, t time.Time) (from, to time.Time, ok bool) {
	for _, o := range w.Occurrences(t, t) {
		if !t.Before(o[0]) && t.Before(o[1]) {
			return o[0], o[1], true
		}
	}
	return time.Time{}, time.Time{}, false
}

// windowProbes bounds an occurrence of length d in probes: a --window of
// span holds at most size probes (one per --interval and a cycle), so d
// holds at most size per span of it, and one cycle more (5 minutes when no
// span is set). e.mu is held.
func (e *Exporter) windowProbes(d time.Duration) int {
	span := e.span
	if span <= 0 {
		span = 5 * time.Minute
	}
	n := int((d + span - 1) / span)
	return (n + 1) * e.size
}

// occurrences are the SLA windows candidate name is judged over, with its
// targets' probes in each one's latest occurrence: an explicit window
// (sla.windows) always, without probes until it first comes; the default
// evening once one of the targets has probes in it. e.mu is held.
func (e *Exporter) occurrences(name string) []verdict.Occurrence {
	var out []verdict.Occurrence
	for _, w := range e.slaWindows() {
		oc := verdict.Occurrence{Window: w}
		have := false
		for _, t := range e.byCand[name] {
			var p *verdict.Window
			if x := e.occ[t.key()][w.Name]; x != nil && x.hours == w.Hours() {
				if !have || x.from.After(oc.From) {
					oc.From, oc.To = x.from, x.to
				}
				have = true
				p = x.probes
			}
			oc.Probes = append(oc.Probes, p)
		}
		if !have && w.Default {
			continue
		}
		// The targets' latest occurrences may differ (a target that was
		// down): the candidate is judged over the latest one.
		for i, p := range oc.Probes {
			if x := e.occ[e.byCand[name][i].key()][w.Name]; p != nil && !x.from.Equal(oc.From) {
				oc.Probes[i] = nil
			}
		}
		out = append(out, oc)
	}
	return out
}

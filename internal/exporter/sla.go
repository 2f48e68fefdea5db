package exporter

import (
	"fmt"
	"sort"

	"github.com/linecheck/linecheck/internal/compare"
)

// SLAWindow is how many of a target's latest probes serve judges the SLA
// on (about five minutes at one probe a second): recent enough to show a
// line going bad, long enough for a p95.
const SLAWindow = 300

// Config is what serve reads from a candidates file: the targets, and what
// the SLA is judged with (the sla block, each candidate's physical floor).
type Config struct {
	Targets []Target
	SLA     compare.SLA
	// FloorMs is each candidate's physical RTT floor (compare.FloorMs), for
	// the stretch check; absent when unknown.
	FloorMs map[string]float64
}

// LoadConfig reads the candidates file at path with compare's loader.
func LoadConfig(path string) (Config, error) {
	f, err := compare.LoadWith(path, loadOptions)
	if err != nil {
		return Config{}, err
	}
	c := Config{Targets: targetsOf(f), SLA: f.SLA, FloorMs: map[string]float64{}}
	for i := range f.Candidates {
		if fl, ok := compare.FloorMs(f, &f.Candidates[i]); ok {
			c.FloorMs[f.Candidates[i].Name] = fl
		}
	}
	return c, nil
}

// SLAStatus is one candidate's SLA verdict over the window, shown on /.
type SLAStatus struct {
	Candidate string
	Verdict   compare.Verdict
}

// SetSLA sets what the SLA is judged with (at start and on reload) and
// judges every candidate again.
func (e *Exporter) SetSLA(s compare.SLA, floorMs map[string]float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sla, e.floor = s, floorMs
	seen := map[string]bool{}
	for _, t := range e.targets {
		if !seen[t.Candidate] {
			seen[t.Candidate] = true
			e.judge(t.Candidate)
		}
	}
}

// judge evaluates candidate's SLA with compare.CheckSLA on a RouteQuality
// built from its targets' windows (compare's aggregation: the worst over
// the targets) and the line class of its first target's last trace, and
// sets linecheck_sla_check_pass. Before any probe of the candidate ended
// the gauges are absent; after, a check without data fails, as in compare.
// e.mu is held.
func (e *Exporter) judge(candidate string) {
	var results []compare.TargetResult
	class, traced := "", false
	first := true
	for _, t := range e.byCand[candidate] {
		if first {
			class, traced = e.class[t.key()]
			first = false
		}
		if w := e.win[t.key()]; w != nil && w.Len() > 0 {
			results = append(results, w.Result(compare.Target{Addr: t.Addr, Protocol: t.Protocol, Port: t.Port}, nil))
		}
	}
	old := e.slaChecks[candidate]
	delete(e.slaChecks, candidate)
	delete(e.verdicts, candidate)
	if len(results) == 0 {
		for name := range old {
			e.slaPass.Delete(Labels{"candidate": candidate, "check": name})
		}
		return
	}
	var q compare.RouteQuality
	q.AddTargets(results)
	if fl, ok := e.floor[candidate]; ok && fl > 0 {
		q.SetFloor(fl)
	}
	q.Direction = "none"
	if traced {
		q.LineClass, q.Direction = class, "forward"
	}
	v := compare.CheckSLA(e.sla, q)
	now := map[string]bool{}
	for _, c := range v.Checks {
		now[c.Name] = true
		pass := 0.0
		if c.Pass {
			pass = 1
		}
		e.slaPass.With(Labels{"candidate": candidate, "check": c.Name}).Set(pass)
	}
	for name := range old {
		if !now[name] {
			e.slaPass.Delete(Labels{"candidate": candidate, "check": name})
		}
	}
	if len(v.Checks) > 0 {
		e.slaChecks[candidate] = now
		e.verdicts[candidate] = v
	}
}

// SLA returns every judged candidate's verdict, by name.
func (e *Exporter) SLA() []SLAStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]SLAStatus, 0, len(e.verdicts))
	for c, v := range e.verdicts {
		out = append(out, SLAStatus{Candidate: c, Verdict: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Candidate < out[j].Candidate })
	return out
}

// checkText is a check's measured figure for /: "-" without data.
func checkText(c compare.Check) string {
	if c.Measured == nil {
		return "-"
	}
	return fmt.Sprint(c.Measured)
}

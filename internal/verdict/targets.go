package verdict

import (
	"sort"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// TargetsFromRecords computes per-target statistics from probe records, in
// the order of targets, each over a window of all its records in time order
// (Window.Result). Records of other targets are returned by name.
func TargetsFromRecords(targets []candidates.Target, recs []probe.Record) ([]TargetResult, []string) {
	ws, extra := WindowsFromRecords(targets, recs)
	out := make([]TargetResult, len(targets))
	for i, w := range ws {
		out[i] = w.Result(targets[i], nil)
	}
	return out, extra
}

// WindowsFromRecords is one window per target (in the order of targets) of
// all its records in time order, each probe with its time: what
// TargetsFromRecords and the SLA windows (Measurement.Probes) read.
func WindowsFromRecords(targets []candidates.Target, recs []probe.Record) ([]*Window, []string) {
	type key struct {
		addr  string
		proto probe.Protocol
		port  int
	}
	keyOf := func(addr string, proto probe.Protocol, port int) key {
		if proto == "" {
			proto = probe.ICMP
		}
		if proto == probe.ICMP {
			port = 0
		}
		return key{addr, proto, port}
	}
	idx := map[key]int{}
	out := make([]*Window, len(targets))
	for i, t := range targets {
		idx[keyOf(t.Addr, t.Protocol, t.Port)] = i
	}
	byTarget := make([][]probe.Record, len(targets))
	var extra []string
	seenExtra := map[key]bool{}
	for _, r := range recs {
		k := keyOf(r.Addr, r.Protocol, r.Port)
		i, ok := idx[k]
		if !ok {
			// A stream may name the target and record the resolved address.
			i, ok = idx[keyOf(r.Target, r.Protocol, r.Port)]
		}
		if !ok {
			if !seenExtra[k] {
				seenExtra[k] = true
				extra = append(extra, candidates.Target{Addr: k.addr, Protocol: k.proto, Port: k.port}.String())
			}
			continue
		}
		byTarget[i] = append(byTarget[i], r)
	}
	for i, rs := range byTarget {
		sort.SliceStable(rs, func(a, b int) bool {
			if !rs[a].Time.Equal(rs[b].Time) {
				return rs[a].Time.Before(rs[b].Time)
			}
			return rs[a].Seq < rs[b].Seq
		})
		w := NewWindow(0)
		for _, r := range rs {
			w.Add(r)
		}
		out[i] = w
	}
	return out, extra
}

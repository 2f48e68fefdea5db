package route

import (
	"math"
	"sort"
	"time"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// Hop flags.
const (
	// FlagRateLimited marks a hop whose loss does not carry on downstream
	// (control-plane loss: ICMP rate limiting or deprioritisation), see FlagHops.
	FlagRateLimited = "icmp-rate-limited"
	// FlagNoReply marks a TTL that never answered while a later TTL did.
	FlagNoReply = "no-reply"
	// FlagDestination marks the target's own entry (the last one).
	FlagDestination = "destination"
	// FlagNAT marks, with trace --nat, a TTL where the NAT ID changes: the
	// first hop behind a stateless address or port rewrite.
	FlagNAT = "nat"
)

// MaxUnknown is how many silent TTLs after the last one that answered an
// unreached trace lists (mtr's --max-unknown default): enough to show that
// the path went quiet, not thirty empty lines.
const MaxUnknown = 5

// BuildTrace makes the linecheck.trace/v1 document of a trace as measured
// (source "live"): the hops of its results (BuildHops), without per-responder
// flow lists unless the run probed several flows.
func BuildTrace(run *probe.TraceRun) *Trace {
	hops, reached := BuildHops(run.Results)
	if run.Flows <= 1 {
		for i := range hops {
			for j := range hops[i].Responders {
				hops[i].Responders[j].Flows = nil
			}
		}
	}
	tr := &Trace{Schema: TraceSchema, Target: run.Target, Addr: run.Addr.String(), Protocol: run.Protocol,
		Port: run.Port, Mode: run.Mode, Reached: reached, Source: "live", Start: run.Start.UTC().Format(time.RFC3339),
		Foreign: run.Counts.Foreign, Hops: hops}
	if run.NAT {
		addNAT(tr, run)
	}
	return tr
}

// BuildHops turns per-probe results into hop entries. The destination's TTL
// is the lowest TTL at which the target answered; probes at higher TTLs (sent
// before it was known) are left out. Entries run from the lowest TTL probed up
// to the destination's TTL. When the target was not reached they run up to
// the last TTL that answered, in time or late, followed by the silent TTLs
// probed after it, at most MaxUnknown of them; when the target itself
// answered only late, they end at the lowest TTL where it did. A TTL that
// never answered has no responders and loss 1. Per hop, Late counts probes
// answered after the timeout and Duplicates the further replies. Responders
// are ordered by replies (most first), then address. reached tells whether
// the target answered in time.
func BuildHops(results []probe.ProbeResult) (hops []Hop, reached bool) {
	if len(results) == 0 {
		return []Hop{}, false
	}
	rs := append([]probe.ProbeResult(nil), results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Order < rs[j].Order })
	lo, last, reached := hopRange(rs)
	t := tallyTTLs(rs, last)
	for ttl := lo; ttl <= last; ttl++ {
		hops = append(hops, t.hop(ttl))
	}
	if reached {
		hops[len(hops)-1].Flags = append(hops[len(hops)-1].Flags, FlagDestination)
	}
	FlagHops(hops)
	return hops, reached
}

// hopRange is the TTLs BuildHops lists, lo to last, by the rules of its
// doc, and whether the target answered in time.
func hopRange(rs []probe.ProbeResult) (lo, last int, reached bool) {
	lo, hi, destTTL, lastAns, lateDest := math.MaxInt, 0, 0, 0, 0
	for _, r := range rs {
		lo = min(lo, r.TTL)
		hi = max(hi, r.TTL)
		if r.Addr != "" || r.Late {
			lastAns = max(lastAns, r.TTL)
		}
		if r.Addr != "" && r.Dest && (destTTL == 0 || r.TTL < destTTL) {
			destTTL = r.TTL
		}
		if r.Addr == "" && r.Late && r.Dest && (lateDest == 0 || r.TTL < lateDest) {
			lateDest = r.TTL
		}
	}
	switch {
	case destTTL > 0:
		return lo, destTTL, true
	case lateDest > 0:
		return lo, lateDest, false
	case lastAns > 0:
		return lo, min(hi, lastAns+MaxUnknown), false
	}
	return lo, min(hi, lo-1+MaxUnknown), false
}

// ttlTally is the probes of each TTL counted: sent, answered late, the
// duplicate replies, and per responder its replies and flows.
type ttlTally struct {
	byTTL            map[int]map[string]*responderTally
	sent, late, dups map[int]int
}

type responderTally struct {
	r     *Responder
	flows map[int]bool
}

// tallyTTLs counts the results up to TTL last.
func tallyTTLs(rs []probe.ProbeResult, last int) ttlTally {
	t := ttlTally{byTTL: map[int]map[string]*responderTally{}, sent: map[int]int{}, late: map[int]int{}, dups: map[int]int{}}
	for _, r := range rs {
		if r.TTL > last {
			continue
		}
		t.sent[r.TTL]++
		t.dups[r.TTL] += r.Dups
		if r.Late && r.Addr == "" {
			t.late[r.TTL]++
		}
		if r.Addr == "" {
			continue
		}
		m := t.byTTL[r.TTL]
		if m == nil {
			m = make(map[string]*responderTally)
			t.byTTL[r.TTL] = m
		}
		a := m[r.Addr]
		if a == nil {
			a = &responderTally{r: &Responder{Addr: r.Addr}, flows: map[int]bool{}}
			m[r.Addr] = a
		}
		a.r.Recv++
		a.r.Samples = append(a.r.Samples, r.RTTms)
		a.flows[r.Flow] = true
		if len(r.MPLS) > 0 {
			a.r.MPLS = r.MPLS
		}
	}
	return t
}

// hop is the entry of one TTL: its responders with their statistics, most
// replies first, and its loss (1 when nothing was sent).
func (t ttlTally) hop(ttl int) Hop {
	h := Hop{TTL: ttl, Sent: t.sent[ttl], Late: t.late[ttl], Duplicates: t.dups[ttl], Flags: []string{}, Responders: []Responder{}}
	recv := 0
	for _, a := range t.byTTL[ttl] {
		r := *a.r
		r.RTT, r.Jitter = stats.Summarize(r.Samples)
		for f := range a.flows {
			r.Flows = append(r.Flows, f)
		}
		sort.Ints(r.Flows)
		recv += r.Recv
		h.Responders = append(h.Responders, r)
	}
	sort.Slice(h.Responders, func(i, j int) bool {
		a, b := h.Responders[i], h.Responders[j]
		if a.Recv != b.Recv {
			return a.Recv > b.Recv
		}
		return a.Addr < b.Addr
	})
	if h.Sent > 0 {
		h.Loss = 1 - float64(recv)/float64(h.Sent)
	} else {
		h.Loss = 1
	}
	return h
}

// RateLimitMargin is the smallest loss difference, in points of the fraction,
// that FlagHops treats as "clearly lower".
const RateLimitMargin = 0.05

// FlagHops sets FlagRateLimited and FlagNoReply on hops (existing flags of
// those two kinds are recomputed, others kept). The rule:
//
// A hop h with loss L_h > 0 is flagged when some later entry k (a later hop
// or the destination) that answered at least once has a loss L_k with
//
//	L_h − L_k > max(RateLimitMargin, 2·sqrt(L_h·(1−L_h)/n_h)),
//
// n_h being the probes sent at h. Forwarding loss at h would show at every
// later hop too (each later probe crosses h), so one later entry with clearly
// less loss proves the loss at h is the router not answering, not packets
// being dropped. The margin is two binomial standard errors of L_h (at least
// 5 points), so a single unlucky probe in a short run is not flagged. A hop
// with loss 1 (it never answered) gets FlagNoReply instead.
func FlagHops(hops []Hop) {
	for i := range hops {
		h := &hops[i]
		kept := h.Flags[:0]
		for _, f := range h.Flags {
			if f != FlagRateLimited && f != FlagNoReply {
				kept = append(kept, f)
			}
		}
		h.Flags = kept
		if h.Flags == nil {
			h.Flags = []string{}
		}
		if h.Loss <= 0 || h.Sent == 0 {
			continue
		}
		minLater := math.Inf(1)
		for _, k := range hops[i+1:] {
			if len(k.Responders) > 0 && k.Sent > 0 {
				minLater = math.Min(minLater, k.Loss)
			}
		}
		if math.IsInf(minLater, 1) {
			continue
		}
		margin := math.Max(RateLimitMargin, 2*math.Sqrt(h.Loss*(1-h.Loss)/float64(h.Sent)))
		if h.Loss-minLater <= margin {
			continue
		}
		if h.Loss >= 1 {
			h.Flags = append(h.Flags, FlagNoReply)
		} else {
			h.Flags = append(h.Flags, FlagRateLimited)
		}
	}
}

package route

import (
	"fmt"
	"net/netip"
)

// minHiddenRun is the shortest run of silent TTLs that can hide the
// distinguishing hops of another class: GT is told from GIA by a ChinaNet
// backbone run of two hops, so a run of two silent TTLs can hold all of it.
// A single silent TTL next to a visible hand-off hop is not enough: the
// Sharon Hong Kong GIA return (59.43 → one 202.97 hop → one silent TTL →
// Guangdong Telecom) is sold and published as GIA.
const minHiddenRun = 2

// answer is one TTL that replied, as the silence rules see it: the carriers
// of its responders and whether one of them is a public address that no
// table or database knows.
type answer struct {
	ttl      int
	carriers []Carrier
	unmapped bool
}

func (a *answer) has(match func(Carrier) bool) bool {
	if a == nil {
		return false
	}
	for _, c := range a.carriers {
		if match(c) {
			return true
		}
	}
	return false
}

// silentRun is a run of consecutive silent TTLs (probes sent, nothing
// answered) and the answers around it; before is nil at the trace's start,
// after at its end.
type silentRun struct {
	from, to      int
	before, after *answer
}

func (r silentRun) len() int { return r.to - r.from + 1 }

// silentRuns lists the runs of silent TTLs of hops (in TTL order). A TTL a
// recording has no entry for, or one with no probe sent, was not measured:
// it ends a run rather than extending it.
func silentRuns(hops []Hop, seq []evHop, db ASNDB) []silentRun {
	answers := map[int]*answer{}
	for _, h := range hops {
		if !responded(h) {
			continue
		}
		a := &answer{ttl: h.TTL}
		for _, r := range h.Responders {
			ip, err := netip.ParseAddr(r.Addr)
			if err != nil {
				continue
			}
			if _, special := noEvidenceRange(ip, db); !special {
				if _, ok := responderCarrier(ip, r, db); !ok {
					a.unmapped = true
				}
			}
		}
		answers[h.TTL] = a
	}
	for _, e := range seq {
		if a := answers[e.ttl]; a != nil {
			a.carriers = append(a.carriers, e.c)
		}
	}
	var runs []silentRun
	var last *answer
	for i := 0; i < len(hops); i++ {
		h := hops[i]
		if a := answers[h.TTL]; a != nil {
			last = a
			continue
		}
		if h.Sent == 0 && len(h.Responders) == 0 {
			continue
		}
		j := i
		for j+1 < len(hops) && hops[j+1].TTL == hops[j].TTL+1 && answers[hops[j+1].TTL] == nil && hops[j+1].Sent > 0 {
			j++
		}
		run := silentRun{from: h.TTL, to: hops[j].TTL, before: last}
		if j+1 < len(hops) && hops[j+1].TTL == hops[j].TTL+1 {
			run.after = answers[hops[j+1].TTL]
		}
		if run.after != nil || j+1 == len(hops) {
			runs = append(runs, run)
		}
		i = j
	}
	return runs
}

func isCN2(c Carrier) bool        { return c.Class == ClassCN2 }
func isChinaNet(c Carrier) bool   { return c.Class == ClassChinaNet }
func isChinaNetBB(c Carrier) bool { return c.Class == ClassChinaNet && c.Backbone }
func outsideChina(c Carrier) bool { return !c.China }

// hiddenAlternative lowers the confidence of class one step when a run of
// silent TTLs lies exactly where the hops that tell another class apart
// would answer, and says which class it cannot rule out (issue 21):
//
//   - cn2-gia (without the tri-network hand-off): silence between the CN2
//     segment and Telecom's domestic network is where GT's 202.97 run
//     would be — after CN2 on a return trace (up to ChinaNet, an address
//     no table knows, or the end of an unreached trace), before CN2 on a
//     forward one (after a ChinaNet hop);
//   - chinanet-163: silence between a carrier outside China and the first
//     (return) or last (forward) ChinaNet backbone hop is where GT's 59.43
//     hops would be.
//
// Silence anywhere else leaves the confidence as it is.
func (c *classification) hiddenAlternative(class string) {
	var run *silentRun
	var alt, what string
	switch {
	case class == LineCN2GIA && c.backboneRun() < 2:
		run, alt, what = c.gapBesideCN2(), LineCN2GT, "where CN2 GT's ChinaNet backbone (202.97) run would answer"
	case class == LineChinaNet163:
		run, alt, what = c.gapBesideChinaNetBackbone(), LineCN2GT, "where CN2 GT's CN2 (59.43) hops would answer"
	}
	if run == nil {
		return
	}
	ev := c.ev
	was := ev.Confidence
	switch ev.Confidence {
	case ConfidenceHigh:
		ev.Confidence = ConfidenceMedium
	case ConfidenceMedium:
		ev.Confidence = ConfidenceLow
	}
	around := "before the end of the trace"
	switch {
	case run.before != nil && run.after != nil:
		around = fmt.Sprintf("between the answers at TTL %d and TTL %d", run.before.ttl, run.after.ttl)
	case run.before != nil:
		around = fmt.Sprintf("after the answer at TTL %d, to the end of the trace", run.before.ttl)
	}
	note := fmt.Sprintf("%s silent %s, %s: %s not ruled out", ttlSpan(run.from, run.to), around, what, alt)
	if was != ev.Confidence {
		note += fmt.Sprintf("; confidence lowered from %s to %s", was, ev.Confidence)
	}
	ev.Notes = append(ev.Notes, note)
	ev.NotRuledOut = append(ev.NotRuledOut, alt)
}

// gapBesideCN2 is the first silent run long enough to hide GT's 202.97
// run next to the CN2 segment, on the China side of it.
func (c *classification) gapBesideCN2() *silentRun {
	firstCN2, lastCN2 := c.by[ClassCN2][0].ttl, c.by[ClassCN2][len(c.by[ClassCN2])-1].ttl
	// A known carrier outside China after CN2 makes the trace a forward
	// one leaving China on CN2: 202.97 would not follow CN2 there.
	exitsChina := false
	for _, e := range c.seq {
		if e.ttl > lastCN2 && !e.c.China {
			exitsChina = true
		}
	}
	for i := range c.runs {
		r := &c.runs[i]
		if r.len() < minHiddenRun {
			continue
		}
		cn2Side := r.before.has(isCN2) || (r.before.has(isChinaNetBB) && r.before.ttl > firstCN2)
		telecomSide := r.after == nil && !c.reached ||
			r.after != nil && !r.after.has(isCN2) && (r.after.has(isChinaNet) || r.after.unmapped && len(r.after.carriers) == 0)
		if r.before != nil && r.from > lastCN2 && cn2Side && telecomSide && !exitsChina {
			return r
		}
		// Forward, China → abroad: province → 202.97 → 59.43.
		cn2Ahead := r.after.has(isCN2) || (r.after.has(isChinaNetBB) && r.after.ttl < lastCN2)
		if r.after != nil && r.to < firstCN2 && cn2Ahead && r.before.has(isChinaNet) {
			return r
		}
	}
	return nil
}

// gapBesideChinaNetBackbone is the first silent run long enough to hide
// CN2 between a carrier outside China and the ChinaNet backbone run.
func (c *classification) gapBesideChinaNetBackbone() *silentRun {
	var bb []evHop
	for _, e := range c.long {
		if isChinaNetBB(e.c) {
			bb = append(bb, e)
		}
	}
	if len(bb) == 0 {
		return nil
	}
	first, last := bb[0].ttl, bb[len(bb)-1].ttl
	for i := range c.runs {
		r := &c.runs[i]
		if r.len() < minHiddenRun || r.before == nil || r.after == nil {
			continue
		}
		if r.after.ttl == first && r.before.has(outsideChina) && !r.before.has(func(c Carrier) bool { return c.China }) {
			return r
		}
		if r.before.ttl == last && r.after.has(outsideChina) && !r.after.has(func(c Carrier) bool { return c.China }) {
			return r
		}
	}
	return nil
}

package route

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/asn"
)

// Line classes a route can get (Trace.LineClass).
const (
	LineCN2GIA      = "cn2-gia"
	LineCN2GT       = "cn2-gt"
	LineChinaNet163 = "chinanet-163"
	LineCU9929      = "cu-9929"
	LineCU4837      = "cu-4837"
	LineCMIN2       = "cmin2"
	LineCMI         = "cmi"
	LineTransit     = "transit"
	LineUnknown     = "unknown"
)

// Confidence levels of a line class.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// LineClassRank orders line classes from best (5) to unknown (0), as the
// community classifiers rank them (GIA, 9929, CMIN2 are premium; GT is in between; 163, 4837, CMI are ordinary).
func LineClassRank(class string) int {
	switch class {
	case LineCN2GIA, LineCU9929, LineCMIN2:
		return 5
	case LineCN2GT:
		return 3
	case LineChinaNet163, LineCU4837, LineCMI:
		return 2
	case LineTransit:
		return 1
	}
	return 0
}

// evHop is one responder that mapped to a carrier.
type evHop struct {
	ttl  int
	addr string
	c    Carrier
}

func (e evHop) evidence() EvidenceHop {
	return EvidenceHop{TTL: e.ttl, Addr: e.addr, ASN: e.c.ASN, Carrier: e.c.Name, ASSource: sourceName(e.c.Source)}
}

// carrierKey groups hops of one network: the class for known carriers, the
// ASN for networks only the ASN database knows.
func carrierKey(c Carrier) string {
	if c.Class == ClassOther || c.Class == "" {
		return "AS" + strconv.Itoa(c.ASN)
	}
	return c.Class
}

// domesticAccess is a class that every path to a user of that carrier ends
// in, so trailing hops of it are delivery, not long haul (pitfall 3).
func domesticAccess(class string) bool {
	return class == ClassChinaNet || class == ClassCU4837 || class == ClassCMNET
}

// responded tells whether a hop had any reply: a listed responder with an
// address answered at least once.
func responded(h Hop) bool {
	for _, r := range h.Responders {
		if _, err := netip.ParseAddr(r.Addr); err == nil {
			return true
		}
	}
	return false
}

// Annotate fills, for every responder, ASN, ASName, Country, ASSource and
// Carrier (the carrier's short name, or the special range's kind such as
// "private", "cgnat", "dod", whose addresses are never looked up), then
// t.ASPath and t.LineClass / t.LineEvidence. db may be nil: the prefix
// tables are used alone then; a *Names adds the --asn-db file and the
// dataset (and t.ASNData), in that order.
func Annotate(t *Trace, db ASNDB) {
	if t == nil {
		return
	}
	AnnotateVantage(t.Vantage, db)
	ds := dataset(db)
	for i := range t.Hops {
		for j := range t.Hops[i].Responders {
			r := &t.Hops[i].Responders[j]
			ip, err := netip.ParseAddr(r.Addr)
			if err != nil {
				continue
			}
			if kind, ok := noEvidenceRange(ip, db); ok {
				r.ASN, r.Carrier, r.ASName, r.Country, r.ASSource = 0, kind, "", "", kind
				continue
			}
			var inf asn.Info
			if ds != nil {
				inf, _ = ds.Lookup(ip)
				r.Country = inf.Country
			}
			c, ok := responderCarrier(ip, *r, db)
			if !ok {
				if r.ASSource == "" {
					r.ASSource = SourceNone
				}
				continue
			}
			r.ASN, r.Carrier, r.ASSource = c.ASN, c.Name, sourceName(c.Source)
			r.ASName = c.ASName
			// A carrier table names the line; the registry's name of the
			// same AS says whose network it is.
			if inf.ASN != 0 && int(inf.ASN) == c.ASN && inf.Name != "" {
				r.ASName = inf.Name
			}
			if r.ASName == "" {
				r.ASName = c.Name
			}
		}
	}
	t.ASPath = ASPath(t)
	if info := DataInfo(db); info != nil {
		t.ASNData = info
	}
	t.LineClass, t.LineEvidence = Classify(t, db)
	if n, ok := db.(*Names); ok && n != nil && n.Off {
		ClearASN(t)
		for i := range t.LineEvidence.Hops {
			t.LineEvidence.Hops[i].ASSource = ""
		}
	}
	annotatePaths(t, db)
}

// sourceName is the ASSource of a Carrier.Source.
func sourceName(s string) string {
	if s == "table" {
		return SourceCarrierTable
	}
	return s
}

// noEvidenceRange is SpecialRange, except for addresses the operator's
// table in db (--prefix-table) lists: those count as the carrier it names.
func noEvidenceRange(ip netip.Addr, db ASNDB) (string, bool) {
	if _, ok := operatorTable(db).lookup(ip); ok {
		return "", false
	}
	return SpecialRange(ip)
}

// responderCarrier is LookupCarrier, falling back on an ASN the recording
// already carries (mtr -z writes one per hub).
func responderCarrier(ip netip.Addr, r Responder, db ASNDB) (Carrier, bool) {
	if c, ok := LookupCarrier(ip, db); ok {
		return c, true
	}
	if _, special := noEvidenceRange(ip, db); special || r.ASN <= 0 {
		return Carrier{}, false
	}
	c, ok := CarrierForASN(r.ASN, "")
	c.Source = "recording"
	return c, ok
}

// Classify decides a trace's line class on its long-haul segment: the
// responding hops that map to a carrier, minus the destination's own network
// at the end (a delivery hop of AS4134/4837/9808 is no evidence), minus
// private, CGNAT, DoD and silent hops, minus (on a trace that starts in
// Unicom's domestic network) the user's own 4837 leg before a 9929 exit. The
// rules (docs/route.md):
//
//   - CN2 (59.43.0.0/16, AS4809) seen: with a ChinaNet backbone
//     (202.97.0.0/16) run over ≥2 TTLs (backboneRun) after CN2 that hands over to another
//     carrier (Unicom, CMNET, CMI …), cn2-gia at lowered confidence (the GIA
//     tri-network hand-off); else with such a run (into Telecom's own
//     network, or before CN2 on a forward trace) cn2-gt; else cn2-gia (high
//     confidence with ≥2 CN2 hops, low with one);
//   - else Unicom 9929 (also behind CUG AS10099) → cu-9929; CMIN2 → cmin2;
//   - else the first ordinary backbone on the long haul: ChinaNet →
//     chinanet-163, Unicom 4837 → cu-4837, CMI → cmi (CMNET is domestic
//     delivery and never decides; when the first China hops are CMNET and
//     the deciding backbone answers only after them, the long haul is
//     unseen and the confidence low);
//   - else transit when no China network is reached and at least two hops
//     belong to known non-China carriers;
//   - else unknown.
//
// It works on one direction; CombineDirections joins forward and return.
func Classify(t *Trace, db ASNDB) (string, *LineEvidence) {
	class, c := classify(t, db)
	return class, c.ev
}

// classify is Classify, also returning the classification it decided on.
func classify(t *Trace, db ASNDB) (string, *classification) {
	if t == nil || len(t.Hops) == 0 {
		return LineUnknown, &classification{ev: &LineEvidence{Hops: []EvidenceHop{}, Rule: "no hops", Confidence: ConfidenceLow}}
	}
	c := newClassification(t, db)
	// The rules in order: the first that decides gives the class.
	for _, rule := range []func() (string, bool){c.cn2, c.cu9929, c.cmin2, c.ordinaryBackbone, c.noLineClass, c.transit} {
		if class, ok := rule(); ok {
			c.hiddenAlternative(class)
			return class, c
		}
	}
	return c.notEnough(), c
}

// classification is one trace on its way through Classify's rules: the
// responders that map to a carrier (seq) and its long-haul segment (long =
// seq[head:cut], the access network before and the destination's network
// after left out), grouped by class (by, in order of first appearance).
type classification struct {
	ev        *LineEvidence
	seq       []evHop
	head, cut int
	long      []evHop
	tail      []evHop // the destination's own network at the end
	dest      Carrier
	destKnown bool
	// reachesChina is set when the destination or the trailing network is
	// a Chinese one.
	reachesChina bool
	by           map[string][]evHop
	order        []string
	// runs are the trace's runs of silent TTLs; reached is set when the
	// trace got to its destination.
	runs    []silentRun
	reached bool
	// v6 is set for a trace toward an IPv6 address (longHaul).
	v6 bool
}

// newClassification collects the evidence of t (evidence), cuts the long
// haul out of it (longHaul) and groups it by class.
func newClassification(t *Trace, db ASNDB) *classification {
	c := &classification{ev: &LineEvidence{Hops: []EvidenceHop{}}}
	if a, err := netip.ParseAddr(t.Addr); err == nil && !a.Unmap().Is4() {
		c.v6 = true
	}
	hops := append([]Hop(nil), t.Hops...)
	sort.SliceStable(hops, func(a, b int) bool { return hops[a].TTL < hops[b].TTL })
	c.evidence(hops, db)
	c.runs = silentRuns(hops, c.seq, db)
	c.reached = reachedDestination(t, hops)
	c.dest, c.destKnown = destinationCarrier(t, hops, db)
	c.longHaul()
	c.by = map[string][]evHop{}
	for _, e := range c.long {
		k := e.c.Class
		if k == ClassChinaNet && !e.c.Backbone {
			k = "chinanet-edge"
		}
		if _, seen := c.by[k]; !seen {
			c.order = append(c.order, k)
		}
		c.by[k] = append(c.by[k], e)
	}
	return c
}

// evidence maps every responder of hops (in TTL order) to its carrier into
// c.seq, noting the hops that carry no evidence.
func (c *classification) evidence(hops []Hop, db ASNDB) {
	var special TTLKinds
	lastResponding := -1
	for i, h := range hops {
		if responded(h) {
			lastResponding = i
		}
		for _, r := range h.Responders {
			ip, err := netip.ParseAddr(r.Addr)
			if err != nil {
				continue
			}
			if kind, ok := noEvidenceRange(ip, db); ok {
				special.Add(h.TTL, kind)
				continue
			}
			if cr, ok := responderCarrier(ip, r, db); ok {
				c.seq = append(c.seq, evHop{ttl: h.TTL, addr: r.Addr, c: cr})
			}
		}
	}
	if len(special) > 0 {
		c.ev.Notes = append(c.ev.Notes, "no evidence from private/CGNAT/DoD/reserved hops ("+special.String()+")")
	}
	c.ev.Notes = append(c.ev.Notes, silentRunNotes(hops, lastResponding, c.seq)...)
	c.ev.Notes = append(c.ev.Notes, repeatedRouterNotes(c.seq)...)
}

// longHaul cuts the long-haul segment out of c.seq: the destination's own
// network at the end is no evidence, nor is the vantage's access network at
// the start, nor a Unicom user's own 4837 leg before a 9929 exit.
func (c *classification) longHaul() {
	seq, ev := c.seq, c.ev
	cut := len(seq)
	if c.destKnown {
		key := carrierKey(c.dest)
		for cut > 0 && carrierKey(seq[cut-1].c) == key && (!seq[cut-1].c.Backbone || c.dest.Backbone) {
			cut--
		}
	} else {
		for cut > 0 && seq[cut-1].c.China && !seq[cut-1].c.Backbone && domesticAccess(seq[cut-1].c.Class) {
			cut--
		}
	}
	// Nor is the vantage's own access network at the start (a provincial
	// metro of AS4134/4837/9808 that the ASN database knows).
	head := 0
	for head < cut && seq[head].c.China && !seq[head].c.Backbone && domesticAccess(seq[head].c.Class) {
		head++
	}
	if head > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%s the source's access network (%s): not counted",
			ttlSpan(seq[0].ttl, seq[head-1].ttl), seq[0].c.Name))
	}
	// A trace that starts in Unicom's domestic network and leaves on 9929 is
	// a forward trace from a Unicom user: the 4837 leg before the 9929 exit is
	// the user's own access, not a mixed route.
	if len(seq) > 0 && seq[0].c.Class == ClassCU4837 {
		h := head
		for h < cut && seq[h].c.Class == ClassCU4837 {
			h++
		}
		if h > head && h < cut && seq[h].c.Class == ClassCU9929 {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%s the source's own domestic network (Unicom 4837) before the 9929 exit: access, not counted",
				ttlSpan(seq[head].ttl, seq[h-1].ttl)))
			head = h
		}
	}
	// On IPv6 an ordinary carrier's long haul and its customers share one
	// AS and one prefix (240e::/16 is all of ChinaNet, 2408::/16 all of
	// Unicom; there is no 202.97 to tell the backbone apart): a route whose
	// only China hops are the destination's own network entered it from
	// abroad on that carrier's ordinary backbone, so those hops are the
	// long haul (issue 32: a 163 IPv6 route was "unknown").
	if c.v6 && cut < len(seq) && (seq[cut].c.Class == ClassChinaNet || seq[cut].c.Class == ClassCU4837) && !anyChina(seq[head:cut]) {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%s the destination's own network (%s) counted as the long haul: on IPv6 its backbone and its customers share one AS and prefix",
			ttlSpan(seq[cut].ttl, seq[len(seq)-1].ttl), seq[cut].c.Name))
		cut = len(seq)
	}
	// The same at the start: a forward trace from a user of an ordinary
	// carrier's IPv6 whose only China hops are that carrier's left China
	// on its ordinary backbone.
	if c.v6 && head > 0 && (seq[0].c.Class == ClassChinaNet || seq[0].c.Class == ClassCU4837) && !anyChina(seq[head:cut]) {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%s the source's network (%s) counted as the long haul: on IPv6 its backbone and its customers share one AS and prefix",
			ttlSpan(seq[0].ttl, seq[head-1].ttl), seq[0].c.Name))
		head = 0
	}
	c.head, c.cut = head, cut
	c.tail, c.long = seq[cut:], seq[head:cut]
	c.reachesChina = c.destKnown && c.dest.China
	if len(c.tail) > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("%s the destination's own network (%s): not counted",
			ttlSpan(c.tail[0].ttl, c.tail[len(c.tail)-1].ttl), c.tail[0].c.Name))
		for _, e := range c.tail {
			if e.c.China {
				c.reachesChina = true
			}
		}
	}
}

// anyChina reports whether a hop of seq is in a Chinese carrier's network.
func anyChina(seq []evHop) bool {
	for _, e := range seq {
		if e.c.China {
			return true
		}
	}
	return false
}

// n is the number of routers of class k on the long haul (evidenceHops).
func (c *classification) n(k string) int { return evidenceHops(c.by[k]) }

// depth is the number of TTLs the long haul spends in class k: ECMP
// responders of one TTL count once, but a router that answers at two TTLs
// counts at both. Evidence is counted by router (n), but how far the route
// runs inside a backbone is counted in TTLs: one 202.97 router answering at
// two TTLs is a ChinaNet backbone run of two TTLs, the hand-over to the 163
// backbone that makes a CN2 route GT (issue 35: a published GT return into
// Shanghai Telecom, 59.43 ×3 then 202.97.57.26 at TTL 7 and 8, had become
// cn2-gia when the run was counted by router).
func (c *classification) depth(k string) int {
	ttls := map[int]bool{}
	for _, e := range c.by[k] {
		ttls[e.ttl] = true
	}
	return len(ttls)
}

// backboneRun is the depth of the ChinaNet backbone (202.97) on the long
// haul: GT's distinguishing run needs two TTLs of it.
func (c *classification) backboneRun() int { return c.depth(ClassChinaNet) }

// use lists the hops of classes ks as evidence and returns the count phrase
// of exactly those hops, so rule text and list always agree.
func (c *classification) use(ks ...string) string {
	var hs []evHop
	var parts []string
	listed := map[string]bool{}
	for _, e := range c.ev.Hops {
		listed[e.Addr] = true
	}
	for _, k := range ks {
		if len(c.by[k]) == 0 {
			continue
		}
		hs = append(hs, c.by[k]...)
		// A router that answers at several TTLs is listed once, at the
		// first: the list holds the routers the count counts.
		for _, e := range c.by[k] {
			if listed[e.addr] {
				continue
			}
			listed[e.addr] = true
			c.ev.Hops = append(c.ev.Hops, e.evidence())
		}
		parts = append(parts, fmt.Sprintf("%d %s", c.n(k), classLabel(k)))
	}
	sort.SliceStable(c.ev.Hops, func(a, b int) bool { return c.ev.Hops[a].TTL < c.ev.Hops[b].TTL })
	return fmt.Sprintf("%d evidence hop(s) (%s)", evidenceHops(hs), strings.Join(parts, ", "))
}

// before tells whether the first hop of class a precedes the first of b.
func (c *classification) before(a, b string) bool {
	return len(c.by[a]) > 0 && len(c.by[b]) > 0 && c.by[a][0].ttl < c.by[b][0].ttl
}

// landing names the network the route is delivered by: the destination's
// own network when known, else the last long-haul hop of a class other than
// the deciding ones that comes after them.
func (c *classification) landing(deciding ...string) string {
	if c.destKnown {
		return c.dest.Name
	}
	if len(c.tail) > 0 {
		return c.tail[len(c.tail)-1].c.Name
	}
	isDeciding := func(e evHop) bool {
		for _, k := range deciding {
			if e.c.Class == k || (k == ClassChinaNet && e.c.Class == ClassChinaNet) {
				return true
			}
		}
		return false
	}
	// Hops after the deciding ones: Chinese networks on a return trace,
	// the international carrier or hoster on a forward trace.
	if i := len(c.long) - 1; i >= 0 && !isDeciding(c.long[i]) {
		return c.long[i].c.Name
	}
	return ""
}

// finish sets the landing network by the deciding classes and returns class.
func (c *classification) finish(class string, deciding ...string) (string, bool) {
	c.ev.Landing = c.landing(deciding...)
	return class, true
}

// cn2 is the CN2 rule: GIA, GT, or GIA handed over to another carrier.
func (c *classification) cn2() (string, bool) {
	ev := c.ev
	if c.n(ClassCN2) == 0 {
		return "", false
	}
	cn2, bb := c.n(ClassCN2), c.backboneRun()
	if bb >= 2 {
		return c.cn2WithBackbone(cn2)
	}
	ks := []string{ClassCN2}
	if bb == 1 {
		ks = append(ks, ClassChinaNet)
		ev.Notes = append(ev.Notes, "one ChinaNet backbone hop at one TTL tolerated as hand-off (GT needs a 202.97 run over ≥2 TTLs)")
	}
	if c.n(ClassCTGNet) > 0 {
		ks = append(ks, ClassCTGNet)
		ev.Notes = append(ev.Notes, "CTGNet (AS23764) with CN2: \"CTG GIA\"")
	}
	ev.Rule = "CN2 (59.43.0.0/16, AS4809) on the long haul without a ChinaNet backbone run: " + c.use(ks...)
	ev.Confidence = ConfidenceHigh
	if cn2 < 2 {
		ev.Confidence = ConfidenceLow
		ev.Notes = append(ev.Notes, "a single CN2 hop: GIA not confirmed")
	}
	for _, k := range []string{ClassCU4837, ClassCU9929, ClassCMI, ClassCMIN2, ClassCMNET} {
		if c.before(ClassCN2, k) {
			ev.Notes = append(ev.Notes, fmt.Sprintf("lands on %s after CN2 (a tri-net premium hand-off; the long haul is CN2)", c.by[k][0].c.Name))
		}
	}
	return c.finish(LineCN2GIA, ClassCN2, ClassChinaNet, ClassCTGNet)
}

// cn2WithBackbone is CN2 with a ChinaNet backbone run over ≥2 TTLs: the GIA
// tri-network hand-off when the run hands over to another carrier's
// backbone, else GT (into Telecom's own network).
func (c *classification) cn2WithBackbone(cn2 int) (string, bool) {
	ev := c.ev
	// The GIA tri-network hand-off: CN2 carries the long haul, a
	// ChinaNet backbone run hands over, and the route lands in another
	// carrier's backbone. GT leads into Telecom's own network instead.
	last := c.by[ClassChinaNet][len(c.by[ClassChinaNet])-1].ttl
	var other *evHop
	for i := range c.seq[c.head:] {
		e := &c.seq[c.head+i]
		if e.ttl > last && handoffCarrier(e.c.Class) {
			other = e
			break
		}
	}
	if other != nil && c.before(ClassCN2, ClassChinaNet) {
		ev.Rule = fmt.Sprintf("CN2 (59.43.0.0/16, AS4809) long haul handing over through the ChinaNet backbone into %s (the GIA tri-network hand-off): %s",
			other.c.Name, c.use(ClassCN2, ClassChinaNet))
		ev.Confidence = ConfidenceMedium
		if cn2 < 2 {
			ev.Confidence = ConfidenceLow
		}
		ev.Notes = append(ev.Notes, fmt.Sprintf("lands on %s (TTL %d) after a ChinaNet backbone hand-off: CN2 GIA sold for all three networks, not CN2 GT; confidence lowered, the hand-off is inferred",
			other.c.Name, other.ttl))
		class, _ := c.finish(LineCN2GIA, ClassCN2, ClassChinaNet)
		ev.Landing = other.c.Name
		if c.destKnown {
			ev.Landing = c.dest.Name
		}
		return class, true
	}
	ev.Rule = fmt.Sprintf("CN2 (AS4809) and a ChinaNet backbone (202.97.0.0/16) run over ≥2 TTLs on the long haul, in Telecom's own network: %s",
		c.use(ClassCN2, ClassChinaNet))
	if c.n(ClassChinaNet) < 2 {
		e := c.by[ClassChinaNet][0]
		ev.Notes = append(ev.Notes, fmt.Sprintf("the ChinaNet backbone run is one router, %s, answering at %d TTLs: the route still spends them in the 163 backbone after CN2, which is GT's hand-over",
			e.addr, c.backboneRun()))
	}
	ev.Confidence = ConfidenceHigh
	if cn2 < 2 {
		ev.Confidence = ConfidenceMedium
	}
	return c.finish(LineCN2GT, ClassCN2, ClassChinaNet)
}

// cu9929 is the Unicom 9929 rule (also behind CUG AS10099).
func (c *classification) cu9929() (string, bool) {
	ev := c.ev
	if c.n(ClassCU9929) == 0 {
		return "", false
	}
	ev.Rule = "Unicom 9929 (AS9929) on the long haul: " + c.use(ClassCU9929, ClassCUG)
	ev.Confidence = confidenceByCount(c.n(ClassCU9929))
	if c.before(ClassCU4837, ClassCU9929) {
		ev.Notes = append(ev.Notes, "Unicom 4837 before 9929: mixed route")
		ev.Confidence = ConfidenceMedium
	}
	if c.n(ClassCUG) > 0 {
		ev.Notes = append(ev.Notes, "entered via Unicom CUG (AS10099)")
	}
	return c.finish(LineCU9929, ClassCU9929, ClassCUG)
}

// cmin2 is the CMIN2 rule; two hops in the IPv4 ranges alone are medium.
func (c *classification) cmin2() (string, bool) {
	ev := c.ev
	if c.n(ClassCMIN2) == 0 {
		return "", false
	}
	ev.Rule = "CMIN2 (AS58807) on the long haul: " + c.use(ClassCMIN2)
	cnt := c.n(ClassCMIN2)
	listOnly := true // every CMIN2 hop rests on the IPv4 rows of the table
	for _, e := range c.by[ClassCMIN2] {
		if e.c.Source != "table" || !strings.Contains(e.addr, ".") {
			listOnly = false
		}
	}
	switch {
	case cnt >= 3:
		ev.Confidence = ConfidenceHigh
	case cnt == 2 && !listOnly:
		ev.Confidence = ConfidenceHigh
	case cnt == 2:
		ev.Confidence = ConfidenceMedium
		ev.Notes = append(ev.Notes, "two CMIN2 hops in the IPv4 ranges only: medium confidence (three or more, or ASN/IPv6 evidence, give high)")
	default:
		ev.Confidence = ConfidenceMedium
		ev.Notes = append(ev.Notes, "a single CMIN2 hop")
	}
	if c.before(ClassCMI, ClassCMIN2) {
		ev.Notes = append(ev.Notes, "CMI before CMIN2: mixed route")
	}
	return c.finish(LineCMIN2, ClassCMIN2)
}

// ordinaryBackbone is the rule of the ordinary backbones: the first one on
// the long haul (ChinaNet → chinanet-163, Unicom 4837 → cu-4837, CMI →
// cmi) decides; CMNET is domestic delivery and never does.
func (c *classification) ordinaryBackbone() (string, bool) {
	ev := c.ev
	for _, k := range c.order {
		var class string
		switch k {
		case ClassChinaNet, "chinanet-edge":
			class = LineChinaNet163
		case ClassCU4837:
			class = LineCU4837
		case ClassCMI:
			class = LineCMI
		default:
			continue
		}
		ks := []string{k}
		if class == LineChinaNet163 {
			ks = []string{ClassChinaNet, "chinanet-edge"}
		}
		var hs []evHop
		for _, kk := range ks {
			hs = append(hs, c.by[kk]...)
		}
		if c.n(ClassCUG) > 0 && class == LineCU4837 {
			ks = append(ks, ClassCUG)
			ev.Notes = append(ev.Notes, "entered via Unicom CUG (AS10099)")
		}
		cnt := evidenceHops(hs)
		var bbHops []evHop
		for _, e := range hs {
			if e.c.Backbone {
				bbHops = append(bbHops, e)
			}
		}
		bb := evidenceHops(bbHops)
		ev.Rule = fmt.Sprintf("first China backbone on the long haul is %s (%s), %d of its hop(s) in its backbone ranges: %s",
			hs[0].c.Name, classASN(class), bb, c.use(ks...))
		switch {
		case bb >= 2:
			ev.Confidence = ConfidenceHigh
		case cnt >= 2:
			ev.Confidence = ConfidenceMedium
		default:
			ev.Confidence = ConfidenceLow
			ev.Notes = append(ev.Notes, "a single hop: could be the destination's own network")
		}
		c.unseenLongHaul(hs)
		deciding := []string{ClassChinaNet}
		switch class {
		case LineCU4837:
			deciding = []string{ClassCU4837, ClassCUG}
		case LineCMI:
			deciding = []string{ClassCMI}
		}
		c.finish(class, deciding...)
		if ev.Landing == "" && class != LineCMI {
			// An ordinary line is delivered by the carrier's own network.
			ev.Landing = hs[len(hs)-1].c.Name
		}
		return class, true
	}
	return "", false
}

// unseenLongHaul lowers an ordinary backbone's confidence to low when the
// route's first China hops are CMNET and the deciding backbone (hs) answers
// only after them, with nothing outside China after it: the route entered
// China through China Mobile (CMNET has no foreign peering of its own; it is
// reached through CMI) and the deciding carrier shows only at the hand-off
// into the destination's network. The long haul — the international leg and
// the run into China — is not seen (issue 35: such a route with a silent
// international leg was called cu-4837 at high confidence).
func (c *classification) unseenLongHaul(hs []evHop) {
	cm := c.by[ClassCMNET]
	if len(cm) == 0 || len(hs) == 0 || cm[0].ttl >= hs[0].ttl {
		return
	}
	// The first China hop of the long haul must be CMNET's, and the
	// deciding backbone must not lead out of China (a forward trace
	// leaving through it).
	for _, e := range c.long {
		if e.ttl >= cm[0].ttl {
			break
		}
		if e.c.China {
			return
		}
	}
	last := hs[len(hs)-1].ttl
	for _, e := range c.seq {
		if e.ttl > last && !e.c.China && e.c.Class != "" {
			return
		}
	}
	lastCM := cm[0].ttl
	for _, e := range cm {
		if e.ttl < hs[0].ttl {
			lastCM = e.ttl
		}
	}
	intl := "the international leg"
	for _, r := range c.runs {
		if r.to < cm[0].ttl && r.from > 1 {
			intl = fmt.Sprintf("the international leg (%s silent)", ttlWords(r.from, r.to))
		}
	}
	from := c.ev.Confidence
	c.ev.Confidence = ConfidenceLow
	note := fmt.Sprintf("the first China hops are CMNET (%s), before %s (TTL %d): the route entered China through China Mobile and %s shows only at the hand-off; %s and the long haul are unseen",
		ttlWords(cm[0].ttl, lastCM), hs[0].c.Name, hs[0].ttl, hs[0].c.Name, intl)
	if from != ConfidenceLow {
		note += fmt.Sprintf("; confidence lowered from %s to low", from)
	}
	c.ev.Notes = append(c.ev.Notes, note)
}

// ttlWords writes a TTL range: "TTL 5", "TTL 5–6".
func ttlWords(a, b int) string {
	if a == b {
		return fmt.Sprintf("TTL %d", a)
	}
	return fmt.Sprintf("TTL %d–%d", a, b)
}

// noLineClass is the rule of China networks seen without a long-haul
// backbone that names a class: CTGNet alone, CUG alone, or only CMNET or
// the destination in China: unknown, with what was seen.
func (c *classification) noLineClass() (string, bool) {
	ev := c.ev
	switch {
	case c.n(ClassCTGNet) > 0:
		ev.Rule = "CTGNet (AS23764) without CN2 or a ChinaNet backbone hop, no matching line class: " + c.use(ClassCTGNet)
		ev.Confidence = ConfidenceLow
		return c.finish(LineUnknown, ClassCTGNet)
	case c.n(ClassCUG) > 0:
		ev.Rule = "Unicom CUG (AS10099) without a visible 9929 or 4837 segment (hidden domestic segment?): " + c.use(ClassCUG)
		ev.Confidence = ConfidenceLow
		return c.finish(LineUnknown, ClassCUG)
	case c.n(ClassCMNET) > 0 || c.reachesChina:
		if c.n(ClassCMNET) > 0 {
			ev.Rule = "reaches a Chinese network but no long-haul China backbone hop is visible: " + c.use(ClassCMNET)
		} else {
			ev.Rule = "reaches a Chinese network but no long-haul China backbone hop is visible: 0 evidence hop(s)"
		}
		ev.Confidence = ConfidenceLow
		return c.finish(LineUnknown)
	}
	return "", false
}

// transit is the rule of a route that reaches no China network, with at
// least two hops of known non-China carriers.
func (c *classification) transit() (string, bool) {
	if c.n(ClassTransit) < 2 {
		return "", false
	}
	c.ev.Rule = "no China backbone hop, known non-China carriers only: " + c.use(ClassTransit)
	c.ev.Confidence = ConfidenceMedium
	if c.n(ClassTransit) >= 3 {
		c.ev.Confidence = ConfidenceHigh
	}
	return c.finish(LineTransit, ClassTransit)
}

// notEnough is the last word: unknown, for want of evidence.
func (c *classification) notEnough() string {
	ev := c.ev
	ev.Rule = fmt.Sprintf("not enough evidence (%d long-haul hop(s) of known carriers): ", evidenceHops(c.long))
	if c.n(ClassTransit) > 0 {
		ev.Rule += c.use(ClassTransit)
	} else {
		ev.Rule += "0 evidence hop(s)"
	}
	ev.Confidence = ConfidenceLow
	class, _ := c.finish(LineUnknown, ClassTransit)
	return class
}

// handoffCarrier is a class a CN2 route can be handed to inside China by
// the ChinaNet backbone: another carrier's network.
func handoffCarrier(class string) bool {
	switch class {
	case ClassCU4837, ClassCU9929, ClassCUG, ClassCMNET, ClassCMI, ClassCMIN2:
		return true
	}
	return false
}

// classLabel names a carrier class in count phrases.
func classLabel(k string) string {
	switch k {
	case ClassCN2:
		return "CN2"
	case ClassChinaNet:
		return "ChinaNet backbone"
	case "chinanet-edge":
		return "ChinaNet edge"
	case ClassCU9929:
		return "Unicom 9929"
	case ClassCUG:
		return "Unicom CUG"
	case ClassCU4837:
		return "Unicom 4837"
	case ClassCMIN2:
		return "CMIN2"
	case ClassCMI:
		return "CMI"
	case ClassCMNET:
		return "CMNET"
	case ClassCTGNet:
		return "CTGNet"
	case ClassTransit:
		return "transit"
	}
	return k
}

// ttlSpan words a TTL range as the subject of a note: "TTL 8 is", "TTL 7–8 are".
func ttlSpan(a, b int) string {
	if a == b {
		return fmt.Sprintf("TTL %d is", a)
	}
	return fmt.Sprintf("TTL %d–%d are", a, b)
}

func confidenceByCount(n int) string {
	if n >= 2 {
		return ConfidenceHigh
	}
	return ConfidenceMedium
}

func classASN(class string) string {
	switch class {
	case LineChinaNet163:
		return "AS4134"
	case LineCU4837:
		return "AS4837"
	case LineCMI:
		return "AS58453"
	}
	return ""
}

// evidenceHops counts the routers among hs, not their TTLs: a TTL counts
// once (ECMP responders of one TTL are one hop deep) and only when it brings
// an address no earlier TTL of hs answered from, so a router that answers at
// two TTLs (an MPLS tunnel end, a router that does not decrement the TTL) is
// one hop of evidence (issue 21).
func evidenceHops(hs []evHop) int {
	byTTL := map[int][]string{}
	var ttls []int
	for _, h := range hs {
		if _, ok := byTTL[h.ttl]; !ok {
			ttls = append(ttls, h.ttl)
		}
		byTTL[h.ttl] = append(byTTL[h.ttl], h.addr)
	}
	sort.Ints(ttls)
	seen := map[string]bool{}
	n := 0
	for _, ttl := range ttls {
		fresh := false
		for _, a := range byTTL[ttl] {
			if !seen[a] {
				fresh = true
			}
		}
		for _, a := range byTTL[ttl] {
			seen[a] = true
		}
		if fresh {
			n++
		}
	}
	return n
}

// repeatedRouterNotes names the carrier addresses of seq that answer at
// more than one TTL: each is one router, counted once.
func repeatedRouterNotes(seq []evHop) []string {
	ttls := map[string][]int{}
	var order []string
	for _, e := range seq {
		if len(ttls[e.addr]) == 0 {
			order = append(order, e.addr)
		}
		ttls[e.addr] = append(ttls[e.addr], e.ttl)
	}
	var notes []string
	for _, a := range order {
		ts := ttls[a]
		if len(ts) < 2 {
			continue
		}
		words := make([]string, len(ts))
		for i, t := range ts {
			words[i] = strconv.Itoa(t)
		}
		notes = append(notes, fmt.Sprintf("%s answers at TTL %s: one router, counted as one evidence hop", a, strings.Join(words, ", ")))
	}
	return notes
}

// destinationCarrier is the carrier of the traced target, when the trace
// reached it (or its last entry is flagged "destination") and it maps.
func destinationCarrier(t *Trace, hops []Hop, db ASNDB) (Carrier, bool) {
	if !reachedDestination(t, hops) {
		return Carrier{}, false
	}
	addr := t.Addr
	if addr == "" && len(hops) > 0 && len(hops[len(hops)-1].Responders) > 0 {
		addr = hops[len(hops)-1].Responders[0].Addr
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return Carrier{}, false
	}
	return LookupCarrier(ip, db)
}

// reachedDestination tells whether the trace got to its target: it says so,
// or its last entry is flagged "destination".
func reachedDestination(t *Trace, hops []Hop) bool {
	if t.Reached {
		return true
	}
	if len(hops) == 0 {
		return false
	}
	for _, f := range hops[len(hops)-1].Flags {
		if f == "destination" {
			return true
		}
	}
	return false
}

// silentRunNotes describes runs of silent hops between responding hops
// (MPLS/TTL hiding or ICMP filtering): they carry no evidence, but a run
// between two hops of one carrier is taken as inside that carrier.
func silentRunNotes(hops []Hop, lastResponding int, seq []evHop) []string {
	var notes []string
	carrierAt := func(ttl int) (Carrier, bool) {
		for _, e := range seq {
			if e.ttl == ttl {
				return e.c, true
			}
		}
		return Carrier{}, false
	}
	for i := 0; i <= lastResponding; i++ {
		if responded(hops[i]) {
			continue
		}
		j := i
		for j+1 <= lastResponding && !responded(hops[j+1]) {
			j++
		}
		note := fmt.Sprintf("TTL %d–%d silent (MPLS/TTL hiding or ICMP filtering): no evidence", hops[i].TTL, hops[j].TTL)
		if i == j {
			note = fmt.Sprintf("TTL %d silent: no evidence", hops[i].TTL)
		}
		// A TTL a recording has no entry for (no probe, no responder) was
		// not measured: it is not recorded, not silent.
		unrecorded := true
		for k := i; k <= j; k++ {
			unrecorded = unrecorded && hops[k].Sent == 0 && len(hops[k].Responders) == 0
		}
		if unrecorded {
			note = fmt.Sprintf("TTL %d–%d not recorded: no evidence", hops[i].TTL, hops[j].TTL)
			if i == j {
				note = fmt.Sprintf("TTL %d not recorded: no evidence", hops[i].TTL)
			}
		}
		if i > 0 && j+1 < len(hops) {
			a, okA := carrierAt(hops[i-1].TTL)
			b, okB := carrierAt(hops[j+1].TTL)
			if okA && okB && carrierKey(a) == carrierKey(b) {
				note += fmt.Sprintf("; between two %s hops, so taken as inside %s", a.Name, a.Name)
			}
		}
		notes = append(notes, note)
		i = j
	}
	return notes
}

// CombineDirections joins the classes of a forward trace (users → server)
// and a return trace (server → users); either may be nil. A trace without a
// LineClass is classified with the bundled table only. direction is "both"
// when both directions gave a class, "forward" or "return" when only one did,
// "none" when neither; when the two disagree the weaker class (LineClassRank)
// is reported and the notes say so; a missing or inconclusive return path is
// always noted, since that is what users download over.
func CombineDirections(forward, ret *Trace) (class, direction string, notes []string) {
	cls := func(t *Trace) string {
		if t == nil || len(t.Hops) == 0 {
			return ""
		}
		if t.LineClass != "" {
			return t.LineClass
		}
		c, _ := Classify(t, nil)
		return c
	}
	f, r := cls(forward), cls(ret)
	known := func(c string) bool { return c != "" && c != LineUnknown }
	// notValidated is the note for direction dir whose class c is not
	// known: no trace (c == "") or an inconclusive one.
	notValidated := func(dir, c string) string {
		if c == "" {
			return dir + " path not validated: no " + dir + " trace"
		}
		return dir + " path not validated: " + dir + " trace inconclusive (unknown)"
	}
	switch {
	case known(f) && known(r):
		if f == r {
			return f, "both", nil
		}
		weaker := f
		if LineClassRank(r) < LineClassRank(f) {
			weaker = r
		}
		return weaker, "both", []string{fmt.Sprintf("asymmetric route: forward %s, return %s; reporting the weaker, %s", f, r, weaker)}
	case known(f):
		return f, "forward", []string{notValidated("return", r)}
	case known(r):
		return r, "return", []string{notValidated("forward", f)}
	}
	notes = append(notes, "neither direction gave a line class")
	if r == "" {
		notes = append(notes, notValidated("return", r))
	}
	return LineUnknown, "none", notes
}

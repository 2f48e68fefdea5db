package probe

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"time"
)

// MultipathConfig configures a multipath discovery (Multipath). The
// embedded TraceConfig gives the protocol, port, TTLs, timeout, rate,
// sockets and clock; its Flows and Cycles are ignored (see PathCycles).
type MultipathConfig struct {
	TraceConfig
	// Confidence is 95 (default) or 99: the stopping rule's (MDAStop).
	Confidence int
	// MaxProbes bounds the discovery (3000 by default, as scamper's
	// tracelb); the completion of paths counts, the per-path cycles not.
	MaxProbes int
	// PathCycles > 0 then probes each path's own flow that many cycles
	// (every TraceConfig.Interval), mtr style: MultipathRun.Cycles.
	PathCycles int
}

// Why a multipath discovery stopped (MultipathRun.Stopped).
const (
	StoppedRule        = "rule"
	StoppedMaxProbes   = "max-probes"
	StoppedInterrupted = "interrupted"
)

// mdaGapLimit is how many TTLs in a row may stay silent on every flow
// before the discovery gives up on the target (scamper's tracelb: 3).
const mdaGapLimit = 3

// mdaAttempts is how often a probe is sent before its flow counts as
// silent at that TTL (scamper's tracelb: 2): one lost reply must not make
// a node's flows look like a silent next hop.
const mdaAttempts = 2

// MultipathRun is one multipath discovery as measured. Flow numbers in it
// are indexes into Flows; route.BuildMultipath turns it into the
// linecheck.trace/v1 document with its paths and links.
type MultipathRun struct {
	Target    string
	Addr      netip.Addr
	Protocol  Protocol
	Port      int
	Mode      TraceMode
	FlowField FlowField
	FirstTTL  int
	// Confidence and MaxProbes as run; ProbesUsed counts every probe the
	// discovery sent (retries and per-packet checks included).
	Confidence, MaxProbes, ProbesUsed int
	// PerPacketProbes is the part of ProbesUsed the per-packet check sent
	// (one flow re-sent at each node with several next hops, retries
	// included): the rest mapped the flows.
	PerPacketProbes int
	// Stopped is StoppedRule, StoppedMaxProbes or StoppedInterrupted.
	Stopped string
	Reached bool
	Start   time.Time
	Flows   []FlowIdent
	// Results are every discovery probe (Flow = index into Flows).
	Results   []ProbeResult
	Nodes     []MultipathNode
	Links     []MultipathLink
	PerPacket []PerPacketLB
	Paths     []MultipathPath
	Counts    TraceCounts
	// Cycles is the per-path statistics run (PathCycles > 0): its flow i
	// is path i's first flow.
	Cycles *TraceRun
}

// FlowField is the header field multipath flows differ in.
type FlowField string

// Flow fields.
const (
	FlowUDPDstPort FlowField = "udp-dport"
	FlowUDPSrcPort FlowField = "udp-sport"
	FlowTCPSrcPort FlowField = "tcp-sport"
	FlowICMP       FlowField = "icmp"
)

// MultipathNode is one interface at one TTL with the flows that saw it
// (Addr "" is the flows that got no reply there).
type MultipathNode struct {
	TTL   int
	Addr  string
	Flows []int
	// PerPacket: the node before it balances per packet, so which flows
	// reach it says nothing.
	PerPacket bool
	Dest      bool
}

// MultipathLink is From at TTL to To at TTL+1, seen by Flows.
type MultipathLink struct {
	TTL      int
	From, To string
	Flows    []int
}

// PerPacketLB is one flow that answered from several interfaces at one
// TTL: the router before balances per packet, not per flow.
type PerPacketLB struct {
	TTL   int
	Flow  int
	Addrs []string
}

// MultipathPath is one distinct sequence of interfaces from the first TTL
// with the flows known to take it.
type MultipathPath struct {
	Flows   []int
	Hops    []MultipathHop
	Reached bool
}

// MultipathHop is one TTL of a path. Addr "" is a TTL that stayed silent.
// PerPacket hops list every interface the balancer before spreads packets
// over (Addrs); Addr is the first of them.
type MultipathHop struct {
	TTL       int
	Addr      string
	PerPacket bool
	Addrs     []string
}

// Multipath runs a multipath discovery to target (an address or a name)
// over the socket driver (OpenTraceDriver's choice, with the flows
// multipath needs).
func Multipath(ctx context.Context, target string, cfg MultipathConfig) (*MultipathRun, error) {
	tc, err := cfg.TraceConfig.withDefaults()
	if err != nil {
		return nil, err
	}
	addr, err := ResolveTraceTarget(ctx, target, tc.Network)
	if err != nil {
		return nil, err
	}
	tc.Flows = multipathFlows(tc)
	drv, err := openTraceDriver(tc, addr)
	if err != nil {
		return nil, err
	}
	defer drv.Close()
	return MultipathWithDriver(ctx, drv, target, addr, cfg)
}

// multipathFlows is how many flows a run may name: the ports must not run
// past 65535.
func multipathFlows(tc TraceConfig) int {
	if flowFieldOf(tc) == FlowUDPDstPort {
		return min(MaxMultipathFlows, 65536-tc.Port)
	}
	// ICMP checksums, or source ports: the raw driver's base is below
	// 50,000.
	return MaxMultipathFlows
}

// mdaRun is one discovery in progress.
type mdaRun struct {
	drv    Driver
	cfg    MultipathConfig
	tc     TraceConfig
	clk    Clock
	dst    string
	flows  int // flows named so far: 0..flows-1
	limit  int // flows that may be named
	ans    map[int]map[int][]string
	destAt map[int]int // flow → lowest TTL the target answered it at
	used   int
	ppUsed int // of used, sent by checkPerPacket
	key    uint16
	sent   map[uint16]*mdaProbe
	order  int

	results   []ProbeResult
	counts    TraceCounts
	stopped   string
	ppFrom    map[nodeKey]bool // nodes whose next hops vary per packet
	exhausted map[nodeKey]bool // nodes no new flow can be found for
	lastTTL   int
	pace      pacer
	sendErr   error
}

type nodeKey struct {
	ttl  int
	addr string
}

// mdaSend is one probe to send: flow at ttl.
type mdaSend struct{ ttl, flow int }

type mdaProbe struct {
	mdaSend
	at       time.Time
	answered bool
	done     bool // its wait ended: a reply now is late
}

// MultipathWithDriver runs the discovery over drv (see docs/multipath.md):
// hop by hop from FirstTTL, every node of the TTL before gets flows known
// to reach it (node control) probed one TTL further until the flows that
// did rule out one more next hop than were seen (MDAStop); new flows are
// named when a node has too few, and probed at the node's own TTL first
// unless it is the only node there. A node with several next hops then
// sends one flow n_2 times: answers from more than one interface mean
// per-packet balancing (PerPacket). Probes that get no reply are sent
// twice before the flow counts as silent. The walk ends at the target, at
// MaxTTL, after three TTLs silent on every flow, or at MaxProbes. Each
// link then gets one flow known at every TTL (unknown TTLs are inferred
// where a node has one predecessor or successor, else probed), and the
// distinct sequences of those flows are the paths.
func MultipathWithDriver(ctx context.Context, drv Driver, target string, addr netip.Addr, cfg MultipathConfig) (*MultipathRun, error) {
	tc, err := cfg.TraceConfig.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Confidence == 0 {
		cfg.Confidence = DefaultConfidence
	}
	if err := checkConfidence(cfg.Confidence); err != nil {
		return nil, err
	}
	if cfg.MaxProbes == 0 {
		cfg.MaxProbes = DefaultMaxProbes
	}
	if cfg.MaxProbes < 1 || cfg.MaxProbes > MaxMultipathProbes {
		return nil, fmt.Errorf("max probes %d: use 1..%d", cfg.MaxProbes, MaxMultipathProbes)
	}
	if cfg.PathCycles < 0 || cfg.PathCycles > MaxCycles {
		return nil, fmt.Errorf("cycles %d: use 0..%d", cfg.PathCycles, MaxCycles)
	}
	m := &mdaRun{drv: drv, cfg: cfg, tc: tc, clk: tc.Clock, dst: addr.String(), limit: multipathFlows(tc),
		ans: map[int]map[int][]string{}, destAt: map[int]int{}, sent: map[uint16]*mdaProbe{},
		ppFrom: map[nodeKey]bool{}, exhausted: map[nodeKey]bool{}}
	start := m.clk.Now()
	m.pace = pacer{clk: m.clk, rate: tc.Rate, burst: 64, tokens: 64, filled: start}
	err = m.discover(ctx)
	if err == nil {
		err = m.complete(ctx)
	}
	run := m.result(target, addr, start)
	switch {
	case err != nil && ctx.Err() != nil:
		run.Stopped = StoppedInterrupted
		return run, ctx.Err()
	case err != nil:
		return run, err
	}
	if cfg.PathCycles > 0 && len(run.Paths) > 0 {
		run.Cycles, err = pathCycles(ctx, drv, target, addr, tc, cfg.PathCycles, run.Paths)
		if err != nil && ctx.Err() != nil {
			run.Stopped = StoppedInterrupted
			return run, ctx.Err()
		}
		if err != nil {
			return run, err
		}
	}
	if m.sendErr != nil && m.used == 0 {
		return run, m.sendErr
	}
	return run, nil
}

// discover walks the TTLs (see MultipathWithDriver).
func (m *mdaRun) discover(ctx context.Context) error {
	silent := 0
	for h := m.tc.FirstTTL; h <= m.tc.MaxTTL; h++ {
		m.lastTTL = h
		for {
			batch := m.plan(h)
			if len(batch) == 0 {
				break
			}
			if err := m.run(ctx, batch); err != nil {
				return err
			}
			if m.stopped != "" {
				return nil
			}
		}
		if err := m.checkPerPacket(ctx, h); err != nil {
			return err
		}
		if m.stopped != "" {
			return nil
		}
		nodes := m.through(h)
		live := 0
		for a := range nodes {
			if a != m.dst && a != "" {
				live++
			}
		}
		if _, ok := nodes[""]; ok && live == 0 {
			silent++
		} else {
			silent = 0
		}
		if live == 0 && (silent == 0 || silent >= mdaGapLimit) {
			break
		}
	}
	m.stopped = StoppedRule
	return nil
}

// answer is flow's first reply at ttl ("" when it got none); ok is false
// when the flow was never probed there.
func (m *mdaRun) answer(ttl, flow int) (string, bool) {
	a := m.ans[ttl][flow]
	for _, x := range a {
		if x != "" {
			return x, true
		}
	}
	return "", len(a) > 0
}

// through maps each node at ttl to the flows known to reach it, answered
// or inferred (sequences), in flow order. Below FirstTTL every flow named
// so far reaches the source ("").
func (m *mdaRun) through(ttl int) map[string][]int {
	out := map[string][]int{}
	if ttl < m.tc.FirstTTL {
		out[""] = []int{}
		for f := 0; f < m.flows; f++ {
			out[""] = append(out[""], f)
		}
		return out
	}
	_, seqs := m.walk()
	for f, s := range seqs {
		if i := ttl - m.tc.FirstTTL; i < len(s.known) && s.known[i] {
			out[s.addr[i]] = append(out[s.addr[i]], f)
		}
	}
	return out
}

// plan is the next round of probes for TTL h: flows that answered at h
// from a node whose predecessor is not known, probed at h−1 (placeFlows);
// for every node at h−1, its unprobed flows at h up to n_K (nodeProbes);
// and new flows where a node has too few, probed at h (their node at h−1
// inferred from the interface that answers, as tracelb does) unless paths
// are seen to meet at h, where they go to h−1 first, or a flow of a node
// short of flows was silent at h, where they go to every TTL from the
// second to h−1 first (newFlows).
func (m *mdaRun) plan(h int) []mdaSend {
	preds := m.through(h - 1)
	total := 0
	reached := map[int]bool{}
	for _, fl := range preds {
		total += len(fl)
		for _, f := range fl {
			reached[f] = true
		}
	}
	// How many nodes at h−1 each interface at h answered behind: two or
	// more is where paths meet.
	meets := map[string]int{}
	for _, fl := range preds {
		seen := map[string]bool{}
		for _, f := range fl {
			if a, ok := m.answer(h, f); ok && a != "" && !seen[a] {
				seen[a] = true
				meets[a]++
			}
		}
	}
	batch := m.placeFlows(h, reached)
	fresh := 0 // new flows to name: the most any node asks for
	var short []nodeKey
	for _, v := range sortedKeys(preds) {
		nk := nodeKey{h - 1, v}
		if h-1 >= m.tc.FirstTTL && v == m.dst || m.exhausted[nk] {
			continue
		}
		sends, want := m.nodeProbes(h, preds[v], total, len(preds), meets)
		batch = append(batch, sends...)
		if want > 0 {
			fresh = max(fresh, want)
			short = append(short, nk)
		}
	}
	if fresh == 0 || len(batch) > 0 {
		// Flows already named go first: their answers may be enough.
		return batch
	}
	return m.newFlows(h, fresh, short, meets)
}

// placeFlows are the probes at h−1 that say which node a flow probed at h
// passed: a flow whose node at h−1 neither answered nor follows (a new
// interface, a meeting point, silence), and the first flow of an
// interface at h with no observed predecessor, whose node at h−1 was only
// inferred (a TTL taken to have one interface may have more). reached are
// the flows known to pass a node at h−1.
func (m *mdaRun) placeFlows(h int, reached map[int]bool) []mdaSend {
	if h <= m.tc.FirstTTL {
		return nil
	}
	// Interfaces at h that a flow answered at h−1 too: their predecessors
	// are observed, not inferred.
	anchored := map[string]bool{}
	for f := 0; f < m.flows; f++ {
		if a, ok := m.answer(h, f); ok && a != "" {
			if b, ok := m.answer(h-1, f); ok && b != "" {
				anchored[a] = true
			}
		}
	}
	var batch []mdaSend
	verify := map[string]bool{}
	for f := 0; f < m.flows; f++ {
		a, ok := m.answer(h, f)
		if !ok {
			continue
		}
		if _, probed := m.answer(h-1, f); probed {
			continue
		}
		// (The first hop is the source's gateway by assumption, as tracelb
		// takes it: it is not checked.)
		if !reached[f] || h-1 > m.tc.FirstTTL && a != "" && !anchored[a] && !verify[a] {
			verify[a] = true
			batch = append(batch, mdaSend{h - 1, f})
		}
	}
	return batch
}

// nodeProbes applies the stopping rule to one node at h−1 passed by flows
// fl (of total flows over nodes nodes at h−1): its unprobed flows to
// probe at h, and how many new flows it asks for this round (0: none).
func (m *mdaRun) nodeProbes(h int, fl []int, total, nodes int, meets map[string]int) (batch []mdaSend, fresh int) {
	var probed, unprobed []int
	succ := map[string]bool{}
	for _, f := range fl {
		if a, ok := m.answer(h, f); ok {
			probed = append(probed, f)
			// A next hop that never answers ("") is a next hop too.
			succ[a] = true
		} else {
			unprobed = append(unprobed, f)
		}
	}
	need := MDAStop(max(len(succ), 1)+1, m.cfg.Confidence)
	switch {
	case h == m.tc.FirstTTL:
		// The first hop is the source's own gateway: one flow finds it (as
		// tracelb's first address), the rule starts behind it.
		need = 1
	case len(probed) > 0 && len(succ) == 1 && succ[m.dst]:
		// The target answered straight after the node: it is the node's
		// only next hop (the target's own link), as tracelb assumes.
		need = 1
	case len(probed) > 0 && len(succ) == 1 && meets[onlyKey(succ)] > 1:
		// The node leads where another branch leads too: the paths meet,
		// and from the meeting point on they are probed as one (as tracelb
		// merges path segments). A second next hop of the node itself is
		// not ruled out (docs/multipath.md, limits).
		need = 1
	}
	missing := need - len(probed)
	if missing <= 0 {
		return nil, 0
	}
	if len(probed) == 0 {
		// One flow first: if the target answers it, no more are needed.
		missing = 1
	}
	n := min(missing, len(unprobed))
	for _, f := range unprobed[:n] {
		batch = append(batch, mdaSend{h, f})
	}
	missing -= n
	if missing <= 0 {
		return batch, 0
	}
	// New flows pass the node in the share it has of the flows so far,
	// estimated with one more flow counted on every node (a node seen on 2
	// of 11 is not taken to pass only 2 in 11 of the new ones). Half the
	// expected number is named per round, so that chance does not
	// overshoot much; one new flow serves every node at h−1, so the node
	// that asks most sets the round's number (plan).
	want := missing
	if total > len(fl) {
		want = min((missing*(total+nodes)+len(fl))/(len(fl)+1), 4*MDAStop(2, m.cfg.Confidence))
	}
	return batch, max(missing, (want+1)/2)
}

// newFlows names fresh new flows, probed at h, or at h−1 where paths are
// seen to meet at h (the interface that answers at h would not say which
// node a flow passed); nodes short of flows are marked exhausted when no
// more can be named.
func (m *mdaRun) newFlows(h, fresh int, short []nodeKey, meets map[string]int) []mdaSend {
	if m.flows >= m.limit {
		for _, nk := range short {
			m.exhausted[nk] = true
		}
		return nil
	}
	ttl := h
	for _, n := range meets {
		if n > 1 {
			ttl = h - 1
		}
	}
	// A node short of flows because one of its flows stayed silent at h
	// while others answered asks for more flows on the strength of what may be two lost probes
	// (issue 35: a 5 %-loss branch). Such flows are probed at every TTL
	// from the second to h−1 first, so that the nodes each passes are
	// seen, not inferred from the interface that answers at h: behind a
	// TTL the rule took to have one node, flows inferred that way were
	// placed on it while they passed a sibling the rule had missed.
	lo := ttl
	if ttl == h && m.silentBehind(h, short) {
		lo, ttl = m.tc.FirstTTL+1, h-1
	}
	var batch []mdaSend
	for range fresh {
		if m.flows >= m.limit {
			break
		}
		for t := lo; t <= ttl; t++ {
			batch = append(batch, mdaSend{t, m.flows})
		}
		m.flows++
	}
	return batch
}

// silentBehind tells whether one of nodes (at h−1, an interface that
// answered) has flows that answered at h and a flow that did not: the mix
// that a lost probe makes (a node whose flows are all silent at h is taken
// as it is, a silent next hop).
func (m *mdaRun) silentBehind(h int, nodes []nodeKey) bool {
	through := m.through(h - 1)
	for _, nk := range nodes {
		if nk.addr == "" {
			continue
		}
		silent, answered := false, false
		for _, f := range through[nk.addr] {
			if a, ok := m.answer(h, f); ok {
				silent = silent || a == ""
				answered = answered || a != ""
			}
		}
		if silent && answered {
			return true
		}
	}
	return false
}

// checkPerPacket sends, for every node at h−1 with several next hops, one
// of its flows until that flow has n_2 answers at h: a per-flow balancer
// answers it from one interface every time.
func (m *mdaRun) checkPerPacket(ctx context.Context, h int) error {
	var batch []mdaSend
	preds := m.through(h - 1)
	for _, v := range sortedKeys(preds) {
		if h-1 >= m.tc.FirstTTL && v == m.dst {
			continue
		}
		succ := map[string]bool{}
		pick := -1
		for _, f := range preds[v] {
			if a, _ := m.answer(h, f); a != "" {
				succ[a] = true
				if pick < 0 {
					pick = f
				}
			}
		}
		if len(succ) < 2 {
			continue
		}
		for range MDAStop(2, m.cfg.Confidence) - len(m.ans[h][pick]) {
			batch = append(batch, mdaSend{h, pick})
		}
	}
	if len(batch) > 0 {
		before := m.used
		err := m.run(ctx, batch)
		m.ppUsed += m.used - before
		if err != nil {
			return err
		}
	}
	for _, v := range sortedKeys(preds) {
		for _, f := range preds[v] {
			if len(distinct(m.ans[h][f])) > 1 {
				m.ppFrom[nodeKey{h - 1, v}] = true
			}
		}
	}
	return nil
}

// run sends batch (paced) and reads the replies until each probe is
// answered or its wait ended; probes without a reply go again, up to
// mdaAttempts, before the flow is recorded silent at that TTL.
func (m *mdaRun) run(ctx context.Context, batch []mdaSend) error {
	for attempt := 1; len(batch) > 0; attempt++ {
		var out []*mdaProbe
		for _, s := range batch {
			if m.used >= m.cfg.MaxProbes {
				m.stopped = StoppedMaxProbes
				break
			}
			if err := m.pace.wait(ctx); err != nil {
				return err
			}
			m.key++
			if m.key == 0 || m.key == 0xffff {
				m.key = 1
			}
			at, err := m.drv.Send(TraceProbe{TTL: s.ttl, Flow: s.flow, Key: m.key})
			switch {
			case errors.Is(err, ErrPastDestination):
				continue
			case errors.Is(err, ErrPrivilege):
				return err
			case err != nil:
				if m.sendErr == nil {
					m.sendErr = fmt.Errorf("sending a probe with TTL %d: %w", s.ttl, err)
				}
				continue
			}
			m.used++
			p := &mdaProbe{mdaSend: s, at: at}
			m.sent[m.key] = p
			out = append(out, p)
		}
		if err := m.await(ctx, out); err != nil {
			return err
		}
		for _, p := range out {
			p.done = true
		}
		batch = batch[:0]
		for _, p := range out {
			if p.answered {
				continue
			}
			m.record(p, TraceReply{})
			if attempt < mdaAttempts && m.stopped == "" {
				batch = append(batch, p.mdaSend)
			} else {
				m.addAnswer(p.ttl, p.flow, "")
			}
		}
		if m.stopped != "" {
			return nil
		}
	}
	return nil
}

// await reads replies until every probe of out is answered or has waited
// its timeout (and the grace for reading).
func (m *mdaRun) await(ctx context.Context, out []*mdaProbe) error {
	left := len(out)
	if left == 0 {
		return nil
	}
	until := out[len(out)-1].at.Add(m.tc.Timeout + traceGrace)
	for left > 0 {
		if !m.clk.Now().Before(until) {
			return nil
		}
		rctx, cancel := deadlineOn(ctx, m.clk, until)
		r, err := m.drv.Receive(rctx)
		cancel()
		switch {
		case err == nil:
			p := m.sent[r.Key]
			switch {
			case p == nil:
				m.counts.Foreign++
			case p.answered:
				m.counts.Duplicates++
			case p.done:
				m.counts.Late++
			case r.At.Sub(p.at) > m.tc.Timeout:
				p.answered = true // recorded as lost below
				m.counts.Late++
				m.record(p, TraceReply{})
				m.results[len(m.results)-1].Late = true
				m.addAnswer(p.ttl, p.flow, "")
				left--
			default:
				p.answered = true
				m.record(p, r)
				m.addAnswer(p.ttl, p.flow, r.From.String())
				if r.Dest {
					if d, ok := m.destAt[p.flow]; !ok || p.ttl < d {
						m.destAt[p.flow] = p.ttl
					}
				}
				left--
			}
		case errors.Is(err, ErrForeign):
			m.counts.Foreign++
		case ctx.Err() != nil:
			return ctx.Err()
		case rctx.Err() != nil:
			// This wait ended; the loop checks the time.
		default:
			return fmt.Errorf("receiving: %w", err)
		}
	}
	return nil
}

// record keeps one probe's outcome as a ProbeResult (r zero: no reply).
func (m *mdaRun) record(p *mdaProbe, r TraceReply) {
	res := ProbeResult{TTL: p.ttl, Flow: p.flow, Order: m.order}
	m.order++
	if r.From.IsValid() {
		res.Addr = r.From.String()
		res.RTTms = float64(r.At.Sub(p.at).Nanoseconds()) / 1e6
		res.Dest = r.Dest
		res.MPLS = r.MPLS
	}
	m.results = append(m.results, res)
}

func (m *mdaRun) addAnswer(ttl, flow int, addr string) {
	if m.ans[ttl] == nil {
		m.ans[ttl] = map[int][]string{}
	}
	m.ans[ttl][flow] = append(m.ans[ttl][flow], addr)
}

// deadlineOn is ctx ending at w on clk.
func deadlineOn(ctx context.Context, clk Clock, w time.Time) (context.Context, context.CancelFunc) {
	if _, real := clk.(realClock); real {
		return context.WithDeadline(ctx, w)
	}
	rctx, cancel := context.WithCancel(ctx)
	fire := clk.After(w.Sub(clk.Now()))
	go func() {
		select {
		case <-fire:
			cancel()
		case <-rctx.Done():
		}
	}()
	return rctx, cancel
}

// pacer is a token bucket: burst probes at once, then rate per second.
type pacer struct {
	clk         Clock
	rate, burst float64
	tokens      float64
	filled      time.Time
}

func (p *pacer) wait(ctx context.Context) error {
	now := p.clk.Now()
	p.tokens = min(p.burst, p.tokens+now.Sub(p.filled).Seconds()*p.rate)
	p.filled = now
	if p.tokens < 1 {
		w := time.Duration((1 - p.tokens) / p.rate * float64(time.Second))
		if err := sleepUntil(ctx, p.clk, now.Add(w)); err != nil {
			return err
		}
		p.tokens, p.filled = 1, now.Add(w)
	}
	p.tokens--
	return nil
}

// onlyKey is the one key of a one-entry set.
func onlyKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}

// distinct is the replies among a, each once, in order.
func distinct(a []string) []string {
	var out []string
	for _, x := range a {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

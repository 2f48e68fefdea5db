package route

import (
	"fmt"
	"slices"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// TraceSchema is the schema name of a trace document.
const TraceSchema = "linecheck.trace/v1"

// Trace is the linecheck.trace/v1 document: one entry per TTL from 1 up to the
// destination's TTL (the destination is the last entry). It is what `trace`
// prints, what `trace --replay` reads back (as do the readers of `mtr --json`),
// and what compare, tui and serve consume.
type Trace struct {
	Schema   string         `json:"schema"`
	Target   string         `json:"target"`
	Addr     string         `json:"addr"`
	Protocol probe.Protocol `json:"protocol"` // icmp, udp, tcp
	Port     int            `json:"port,omitempty"`
	// Mode is the sockets a live trace ran on: "raw" (raw sockets, root or
	// CAP_NET_RAW), "datagram" (unprivileged ICMP sockets) or "recverr"
	// (unprivileged UDP/TCP sockets and the error queue). Neither of the
	// unprivileged modes sees MPLS labels: there, no "mpls" means not seen,
	// not none. Absent from recordings that do not say.
	Mode    probe.TraceMode `json:"mode,omitempty"`
	Reached bool            `json:"reached"`
	// Source tells where the trace came from: "live", "replay", "mtr-json".
	Source string `json:"source,omitempty"`
	// Start is the RFC 3339 time the first probe was sent, when known.
	Start string `json:"start,omitempty"`
	// Vantage is where a trace read from a measurement network's file
	// (RIPE Atlas, Globalping, NextTrace) was run from; absent for live
	// traces and for linecheck's and mtr's files, which do not say.
	Vantage *Vantage `json:"vantage,omitempty"`
	// LineClass is the route's carrier line class (cn2-gia, cn2-gt, chinanet-163,
	// cu-9929, cu-4837, cmin2, cmi, transit, unknown); empty until classified.
	LineClass string `json:"line_class,omitempty"`
	// LineEvidence explains LineClass: rule, confidence and the hops that decided it.
	LineEvidence *LineEvidence `json:"line_evidence,omitempty"`
	// Foreign counts replies to another process or run, or to no probe of
	// this one: never counted as received. Always written; 0 in replays of
	// files that do not carry it (mtr --json, older linecheck files).
	Foreign int `json:"foreign"`
	// MTU is the path MTU search of trace --mtu, when it ran.
	MTU *PathMTU `json:"mtu,omitempty"`
	// NAT is what trace --nat found: where the NAT ID changes; absent
	// unless asked for.
	NAT *NAT `json:"nat,omitempty"`
	// ASPath is the chain of networks the route crosses (route.ASPath), set
	// by Annotate; absent with --no-asn.
	ASPath []ASHop `json:"as_path,omitempty"`
	// ASNData names the IP-to-AS dataset the hops were named from (snapshot,
	// attribution); absent when none was used.
	ASNData *ASNData `json:"asn_data,omitempty"`
	// HiddenHops is N when the hops at TTL 1..N are masked (--hide-hops N,
	// HopMask): their addresses read "hidden" and carry no names or AS
	// numbers. Absent when nothing is masked.
	HiddenHops int `json:"hidden_hops,omitempty"`
	// Partial is true when Ctrl-C cut the live run: the document covers
	// the cycles (flows, MTU steps) finished so far. The name is ping's
	// marker of the same (report.PingRow.Partial); absent otherwise.
	Partial bool `json:"partial,omitempty"`
	// Multipath, Links and Paths are what trace --multipath found
	// (BuildMultipath); absent from a plain trace.
	Multipath *Multipath `json:"multipath,omitempty"`
	Links     []Link     `json:"links,omitzero"`
	Paths     []Path     `json:"paths,omitzero"`
	Hops      []Hop      `json:"hops"`
}

// Hop is one TTL of a trace.
type Hop struct {
	TTL  int `json:"ttl"`
	Sent int `json:"sent"`
	// Loss is 1 − received/sent over probes whose wait has ended (0..1).
	Loss float64 `json:"loss"`
	// Flags: "icmp-rate-limited" when the loss does not carry on downstream;
	// "destination" on the target's own entry.
	Flags []string `json:"flags"`
	// Late counts this TTL's probes whose reply came after the timeout: they
	// count as lost, not received.
	Late int `json:"late"`
	// Duplicates counts further replies to probes already answered (not received).
	Duplicates int `json:"duplicates"`
	// MTU is the largest packet (IP header included) that reached this TTL,
	// with trace --mtu; absent when not measured or no size was answered.
	MTU int `json:"mtu_bytes,omitempty"`
	// NATID is the NAT ID of this TTL's replies with trace --nat (the
	// quoted UDP checksum minus the one sent, probe.TraceNATID; the value
	// most replies gave): 0 when the quoted header came back as sent.
	// Absent when not measured or nothing answered.
	NATID      *int        `json:"nat_id,omitempty"`
	Responders []Responder `json:"responders"`
}

// Responder is one address that answered at a TTL (several with ECMP).
type Responder struct {
	Addr   string         `json:"addr"`
	Recv   int            `json:"recv"`
	RTT    stats.RTTStats `json:"rtt_ms"`
	Jitter stats.Jitter   `json:"jitter_ms"`
	ASN    int            `json:"asn,omitempty"`
	// ASName is the network's registered name (the dataset's or the
	// --asn-db file's; the carrier table's name for its ranges).
	ASName string `json:"as_name,omitempty"`
	// Country is the ISO 3166 code the registries give the address's range.
	Country string `json:"country,omitempty"`
	// ASSource is where ASN and ASName came from (SourcePrefixTable …), or
	// the special range's kind for addresses never looked up.
	ASSource string       `json:"as_source,omitempty"`
	Carrier  string       `json:"carrier,omitempty"`
	MPLS     []probe.MPLS `json:"mpls,omitempty"`
	// Flows lists the flow numbers (0-based) that saw this responder, with --flows.
	Flows []int `json:"flows,omitempty"`
	// Samples are the RTTs in ms of received replies in send order; kept so that
	// recordings can be re-analysed, omitted from JSON unless asked for.
	Samples []float64 `json:"samples_ms,omitempty"`
}

// LineEvidence is why a route got its line class.
type LineEvidence struct {
	Rule       string        `json:"rule"`
	Confidence string        `json:"confidence"` // high, medium, low
	Hops       []EvidenceHop `json:"hops"`
	// Landing is the network the route is delivered by at its end (the
	// destination's own network, or the carrier a CN2 route is handed to),
	// when the trace shows it.
	Landing string `json:"landing,omitempty"`
	// NotRuledOut lists the classes a run of silent TTLs could be hiding:
	// the run lies where their distinguishing hops would answer, and the
	// confidence was lowered for it.
	NotRuledOut []string `json:"not_ruled_out,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// EvidenceHop is one hop that counted as evidence.
type EvidenceHop struct {
	TTL     int    `json:"ttl"`
	Addr    string `json:"addr"`
	ASN     int    `json:"asn,omitempty"`
	Carrier string `json:"carrier"`
	// ASSource is the source that named the hop (Responder.ASSource).
	ASSource string `json:"as_source,omitempty"`
}

// PathMTU is what trace --mtu found (probe.PathMTU): the largest packet
// that reaches the target and the TTLs where the size that passes drops.
type PathMTU struct {
	// PathMTU is the largest packet (bytes) that reached the target;
	// absent when the search did not reach it.
	PathMTU int `json:"path_mtu_bytes,omitempty"`
	// Start is the interface MTU the search began with.
	Start int `json:"start_bytes"`
	// Cached is the path MTU the kernel had learned for the target before
	// the run (absent when none below Start); the search ignores it.
	Cached int       `json:"cached_bytes,omitempty"`
	Drops  []MTUDrop `json:"drops"`
	// Flows is one search per flow with trace --mtu --flows N (N > 1): each
	// flow's source port, path MTU and drops (an ECMP branch may carry a
	// smaller MTU than its sibling); absent for one flow. The fields above
	// are flow 0's.
	Flows []MTUFlow `json:"flows,omitempty"`
}

// MTUFlow is the path MTU search of one flow.
type MTUFlow struct {
	Flow       int `json:"flow"`
	SourcePort int `json:"source_port"`
	// PathMTU is absent when the flow did not reach the target.
	PathMTU int       `json:"path_mtu_bytes,omitempty"`
	Drops   []MTUDrop `json:"drops"`
}

// MTUDrop is one TTL from which on packets of the previous size no longer
// pass.
type MTUDrop struct {
	TTL int `json:"ttl"`
	MTU int `json:"mtu_bytes"` // the largest size that reaches this TTL
	// ReportedBy is the router that named the next-hop MTU (fragmentation
	// needed, packet too big); absent when the size was found by probing.
	ReportedBy string `json:"reported_by,omitempty"`
	// Probed is true when no router named the MTU: a larger probe got no
	// answer at all, and sizes were tried until one did.
	Probed bool `json:"probed,omitempty"`
}

// NAT is trace --nat's finding: the TTLs where the NAT ID differs from the
// TTL before (the first from 0, no rewrite), each the first hop behind a
// router that rewrote the probe's address or port without state.
type NAT struct {
	// Measured is false when the trace's sockets cannot see it (recverr:
	// the kernel picks the IP ID and the error queue returns no quoted
	// header); Changes is then empty and no hop has a nat_id.
	Measured bool        `json:"measured"`
	Changes  []NATChange `json:"changes"`
	// Note says what the figures mean, or why there are none.
	Note string `json:"note"`
}

// NATChange is one TTL where the NAT ID changed.
type NATChange struct {
	TTL   int `json:"ttl"`
	NATID int `json:"nat_id"`
	// Addr is the hop that answered with it (in the first of its flows).
	Addr string `json:"addr,omitempty"`
	// Flows are the flows (0-based) whose NAT ID changed here, with --flows;
	// absent for one flow.
	Flows []int `json:"flows,omitempty"`
}

// NAT notes.
const (
	NATMeasuredNote = "NAT ID = UDP checksum quoted in the ICMP error minus the one sent (the IP ID carries it); " +
		"it changes at the first hop behind a stateless address or port rewrite. A conntrack NAT (Linux masquerade) " +
		"restores the quoted header and is invisible to this method: no change is not proof of no NAT"
	NATUnmeasuredNote = "NAT not measured: %s sockets (no privileges) cannot set the IP ID nor see the quoted header; " +
		"needs raw sockets (root or CAP_NET_RAW)"
)

// addNAT records the NAT IDs of run's replies in tr: each hop's most
// common one (ties: the smaller), and, per flow, the TTLs where that flow's
// NAT ID changes from its TTL before (flag "nat" on them). With --flows,
// flows over different ECMP branches can change at different TTLs, or only
// some of them: each change lists its flows.
func addNAT(tr *Trace, run *probe.TraceRun) {
	measured := run.Mode == probe.ModeRaw
	n := &NAT{Measured: measured, Changes: []NATChange{}, Note: NATMeasuredNote}
	tr.NAT = n
	if !measured {
		n.Note = fmt.Sprintf(NATUnmeasuredNote, run.Mode)
		return
	}
	type key struct{ flow, ttl int }
	counts := map[int]map[int]int{}
	perFlow := map[key]map[int]int{}
	addr := map[key]string{}
	flows := 0
	for _, r := range run.Results {
		if r.Addr == "" || !r.HasNATID {
			continue
		}
		if counts[r.TTL] == nil {
			counts[r.TTL] = map[int]int{}
		}
		counts[r.TTL][int(r.NATID)]++
		k := key{r.Flow, r.TTL}
		if perFlow[k] == nil {
			perFlow[k] = map[int]int{}
			addr[k] = r.Addr
		}
		perFlow[k][int(r.NATID)]++
		flows = max(flows, r.Flow+1)
	}
	mostCommon := func(c map[int]int) int {
		best, most := 0, 0
		for id, k := range c {
			if k > most || k == most && id < best {
				best, most = id, k
			}
		}
		return best
	}
	for i := range tr.Hops {
		if c := counts[tr.Hops[i].TTL]; len(c) > 0 {
			id := mostCommon(c)
			tr.Hops[i].NATID = &id
		}
	}
	type change struct{ ttl, id int }
	byChange := map[change]*NATChange{}
	for f := 0; f < flows; f++ {
		prev := 0
		for i := range tr.Hops {
			h := &tr.Hops[i]
			k := key{f, h.TTL}
			c := perFlow[k]
			if len(c) == 0 {
				continue
			}
			id := mostCommon(c)
			if id == prev {
				continue
			}
			prev = id
			ch := byChange[change{h.TTL, id}]
			if ch == nil {
				ch = &NATChange{TTL: h.TTL, NATID: id, Addr: addr[k]}
				byChange[change{h.TTL, id}] = ch
			}
			if run.Flows > 1 {
				ch.Flows = append(ch.Flows, f)
			}
		}
	}
	for i := range tr.Hops {
		h := &tr.Hops[i]
		for _, ch := range byChange {
			if ch.TTL == h.TTL && !slices.Contains(h.Flags, FlagNAT) {
				h.Flags = append(h.Flags, FlagNAT)
			}
		}
	}
	for _, ch := range byChange {
		n.Changes = append(n.Changes, *ch)
	}
	slices.SortFunc(n.Changes, func(a, b NATChange) int {
		if a.TTL != b.TTL {
			return a.TTL - b.TTL
		}
		return a.NATID - b.NATID
	})
}

// AddMTU records a path MTU search in tr: the document's MTU, and each
// hop's largest packet by TTL.
func AddMTU(tr *Trace, run *probe.MTURun) {
	m := &PathMTU{PathMTU: run.PathMTU, Start: run.Start, Cached: run.Cached, Drops: mtuDrops(run)}
	for _, h := range run.Hops {
		for i := range tr.Hops {
			if tr.Hops[i].TTL == h.TTL {
				tr.Hops[i].MTU = h.MTU
			}
		}
	}
	tr.MTU = m
}

// AddMTUFlows records one search per flow (runs[f] is flow f): flow 0 as
// AddMTU does, and with more than one flow each flow's port, path MTU and
// drops in tr.MTU.Flows.
func AddMTUFlows(tr *Trace, runs []*probe.MTURun) {
	if len(runs) == 0 {
		return
	}
	AddMTU(tr, runs[0])
	if len(runs) < 2 {
		return
	}
	for f, r := range runs {
		tr.MTU.Flows = append(tr.MTU.Flows, MTUFlow{Flow: f, SourcePort: r.SourcePort, PathMTU: r.PathMTU, Drops: mtuDrops(r)})
	}
}

// mtuDrops lists the TTLs where the size that passes drops below the one
// before (from the interface's MTU).
func mtuDrops(run *probe.MTURun) []MTUDrop {
	drops := []MTUDrop{}
	prev := run.Start
	for _, h := range run.Hops {
		if h.MTU > 0 && h.MTU < prev {
			d := MTUDrop{TTL: h.TTL, MTU: h.MTU, Probed: h.Probed}
			if h.ReportedBy.IsValid() {
				d.ReportedBy = h.ReportedBy.String()
			}
			drops = append(drops, d)
			prev = h.MTU
		}
	}
	return drops
}

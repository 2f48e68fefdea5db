package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// TraceView is what a trace report shows beside the trace itself.
type TraceView struct {
	// Names maps responder addresses to reverse DNS names (tables on a
	// terminal only; nil elsewhere).
	Names map[string]string
	// Direction is which way the trace ran relative to the candidate
	// server: "forward" (from here toward the target: every live trace) or
	// "return" (recorded on the server toward the user).
	Direction string
	// ShowIPs (mtr -b) shows a named hop as "name (address)"; without it a
	// reverse DNS name stands alone.
	ShowIPs bool
}

// Directions a line class can be measured in.
const (
	Forward = "forward"
	Return  = "return"
)

// DirectionText explains a direction in a few words.
func DirectionText(dir, target string) string {
	if dir == Return {
		return "return (recorded from the server toward " + target + ")"
	}
	return "forward (toward " + target + ")"
}

// NotRecorded is what a TTL missing from a recording shows: it was never
// probed, so it is not "silent" and has no loss.
const NotRecorded = "not recorded"

// recorded tells whether a hop holds a measurement: a TTL a recording
// left out (an mtr file that skips a TTL) has no probes and no responders.
func recorded(h route.Hop) bool { return h.Sent > 0 || len(h.Responders) > 0 }

// TraceTables returns the tables of a trace report for format: for csv the
// tidy "hops" table (one row per TTL and responder) and the one-row "route"
// table (and with --multipath the "paths" table); for table and markdown
// the hop table with the line class, its direction, confidence and rule
// under it (with --multipath the diamonds and the paths, multipathTables).
func TraceTables(tr *route.Trace, format Format, v TraceView) []Table {
	if v.Direction == "" {
		v.Direction = Forward
	}
	if format.Machine() {
		ts := []Table{traceHopsCSV(tr, v), traceRouteCSV(tr, v)}
		if tr.Multipath != nil {
			ts = append(ts, tracePathsCSV(tr))
		}
		return ts
	}
	if tr.Multipath != nil {
		return multipathTables(tr, v)
	}
	t, rare := traceHopTable(tr)
	notRecorded := traceHopRows(&t, tr, v)
	t.Notes = traceNotes(tr, v, notRecorded, rare)
	return []Table{t}
}

// traceTitle is the line above a trace's table: target, protocol, whether
// it was reached, the sockets and the AS path.
func traceTitle(tr *route.Trace) string {
	state := "not reached"
	if tr.Reached {
		state = "reached"
	}
	title := fmt.Sprintf("trace to %s (%s), %s%s, %s", tr.Target, tr.Addr, tr.Protocol, PortText(tr.Port), state)
	if tr.Mode != "" {
		title += ", " + string(tr.Mode) + " sockets"
	}
	if tr.Source != "" && tr.Source != "live" {
		title += ", from " + tr.Source
	}
	if v := tr.Vantage; v != nil {
		title += "\nvantage: " + v.Label()
		if v.Error != "" {
			title += ": failed: " + v.Error
		}
	}
	if p := route.ASPathText(tr.ASPath); p != "" {
		title += "\nas path: " + p
	}
	return title
}

// traceHopTable is the hop table's title and columns, without rows: the
// optional columns (cc, mpls, flows, mtu, nat id, late, dup) only when a
// hop has them. rare tells whether late or dup columns are in.
func traceHopTable(tr *route.Trace) (t Table, rare bool) {
	t = Table{Name: "hops", Title: traceTitle(tr),
		Headers: []string{"ttl", "host", "asn", "network", "cc", "sent", "recv", "loss", "min ms", "avg ms", "p50 ms", "p95 ms",
			"max ms", "stdev ms", "jitter ms", "mean_abs ms", "mpls", "flows", "mtu", "nat id", "flags"},
		Align:   "rlrllrrrrrrrrrrrllrrl",
		Movable: []string{"mean_abs ms", "stdev ms", "mpls", "p50 ms", "flows", "max ms", "jitter ms"},
	}
	// Late and duplicate columns only when some hop has any: they are rare,
	// and the table is wide already.
	var anyLate, anyDup, anyMPLS, anyFlows, anyCC bool
	for _, h := range tr.Hops {
		anyLate = anyLate || h.Late > 0
		anyDup = anyDup || h.Duplicates > 0
		for _, r := range h.Responders {
			anyMPLS = anyMPLS || len(r.MPLS) > 0
			anyFlows = anyFlows || len(r.Flows) > 0
			anyCC = anyCC || r.Country != ""
		}
	}
	var hs []string
	al := ""
	for i, h := range t.Headers {
		if (h == "mpls" && !anyMPLS) || (h == "flows" && !anyFlows) || (h == "cc" && !anyCC) || (h == "mtu" && tr.MTU == nil) || (h == "nat id" && tr.NAT == nil) {
			continue
		}
		hs, al = append(hs, h), al+t.Align[i:i+1]
		if h == "loss" {
			if anyLate {
				hs, al = append(hs, "late"), al+"r"
			}
			if anyDup {
				hs, al = append(hs, "dup"), al+"r"
			}
		}
	}
	t.Headers, t.Align = hs, al
	return t, anyLate || anyDup
}

// cellSetter writes a row's cell by header, ignoring columns the table
// left out.
func cellSetter(t *Table) (newRow func() []string, set func(row []string, h, v string)) {
	col := map[string]int{}
	for i, h := range t.Headers {
		col[h] = i
	}
	newRow = func() []string { return make([]string, len(t.Headers)) }
	set = func(row []string, h, v string) {
		if i, ok := col[h]; ok {
			row[i] = v
		}
	}
	return newRow, set
}

// traceHopRows fills t with one row per TTL and responder and returns how
// many TTLs the recording has no entry for.
func traceHopRows(t *Table, tr *route.Trace, v TraceView) (notRecorded int) {
	newRow, set := cellSetter(t)
	dashes := func(row []string, cols ...string) {
		for _, c := range cols {
			set(row, c, "-")
		}
	}
	figures := []string{"min ms", "avg ms", "p50 ms", "p95 ms", "max ms", "stdev ms", "jitter ms", "mean_abs ms"}
	for _, h := range tr.Hops {
		flags := strings.Join(h.Flags, ",")
		if !recorded(h) {
			notRecorded++
			row := newRow()
			set(row, "ttl", strconv.Itoa(h.TTL))
			set(row, "host", NotRecorded)
			dashes(row, append([]string{"sent", "recv", "loss"}, figures...)...)
			set(row, "flags", flags)
			t.Rows = append(t.Rows, row)
			continue
		}
		hopCells := func(row []string) {
			set(row, "ttl", strconv.Itoa(h.TTL))
			set(row, "sent", strconv.Itoa(h.Sent))
			set(row, "loss", lossText(h.Sent, h.Loss))
			set(row, "late", strconv.Itoa(h.Late))
			set(row, "dup", strconv.Itoa(h.Duplicates))
			set(row, "mtu", "-")
			if h.MTU > 0 {
				set(row, "mtu", strconv.Itoa(h.MTU))
			}
			set(row, "nat id", "-")
			if h.NATID != nil {
				set(row, "nat id", strconv.Itoa(*h.NATID))
			}
			set(row, "flags", flags)
		}
		if len(h.Responders) == 0 {
			row := newRow()
			hopCells(row)
			set(row, "host", "*")
			set(row, "recv", "0")
			dashes(row, figures...)
			t.Rows = append(t.Rows, row)
			continue
		}
		for i, r := range h.Responders {
			row := newRow()
			if i == 0 {
				hopCells(row)
			}
			responderCells(row, set, tr, r, v)
			t.Rows = append(t.Rows, row)
		}
	}
	return notRecorded
}

// responderCells writes one responder's host, names and figures.
func responderCells(row []string, set func([]string, string, string), tr *route.Trace, r route.Responder, v TraceView) {
	set(row, "host", hostText(r.Addr, v))
	set(row, "asn", asText(r.ASN))
	set(row, "network", route.ShortName(r.Carrier))
	set(row, "cc", r.Country)
	set(row, "recv", strconv.Itoa(r.Recv))
	// A figure the source did not carry (mtr --json: percentiles,
	// jitter without mtr's jitter columns) is "-", not a measured 0.
	k := route.KnownFigures(tr, r)
	ms := func(known bool, x float64) string {
		if !known || r.Recv == 0 {
			return "-"
		}
		return MS(x)
	}
	set(row, "min ms", ms(true, r.RTT.Min))
	set(row, "avg ms", ms(true, r.RTT.Avg))
	set(row, "p50 ms", ms(k.Percentiles, r.RTT.P50))
	set(row, "p95 ms", ms(k.Percentiles, r.RTT.P95))
	set(row, "max ms", ms(true, r.RTT.Max))
	set(row, "stdev ms", ms(true, r.RTT.Stdev))
	set(row, "jitter ms", ms(k.RFC3550 && r.Recv > 1, r.Jitter.RFC3550))
	set(row, "mean_abs ms", ms(k.MeanAbs && r.Recv > 1, r.Jitter.MeanAbs))
	set(row, "mpls", mplsText(r.MPLS))
	set(row, "flows", flowsText(r.Flows))
}

// hostText is how a responder is named: its reverse DNS name when the view
// has one (with the address too under ShowIPs), else the address.
func hostText(addr string, v TraceView) string {
	if n := v.Names[addr]; n != "" {
		if v.ShowIPs {
			return n + " (" + addr + ")"
		}
		return n
	}
	return addr
}

// traceNotes are the lines under the hop table: hidden hops, line class,
// AS sources, what the columns mean, and what the run could not see.
func traceNotes(tr *route.Trace, v TraceView, notRecorded int, rare bool) []string {
	var notes []string
	if n := route.HiddenHopsNote(tr.HiddenHops); n != "" {
		notes = append(notes, n)
	}
	notes = append(notes, LineClassLines(tr, v.Direction)...)
	notes = append(notes, ASNotes(tr)...)
	notes = append(notes, "loss per hop over probes whose wait ended; icmp-rate-limited: the hop's loss does not carry on downstream; "+
		"* = no reply at that TTL; jitter = RFC 3550 interarrival jitter")
	if notRecorded > 0 {
		notes = append(notes, fmt.Sprintf("%d TTL(s) not recorded: the recording has no entry for them (not probed, so no loss)", notRecorded))
	}
	if rare {
		notes = append(notes, "late = replies after --timeout (counted as lost), dup = further replies to answered probes; neither is received")
	}
	if tr.Foreign > 0 {
		notes = append(notes, fmt.Sprintf("%d foreign replies (another process or run) were not counted", tr.Foreign))
	}
	if tr.MTU != nil {
		notes = append(notes, MTULines(tr.MTU)...)
	}
	if tr.NAT != nil {
		notes = append(notes, NATLines(tr.NAT)...)
	}
	if !tr.Mode.ShowsMPLS() {
		notes = append(notes, string(tr.Mode)+" sockets (no privileges) do not see ICMP extensions: MPLS labels unknown, not absent")
	}
	if n := route.SourceNote(tr); n != "" {
		notes = append(notes, n)
	}
	return notes
}

// LineClassLines says which line class the route rides, in which direction
// it was measured, with which confidence and by which rule.
func LineClassLines(tr *route.Trace, dir string) []string {
	if tr.LineClass == "" {
		return nil
	}
	s := "line class " + tr.LineClass + ", measured " + DirectionText(dir, tr.Target)
	if e := tr.LineEvidence; e != nil {
		s += ", confidence " + e.Confidence
		out := []string{s, "  rule: " + e.Rule}
		if e.Landing != "" {
			out = append(out, "  lands on: "+e.Landing)
		}
		for _, n := range e.Notes {
			out = append(out, "  note: "+n)
		}
		return out
	}
	return []string{s}
}

func traceHopsCSV(tr *route.Trace, v TraceView) Table {
	t := Table{Name: "hops", Headers: []string{"target", "ttl", "recorded", "addr", "asn", "carrier", "as_name", "country", "as_source", "hop_sent", "hop_loss",
		"hop_late", "hop_duplicates", "recv", "rtt_min_ms", "rtt_avg_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms", "rtt_max_ms",
		"rtt_stdev_ms", "jitter_rfc3550_ms", "jitter_mean_abs_ms", "pdv_p95_ms", "mpls_labels", "flows", "flags", "line_class", "direction"}}
	for _, h := range tr.Hops {
		base := []string{tr.Target, strconv.Itoa(h.TTL), strconv.FormatBool(recorded(h))}
		hop := []string{strconv.Itoa(h.Sent), "", strconv.Itoa(h.Late), strconv.Itoa(h.Duplicates)}
		if h.Sent > 0 {
			hop[1] = Float(h.Loss)
		}
		tail := []string{strings.Join(h.Flags, " "), tr.LineClass, v.Direction}
		if len(h.Responders) == 0 {
			row := append(append(append([]string{}, base...), "", "", "", "", "", ""), hop...)
			row = append(row, "0", "", "", "", "", "", "", "", "", "", "", "", "")
			t.Rows = append(t.Rows, append(row, tail...))
			continue
		}
		for _, r := range h.Responders {
			row := append(append([]string{}, base...), r.Addr, "", r.Carrier, r.ASName, r.Country, r.ASSource)
			if r.ASN != 0 {
				row[len(row)-5] = strconv.Itoa(r.ASN)
			}
			row = append(row, hop...)
			row = append(row, strconv.Itoa(r.Recv))
			k := route.KnownFigures(tr, r)
			f := func(known bool, x float64) string {
				if !known || r.Recv == 0 {
					return ""
				}
				return Float(x)
			}
			row = append(row, f(true, r.RTT.Min), f(true, r.RTT.Avg), f(k.Percentiles, r.RTT.P50), f(k.Percentiles, r.RTT.P95),
				f(k.Percentiles, r.RTT.P99), f(true, r.RTT.Max), f(true, r.RTT.Stdev),
				f(k.RFC3550 && r.Recv > 1, r.Jitter.RFC3550), f(k.MeanAbs && r.Recv > 1, r.Jitter.MeanAbs),
				f(k.PDVP95 && r.Recv > 1, r.Jitter.PDVP95))
			var labels []string
			for _, m := range r.MPLS {
				labels = append(labels, strconv.Itoa(m.Label))
			}
			row = append(row, strings.Join(labels, " "), flowsText(r.Flows))
			t.Rows = append(t.Rows, append(row, tail...))
		}
	}
	return t
}

func traceRouteCSV(tr *route.Trace, v TraceView) Table {
	t := Table{Name: "route", Headers: []string{"target", "addr", "protocol", "port", "reached", "source", "hops",
		"line_class", "direction", "confidence", "rule", "foreign", "as_path", "asn_snapshot"}}
	port := ""
	if tr.Port != 0 {
		port = strconv.Itoa(tr.Port)
	}
	conf, rule := "", ""
	if e := tr.LineEvidence; e != nil {
		conf, rule = e.Confidence, e.Rule
	}
	t.Rows = [][]string{{tr.Target, tr.Addr, string(tr.Protocol), port, strconv.FormatBool(tr.Reached), tr.Source,
		strconv.Itoa(len(tr.Hops)), tr.LineClass, v.Direction, conf, rule, strconv.Itoa(tr.Foreign),
		route.ASPathText(tr.ASPath), snapshotOf(tr.ASNData)}}
	// Only with --hide-hops: the table keeps its columns otherwise.
	if tr.HiddenHops > 0 {
		t.Headers = append(t.Headers, "hidden_hops")
		t.Rows[0] = append(t.Rows[0], strconv.Itoa(tr.HiddenHops))
	}
	return t
}

func snapshotOf(d *route.ASNData) string {
	if d == nil {
		return ""
	}
	return d.Snapshot
}

// ASNotes explains the asn, network and cc columns: which sources named the
// hops, which were never looked up, and the dataset's snapshot with the
// credit its licence asks for. Nothing when the trace carries no AS data
// (--no-asn).
func ASNotes(tr *route.Trace) []string {
	bySource := map[string]int{}
	var special route.TTLKinds
	any := false
	for _, h := range tr.Hops {
		for _, r := range h.Responders {
			if r.ASSource == "" {
				continue
			}
			any = true
			switch r.ASSource {
			case route.SourcePrefixTable, route.SourceCarrierTable, route.SourceASNDB, route.SourceDataset, route.SourceRecording, route.SourceNone:
				bySource[r.ASSource]++
			default:
				special.Add(h.TTL, r.ASSource)
			}
		}
	}
	if !any {
		return nil
	}
	var parts []string
	for _, s := range []string{route.SourcePrefixTable, route.SourceCarrierTable, route.SourceASNDB, route.SourceDataset, route.SourceRecording} {
		if n := bySource[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d from %s", n, s))
		}
	}
	if n := bySource[route.SourceNone]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d public but in no source", n))
	}
	s := "asn/network: hops named by, in order, --prefix-table, the carrier table, --asn-db, the dataset"
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	out := []string{s}
	if len(special) > 0 {
		out = append(out, "  not looked up (private, CGNAT or reserved ranges): "+special.String())
	}
	if d := tr.ASNData; d != nil {
		out = append(out, fmt.Sprintf("  dataset %s (%s): %s", d.Snapshot, d.Origin, d.Attribution))
	}
	return out
}

func asText(asn int) string {
	if asn == 0 {
		return ""
	}
	return "AS" + strconv.Itoa(asn)
}

func mplsText(m []probe.MPLS) string {
	var s []string
	for _, e := range m {
		s = append(s, "L="+strconv.Itoa(e.Label))
	}
	return strings.Join(s, "/")
}

func flowsText(f []int) string {
	var s []string
	for _, v := range f {
		s = append(s, strconv.Itoa(v))
	}
	return strings.Join(s, " ")
}

// NATLines says what trace --nat found: the TTLs where the NAT ID
// changes, or that it never did, and what the figure means.
func NATLines(n *route.NAT) []string {
	if !n.Measured {
		return []string{n.Note}
	}
	var out []string
	if len(n.Changes) == 0 {
		out = append(out, "nat: the NAT ID stayed 0 at every hop that answered (no stateless rewrite seen)")
	}
	for _, c := range n.Changes {
		s := fmt.Sprintf("nat: NAT ID %d (0x%04X) from TTL %d", c.NATID, c.NATID, c.TTL)
		if c.Addr != "" {
			s += " (" + c.Addr + ")"
		}
		if len(c.Flows) > 0 {
			s += " in flows " + flowsText(c.Flows)
		}
		out = append(out, s+": a router before it rewrote the probe statelessly")
	}
	return append(out, n.Note)
}

// MTULines says what trace --mtu found: the path MTU, where it drops and
// who said so.
func MTULines(m *route.PathMTU) []string {
	s := "path MTU not found (the target did not answer the MTU probes)"
	if m.PathMTU > 0 {
		s = fmt.Sprintf("path MTU %d bytes", m.PathMTU)
	}
	s += fmt.Sprintf(" (mtu = largest packet that reached the TTL; from the interface's %d", m.Start)
	if m.Cached > 0 {
		s += fmt.Sprintf(", ignoring the %d the kernel had cached", m.Cached)
	}
	out := []string{s + ")"}
	for _, d := range m.Drops {
		how := "found by trying sizes: larger ones got no answer"
		if d.ReportedBy != "" {
			how = "next-hop MTU named by " + d.ReportedBy
		}
		out = append(out, fmt.Sprintf("  drops to %d at TTL %d (%s)", d.MTU, d.TTL, how))
	}
	if len(m.Flows) > 0 {
		out[0] += " for flow 0; mtu column: flow 0"
	}
	for _, f := range m.Flows {
		s := fmt.Sprintf("  flow %d (source port %d): ", f.Flow, f.SourcePort)
		if f.PathMTU > 0 {
			s += fmt.Sprintf("path MTU %d", f.PathMTU)
		} else {
			s += "target not reached"
		}
		for _, d := range f.Drops {
			s += fmt.Sprintf(", %d from TTL %d", d.MTU, d.TTL)
			if d.ReportedBy != "" {
				s += " (" + d.ReportedBy + ")"
			}
		}
		out = append(out, s)
	}
	return out
}

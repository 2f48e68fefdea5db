package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/route"
)

// multipathWidth is how wide the interfaces column of the diamonds table
// may grow before a TTL's interfaces continue on the next line: with the
// ttl and shape columns the table stays within 120 columns.
const multipathWidth = 84

// multipathTables are a trace --multipath report: the diamonds (the
// interfaces per TTL and where paths split and meet), the paths with
// their flows, share and line class, and with --cycles one table per
// path with its hops' statistics.
func multipathTables(tr *route.Trace, v TraceView) []Table {
	m := tr.Multipath
	// The route's AS path would mix the paths': each path's networks are
	// in its own table.
	bare := *tr
	bare.ASPath = nil
	title := traceTitle(&bare) + fmt.Sprintf("\nmultipath: %d%% confidence, flows by %s, %d probe(s) (%s), %d path(s)",
		m.Confidence, m.FlowField, m.ProbesUsed, stoppedText(m.Stopped), len(tr.Paths))
	d := Table{Name: "diamonds", Title: title, Headers: []string{"ttl", "shape", "interfaces (flows that answered)"}, Align: "rll"}
	byTTL := map[int][]route.MultipathNode{}
	var ttls []int
	for _, n := range m.Nodes {
		if byTTL[n.TTL] == nil {
			ttls = append(ttls, n.TTL)
		}
		byTTL[n.TTL] = append(byTTL[n.TTL], n)
	}
	slices.Sort(ttls)
	// Flows of the paths through each interface: answered there, or known
	// to pass it from the links (a flow probed behind it).
	type at struct {
		ttl  int
		addr string
	}
	onPaths := map[at]int{}
	for _, p := range tr.Paths {
		for _, h := range p.Hops {
			if !h.PerPacket {
				onPaths[at{h.TTL, h.Address}] += len(p.Flows)
			}
		}
	}
	prev, inferred := 1, false
	for _, ttl := range ttls {
		nodes := byTTL[ttl]
		var cells []string
		for _, n := range nodes {
			c := hostText(n.Address, v)
			if n.Address == "" {
				c = "*"
			}
			if n.Address == tr.Addr {
				c += " target"
			}
			if n.PerPacket {
				c += " per-packet"
			}
			if k := onPaths[at{n.TTL, n.Address}]; k > len(n.Flows) {
				cells = append(cells, fmt.Sprintf("%s (%d; %d on paths)", c, len(n.Flows), k))
				inferred = true
			} else {
				cells = append(cells, fmt.Sprintf("%s (%d)", c, len(n.Flows)))
			}
		}
		for i, line := range packCells(cells, multipathWidth) {
			row := []string{"", "", line}
			if i == 0 {
				row[0], row[1] = strconv.Itoa(ttl), shapeText(prev, len(nodes), tr.Links, ttl)
			}
			d.Rows = append(d.Rows, row)
		}
		prev = len(nodes)
	}
	d.Notes = multipathNotes(tr)
	if inferred {
		d.Notes = append(d.Notes, "(n; m on paths) = n flows answered from the interface, m of the paths' flows pass it: "+
			"the others were probed behind it and are known to pass it from the links")
	}
	pt := pathsTable(tr)
	pt.Notes = append(pt.Notes, LineClassLines(tr, v.Direction)...)
	out := []Table{d, pt}
	if m.Cycles > 0 {
		for _, p := range tr.Paths {
			out = append(out, pathHopsTable(tr, p, v))
		}
	}
	out[len(out)-1].Notes = append(out[len(out)-1].Notes, ASNotes(tr)...)
	return out
}

// shapeText says what happens between TTL−1 and ttl: how many interfaces
// lead to how many, and whether paths split or meet there.
func shapeText(before, now int, links []route.Link, ttl int) string {
	split, meet := false, false
	from, to := map[string]int{}, map[string]int{}
	for _, l := range links {
		if l.TTL == ttl-1 {
			from[l.From]++
			to[l.To]++
		}
	}
	for _, n := range from {
		split = split || n > 1
	}
	for _, n := range to {
		meet = meet || n > 1
	}
	s := fmt.Sprintf("%d→%d", before, now)
	switch {
	case split && meet:
		s += " split+meet"
	case split:
		s += " split"
	case meet:
		s += " meet"
	}
	return s
}

// packCells joins cells two spaces apart into lines of at most width.
func packCells(cells []string, width int) []string {
	var lines []string
	cur := ""
	for _, c := range cells {
		if cur != "" && len(cur)+2+len(c) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += "  "
		}
		cur += c
	}
	return append(lines, cur)
}

func stoppedText(s string) string {
	switch s {
	case "rule":
		return "stopped by the rule"
	case "max-probes":
		return "stopped at --max-probes: paths may be missing"
	case "interrupted":
		return "interrupted"
	}
	return s
}

// pathsTable is one row per path: its flows, share, length, where it
// leaves path 1, and its line class.
func pathsTable(tr *route.Trace) Table {
	t := Table{Name: "paths", Headers: []string{"path", "flows", "share", "hops", "differs from path 1", "line class", "confidence"},
		Align: "rlrrlll"}
	for _, p := range tr.Paths {
		t.Rows = append(t.Rows, []string{strconv.Itoa(p.Path), flowsShort(p.Flows), Pct(p.Share), strconv.Itoa(len(p.Hops)),
			differsText(tr.Paths[0], p), dashIfEmpty(p.LineClass), dashIfEmpty(p.Confidence)})
	}
	if s := tr.Multipath.Summary; s != "" {
		t.Notes = append(t.Notes, "every path: "+s)
	}
	t.Notes = append(t.Notes, "share = the path's flows over the flows of every path; flows are the "+flowMeaning(tr.Multipath.FlowField)+" sent")
	return t
}

// differsText is the first TTL where p's interface is not path 1's.
func differsText(first, p route.Path) string {
	if p.Path == first.Path {
		return "-"
	}
	for i, h := range p.Hops {
		if i >= len(first.Hops) || first.Hops[i].Address != h.Address || first.Hops[i].TTL != h.TTL {
			a := h.Address
			if a == "" {
				a = "*"
			}
			return fmt.Sprintf("TTL %d %s", h.TTL, a)
		}
	}
	return fmt.Sprintf("shorter: ends at TTL %d", p.Hops[len(p.Hops)-1].TTL)
}

// pathHopsTable is one path's hops with the statistics of its own flow.
func pathHopsTable(tr *route.Trace, p route.Path, v TraceView) Table {
	t := Table{Name: "path " + strconv.Itoa(p.Path),
		Title:   fmt.Sprintf("path %d (flow %d probed %d cycles; flows %s)", p.Path, p.Flows[0], tr.Multipath.Cycles, flowsShort(p.Flows)),
		Headers: []string{"ttl", "host", "asn", "network", "sent", "recv", "loss", "p50 ms", "p95 ms", "jitter ms", "flags"},
		Align:   "rlrlrrrrrrl"}
	for _, h := range p.Hops {
		host := hostText(h.Address, v)
		switch {
		case h.PerPacket:
			host = strings.Join(h.Addresses, " | ") + " (per packet)"
		case h.Address == "":
			host = "*"
		}
		row := []string{strconv.Itoa(h.TTL), host, asText(h.ASN), route.ShortName(h.Carrier), intPtr(h.Sent), intPtr(h.Recv), "-", "-", "-", "-",
			strings.Join(h.Flags, ",")}
		if h.LossPct != nil {
			row[6] = Pct(*h.LossPct / 100)
		}
		if h.RTT != nil {
			row[7], row[8] = MS(h.RTT.P50), MS(h.RTT.P95)
		}
		if h.Jitter != nil {
			row[9] = MS(h.Jitter.RFC3550)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("line class %s (confidence %s)", dashIfEmpty(p.LineClass), dashIfEmpty(p.Confidence)))
	if len(p.Evidence) > 0 {
		t.Notes = append(t.Notes, "  rule: "+p.Evidence[0])
	}
	return t
}

// multipathNotes explain the diamonds: per-packet balancers, the protocol's
// blind spot, and what the shape column says.
func multipathNotes(tr *route.Trace) []string {
	m := tr.Multipath
	var notes []string
	if n := route.HiddenHopsNote(tr.HiddenHops); n != "" {
		notes = append(notes, n)
	}
	notes = append(notes, "shape: interfaces at the TTL before → at this TTL; split: a router sends flows to several next hops; "+
		"meet: paths join; (n) = flows that answered from the interface; * = no reply")
	for _, pp := range m.PerPacket {
		notes = append(notes, fmt.Sprintf("per-packet balancing at TTL %d: flow %d answered from %s; its flows are not mapped to a branch",
			pp.TTL, pp.Flow, strings.Join(pp.Addresses, ", ")))
	}
	if m.ProtocolNote != "" {
		notes = append(notes, m.ProtocolNote)
	}
	if m.Stopped != "rule" {
		notes = append(notes, "the discovery did not finish ("+stoppedText(m.Stopped)+"): a router's next hops may be missing")
	} else {
		notes = append(notes, missedHopNote(m.Confidence))
	}
	if tr.Foreign > 0 {
		notes = append(notes, fmt.Sprintf("%d foreign replies (another process or run) were not counted", tr.Foreign))
	}
	return notes
}

// missedHopNote says what the stopping rule leaves open: each router's
// next hops were probed until one more would have shown at the confidence,
// so an even split's branch is still missed now and then (and an uneven
// one's more often).
func missedHopNote(confidence int) string {
	s := fmt.Sprintf("stopped by the rule at %d%%: at each router one more next hop, spread evenly, would have shown with %d%% "+
		"probability; a branch you expect but do not see: run again", confidence, confidence)
	if confidence < 99 {
		s += " or with --confidence 99"
	}
	return s + " (a balancer's rare, weighted next hop can stay hidden)"
}

// flowMeaning says what a flow id is.
func flowMeaning(field string) string {
	switch field {
	case "udp-dport":
		return "UDP destination ports"
	case "udp-sport":
		return "UDP source ports"
	case "tcp-sport":
		return "TCP source ports"
	case "icmp":
		return "ICMP checksums"
	}
	return "flow ids"
}

// flowsShort lists at most 6 flow ids, then how many more.
func flowsShort(fs []int) string {
	var s []string
	for i, f := range fs {
		if i == 6 {
			s = append(s, fmt.Sprintf("+%d", len(fs)-6))
			break
		}
		s = append(s, strconv.Itoa(f))
	}
	return strings.Join(s, " ")
}

func intPtr(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

// tracePathsCSV is the "paths" table: one row per path and hop, empty
// where a figure was not measured.
func tracePathsCSV(tr *route.Trace) Table {
	t := Table{Name: "paths", Headers: []string{"path", "flows", "share", "ttl", "address", "asn", "as_name", "sent", "recv", "loss_pct",
		"rtt_p50_ms", "rtt_p95_ms", "jitter_ms", "line_class"}}
	opt := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	for _, p := range tr.Paths {
		for _, h := range p.Hops {
			row := []string{strconv.Itoa(p.Path), flowsText(p.Flows), Float(p.Share), strconv.Itoa(h.TTL), h.Address, "", h.ASName,
				opt(h.Sent), opt(h.Recv), "", "", "", "", p.LineClass}
			if h.ASN != 0 {
				row[5] = strconv.Itoa(h.ASN)
			}
			if h.LossPct != nil {
				row[9] = Float(*h.LossPct)
			}
			if h.RTT != nil {
				row[10], row[11] = Float(h.RTT.P50), Float(h.RTT.P95)
			}
			if h.Jitter != nil {
				row[12] = Float(h.Jitter.RFC3550)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// PingSchema names the JSON document of `linecheck ping`.
const PingSchema = "linecheck.ping/v1"

// PingDoc is the linecheck.ping/v1 document.
type PingDoc struct {
	Schema     string       `json:"schema"`
	Protocol   string       `json:"protocol"`
	Port       int          `json:"port,omitempty"`
	Count      int          `json:"count"`
	IntervalMS float64      `json:"interval_ms"`
	TimeoutMS  float64      `json:"timeout_ms"`
	Results    []PingTarget `json:"results"`
	// Unresolved lists the names that did not resolve: they were not
	// probed, every other target was.
	Unresolved []PingUnresolved `json:"unresolved"`
	// Prefixes sums up each CIDR argument, one entry per prefix.
	Prefixes []PingPrefix `json:"prefixes,omitempty"`
	// Partial is true when the sweep was interrupted (Ctrl-C): the
	// figures cover the probes whose wait ended before that.
	Partial bool `json:"partial"`
}

// PingTarget is one target of the linecheck.ping/v1 document.
type PingTarget struct {
	Target string `json:"target"`
	Addr   string `json:"addr"`
	Sent   int    `json:"sent"`
	Recv   int    `json:"recv"`
	// Loss is null when nothing was sent (a sweep interrupted before this
	// target's first probe ended): no data, not 0.
	Loss       *float64 `json:"loss"`
	Late       int      `json:"late"`
	Duplicates int      `json:"duplicates"`
	Foreign    int      `json:"foreign"`
	Refused    *int     `json:"refused,omitempty"`
	// RTT is null when no reply came; Jitter needs two replies.
	RTT    *stats.RTTStats `json:"rtt_ms"`
	Jitter *stats.Jitter   `json:"jitter_ms"`
}

// PingUnresolved is a target name that could not be resolved.
type PingUnresolved struct {
	Target string `json:"target"`
	Error  string `json:"error"`
}

// PingPrefix is the one-line summary of a CIDR sweep.
type PingPrefix struct {
	Prefix      string   `json:"prefix"`
	Targets     int      `json:"targets"`
	Alive       int      `json:"alive"`
	Unreachable int      `json:"unreachable"`
	Sent        int      `json:"sent"`
	Recv        int      `json:"recv"`
	Loss        *float64 `json:"loss"` // null when nothing was sent
	// RTT over every reply of the prefix; null when none came.
	RTTMinMS *float64 `json:"rtt_min_ms"`
	RTTAvgMS *float64 `json:"rtt_avg_ms"`
	RTTMaxMS *float64 `json:"rtt_max_ms"`
	// First and Last index Results: the prefix's addresses.
	First int `json:"-"`
	Last  int `json:"-"`
}

// PingFilter selects the rows of a ping report (fping -a / -u).
type PingFilter int

// Ping filters.
const (
	PingAll         PingFilter = iota
	PingAlive                  // targets that answered at least once
	PingUnreachable            // targets that never answered, and unresolved names
)

// Filtered returns doc with only the targets f selects.
func (doc PingDoc) Filtered(f PingFilter) PingDoc {
	if f == PingAll {
		return doc
	}
	out := doc
	out.Results = nil
	for _, r := range doc.Results {
		if (r.Recv > 0) == (f == PingAlive) {
			out.Results = append(out.Results, r)
		}
	}
	if f == PingAlive {
		out.Unresolved = []PingUnresolved{}
	}
	out.Prefixes = nil
	return out
}

// Names lists the targets of doc one per line, as fping -a and -u print
// them (the address for targets of a CIDR, the name as given otherwise).
func (doc PingDoc) Names() []string {
	var s []string
	for _, r := range doc.Results {
		s = append(s, r.Target)
	}
	for _, u := range doc.Unresolved {
		s = append(s, u.Target)
	}
	return s
}

// PingTables returns the tables of a ping report for format: table and
// markdown get one table for people (rows hidden for quiet CIDR sweeps,
// whose summary lines stay); csv gets the tidy "targets" table.
func PingTables(doc PingDoc, format Format, quiet bool) []Table {
	if format.Machine() {
		return []Table{pingCSV(doc)}
	}
	title := fmt.Sprintf("ping (%s%s, %d probes per target every %s)", doc.Protocol, PortText(doc.Port), doc.Count,
		time.Duration(doc.IntervalMS*1e6))
	if doc.Partial {
		title += ", interrupted: partial"
	}
	cols := pingColumnsOf(doc)
	t := Table{Name: "targets", Title: title, HideEmpty: quiet, Headers: cols.headers()}
	t.Align = "l"
	for range t.Headers[1:] {
		t.Align += "r"
	}
	if cols.name {
		t.Align = "ll" + t.Align[2:]
	}
	t.Movable = []string{"pdv p95 ms", "mean_abs ms", "p99 ms", "stdev ms", "foreign", "dup", "late", "addr"}
	hidden := make([]bool, len(doc.Results))
	if quiet {
		for _, p := range doc.Prefixes {
			for i := p.First; i <= p.Last && i < len(hidden); i++ {
				hidden[i] = true
			}
		}
	}
	for i, r := range doc.Results {
		if hidden[i] {
			continue
		}
		t.Rows = append(t.Rows, cols.row(r))
		if r.Refused != nil && *r.Refused > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d connection attempts refused (port closed), counted as lost", r.Target, *r.Refused))
		}
	}
	for _, u := range doc.Unresolved {
		t.Notes = append(t.Notes, fmt.Sprintf("%s: not probed: %s", u.Target, u.Error))
	}
	for _, p := range doc.Prefixes {
		t.Notes = append(t.Notes, PrefixLine(p))
	}
	if zero := cols.absent(); len(zero) > 0 {
		t.Notes = append(t.Notes, "no "+joinOr(zero)+" replies (columns left out)")
	}
	t.Notes = append(t.Notes, "loss over probes whose wait ended; late = replies after --timeout (not received); "+
		"jitter = RFC 3550 interarrival jitter; percentiles nearest-rank")
	return []Table{t}
}

// pingColumns says which optional columns the ping table has: a count
// column only when some target has one, the address only when some target
// was given by name.
type pingColumns struct{ late, dup, foreign, name bool }

func pingColumnsOf(doc PingDoc) pingColumns {
	var c pingColumns
	for _, r := range doc.Results {
		c.late = c.late || r.Late > 0
		c.dup = c.dup || r.Duplicates > 0
		c.foreign = c.foreign || r.Foreign > 0
		c.name = c.name || r.Target != r.Addr
	}
	return c
}

func (c pingColumns) headers() []string {
	h := []string{"target"}
	if c.name {
		h = append(h, "addr")
	}
	h = append(h, "sent", "recv", "loss")
	if c.late {
		h = append(h, "late")
	}
	if c.dup {
		h = append(h, "dup")
	}
	if c.foreign {
		h = append(h, "foreign")
	}
	return append(h, "min ms", "avg ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "stdev ms",
		"jitter ms", "mean_abs ms", "pdv p95 ms")
}

func (c pingColumns) row(r PingTarget) []string {
	row := []string{r.Target}
	if c.name {
		row = append(row, r.Addr)
	}
	row = append(row, strconv.Itoa(r.Sent), strconv.Itoa(r.Recv), optLossText(r.Loss))
	if c.late {
		row = append(row, strconv.Itoa(r.Late))
	}
	if c.dup {
		row = append(row, strconv.Itoa(r.Duplicates))
	}
	if c.foreign {
		row = append(row, strconv.Itoa(r.Foreign))
	}
	if r.RTT == nil {
		row = append(row, "-", "-", "-", "-", "-", "-", "-")
	} else {
		row = append(row, MS(r.RTT.Min), MS(r.RTT.Avg), MS(r.RTT.P50), MS(r.RTT.P95), MS(r.RTT.P99), MS(r.RTT.Max), MS(r.RTT.Stdev))
	}
	if r.Jitter == nil {
		return append(row, "-", "-", "-")
	}
	return append(row, MS(r.Jitter.RFC3550), MS(r.Jitter.MeanAbs), MS(r.Jitter.PDVP95))
}

// absent names the count columns left out because no target has one.
func (c pingColumns) absent() []string {
	var zero []string
	if !c.late {
		zero = append(zero, "late")
	}
	if !c.dup {
		zero = append(zero, "dup")
	}
	if !c.foreign {
		zero = append(zero, "foreign")
	}
	return zero
}

// PrefixLine is the one summary line of a CIDR sweep, as fping -s gives it.
func PrefixLine(p PingPrefix) string {
	s := fmt.Sprintf("%s: %d targets, %d alive, %d unreachable, loss %s of %d probes", p.Prefix, p.Targets, p.Alive,
		p.Unreachable, optLossText(p.Loss), p.Sent)
	if p.RTTMinMS != nil {
		s += fmt.Sprintf(", rtt min/avg/max %s/%s/%s ms", MS(*p.RTTMinMS), MS(*p.RTTAvgMS), MS(*p.RTTMaxMS))
	}
	return s
}

func joinOr(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return fmt.Sprintf("%s or %s", strings.Join(s[:len(s)-1], ", "), s[len(s)-1])
}

// lossText is a loss fraction for people, "-" when nothing was sent.
func lossText(sent int, loss float64) string {
	if sent == 0 {
		return "-"
	}
	return Pct(loss)
}

// PortText is " port N", or "" for no port.
func PortText(p int) string {
	if p == 0 {
		return ""
	}
	return " port " + strconv.Itoa(p)
}

// pingCSV is one row per target (unresolved names too, with their error),
// plain numbers in base units named in the header.
func pingCSV(doc PingDoc) Table {
	t := Table{Name: "targets", Headers: []string{"target", "addr", "protocol", "port", "sent", "recv", "loss", "late",
		"duplicates", "foreign", "refused", "rtt_min_ms", "rtt_avg_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms", "rtt_max_ms",
		"rtt_stdev_ms", "jitter_rfc3550_ms", "jitter_mean_abs_ms", "pdv_p95_ms", "partial", "error"}}
	port := ""
	if doc.Port != 0 {
		port = strconv.Itoa(doc.Port)
	}
	partial := strconv.FormatBool(doc.Partial)
	for _, r := range doc.Results {
		row := []string{r.Target, r.Addr, doc.Protocol, port, strconv.Itoa(r.Sent), strconv.Itoa(r.Recv), "",
			strconv.Itoa(r.Late), strconv.Itoa(r.Duplicates), strconv.Itoa(r.Foreign), ""}
		row[6] = optFloat(r.Loss)
		if r.Refused != nil {
			row[10] = strconv.Itoa(*r.Refused)
		}
		if r.RTT != nil {
			row = append(row, Float(r.RTT.Min), Float(r.RTT.Avg), Float(r.RTT.P50), Float(r.RTT.P95), Float(r.RTT.P99),
				Float(r.RTT.Max), Float(r.RTT.Stdev))
		} else {
			row = append(row, "", "", "", "", "", "", "")
		}
		if r.Jitter != nil {
			row = append(row, Float(r.Jitter.RFC3550), Float(r.Jitter.MeanAbs), Float(r.Jitter.PDVP95))
		} else {
			row = append(row, "", "", "")
		}
		t.Rows = append(t.Rows, append(row, partial, ""))
	}
	for _, u := range doc.Unresolved {
		row := []string{u.Target, "", doc.Protocol, port, "0", "0", "", "", "", "", ""}
		row = append(row, slices.Repeat([]string{""}, 10)...)
		t.Rows = append(t.Rows, append(row, partial, u.Error))
	}
	return t
}

// PingSpan is the targets one CIDR argument expanded to: the results
// First to Last (inclusive) of a sweep.
type PingSpan struct {
	Prefix      string
	First, Last int
}

// PingSweep is what a ping run gives NewPingDoc: the sweep's results in
// target order, the names that did not resolve, the CIDR arguments' spans,
// and the settings the document states.
type PingSweep struct {
	Results    []probe.PingResult
	Unresolved []PingUnresolved
	Spans      []PingSpan
	Protocol   string // icmp, tcp
	Port       int
	// Count is the probes sent per target.
	Count             int
	Interval, Timeout time.Duration
}

// NewPingDoc builds the linecheck.ping/v1 document of a sweep: per target
// loss (absent when nothing was sent), RTT statistics and jitter (absent
// without replies, jitter from two), and one summary per CIDR argument.
func NewPingDoc(s PingSweep) PingDoc {
	doc := PingDoc{Schema: PingSchema, Protocol: s.Protocol, Port: s.Port, Count: s.Count,
		IntervalMS: durationMS(s.Interval), TimeoutMS: durationMS(s.Timeout), Results: []PingTarget{}, Unresolved: s.Unresolved}
	if doc.Unresolved == nil {
		doc.Unresolved = []PingUnresolved{}
	}
	for _, r := range s.Results {
		pj := PingTarget{Target: r.Target, Addr: r.Addr, Sent: r.Sent, Recv: r.Recv,
			Late: r.Late, Duplicates: r.Dup, Foreign: r.Foreign}
		if r.Sent > 0 {
			l := r.Loss()
			pj.Loss = &l
		}
		if len(r.RTTs) > 0 {
			st, jt := stats.Summarize(r.RTTs)
			pj.RTT = &st
			if len(r.RTTs) > 1 {
				pj.Jitter = &jt
			}
		}
		if s.Protocol == "tcp" {
			pj.Refused = &r.Refused
		}
		doc.Results = append(doc.Results, pj)
	}
	for _, g := range s.Spans {
		doc.Prefixes = append(doc.Prefixes, pingSpanSummary(g, s.Results))
	}
	return doc
}

// pingSpanSummary sums up the results of one CIDR argument.
func pingSpanSummary(g PingSpan, results []probe.PingResult) PingPrefix {
	p := PingPrefix{Prefix: g.Prefix, First: g.First, Last: g.Last}
	var all []float64
	for i := g.First; i <= g.Last && i < len(results); i++ {
		r := results[i]
		p.Targets++
		p.Sent += r.Sent
		p.Recv += r.Recv
		if r.Recv > 0 {
			p.Alive++
		} else {
			p.Unreachable++
		}
		all = append(all, r.RTTs...)
	}
	if p.Sent > 0 {
		l := 1 - float64(p.Recv)/float64(p.Sent)
		p.Loss = &l
	}
	if len(all) > 0 {
		st, _ := stats.Summarize(all)
		p.RTTMinMS, p.RTTAvgMS, p.RTTMaxMS = &st.Min, &st.Avg, &st.Max
	}
	return p
}

// durationMS is d in milliseconds, to the nanosecond.
func durationMS(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
)

// WatchTables returns the tables of a watch report (ping or trace
// --report) for format: for csv the tidy "summary" table (one row per
// target) and "hours" table (one row per target and hour of day); for
// table and markdown the summary and an hourly table per target.
func WatchTables(r journal.Report, format Format) []Table {
	if format.Machine() {
		return watchCSV(r)
	}
	sum := Table{
		Name: "summary",
		Title: fmt.Sprintf("watch report: %s (%s journal, %d cycles in %d runs, %s – %s)", r.Journal, r.Kind, r.Cycles, r.Runs,
			r.From.Format(time.RFC3339), r.To.Format(time.RFC3339)),
		Headers: []string{"target", "protocol", "cycles", "availability", "sent", "recv", "loss", "p50 ms", "p95 ms", "p99 ms", "max ms"},
		Align:   "llrrrrrrrrr",
	}
	tables := []Table{sum}
	for _, t := range r.Targets {
		row := []string{t.Target, t.Protocol + PortText(t.Port), strconv.Itoa(t.Cycles),
			PctFloor(t.Availability, 3), strconv.Itoa(t.Sent), strconv.Itoa(t.Recv), optLossText(t.Loss)}
		if t.RTT == nil {
			row = append(row, "-", "-", "-", "-")
		} else {
			row = append(row, MS(t.RTT.P50), MS(t.RTT.P95), MS(t.RTT.P99), MS(t.RTT.Max))
		}
		tables[0].Rows = append(tables[0].Rows, row)
		ht := Table{
			Name:    "hours",
			Title:   fmt.Sprintf("%s %s%s by hour of day (%s)", t.Target, t.Protocol, PortText(t.Port), r.TZ),
			Headers: []string{"hour", "cycles", "availability", "sent", "loss", "p50 ms", "p95 ms", "p99 ms"},
			Align:   "lrrrrrrr",
		}
		for _, h := range t.Hours {
			ht.Rows = append(ht.Rows, []string{fmt.Sprintf("%02d:00", h.Hour), strconv.Itoa(h.Cycles), PctFloor(h.Availability, 1),
				strconv.Itoa(h.Sent), optLossText(h.Loss), optMS(h.P50ms), optMS(h.P95ms), optMS(h.P99ms)})
		}
		tables = append(tables, ht)
	}
	notes := []string{"availability = cycles with at least one reply / cycles; loss over probes whose wait ended; percentiles nearest-rank"}
	if r.Torn {
		notes = append(notes, fmt.Sprintf("the journal's torn last line (line %d) was left out", r.TornLine))
	}
	tables[len(tables)-1].Notes = notes
	return tables
}

func optMS(v *float64) string {
	if v == nil {
		return "-"
	}
	return MS(*v)
}

func optFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return Float(*v)
}

func watchCSV(r journal.Report) []Table {
	sum := Table{Name: "summary", Headers: []string{"target", "addr", "protocol", "port", "cycles", "up_cycles", "availability",
		"sent", "recv", "late", "duplicates", "loss", "rtt_min_ms", "rtt_avg_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms",
		"rtt_max_ms", "rtt_stdev_ms"}}
	hours := Table{Name: "hours", Headers: []string{"target", "addr", "protocol", "port", "tz", "hour", "cycles", "availability",
		"sent", "recv", "loss", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms"}}
	for _, t := range r.Targets {
		port := ""
		if t.Port != 0 {
			port = strconv.Itoa(t.Port)
		}
		loss := optFloat(t.Loss)
		row := []string{t.Target, t.Addr, t.Protocol, port, strconv.Itoa(t.Cycles), strconv.Itoa(t.UpCycles), Float(t.Availability),
			strconv.Itoa(t.Sent), strconv.Itoa(t.Recv), strconv.Itoa(t.Late), strconv.Itoa(t.Dup), loss}
		if t.RTT == nil {
			row = append(row, "", "", "", "", "", "", "")
		} else {
			row = append(row, Float(t.RTT.Min), Float(t.RTT.Avg), Float(t.RTT.P50), Float(t.RTT.P95), Float(t.RTT.P99),
				Float(t.RTT.Max), Float(t.RTT.Stdev))
		}
		sum.Rows = append(sum.Rows, row)
		for _, h := range t.Hours {
			hl := optFloat(h.Loss)
			hours.Rows = append(hours.Rows, []string{t.Target, t.Addr, t.Protocol, port, r.TZ, strconv.Itoa(h.Hour),
				strconv.Itoa(h.Cycles), Float(h.Availability), strconv.Itoa(h.Sent), strconv.Itoa(h.Recv), hl,
				optFloat(h.P50ms), optFloat(h.P95ms), optFloat(h.P99ms)})
		}
	}
	return []Table{sum, hours}
}

// optLossText is a loss in percent, "-" without data.
func optLossText(l *float64) string {
	if l == nil {
		return "-"
	}
	return Pct(*l)
}

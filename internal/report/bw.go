package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/probe/bw"
)

// Mbps formats a rate in bit/s as Mbit/s (10^6 bit/s) with one decimal
// ("-" when absent); above 10 Gbit/s without decimals.
func Mbps(v *float64) string {
	if v == nil {
		return "-"
	}
	m := *v / 1e6
	if m >= 10000 {
		return strconv.FormatFloat(m, 'f', 0, 64)
	}
	return strconv.FormatFloat(m, 'f', 1, 64)
}

// BWUnit is the unit the rates of a throughput table are written in
// (bw -f, as iperf3 -f): bits per second in powers of 1000, or bytes per
// second in powers of 1024, as iperf3 counts them. The zero value is
// Mbit/s.
type BWUnit struct {
	Name string  // "Mbit/s", "KByte/s" …
	Bits float64 // bits per second in one unit
}

// bwUnits are iperf3's -f letters.
var bwUnits = map[string]BWUnit{
	"k": {"Kbit/s", 1e3}, "m": {"Mbit/s", 1e6}, "g": {"Gbit/s", 1e9},
	"K": {"KByte/s", 8 << 10}, "M": {"MByte/s", 8 << 20}, "G": {"GByte/s", 8 << 30},
}

// ParseBWUnit reads iperf3's -f letter: k, m, g (Kbit/s, Mbit/s, Gbit/s) or
// K, M, G (KByte/s, MByte/s, GByte/s, in 1024s).
func ParseBWUnit(s string) (BWUnit, error) {
	u, ok := bwUnits[s]
	if !ok {
		return BWUnit{}, fmt.Errorf("%q: use k, m or g (Kbit/s, Mbit/s, Gbit/s) or K, M or G (KByte/s, MByte/s, GByte/s), as iperf3 -f", s)
	}
	return u, nil
}

// rate formats v bit/s in u as Mbps does in Mbit/s.
func (u BWUnit) rate(v *float64) string {
	if v == nil {
		return "-"
	}
	m := *v / u.Bits
	if m >= 10000 {
		return strconv.FormatFloat(m, 'f', 0, 64)
	}
	return strconv.FormatFloat(m, 'f', 1, 64)
}

func bwRaw(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func bwInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func bwMS(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func bwPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 2, 64) + "%"
}

// BWTitle is the one-line description of a test.
func BWTitle(r *bw.Result) string {
	streams := "1 stream"
	if r.Streams != 1 {
		streams = fmt.Sprintf("%d streams", r.Streams)
	}
	if r.Direction == bw.Bidir {
		streams += " each way"
	}
	s := fmt.Sprintf("bw: %s port %d, %s %s, %s, %.1f s measured", r.Server, r.Port, r.Protocol, r.Direction, streams, r.DurationS)
	if r.OmitS > 0 {
		s += fmt.Sprintf(" after %.1f s omitted", r.OmitS)
	}
	if r.BitrateBps != nil {
		s += fmt.Sprintf(", target %s Mbit/s per stream", Mbps(r.BitrateBps))
	}
	if r.Client != "" {
		s += ", client " + r.Client
	}
	return s
}

// bwTables renders one throughput test: the summary (a row per direction,
// and their sum for bidir) and the intervals, rates in Mbit/s for reading,
// or raw for machines (csv): bit/s at full precision, loss as the fraction
// 0..1, unknown figures "-".
func bwTables(r *bw.Result, raw bool, u BWUnit) []Table {
	if u.Bits == 0 {
		u = bwUnits["m"]
	}
	rate, unit := u.rate, u.Name
	pct := bwPct
	if raw {
		rate, unit = bwRaw, "bps"
		pct = bwRaw
	}
	udp := r.Protocol == "udp"
	sum := Table{Name: "summary", Title: BWTitle(r),
		Headers: []string{"direction", "mean " + unit, "p5", "p50", "p95", "min", "max", "bytes"}, Align: "lrrrrrrr"}
	if udp {
		sum.Headers = append(sum.Headers, "packets", "lost", "loss", "jitter ms", "out of order")
		sum.Align += "rrrrr"
	} else {
		sum.Headers = append(sum.Headers, "retransmits")
		sum.Align += "r"
	}
	row := func(name string, t bw.Throughput, bytes int64, retrans *int64, u *bw.UDPStats) []string {
		cells := []string{name, rate(t.Mean), rate(t.P5), rate(t.P50), rate(t.P95), rate(t.Min), rate(t.Max), strconv.FormatInt(bytes, 10)}
		if udp {
			if u == nil {
				return append(cells, "-", "-", "-", "-", "-")
			}
			return append(cells, strconv.FormatInt(u.Packets, 10), bwInt(u.Lost), pct(u.Loss), bwMS(u.JitterMs), bwInt(u.OutOfOrder))
		}
		return append(cells, bwInt(retrans))
	}
	if d := r.ByDirection; d != nil {
		sum.Rows = append(sum.Rows,
			row(bw.Upload, d.Upload.Throughput, d.Upload.Bytes, d.Upload.Retransmits, d.Upload.UDP),
			row(bw.Download, d.Download.Throughput, d.Download.Bytes, d.Download.Retransmits, d.Download.UDP))
	}
	name := r.Direction
	if r.ByDirection != nil {
		name = "both"
	}
	sum.Rows = append(sum.Rows, row(name, r.Throughput, r.Bytes, r.Retransmits, r.UDP))
	sum.Notes = []string{"mean = bytes received / measured time (iperf3's receiver sum); p5/p50/p95/min/max over the intervals, nearest-rank"}
	if udp {
		sum.Notes = append(sum.Notes, "UDP as iperf3: loss = sequence gaps / datagrams sent, jitter RFC 1889; an upload's out-of-order count stays with the server")
	}
	if r.CutShort {
		sum.Notes = append(sum.Notes, "the test was cut short: the figures cover what ran")
	}
	iv := Table{Name: "intervals", Title: "intervals", Headers: []string{"start s", "end s", unit, "retransmits", "rtt ms"}, Align: "rrrrr", HideEmpty: true}
	for _, i := range r.Intervals {
		b := i.Bps
		iv.Rows = append(iv.Rows, []string{strconv.FormatFloat(i.StartS, 'f', 2, 64), strconv.FormatFloat(i.EndS, 'f', 2, 64),
			rate(&b), bwInt(i.Retransmits), bwMS(i.RTTms)})
	}
	if udp && r.Direction == bw.Upload {
		iv.Notes = []string{"UDP upload: the interval rates are what this side sent (iperf3 servers do not report theirs); the mean is what the server received"}
	}
	return []Table{sum, iv}
}

// bwReportTables renders the hourly profile of a bw journal and its
// verdict, rates in Mbit/s for reading, or raw for machines (csv): bit/s at
// full precision, oversell as a fraction.
func bwReportTables(r journal.BWReport, raw bool) []Table {
	rate, pct, unit := Mbps, bwPct, "Mbit/s"
	if raw {
		rate, pct, unit = bwRaw, bwRaw, "bps"
	}
	sum := Table{Name: "summary",
		Title: fmt.Sprintf("bw watch report: %s (%d tests in %d runs, %s – %s)", r.Journal, r.Cycles, r.Runs,
			r.From.Format(time.RFC3339), r.To.Format(time.RFC3339)),
		Headers: []string{"server", "protocol", "direction", "tests", "failed", "p5 " + unit, "p50 " + unit, "mean " + unit, "worst hour", "best hour", "oversell"},
		Align:   "lllrrrrrlll"}
	hourText := func(h *journal.BWHour) string {
		if h == nil {
			return "-"
		}
		if raw {
			return fmt.Sprintf("%02d:00", h.Hour)
		}
		return fmt.Sprintf("%02d:00 (%s)", h.Hour, Mbps(h.P50))
	}
	server := r.Server
	if server == "" {
		server = "-"
	} else {
		server += " port " + strconv.Itoa(r.Port)
	}
	sum.Rows = [][]string{{server, bwDash(r.Protocol), bwDash(r.Direction), strconv.Itoa(r.Cycles), strconv.Itoa(r.ErrorCycles),
		rate(r.Throughput.P5), rate(r.Throughput.P50), rate(r.Throughput.Mean), hourText(r.Worst), hourText(r.Best), pct(r.Oversell)}}
	hours := Table{Name: "hours", Title: "throughput by hour of day (" + r.TZ + ")",
		Headers: []string{"hour", "tests", "samples", "p5 " + unit, "p50 " + unit, "mean " + unit, "evening"}, Align: "lrrrrrl"}
	for _, h := range r.Hours {
		ev := ""
		if journal.InEvening(h.Hour, r.Evening.FromHour, r.Evening.ToHour) {
			ev = "yes"
		}
		hours.Rows = append(hours.Rows, []string{fmt.Sprintf("%02d:00", h.Hour), strconv.Itoa(h.Tests), strconv.Itoa(h.Samples),
			rate(h.P5), rate(h.P50), rate(h.Mean), ev})
	}
	hours.Notes = []string{
		"samples = the tests' interval rates; p5/p50 nearest-rank; oversell = 1 − worst-hour p50 / best-hour p50",
		r.VerdictText(),
	}
	if r.Torn {
		hours.Notes = append(hours.Notes, fmt.Sprintf("the journal's torn last line (line %d) was left out", r.TornLine))
	}
	return []Table{sum, hours}
}

func bwDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// slaThroughputText states the throughput thresholds of an SLA.
func slaThroughputText(s compare.SLASpec) []string {
	var p []string
	if s.MinThroughputMbps != nil {
		p = append(p, fmt.Sprintf("throughput p5 >= %g Mbps (download)", *s.MinThroughputMbps))
	}
	if s.MaxOversell != nil {
		p = append(p, fmt.Sprintf("oversell <= %s", bwPct(s.MaxOversell)))
	}
	return p
}

// compareThroughputTable is compare's throughput view: per candidate with a
// bw test, what the line carried beside the port its offer sells; ok is
// false when no candidate has one.
func compareThroughputTable(r *compare.Result, format Format) (Table, bool) {
	rate, pct, unit := Mbps, bwPct, "Mbit/s"
	if format.Machine() {
		rate, pct, unit = bwRaw, bwRaw, "bps"
	}
	t := Table{Name: "throughput", Title: "Throughput (iperf3-protocol test, linecheck bw) against the port sold",
		Headers: []string{"candidate", "source", "direction", "tests", "p5 " + unit, "p50", "mean", "port", "achieved", "traffic p95 / p5", "oversell", "worst hour"},
		Align:   "lllrrrrrrrrl"}
	any := false
	for _, e := range r.Candidates {
		tp := e.Throughput
		if tp == nil {
			continue
		}
		any = true
		worst := "-"
		if tp.WorstHour != nil {
			worst = fmt.Sprintf("%02d:00 UTC", *tp.WorstHour)
		}
		t.Rows = append(t.Rows, []string{e.Name, tp.Source, bwDash(tp.Direction), strconv.Itoa(tp.Tests), rate(tp.P5), rate(tp.P50), rate(tp.Mean),
			rate(tp.PortBps), pct(tp.Achieved), bwRaw(tp.P95OfCarried), pct(tp.Oversell), worst})
		if tp.Error != "" && !format.Machine() {
			t.Notes = append(t.Notes, e.Name+": "+tp.Error)
		}
	}
	if !format.Machine() {
		t.Notes = append(t.Notes, "achieved = mean / the offer's port_mbps; traffic p95 / p5 above 1: the line as measured cannot carry the traffic's 95th; oversell = 1 − worst-hour p50 / best-hour p50 (a bw --watch journal)")
	}
	return t, any
}

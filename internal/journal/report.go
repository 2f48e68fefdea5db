package journal

import (
	"sort"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/percentile"
)

// ReportSchema names the document of `--report`.
const ReportSchema = "linecheck.watch-report/v1"

// Report is the hourly profile of a journal: per target, RTT percentiles and
// loss for each hour of the day (evening-peak degradation is what oversold
// lines show), and the availability over the whole watch.
//
// Definitions: a cycle is up for a target when at least one probe of that
// cycle was answered; availability = up cycles / cycles. Loss = 1 − recv/sent
// over the probes of the cycles counted. RTT percentiles are nearest-rank over
// every received reply. For a trace journal each cycle counts the
// destination's entry: sent = its probes, recv = its replies when the trace
// reached the target, else 0. A cycle that failed altogether (the journal
// line has "error") counts as a down cycle of each target and adds no probes.
type Report struct {
	Schema  string    `json:"schema"`
	Journal string    `json:"journal"`
	Kind    string    `json:"kind"`
	TZ      string    `json:"tz"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Cycles  int       `json:"cycles"`
	Runs    int       `json:"runs"` // processes that wrote the journal (restarts + 1)
	// ErrorCycles counts cycles that could not probe at all.
	ErrorCycles int      `json:"error_cycles"`
	Torn        bool     `json:"torn_last_line"`
	TornLine    int      `json:"torn_line,omitempty"`
	Targets     []Target `json:"targets"`
}

// Target is one target's profile.
type Target struct {
	Target       string  `json:"target"`
	Addr         string  `json:"addr"`
	Protocol     string  `json:"protocol"`
	Port         int     `json:"port,omitempty"`
	Cycles       int     `json:"cycles"`
	UpCycles     int     `json:"up_cycles"`
	Availability float64 `json:"availability"`
	Sent         int     `json:"sent"`
	Recv         int     `json:"recv"`
	Late         int     `json:"late"`
	Dup          int     `json:"duplicates"`
	// Loss is null when nothing was sent (every cycle failed): no data, not 0.
	Loss *float64 `json:"loss"`
	// RTT is null when no reply came.
	RTT   *stats.RTTStats `json:"rtt_ms"`
	Hours []Hour          `json:"hours"` // hours of the day that have data, ascending
}

// Hour is one hour of the day (0–23 in the report's time zone), over every
// day of the watch.
type Hour struct {
	Hour         int      `json:"hour"`
	Cycles       int      `json:"cycles"`
	Sent         int      `json:"sent"`
	Recv         int      `json:"recv"`
	Loss         *float64 `json:"loss"` // null when nothing was sent in this hour
	Availability float64  `json:"availability"`
	// The percentiles are null in an hour without a reply.
	P50ms *float64 `json:"p50_ms"`
	P95ms *float64 `json:"p95_ms"`
	P99ms *float64 `json:"p99_ms"`
}

// sample is one target's outcome in one cycle, whatever the journal kind.
type sample struct {
	key                   string
	target, addr, proto   string
	port                  int
	sent, recv, late, dup int
	rtts                  []float64
}

// widen stretches [from, to] over the entry's time and end (first: the
// first entry, which sets from).
func (e Entry) widen(first bool, from, to *time.Time) {
	if first || e.Time.Before(*from) {
		*from = e.Time
	}
	end := e.End
	if end.IsZero() {
		end = e.Time
	}
	if end.After(*to) {
		*to = end
	}
}

// Summarize builds the hourly profile of entries, hours taken in loc.
// name is the journal's name for the document; info is what Read reported.
func Summarize(entries []Entry, info ReadInfo, name string, loc *time.Location) Report {
	if loc == nil {
		loc = time.UTC
	}
	r := Report{Schema: ReportSchema, Journal: name, TZ: loc.String(), Torn: info.Torn, TornLine: info.TornLine,
		Targets: []Target{}}
	type acc struct {
		t     Target
		rtts  []float64
		hours [24]struct {
			cycles, up, sent, recv int
			rtts                   []float64
		}
	}
	byKey := map[string]*acc{}
	var order []string
	for i, e := range entries {
		e.widen(i == 0, &r.From, &r.To)
		r.Kind = e.Kind
		r.Cycles++
		r.Runs = max(r.Runs, e.Run)
		h := e.Time.In(loc).Hour()
		if e.Error != "" {
			r.ErrorCycles++
		}
		for _, s := range samplesOf(e) {
			a := byKey[s.key]
			if a == nil {
				a = &acc{t: Target{Target: s.target, Addr: s.addr, Protocol: s.proto, Port: s.port}}
				byKey[s.key] = a
				order = append(order, s.key)
			}
			a.t.Cycles++
			a.t.Sent += s.sent
			a.t.Recv += s.recv
			a.t.Late += s.late
			a.t.Dup += s.dup
			a.rtts = append(a.rtts, s.rtts...)
			hb := &a.hours[h]
			hb.cycles++
			hb.sent += s.sent
			hb.recv += s.recv
			hb.rtts = append(hb.rtts, s.rtts...)
			if s.recv > 0 {
				a.t.UpCycles++
				hb.up++
			}
		}
	}
	for _, k := range order {
		a := byKey[k]
		t := a.t
		t.Availability = ratio(t.UpCycles, t.Cycles)
		t.Loss = lossOf(t.Sent, t.Recv)
		if len(a.rtts) > 0 {
			st, _ := stats.Summarize(a.rtts)
			t.RTT = &st
		}
		t.Hours = []Hour{}
		for h := range a.hours {
			hb := a.hours[h]
			if hb.cycles == 0 {
				continue
			}
			sorted := append([]float64(nil), hb.rtts...)
			sort.Float64s(sorted)
			hr := Hour{Hour: h, Cycles: hb.cycles, Sent: hb.sent, Recv: hb.recv,
				Loss: lossOf(hb.sent, hb.recv), Availability: ratio(hb.up, hb.cycles)}
			if len(sorted) > 0 {
				p50, p95, p99 := percentile.NearestRank(sorted, 50), percentile.NearestRank(sorted, 95), percentile.NearestRank(sorted, 99)
				hr.P50ms, hr.P95ms, hr.P99ms = &p50, &p95, &p99
			}
			t.Hours = append(t.Hours, hr)
		}
		r.Targets = append(r.Targets, t)
	}
	return r
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// lossOf is 1 − recv/sent, nil without probes sent.
func lossOf(sent, recv int) *float64 {
	if sent == 0 {
		return nil
	}
	l := 1 - float64(recv)/float64(sent)
	return &l
}

func samplesOf(e Entry) []sample {
	if e.Kind == KindTrace {
		if e.Trace == nil {
			return nil
		}
		return []sample{traceSample(e.Trace)}
	}
	out := make([]sample, 0, len(e.Ping))
	for _, p := range e.Ping {
		out = append(out, sample{key: p.Protocol + "|" + p.Target + "|" + p.Addr + "|" + itoa(p.Port),
			target: p.Target, addr: p.Addr, proto: p.Protocol, port: p.Port,
			sent: p.Sent, recv: p.Recv, late: p.Late, dup: p.Dup, rtts: p.RTTms})
	}
	return out
}

// traceSample reduces one cycle's trace to the destination's outcome.
func traceSample(t *route.Trace) sample {
	s := sample{key: string(t.Protocol) + "|" + t.Target + "|" + t.Addr + "|" + itoa(t.Port),
		target: t.Target, addr: t.Addr, proto: string(t.Protocol), port: t.Port}
	if len(t.Hops) == 0 {
		return s
	}
	last := t.Hops[len(t.Hops)-1]
	s.sent = max(last.Sent, 1)
	if !t.Reached {
		return s
	}
	for _, r := range last.Responders {
		s.recv += r.Recv
		if len(r.Samples) == r.Recv {
			s.rtts = append(s.rtts, r.Samples...)
			continue
		}
		// Without the samples, a responder's average stands for each of its
		// replies; with one probe per cycle it is the sample itself.
		for range r.Recv {
			s.rtts = append(s.rtts, r.RTT.Avg)
		}
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

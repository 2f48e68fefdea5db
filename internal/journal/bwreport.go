package journal

import (
	"fmt"
	"sort"
	"time"

	"github.com/linecheck/linecheck/percentile"
)

// BWReportSchema names the document of `bw --report`.
const BWReportSchema = "linecheck.bw-report/v1"

// BWReport is the hourly throughput profile of a bw journal, and the
// oversell verdict.
//
// Definitions: the samples of an hour are the per-interval rates of every
// test that started in that hour of the day (in the report's time zone),
// over every day of the watch; a test without intervals adds its mean. p5 and
// p50 are nearest-rank. The worst and best hours are the lowest and highest
// p50; Oversell = 1 − worst p50 / best p50 (the share of the best hour's
// throughput the worst hour loses). The evening is the hours [From, To) of
// the day; when a floor is given, the line is oversold when the evening's p5
// falls below Share × Floor.
type BWReport struct {
	Schema      string    `json:"schema"`
	Journal     string    `json:"journal"`
	TZ          string    `json:"tz"`
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Cycles      int       `json:"cycles"`
	Runs        int       `json:"runs"`
	ErrorCycles int       `json:"error_cycles"` // tests that could not run
	Torn        bool      `json:"torn_last_line"`
	TornLine    int       `json:"torn_line,omitempty"`
	Server      string    `json:"server"`
	Port        int       `json:"port"`
	Protocol    string    `json:"protocol"`
	Direction   string    `json:"direction"`
	// Throughput is over every sample of the watch.
	Throughput BWStats  `json:"throughput_bps"`
	Hours      []BWHour `json:"hours"` // hours of the day with data, ascending
	Worst      *BWHour  `json:"worst_hour"`
	Best       *BWHour  `json:"best_hour"`
	Oversell   *float64 `json:"oversell"`
	Evening    Evening  `json:"evening"`
	// Verdict is "oversold", "ok", or "" (no floor given, or no evening data).
	Verdict string `json:"verdict"`
}

// BWStats are nearest-rank statistics of throughput samples in bit/s.
type BWStats struct {
	Samples int      `json:"samples"`
	P5      *float64 `json:"p5"`
	P50     *float64 `json:"p50"`
	Mean    *float64 `json:"mean"` // mean of the tests' means
}

// BWHour is one hour of the day.
type BWHour struct {
	Hour  int `json:"hour"`
	Tests int `json:"tests"`
	BWStats
}

// Evening is the verdict's window and its figures.
type Evening struct {
	FromHour int      `json:"from_hour"`
	ToHour   int      `json:"to_hour"`
	FloorBps *float64 `json:"floor_bps"`
	Share    float64  `json:"share"`
	Tests    int      `json:"tests"`
	P5       *float64 `json:"p5"`
	P50      *float64 `json:"p50"`
}

// BWReportOptions set the verdict: the floor sold (bit/s; 0 = none), the
// share of it the evening's p5 must reach, and the evening hours [From, To)
// (To may be below From for a window across midnight).
type BWReportOptions struct {
	Floor    float64
	Share    float64
	FromHour int
	ToHour   int
}

// InEvening tells whether hour h of the day is in [from, to).
func InEvening(h, from, to int) bool {
	if from <= to {
		return h >= from && h < to
	}
	return h >= from || h < to
}

// SummarizeBW builds the hourly throughput profile of a bw journal, hours
// taken in loc.
func SummarizeBW(entries []Entry, info ReadInfo, name string, loc *time.Location, o BWReportOptions) BWReport {
	if loc == nil {
		loc = time.UTC
	}
	r := BWReport{Schema: BWReportSchema, Journal: name, TZ: loc.String(), Torn: info.Torn, TornLine: info.TornLine,
		Hours: []BWHour{}, Evening: Evening{FromHour: o.FromHour, ToHour: o.ToHour, Share: o.Share}}
	if o.Floor > 0 {
		r.Evening.FloorBps = &o.Floor
	}
	var hours [24]bwAcc
	var all, evening bwAcc
	for i, e := range entries {
		e.widen(i == 0, &r.From, &r.To)
		r.Cycles++
		r.Runs = max(r.Runs, e.Run)
		if e.Error != "" || e.BW == nil {
			r.ErrorCycles++
			continue
		}
		t := e.BW
		r.Server, r.Port, r.Protocol, r.Direction = t.Server, t.Port, t.Protocol, t.Direction
		var samples []float64
		for _, iv := range t.Intervals {
			samples = append(samples, iv.Bps)
		}
		if len(samples) == 0 && t.Throughput.Mean != nil {
			samples = []float64{*t.Throughput.Mean}
		}
		h := e.Time.In(loc).Hour()
		for _, a := range []*bwAcc{&hours[h], &all} {
			a.tests++
			a.samples = append(a.samples, samples...)
			if t.Throughput.Mean != nil {
				a.means = append(a.means, *t.Throughput.Mean)
			}
		}
		if InEvening(h, o.FromHour, o.ToHour) {
			evening.tests++
			evening.samples = append(evening.samples, samples...)
		}
	}
	r.Throughput = all.stats()
	for h := range hours {
		if hours[h].tests == 0 {
			continue
		}
		r.Hours = append(r.Hours, BWHour{Hour: h, Tests: hours[h].tests, BWStats: hours[h].stats()})
	}
	r.rankHours()
	es := evening.stats()
	r.Evening.Tests, r.Evening.P5, r.Evening.P50 = evening.tests, es.P5, es.P50
	if o.Floor > 0 && es.P5 != nil {
		r.Verdict = "ok"
		if *es.P5 < o.Share*o.Floor {
			r.Verdict = "oversold"
		}
	}
	return r
}

// bwAcc gathers the tests of one hour of the day (or of the whole watch,
// or of the evening).
type bwAcc struct {
	tests   int
	samples []float64
	means   []float64
}

func (a bwAcc) stats() BWStats {
	s := BWStats{Samples: len(a.samples)}
	if len(a.samples) > 0 {
		v := append([]float64(nil), a.samples...)
		sort.Float64s(v)
		s.P5, s.P50 = ptr(percentile.NearestRank(v, 5)), ptr(percentile.NearestRank(v, 50))
	}
	if len(a.means) > 0 {
		sum := 0.0
		for _, m := range a.means {
			sum += m
		}
		s.Mean = ptr(sum / float64(len(a.means)))
	}
	return s
}

// rankHours names the worst and the best hour by p50, and the oversell
// between them.
func (r *BWReport) rankHours() {
	measured := 0 // hours with a p50
	for i := range r.Hours {
		h := r.Hours[i]
		if h.P50 == nil {
			continue
		}
		measured++
		if r.Worst == nil || *h.P50 < *r.Worst.P50 {
			r.Worst = &r.Hours[i]
		}
		if r.Best == nil || *h.P50 > *r.Best.P50 {
			r.Best = &r.Hours[i]
		}
	}
	// Oversell compares two hours of the day: from one hour there is
	// nothing to compare, and the figure is absent, not 0.
	if measured >= 2 && *r.Best.P50 > 0 {
		r.Oversell = ptr(1 - *r.Worst.P50 / *r.Best.P50)
	}
}

// VerdictText says the verdict in a sentence.
func (r BWReport) VerdictText() string {
	e := r.Evening
	switch {
	case e.FloorBps == nil:
		return "no verdict: give --floor RATE (the bandwidth sold) to judge the evening"
	case e.P5 == nil:
		return fmt.Sprintf("no verdict: no test ran in the evening (%02d:00–%02d:00 %s)", e.FromHour, e.ToHour, r.TZ)
	case r.Verdict == "oversold":
		return fmt.Sprintf("OVERSOLD: evening (%02d:00–%02d:00 %s) p5 %.1f Mbit/s is below %.0f%% of the %.1f Mbit/s floor",
			e.FromHour, e.ToHour, r.TZ, *e.P5/1e6, e.Share*100, *e.FloorBps/1e6)
	default:
		return fmt.Sprintf("ok: evening (%02d:00–%02d:00 %s) p5 %.1f Mbit/s holds %.0f%% of the %.1f Mbit/s floor",
			e.FromHour, e.ToHour, r.TZ, *e.P5/1e6, e.Share*100, *e.FloorBps/1e6)
	}
}

func ptr(v float64) *float64 { return &v }

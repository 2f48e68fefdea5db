package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// TrafficRow is one day, hour or month of a traffic log, as vnstat -d / -h /
// -m show it: volumes per direction, the average rate over the bucket's
// whole length, and how many 5-minute slots were present.
type TrafficRow struct {
	Label    string  `json:"label"` // 2026-10-01, 2026-10-01 13:00, 2026-10
	Start    string  `json:"start"` // RFC 3339 in the zone of the report
	InBytes  int64   `json:"in_bytes"`
	OutBytes int64   `json:"out_bytes"`
	Total    int64   `json:"total_bytes"`
	AvgBps   float64 `json:"avg_bps"` // (in+out)·8 / the bucket's seconds
	Slots    int     `json:"slots"`
	Expected int     `json:"slots_expected"`
	// P95Bps is the month's 95th (nearest-rank, greater) in bit/s; months
	// only (null for days, hours and months without data).
	P95Bps *float64 `json:"p95_bps"`
	// Estimate is set on the unfinished current month: the volumes projected to
	// the month's end at the rate so far (Elapsed of the month measured).
	Estimate *TrafficEstimate `json:"estimate,omitempty"`
}

// TrafficEstimate projects an unfinished month to its end, linearly.
type TrafficEstimate struct {
	Now      string  `json:"now"`
	Elapsed  float64 `json:"elapsed_fraction"` // of the month's seconds, up to now
	InBytes  int64   `json:"in_bytes"`
	OutBytes int64   `json:"out_bytes"`
	Total    int64   `json:"total_bytes"`
}

// TrafficDoc is the JSON document of bill --daily, --hourly and --period all.
type TrafficDoc struct {
	Schema string         `json:"schema"`
	Kind   string         `json:"kind"` // daily, hourly, monthly
	TZ     string         `json:"tz"`
	Series []TrafficTable `json:"series"`
}

// TrafficTable is one series' rows.
type TrafficTable struct {
	Name string       `json:"name"`
	Rows []TrafficRow `json:"rows"`
}

// TrafficBuckets sums s into the days (hourly = false) or hours of p in
// p's zone; a slot belongs to the bucket its start falls in. Buckets
// without any slot are listed with Slots 0.
func TrafficBuckets(s *billing.Series, p billing.Period, hourly bool) []TrafficRow {
	loc := p.Start.Location()
	step := func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
	label := "2006-01-02"
	start := time.Date(p.Start.Year(), p.Start.Month(), p.Start.Day(), 0, 0, 0, 0, loc)
	if hourly {
		step = func(t time.Time) time.Time { return t.Add(time.Hour) }
		label = "2006-01-02 15:00"
		start = p.Start.Truncate(time.Hour)
	}
	var rows []TrafficRow
	i := 0
	for b := start; b.Before(p.End); b = step(b) {
		e := step(b)
		if e.After(p.End) {
			e = p.End
		}
		from, to := max(b.Unix(), p.Start.Unix()), e.Unix()
		rows = append(rows, sumSlots(s, &i, from, to, b.Format(label), b))
	}
	return rows
}

// sumSlots adds the slots of s in [from, to) from index *i on (slots are
// ascending), leaving *i at the first slot at or after to.
func sumSlots(s *billing.Series, i *int, from, to int64, label string, start time.Time) TrafficRow {
	r := TrafficRow{Label: label, Start: start.Format(time.RFC3339), Expected: int((to - from + 299) / 300)}
	var in, out float64
	for *i < len(s.Slots) && s.Slots[*i].Start < from {
		*i++
	}
	for ; *i < len(s.Slots) && s.Slots[*i].Start < to; *i++ {
		in += s.Slots[*i].In
		out += s.Slots[*i].Out
		r.Slots++
	}
	r.InBytes, r.OutBytes = int64(in), int64(out)
	r.Total = r.InBytes + r.OutBytes
	if to > from {
		r.AvgBps = billing.Sig(float64(r.Total) * 8 / float64(to-from))
	}
	return r
}

// MonthRows is the history of s: one row per calendar month of months (in
// their zone) with volumes, average rate and the month's 95th (nearest-rank,
// greater); the month holding now, when not over, carries an estimate
// projected to its end.
func MonthRows(s *billing.Series, months []billing.Period, now time.Time) []TrafficRow {
	var rows []TrafficRow
	i := 0
	for _, m := range months {
		current := !now.Before(m.Start) && now.Before(m.End)
		end := m.End
		if current { // the month so far: a slot stamped after now is not counted
			end = now.Truncate(300 * time.Second)
		}
		r := sumSlots(s, &i, m.Start.Unix(), end.Unix(), m.Start.Format("2006-01"), m.Start)
		if !end.After(m.Start) {
			rows = append(rows, r)
			continue
		}
		if rep, err := billing.BillSeries(s, billing.Period{Start: m.Start, End: end, TZ: m.TZ}, nil, billing.Options{Gaps: "skip", Boundary: billing.BoundaryStart, Scale: 1}); err == nil && rep.P95 != nil && r.Slots > 0 {
			v := rep.P95.GreaterBps
			r.P95Bps = &v
		}
		if current && r.Slots > 0 {
			el := end.Sub(m.Start).Seconds() / m.End.Sub(m.Start).Seconds()
			f := 1 / el
			r.Estimate = &TrafficEstimate{Now: now.In(m.Start.Location()).Format(time.RFC3339), Elapsed: billing.Sig(el),
				InBytes: int64(math.Round(float64(r.InBytes) * f)), OutBytes: int64(math.Round(float64(r.OutBytes) * f))}
			r.Estimate.Total = r.Estimate.InBytes + r.Estimate.OutBytes
			// the average over the month so far, not over slots still to come
			r.AvgBps = billing.Sig(float64(r.Total) * 8 / end.Sub(m.Start).Seconds())
		}
		rows = append(rows, r)
	}
	return rows
}

// TrafficTables renders a TrafficDoc as tables for reading (one per
// series) or, for csv, as one tidy table with a series column.
func TrafficTables(d TrafficDoc, format Format) []Table {
	unit := map[string]string{"daily": "day", "hourly": "hour", "monthly": "month"}[d.Kind]
	if format.Machine() {
		t := Table{Name: d.Kind, Headers: []string{"series", unit, "start", "in_bytes", "out_bytes", "total_bytes", "avg_bps", "slots", "slots_expected"}}
		if d.Kind == "monthly" {
			t.Headers = append(t.Headers, "p95_bps", "estimate", "estimate_in_bytes", "estimate_out_bytes", "estimate_total_bytes", "elapsed_fraction")
		}
		for _, s := range d.Series {
			for _, r := range s.Rows {
				row := []string{s.Name, r.Label, r.Start, strconv.FormatInt(r.InBytes, 10), strconv.FormatInt(r.OutBytes, 10), strconv.FormatInt(r.Total, 10),
					Float(r.AvgBps), strconv.Itoa(r.Slots), strconv.Itoa(r.Expected)}
				if d.Kind == "monthly" {
					p95 := ""
					if r.P95Bps != nil {
						p95 = Float(*r.P95Bps)
					}
					row = append(row, p95)
					if e := r.Estimate; e != nil {
						row = append(row, "true", strconv.FormatInt(e.InBytes, 10), strconv.FormatInt(e.OutBytes, 10), strconv.FormatInt(e.Total, 10), Float(e.Elapsed))
					} else {
						row = append(row, "false", "", "", "", "")
					}
				}
				t.Rows = append(t.Rows, row)
			}
		}
		return []Table{t}
	}
	var out []Table
	for _, s := range d.Series {
		t := Table{Title: fmt.Sprintf("%s traffic, %s (%s)", s.Name, d.Kind, d.TZ),
			Headers: []string{unit, "in", "out", "total", "avg " + RateUnit, "samples"}, Align: "lrrrrr"}
		if d.Kind == "monthly" {
			t.Headers = append(t.Headers, "95th "+RateUnit)
			t.Align += "r"
		}
		var in, outB, tot int64
		for _, r := range s.Rows {
			avg, p95 := "-", "-"
			if r.Slots > 0 {
				avg = Mbit(r.AvgBps)
				avg = avg[:len(avg)-len(RateUnit)-1]
			}
			if r.P95Bps != nil {
				p95 = mbps(*r.P95Bps)
			}
			vin, vout, vtot := "-", "-", "-" // no sample: no volume, not 0
			if r.Slots > 0 {
				vin, vout, vtot = humanBytes(r.InBytes), humanBytes(r.OutBytes), humanBytes(r.Total)
			}
			row := []string{r.Label, vin, vout, vtot, avg, fmt.Sprintf("%d/%d", r.Slots, r.Expected)}
			if d.Kind == "monthly" {
				row = append(row, p95)
			}
			t.Rows = append(t.Rows, row)
			in, outB, tot = in+r.InBytes, outB+r.OutBytes, tot+r.Total
			if e := r.Estimate; e != nil {
				est := []string{r.Label + " estimate", humanBytes(e.InBytes), humanBytes(e.OutBytes), humanBytes(e.Total), "", ""}
				if d.Kind == "monthly" {
					est = append(est, "")
				}
				t.Rows = append(t.Rows, est)
				t.Notes = append(t.Notes, fmt.Sprintf("%s estimate: the month so far (%s of it, to %s) projected to the month's end at the same rate",
					r.Label, Pct(e.Elapsed), e.Now))
			}
		}
		if len(s.Rows) > 1 {
			t.Notes = append([]string{fmt.Sprintf("sum: in %s, out %s, total %s (measured, not estimated)", humanBytes(in), humanBytes(outB), humanBytes(tot))}, t.Notes...)
		}
		out = append(out, t)
	}
	return out
}

// TrafficQuery says which traffic report NewTrafficDoc builds.
type TrafficQuery struct {
	Kind string // monthly, daily or hourly
	Loc  *time.Location
	// History asks for the monthly rows of Months, or, with Months nil, of
	// every calendar month from the series' first slot to their last.
	History bool
	Months  []billing.Period
	// Without History: the days, or the hours (Hourly), of Period, or,
	// with HavePeriod false, of the last calendar month with data.
	Period     billing.Period
	HavePeriod bool
	Hourly     bool
	Now        time.Time // the month holding Now, if not over, is projected to its end
}

// NewTrafficDoc is the traffic report of series (bill --daily, --hourly,
// --period all|A..B): one table of rows per series. The error is
// billing.ErrNoData (or LastMonthWithData's) when the series hold no slot.
func NewTrafficDoc(series []*billing.Series, q TrafficQuery) (TrafficDoc, error) {
	months, period := q.Months, q.Period
	var err error
	switch {
	case q.History && months == nil:
		if months, err = monthsSpanned(series, q.Loc); err != nil {
			return TrafficDoc{}, err
		}
	case !q.History && !q.HavePeriod:
		if period, err = billing.LastMonthWithData(series, q.Loc); err != nil {
			return TrafficDoc{}, err
		}
	}
	doc := TrafficDoc{Schema: "linecheck.bill-traffic/v1", Kind: q.Kind, TZ: q.Loc.String()}
	for _, s := range series {
		t := TrafficTable{Name: s.Name}
		if q.History {
			t.Rows = MonthRows(s, months, q.Now)
		} else {
			t.Rows = TrafficBuckets(s, period, q.Hourly)
		}
		doc.Series = append(doc.Series, t)
	}
	return doc, nil
}

// monthsSpanned is every calendar month in loc from the series' first slot
// to their last.
func monthsSpanned(series []*billing.Series, loc *time.Location) ([]billing.Period, error) {
	first, last := int64(-1), int64(-1)
	for _, s := range series {
		if len(s.Slots) == 0 {
			continue
		}
		if a := s.Slots[0].Start; first < 0 || a < first {
			first = a
		}
		if z := s.Slots[len(s.Slots)-1].Start; z > last {
			last = z
		}
	}
	if first < 0 {
		return nil, billing.ErrNoData
	}
	var months []billing.Period
	a, z := time.Unix(first, 0).In(loc), time.Unix(last, 0).In(loc)
	for m := billing.MonthPeriod(a.Year(), a.Month(), loc); !m.Start.After(z); m = billing.MonthPeriod(m.End.Year(), m.End.Month(), loc) {
		months = append(months, m)
	}
	return months, nil
}

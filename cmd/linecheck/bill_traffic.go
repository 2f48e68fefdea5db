package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
	"github.com/linecheck/linecheck/internal/report"
)

// runBillTraffic is bill --daily, --hourly and --period all|A..B: the
// traffic per day, hour or month, vnstat's and LibreNMS's views, not a bill.
func runBillTraffic(c *cobra.Command, args []string, o *billOptions, history bool, format report.Format) error {
	if err := report.CheckFormat(o.format); err != nil {
		return badInput(err)
	}
	kind := "monthly"
	switch {
	case o.daily && o.hourly:
		return badInput(errors.New("--daily and --hourly: choose one"))
	case (o.daily || o.hourly) && history:
		return badInput(fmt.Errorf("--period %s is the monthly history; --daily and --hourly take one month (--period YYYY-MM) or --from/--to", o.period))
	case o.daily:
		kind = "daily"
	case o.hourly:
		kind = "hourly"
	}
	if o.table != "" && (!format.ChoosesTable() || o.table != kind) {
		return badInput(fmt.Errorf("--table: the %s traffic report is one table, %s (with --format csv)", kind, kind))
	}
	if o.offers != "" {
		return badInput(errors.New("--offers prices a bill: drop it for --daily, --hourly or --period all (traffic only)"))
	}
	loc, err := time.LoadLocation(o.tz)
	if err != nil {
		return badInput(fmt.Errorf("--tz %q: %w", o.tz, err))
	}
	now := time.Now()
	if o.now != "" {
		if now, err = billing.ParseTime(o.now, loc); err != nil {
			return badInput(fmt.Errorf("--now: %w", err))
		}
	}
	var months []billing.Period
	var period billing.Period
	havePeriod := false
	if history {
		if a, b, ok := strings.Cut(o.period, ".."); ok {
			pa, err := billing.ParseMonth(a, loc)
			if err != nil {
				return badInput(fmt.Errorf("--period %s: %w", o.period, err))
			}
			pb, err := billing.ParseMonth(b, loc)
			if err != nil {
				return badInput(fmt.Errorf("--period %s: %w", o.period, err))
			}
			if pb.Start.Before(pa.Start) {
				return badInput(fmt.Errorf("--period %s: the range ends before it starts", o.period))
			}
			for m := pa; !m.Start.After(pb.Start); m = billing.MonthPeriod(m.End.Year(), m.End.Month(), loc) {
				months = append(months, m)
			}
		}
	} else if period, havePeriod, err = billPeriod(o, loc); err != nil {
		return badInput(err)
	}
	if len(args) == 0 {
		return badInput(errors.New("no LOG given: name one or more traffic logs (MRTG, vnstat JSON, rrdtool xport, Prometheus JSON, CSV)"))
	}
	ro := ingest.ReadOptions{Format: o.input, Stamp: o.stamp, Columns: o.columns, Units: o.units, Loc: loc}
	switch {
	case len(months) > 0: // a range of months: read just those
		ro.From, ro.To = months[0].Start.Unix(), months[len(months)-1].End.Unix()
	case history: // all: every slot of the logs (unbounded, the reader keeps the latest month by default)
		ro.From, ro.To = 0, 1<<40 // 1970 to far beyond any log; extreme bounds overflow the reader's preallocation
	case havePeriod:
		ro.From, ro.To = period.Start.Unix(), period.End.Unix()
	}
	series, err := ingest.ReadFiles(args, ro)
	if err != nil {
		return badInput(err)
	}
	if len(series) == 0 {
		return badInput(errors.New("the logs hold no traffic series"))
	}
	if o.aggregate && len(series) > 1 {
		series = []*billing.Series{billing.Aggregate(series, o.aggName)}
	}
	if o.scale != 1 {
		return badInput(errors.New("--scale is a what-if for bills: drop it for traffic reports"))
	}
	if history && months == nil { // all: every month from the first slot to the last
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
			return badInput(fmt.Errorf("%s: %w", strings.Join(args, ", "), billing.ErrNoData))
		}
		a, z := time.Unix(first, 0).In(loc), time.Unix(last, 0).In(loc)
		for m := billing.MonthPeriod(a.Year(), a.Month(), loc); !m.Start.After(z); m = billing.MonthPeriod(m.End.Year(), m.End.Month(), loc) {
			months = append(months, m)
		}
	}
	if !history && !havePeriod {
		if period, err = billing.LastMonthWithData(series, loc); err != nil {
			return badInput(fmt.Errorf("%s: %w", strings.Join(args, ", "), err))
		}
	}
	doc := report.TrafficDoc{Schema: "linecheck.bill-traffic/v1", Kind: kind, TZ: loc.String()}
	for _, s := range series {
		t := report.TrafficTable{Name: s.Name}
		if history {
			t.Rows = report.MonthRows(s, months, now)
		} else {
			t.Rows = report.TrafficBuckets(s, period, o.hourly)
		}
		doc.Series = append(doc.Series, t)
	}
	return report.Render(c.OutOrStdout(), doc, format, tableOptions(c.OutOrStdout(), o.wide))
}

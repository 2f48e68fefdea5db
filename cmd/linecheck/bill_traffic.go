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
	q, err := trafficQuery(o, history, format)
	if err != nil {
		return badInput(err)
	}
	ro := billReadOptions(o, q.Loc)
	switch {
	case len(q.Months) > 0: // a range of months: read just those
		ro.From, ro.To = q.Months[0].Start.Unix(), q.Months[len(q.Months)-1].End.Unix()
	case history: // all: every slot of the logs (unbounded, the reader keeps the latest month by default)
		ro.From, ro.To = 0, 1<<40 // 1970 to far beyond any log; extreme bounds overflow the reader's preallocation
	case q.HavePeriod:
		ro.From, ro.To = q.Period.Start.Unix(), q.Period.End.Unix()
	}
	o.run.step("reading %s", logNames(args))
	series, err := readBillLogs(c.InOrStdin(), args, ro)
	if err != nil {
		return err
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
	o.run.step("tallying the traffic of %s", billing.Count(len(series), "series", "series"))
	doc, err := report.NewTrafficDoc(series, q)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", strings.Join(args, ", "), err))
	}
	return o.run.output(func() error {
		return report.Render(c.OutOrStdout(), doc, format, tableOptions(c.OutOrStdout(), o.wide))
	})
}

// trafficQuery is the traffic report the flags ask for, checked: its kind,
// zone, clock, and the months (history) or the period of days or hours.
func trafficQuery(o *billOptions, history bool, format report.Format) (report.TrafficQuery, error) {
	q := report.TrafficQuery{Kind: "monthly", History: history, Hourly: o.hourly}
	if err := report.CheckFormat(o.format); err != nil {
		return q, err
	}
	switch {
	case o.daily && o.hourly:
		return q, errors.New("--daily and --hourly: choose one")
	case (o.daily || o.hourly) && history:
		return q, fmt.Errorf("--period %s is the monthly history; --daily and --hourly take one month (--period YYYY-MM) or --from/--to", o.period)
	case o.daily:
		q.Kind = "daily"
	case o.hourly:
		q.Kind = "hourly"
	}
	if o.table != "" && (!format.ChoosesTable() || o.table != q.Kind) {
		return q, fmt.Errorf("--table: the %s traffic report is one table, %s (with --format csv)", q.Kind, q.Kind)
	}
	if o.offers != "" {
		return q, errors.New("--offers prices a bill: drop it for --daily, --hourly or --period all (traffic only)")
	}
	var err error
	if q.Loc, err = time.LoadLocation(o.tz); err != nil {
		return q, fmt.Errorf("--tz %q: %w", o.tz, err)
	}
	q.Now = time.Now()
	if o.now != "" {
		if q.Now, err = billing.ParseTime(o.now, q.Loc); err != nil {
			return q, fmt.Errorf("--now: %w", err)
		}
	}
	if !history {
		q.Period, q.HavePeriod, err = billPeriod(o, q.Loc)
		return q, err
	}
	if a, b, ok := strings.Cut(o.period, ".."); ok {
		q.Months, err = monthRange(o.period, a, b, q.Loc)
	}
	return q, err
}

// monthRange is the calendar months from a to b (YYYY-MM), both included;
// arg is the flag's value, for the error.
func monthRange(arg, a, b string, loc *time.Location) ([]billing.Period, error) {
	pa, err := billing.ParseMonth(a, loc)
	if err != nil {
		return nil, fmt.Errorf("--period %s: %w", arg, err)
	}
	pb, err := billing.ParseMonth(b, loc)
	if err != nil {
		return nil, fmt.Errorf("--period %s: %w", arg, err)
	}
	if pb.Start.Before(pa.Start) {
		return nil, fmt.Errorf("--period %s: the range ends before it starts", arg)
	}
	var months []billing.Period
	for m := pa; !m.Start.After(pb.Start); m = billing.MonthPeriod(m.End.Year(), m.End.Month(), loc) {
		months = append(months, m)
	}
	return months, nil
}

// billReadOptions is how the flags say the LOG files are read, in loc.
func billReadOptions(o *billOptions, loc *time.Location) ingest.ReadOptions {
	return ingest.ReadOptions{Format: o.input, Stamp: o.stamp, Columns: o.columns, Units: o.units, Loc: loc}
}

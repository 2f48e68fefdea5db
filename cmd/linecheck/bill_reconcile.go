package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/report"
)

// reconcileSchema is the JSON schema name of the invoice check.
const reconcileSchema = "linecheck.reconcile/v1"

// reconcileDoc is the invoice check's document (bill --billed-mbps or
// --billed-amount): the rules that give the invoice's figure.
type reconcileDoc struct {
	Schema    string                  `json:"schema"`
	Name      string                  `json:"name"`
	Source    string                  `json:"source"`
	Period    string                  `json:"period"`
	Reconcile *billing.Reconciliation `json:"reconcile"`
}

func (d reconcileDoc) JSON() any { return d }

func (d reconcileDoc) Tables(report.Format) []report.Table {
	rc := d.Reconcile
	what := rc.BilledMbps + " Mbps"
	if rc.BilledAmount != "" {
		what = fmt.Sprintf("%s %s for %s", rc.BilledAmount, rc.Currency, rc.Offer)
	}
	rows, title := rc.Matches, fmt.Sprintf("Invoice check, %s %s: %d of %d rules give %s (at %s)",
		d.Source, d.Period, len(rc.Matches), rc.Tried, what, billing.Count(rc.Decimals, "decimal", ""))
	if len(rc.Matches) == 0 {
		rows, title = rc.Nearest, fmt.Sprintf("Invoice check, %s %s: no rule of %d gives %s (at %s); the nearest",
			d.Source, d.Period, rc.Tried, what, billing.Count(rc.Decimals, "decimal", ""))
	}
	t := report.Table{Name: "reconcile", Title: title, Headers: []string{"method", "direction", "gaps", "tz", "95th " + report.RateUnit}, Align: "llllr"}
	if rc.BilledAmount != "" {
		t.Headers = append(t.Headers, "amount", "difference")
		t.Align += "rr"
	} else {
		t.Headers = append(t.Headers, "difference")
		t.Align += "r"
	}
	places := max(rc.Decimals+2, 4)
	for _, f := range rows {
		row := []string{string(f.Method), string(f.Direction), f.Gaps, f.TZ, strconv.FormatFloat(f.BilledMbps, 'f', places, 64)}
		if f.DiffAmount != nil {
			row = append(row, f.Amount, strconv.FormatFloat(*f.DiffAmount, 'f', rc.Decimals+2, 64))
		} else {
			row = append(row, strconv.FormatFloat(f.DiffMbps, 'f', places, 64))
		}
		t.Rows = append(t.Rows, row)
	}
	return []report.Table{t}
}

// runBillReconcile is bill --billed-mbps X (or --billed-amount MONEY
// --offer NAME): the invoice check over one series, in each --tz zone.
func runBillReconcile(c *cobra.Command, args []string, o *billOptions, format report.Format) error {
	doc, err := billReconcile(c, args, o)
	if err != nil {
		return err
	}
	if err := o.run.output(func() error {
		return report.Render(c.OutOrStdout(), doc, format, tableOptions(c.OutOrStdout(), o.wide))
	}); err != nil {
		return err
	}
	if len(doc.Reconcile.Matches) == 0 {
		return verdictFailed("no rule gives the invoice's figure: the nearest are listed")
	}
	return nil
}

// billReconcile checks the flags, reads the one series and reconciles it.
func billReconcile(c *cobra.Command, args []string, o *billOptions) (reconcileDoc, error) {
	var doc reconcileDoc
	switch {
	case o.billedMbps != "" && o.billedAmount != "":
		return doc, badInput(errors.New("--billed-mbps and --billed-amount: give one"))
	case o.billedAmount != "" && (o.offerName == "" || o.offers == ""):
		return doc, badInput(errors.New("--billed-amount needs the offer it was billed under: --offers FILE --offer NAME"))
	case o.billedAmount == "" && o.offerName != "":
		return doc, badInput(errors.New("--offer names the offer of --billed-amount"))
	case o.method != "" || o.direction != "" || c.Flags().Changed("gaps"):
		return doc, badInput(errors.New("--p95-method, --direction and --gaps are what the invoice check searches: drop them"))
	case o.prom.url != "":
		return doc, badInput(errors.New("the invoice check reads LOG files: save the Prometheus query_range answer (curl …/api/v1/query_range > port.json) and give it as LOG"))
	case o.daily || o.hourly || o.plotFile != "" || o.table != "":
		return doc, badInput(errors.New("the invoice check (--billed-mbps, --billed-amount) is one table: drop --daily, --hourly, --plot and --table"))
	}
	var zones []*time.Location
	for _, z := range strings.Split(o.tz, ",") {
		loc, err := time.LoadLocation(strings.TrimSpace(z))
		if err != nil {
			return doc, badInput(fmt.Errorf("--tz %q: %w", z, err))
		}
		zones = append(zones, loc)
	}
	first := *o
	first.tz = zones[0].String()
	q, err := billQueryOf(&first, report.FormatJSON)
	if err != nil {
		return doc, badInput(err)
	}
	// The periods of every zone, read at once: the reader keeps only
	// what it is asked for.
	var periods []billing.Period
	ro := billReadOptions(o, zones[0])
	ro.From, ro.To = 0, 1<<40
	if q.havePeriod {
		for _, loc := range zones {
			p, _, err := billPeriod(o, loc)
			if err != nil {
				return doc, badInput(err)
			}
			periods = append(periods, p)
		}
		ro.From, ro.To = periods[0].Start.Unix(), periods[0].End.Unix()
		for _, p := range periods {
			ro.From, ro.To = min(ro.From, p.Start.Unix()), max(ro.To, p.End.Unix())
		}
	}
	o.run.step("reading %s", logNames(args))
	series, err := readBillLogs(c.InOrStdin(), args, ro)
	if err != nil {
		return doc, err
	}
	if series, err = selectSeries(series, o.ifaces); err != nil {
		return doc, badInput(err)
	}
	if o.aggregate && len(series) > 1 {
		series = []*billing.Series{billing.Aggregate(series, o.aggName)}
	}
	if len(series) != 1 {
		return doc, badInput(fmt.Errorf("the invoice check takes one series, the logs hold %d: pick one with -i NAME, or sum them with --aggregate", len(series)))
	}
	s := series[0]
	if !q.havePeriod {
		p, err := billing.LastMonthWithData(series, zones[0])
		if err != nil {
			return doc, badInput(err)
		}
		y, m, _ := p.Start.Date()
		for _, loc := range zones {
			periods = append(periods, billing.MonthPeriod(y, m, loc))
		}
	}
	o.run.step("trying every rule on %s", s.Name)
	var rc *billing.Reconciliation
	if o.billedAmount != "" {
		var offer *billing.Offer
		for _, of := range q.offers {
			if of.Name == o.offerName {
				offer = of
			}
		}
		if offer == nil {
			names := make([]string, len(q.offers))
			for i, of := range q.offers {
				names[i] = of.Name
			}
			return doc, badInput(fmt.Errorf("--offer %q: %s has no such offer (it has %s)", o.offerName, o.offers, strings.Join(names, ", ")))
		}
		rc, err = billing.ReconcileAmount(s, periods, offer, o.billedAmount, q.opt)
	} else {
		rc, err = billing.Reconcile(s, periods, o.billedMbps, q.opt)
	}
	if err != nil {
		return doc, badInput(fmt.Errorf("--billed-%s: %w", map[bool]string{true: "amount", false: "mbps"}[o.billedAmount != ""], err))
	}
	source := s.Source
	if source == "" {
		source = s.Name
	}
	return reconcileDoc{Schema: reconcileSchema, Name: s.Name, Source: source, Period: periods[0].Label(), Reconcile: rc}, nil
}

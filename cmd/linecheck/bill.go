package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/billing/ingest"
	"github.com/linecheck/linecheck/internal/atomicfile"
	"github.com/linecheck/linecheck/internal/report"
)

// billOptions are the flags of the command.
type billOptions struct {
	prom                                billPromOptions
	offers, period, from, to, tz, gaps  string
	boundary                            string
	method, direction                   string
	aggregate                           bool
	ifaces                              []string
	aggName                             string
	scale                               float64
	usageHours                          string
	horizon                             int
	lint                                bool
	market                              string
	noProjection                        bool
	allowCoarse                         bool
	input, stamp, units                 string
	columns                             []string
	format, plotFile                    string
	table                               string
	daily, hourly, wide                 bool
	now                                 string
	run                                 *billProgress // the run's state for Ctrl-C (nil: not interruptible)
	billedMbps, billedAmount, offerName string        // the invoice check
}

// billLong is the help text of the command.
const billLong = `bill reads a month of recorded traffic (an MRTG log, vnstat --json, rrdtool
xport XML/JSON, a saved Prometheus query_range response, or CSV; the format is
detected by content) and prices it under every offer of --offers, side by side,
with the numbers behind each charge: the samples it had, the 95th percentile by
the rule each provider states, the volume, and every line item.

What it computes (docs/billing.md has the full definitions):
  grid      5-minute slots; rate = bytes·8/300 bit/s; Mbps = 10^6 bit/s
  period    --period YYYY-MM (a calendar month in --tz), or --from (inclusive)
            --to (exclusive); default: the last calendar month with data
  gaps      missing slots are reported; --gaps skip takes percentiles over the
            present slots (default), --gaps zero counts them as zero
  95th      --p95-method nearest-rank (default) | librenms | librenms-legacy |
            vnstat | rrdtool | cacti | linear — the tools differ exactly in the
            rank rounding (librenms: LibreNMS since PR #18481, one rank below
            librenms-legacy)
  boundary  --boundary slot-start (default: a slot belongs when its start is in
            the period) | librenms (LibreNMS's "timestamp > from AND <= to" on
            rows stamped at interval end: the month's last slot drops)
  direction --direction greater (max of the two 95ths, default) | max (95th of
            per-slot max) | sum (95th of in+out) | in | out
  schemes   fixed, per-gb, p95, peak, average, daily-peak-average (per offer)
  GPU use   compute items with billing: hourly (cards × used hours × price),
            monthly (price_per_month), reserved (cards × every hour × price +
            upfront / term_months) or spot (cards × used hours × (1 +
            interruption_overhead) × price); used hours from --usage-hours,
            else the offers file's usage: {hours: N}, else every hour. The
            usage table shows the idle amount (the total at 0 used hours), the
            cost per used GPU-hour and the used hours at which offers cross

An offer states its provider's method and direction; --p95-method and
--direction override them in every 95th/peak/average offer for a what-if
(a per-GB offer keeps the direction it charges), --scale F multiplies the
traffic. Several LOGs (or a CSV with an interface column) are billed each on
its own; --aggregate sums them per slot into one bill (per-port 95ths are never
added). -i NAME (as vnstat -i; repeat it or give a comma list) keeps only the
series of that name (a vnstat interface, a CSV interface column value, a
file's base name); with --aggregate, the sum of just those. Without --offers,
bill reports traffic, samples and the 95th figures. A LOG of - is standard
input (named stdin). Ctrl-C stops a run at once, says what it was doing
(reading which log, billing) and exits 130 with nothing written.

Invoice check: --billed-mbps X lists every 95th method, direction rule and
gap policy (in each zone of --tz, a comma list) whose figure rounds to X at
the invoice's precision (the decimals of X), nearest first; --billed-amount
MONEY --offer NAME does the same for that offer's bill. When no rule gives
it, the nearest are listed and the exit code is 1 (JSON reconcile.matches,
reconcile.nearest).

An offer with port_mbps is judged against the traffic: when the 95th exceeds
the port it cannot carry it (✗, never cheapest); when only the peak does, it
is flagged with its slots above the port (in, out, in+out). Tables round for
reading; --format json and csv carry every figure at full precision. Traffic
that cannot be billed (a volume beyond 9.2 EB, a --scale that overflows) is
refused with exit 2.

Examples:
  linecheck bill samples/traffic/2026-10.csv --offers samples/offers.yaml
  linecheck bill port1.log --period 2026-10 --tz Asia/Shanghai --format json
  linecheck bill eth0.json eth1.json --aggregate --direction sum --offers offers.yaml
  linecheck bill vnstat.json -i eth0 --daily
  vnstat --json -i eth0 | linecheck bill - --offers offers.yaml
  linecheck bill port.log --period 2026-10 --billed-mbps 260.54 --tz UTC,Asia/Shanghai
  linecheck bill ports.csv -i xe-0/0/1,xe-0/0/2 --aggregate --offers offers.yaml
  linecheck bill traffic.csv --offers offers.yaml --scale 2 --plot month.svg
  linecheck bill traffic.csv --offers offers.yaml --usage-hours 200
  linecheck bill traffic.csv --offers offers.yaml --horizon 24
  linecheck bill traffic.csv --offers offers.yaml --lint --market market.yaml
  linecheck bill counters.csv --units counter64 --from 2026-10-01 --to 2026-10-16
  linecheck bill port.csv --offers offers.yaml --p95-method librenms --boundary librenms
  linecheck bill traffic.csv --offers offers.yaml --format csv --table items`

func newBillCmd() *cobra.Command {
	o := &billOptions{}
	c := &cobra.Command{
		Use:   "bill [flags] LOG...",
		Short: "Simulate what each offer would bill for recorded traffic",
		Long:  billLong,
		Args:  cobra.ArbitraryArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runBillInterruptible(c, args, o) },
	}

	addBillPromFlags(c, &o.prom)
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.offers, "offers", "", "price sheets (YAML `FILE`); without it only traffic and 95th figures are reported")
		f.StringVar(&o.period, "period", "", "bill the calendar month `YYYY-MM` in --tz; all or YYYY-MM..YYYY-MM: the history, one row per month (volumes, average, 95th; the unfinished current month with its estimate)")
		switchVarP(f, &o.period, "monthly", "m", "all", "traffic per month of the whole history (vnstat -m): --period all")
		f.BoolVarP(&o.daily, "daily", "d", false, "traffic per day of the period (vnstat -d), instead of the bill")
		f.BoolVar(&o.hourly, "hourly", false, "traffic per hour of the period (vnstat -h), instead of the bill")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the tables on one line, however wide (default: fit the terminal, else 120 columns)")
		f.StringVar(&o.now, "now", "", "the current time for the month-end estimate (RFC 3339; tests)")
		_ = f.MarkHidden("now")
		f.StringVar(&o.from, "from", "", "period start, inclusive (RFC 3339, YYYY-MM-DD[THH:MM] in --tz, or unix seconds)")
		f.StringVar(&o.to, "to", "", "period end, exclusive")
		f.StringVar(&o.tz, "tz", "UTC", "time `ZONE` of the period's calendar (e.g. Asia/Shanghai)")
		f.StringVar(&o.gaps, "gaps", "skip", "missing slots: skip (percentile over present slots) or zero")
		f.StringVar(&o.boundary, "boundary", "slot-start", "which slots belong to the period: slot-start (start in [from, to)) or librenms (rows stamped at interval end, > from and <= to − 1 s: a month's last slot drops)")
		f.StringVar(&o.method, "p95-method", "", "override every offer's 95th method: "+strings.Join(billing.Names(billing.Methods), ", "))
		f.StringVar(&o.direction, "direction", "", "override the direction rule of every 95th/peak/average offer: "+strings.Join(billing.Names(billing.Directions), ", "))
		f.BoolVar(&o.aggregate, "aggregate", false, "sum all series per slot into one bill")
		f.StringSliceVarP(&o.ifaces, "interface", "i", nil, "bill only the series named `NAME` (vnstat -i; repeat or comma-separate)")
		f.StringVar(&o.aggName, "aggregate-name", "aggregate", "name of the --aggregate series")
		f.Float64Var(&o.scale, "scale", 1, "multiply the traffic by `F` (what-if)")
		f.BoolVar(&o.noProjection, "no-projection", false, "leave out the month projected from a partial recording (per-GB volume scaled to the month, 95th as measured)")
		f.StringVar(&o.usageHours, "usage-hours", "", "price every offer at `H` used hours of the GPU machine in the period (overrides the offers file's usage; at most the period's hours)")
		f.IntVar(&o.horizon, "horizon", 0, "also price every offer over `N` months of 730 hours (a purchase as price − resale, reserved terms to their end) and name the cheapest over them")
		f.BoolVar(&o.lint, "lint", false, "check every offer's quote: hidden items missing (storage, public IPs, snapshots or backups, support), storage dearer than the compute")
		f.StringVar(&o.market, "market", "", "with --lint, also check card-hour prices against the bands of this dated reference `FILE` (date, sources, card_hour)")
		f.BoolVar(&o.allowCoarse, "allow-coarse", false, "bill percentile schemes on data coarser than 5 minutes (biased low)")
		f.StringVar(&o.input, "input", "", "force the input format: "+strings.Join(ingest.Formats, ", "))
		f.StringVar(&o.stamp, "stamp", "", "CSV timestamps mark the interval start (default) or end")
		f.StringSliceVar(&o.columns, "columns", nil, "in,out column names (rrdtool legends, CSV headers, Prometheus direction labels)")
		f.StringVar(&o.units, "units", "", "CSV values: "+strings.Join(ingest.Units, ", ")+" (default from the header; readings that only rise, under counter names, are read as counters)")
		f.StringVar(&o.format, "format", "table", "output: "+report.FormatList())
		f.StringVar(&o.table, "table", "", "with --format csv, the one table to write: "+strings.Join(report.BillCSVNames, ", ")+" (default bills)")
		f.StringVar(&o.billedMbps, "billed-mbps", "", "invoice check: list the 95th rules (method, direction, gaps, each --tz zone) whose figure rounds to `X` Mbps at the invoice's precision")
		f.StringVar(&o.billedAmount, "billed-amount", "", "invoice check: list the rules under which --offer's bill rounds to `MONEY`")
		f.StringVar(&o.offerName, "offer", "", "the offer (of --offers) of --billed-amount")
		f.StringVar(&o.plotFile, "plot", "", "draw the traffic with the 95th and commit lines to `FILE`.svg or .png (several series: FILE-NAME.svg each)")
	})
	return c
}

// billPeriod resolves --period / --from / --to in loc; ok = false means "the
// last month with data", decided after reading.
func billPeriod(o *billOptions, loc *time.Location) (p billing.Period, ok bool, err error) {
	switch {
	case o.period != "" && (o.from != "" || o.to != ""):
		return p, false, errors.New("--period and --from/--to: choose one")
	case o.period != "":
		p, err = billing.ParseMonth(o.period, loc)
		if err != nil {
			return p, false, fmt.Errorf("--period: %w", err)
		}
		return p, true, nil
	case o.from != "" || o.to != "":
		if o.from == "" || o.to == "" {
			return p, false, errors.New("--from and --to go together (--to is exclusive)")
		}
		f, err := billing.ParseTime(o.from, loc)
		if err != nil {
			return p, false, fmt.Errorf("--from: %w", err)
		}
		t, err := billing.ParseTime(o.to, loc)
		if err != nil {
			return p, false, fmt.Errorf("--to: %w", err)
		}
		p, err = billing.RangePeriod(f, t, loc)
		return p, err == nil, err
	}
	return p, false, nil
}

func runBill(c *cobra.Command, args []string, o *billOptions) error {
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return badInput(err)
	}
	if fl := c.Flags(); fl.Changed("monthly") && fl.Changed("period") {
		return badInput(errors.New("-m (--monthly) and --period: -m is --period all; give one"))
	}
	if o.billedMbps != "" || o.billedAmount != "" || o.offerName != "" {
		return runBillReconcile(c, args, o, format)
	}
	history := o.period == "all" || strings.Contains(o.period, "..")
	if history || o.daily || o.hourly {
		return runBillTraffic(c, args, o, history, format)
	}
	q, err := billQueryOf(o, format)
	if err != nil {
		return badInput(err)
	}
	series, err := billSeries(c, args, o, &q)
	if err != nil {
		return err
	}
	o.run.step("billing %s for %s", billing.Count(len(series), "series", "series"), q.period.Label())
	reports, err := billAll(series, q.period, q.offers, q.opt)
	if err != nil {
		return badInput(err)
	}
	var files []report.ChartFile
	if o.plotFile != "" {
		o.run.step("drawing %s", o.plotFile)
		if files, err = report.BillChartFiles(o.plotFile, series, reports, q.period, q.offers, o.scale); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	topt := tableOptions(c.OutOrStdout(), o.wide)
	topt.Table = o.table
	return o.run.output(func() error {
		if err := writeChartFiles(files); err != nil {
			return err
		}
		return report.Render(c.OutOrStdout(), report.BillReport{Reports: reports}, format, topt)
	})
}

// billQuery is a bill the flags ask for: the zone, the period (when given),
// the offers and the billing options.
type billQuery struct {
	loc        *time.Location
	period     billing.Period
	havePeriod bool
	offers     []*billing.Offer
	opt        billing.Options
}

// billQueryOf checks the flags of a bill and loads the offers.
func billQueryOf(o *billOptions, format report.Format) (billQuery, error) {
	var q billQuery
	if err := report.CheckTableFlag(format, o.table != "", report.BillCSVNames...); err != nil {
		return q, err
	}
	if _, err := (report.BillReport{}).CSVTable(o.table); err != nil {
		return q, err
	}
	if o.gaps != "skip" && o.gaps != "zero" {
		return q, fmt.Errorf("--gaps %q: use skip or zero", o.gaps)
	}
	opt, err := billOptionsOf(o)
	if err != nil {
		return q, err
	}
	if o.plotFile != "" {
		if ext := strings.ToLower(filepath.Ext(o.plotFile)); ext != ".svg" && ext != ".png" {
			return q, fmt.Errorf("--plot %q: the file name must end in .svg or .png", o.plotFile)
		}
	}
	if q.loc, err = time.LoadLocation(o.tz); err != nil {
		return q, fmt.Errorf("--tz %q: %w", o.tz, err)
	}
	if q.period, q.havePeriod, err = billPeriod(o, q.loc); err != nil {
		return q, err
	}
	if o.offers != "" {
		if q.offers, err = billing.LoadOffers(o.offers); err != nil {
			return q, err
		}
	}
	q.opt = opt
	return q, nil
}

// billOptionsOf is the billing rules the flags set: the boundary, the 95th
// method and direction rule when given, the scale.
func billOptionsOf(o *billOptions) (billing.Options, error) {
	opt := billing.Options{Gaps: o.gaps, AllowCoarse: o.allowCoarse, Scale: o.scale, NoProjection: o.noProjection}
	var err error
	if opt.Boundary, err = billing.ParseBoundary(o.boundary); err != nil {
		return opt, fmt.Errorf("--boundary: %w", err)
	}
	if o.method != "" {
		if opt.Method, err = billing.ParseMethod(o.method); err != nil {
			return opt, fmt.Errorf("--p95-method: %w", err)
		}
	}
	if o.direction != "" {
		if opt.Direction, err = billing.ParseDirection(o.direction); err != nil {
			return opt, fmt.Errorf("--direction: %w", err)
		}
	}
	if !prPositive(o.scale) {
		return opt, fmt.Errorf("--scale %v: want a positive, finite factor", o.scale)
	}
	return opt, nil
}

// billSeries is the traffic to bill: from PromQL (--prometheus) or the LOG
// files, the -i series, aggregated with --aggregate; without a period, q
// gets the last calendar month with data, and the --usage-hours.
func billSeries(c *cobra.Command, args []string, o *billOptions, q *billQuery) ([]*billing.Series, error) {
	// With --prometheus the series come from PromQL (bill_prometheus.go);
	// handled = false falls back to reading LOG files.
	if o.prom.url != "" {
		o.run.step("querying Prometheus at %s", o.prom.url)
	}
	series, handled, err := billPrometheusSeries(c, args, &o.prom)
	if err != nil {
		return nil, err
	}
	if !handled {
		ro := billReadOptions(o, q.loc)
		if q.havePeriod {
			ro.From, ro.To = q.period.Start.Unix(), q.period.End.Unix()
		}
		o.run.step("reading %s", logNames(args))
		s, err := readBillLogs(c.InOrStdin(), args, ro)
		if err != nil {
			return nil, err
		}
		series = append(series, s...)
	}
	if len(series) == 0 {
		return nil, badInput(errors.New("the logs hold no traffic series"))
	}
	if series, err = selectSeries(series, o.ifaces); err != nil {
		return nil, badInput(err)
	}
	if o.aggregate && len(series) > 1 {
		series = []*billing.Series{billing.Aggregate(series, o.aggName)}
	}
	if !q.havePeriod {
		if q.period, err = billing.LastMonthWithData(series, q.loc); err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", strings.Join(args, ", "), err))
		}
	}
	// Checked after the logs are read, as it always was: which error a
	// run with several shows is part of the output.
	if o.usageHours != "" {
		if q.opt.UsageHours, err = billing.ParseUsageHours(o.usageHours); err != nil {
			return nil, badInput(fmt.Errorf("--usage-hours: %w", err))
		}
	}
	if o.horizon != 0 {
		if o.horizon < 1 || o.horizon > billing.MaxHorizonMonths {
			return nil, badInput(fmt.Errorf("--horizon %d: want the contract's life in whole months, 1 to %d (e.g. 24)", o.horizon, billing.MaxHorizonMonths))
		}
		q.opt.HorizonMonths = o.horizon
	}
	q.opt.Lint = o.lint
	if o.market != "" {
		if q.opt.Market, err = billing.LoadMarket(o.market); err != nil {
			return nil, badInput(fmt.Errorf("--market: %w", err))
		}
		q.opt.Lint = true
	}
	return series, nil
}

// selectSeries keeps the series named in names (-i), in the order read;
// every name must match one, else the error lists the names there are.
func selectSeries(series []*billing.Series, names []string) ([]*billing.Series, error) {
	if len(names) == 0 {
		return series, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if n = strings.TrimSpace(n); n == "" {
			return nil, errors.New("--interface: an empty name")
		}
		want[n] = false
	}
	var out []*billing.Series
	for _, s := range series {
		if _, ok := want[s.Name]; ok {
			want[s.Name] = true
			out = append(out, s)
		}
	}
	var missing []string
	for n, found := range want {
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		have := make([]string, 0, len(series))
		for _, s := range series {
			have = append(have, s.Name)
		}
		const most = 20
		more := ""
		if len(have) > most {
			more, have = fmt.Sprintf(" and %d more", len(have)-most), have[:most]
		}
		return nil, fmt.Errorf("--interface %s: no series of that name; the logs hold %s%s", strings.Join(missing, ", "), strings.Join(have, ", "), more)
	}
	return out, nil
}

// billAll bills every series on its own, on all cores (BillSeries is pure),
// keeping the input order; the first error in that order wins.
func billAll(series []*billing.Series, p billing.Period, offers []*billing.Offer, opt billing.Options) ([]*billing.Report, error) {
	reports := make([]*billing.Report, len(series))
	errs := make([]error, len(series))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(series)) {
		wg.Go(func() {
			for i := range next {
				reports[i], errs[i] = billing.BillSeries(series[i], p, offers, opt)
			}
		})
	}
	for i := range series {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return reports, nil
}

// writeChartFiles writes each chart file atomically (--plot).
func writeChartFiles(files []report.ChartFile) error {
	for _, f := range files {
		if err := atomicfile.WriteFile(f.Name, f.Data, 0o644); err != nil {
			if errors.Is(err, atomicfile.ErrNotRegular) {
				return badInput(fmt.Errorf("--plot: %w", err))
			}
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/atomicfile"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/report"
)

// compareOptions are the flags of the command.
type compareOptions struct {
	noProjection bool
	// advisoryDelivery keeps a failed recorded delivery a warning.
	advisoryDelivery bool
	offline          bool
	strict           bool
	format           string
	plot             string
	table            string
	wide             bool
	output           string
	count            int
	interval         time.Duration
	timeout          time.Duration
	cycles           int
	asnDB            string
	noASN            bool
	usage            string
	horizon          int
	lint             bool
	market           string
	bwTime           time.Duration
	hideHops         int
	multipath        bool
}

// compareLong is the help text of the command.
const compareLong = `compare validates candidate servers before a contract is signed. For every
candidate of CANDIDATES.yaml it measures the line (live probes from this
machine, or with --offline the recorded probe streams and traces only),
decides which carrier line the route rides and in which direction that was
checked, checks the SLA thresholds, prices the users' traffic month under the
candidate's offer (bandwidth scheme plus every other monthly item, converted
with the file's fx rates), and ranks: passing candidates first; then those
whose offer can carry the traffic (its port above the traffic's 95th); then
measured before unmeasured (a candidate no probe answered ranks last); then
by monthly cost, ties by name. It recommends the cheapest passing candidate
whose offer can carry the traffic, saying by how much. A figure without data
is null in the JSON and - in tables, never 0.

The candidates file (docs/compare.md has the full schema):

  vantage: {city: Shanghai}
  users: [{city: Shanghai}, {city: Guangzhou}]
  candidates:
    - name: hk-cn2-gia
      provider: Example Networks
      region: {city: Hong Kong}              # or {lat: 22.32, lon: 114.17}
      targets:
        - {addr: 203.0.113.10, protocol: icmp}
        - {addr: 203.0.113.10, protocol: tcp, port: 443}
      recorded: {forward: rec/hk-forward.json, return: rec/hk-return.mtr.json, probes: rec/hk-ping.ndjson}
      offer: hk-cn2                          # an offer of the offers file
  offers: offers.yaml
  traffic: {log: traffic/2026-10.csv}        # or {monthly_gb: 20000, peak_mbps: 800, shape: diurnal}
  fx: {base: CNY, USD: 7.10}                 # given by you, never fetched
  sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, line_classes: [cn2-gia, cu-9929, cmin2], max_stretch: 2.0}

Relative paths are relative to the YAML file. recorded.probes takes ping
--stream records, or RIPE Atlas / Globalping ping results (each vantage's
probes; 'linecheck vantage fetch' downloads them: docs/vantages.md).
Live probes go only to the
targets listed; documentation addresses and files marked recorded_only: true
(the bundled samples) are refused live and must be run with --offline.

--hide-hops N masks the hops at TTL 1 to N of every route (a report for a
provider need not show your own network): "hidden" for their addresses, no
AS number or network name for them in any rule, note or AS path; the report
says so ("hidden_hops" in JSON). Classes and verdicts are still computed on
the real hops.

Examples:
  linecheck compare --offline samples/candidates.yaml
  linecheck compare --offline --hide-hops 2 --format html -o share.html samples/candidates.yaml
  linecheck compare --offline --format html -o report.html samples/candidates.yaml
  linecheck compare --offline --format json samples/candidates.yaml | jq .recommended
  linecheck compare --count 50 --strict mine.yaml
  linecheck compare --offline --usage-hours 200 samples/candidates.yaml
  linecheck compare --offline --horizon 24 samples/candidates.yaml

Offers are priced at the buyer's used hours of the GPU machine (the offers
file's usage: {hours: N}, or --usage-hours): hourly and spot compute bill the
used hours, monthly and reserved every hour. The GPU usage table shows each
candidate's idle month and cost per used GPU-hour, and the used hours at which
two priced offers cost the same; the HTML report plots every offer's month
against the used hours with the crossings marked.

--horizon N (or horizon_months: N in the file) prices every offer over N
months of 730 hours and ranks by that total: a purchase costs price − resale,
power kW × PUE × hours × price, a reserved term started is paid to its end
with its upfront (docs/billing.md, Horizon).

Throughput (docs/bw.md): a candidate may name its iperf3 server,
  bandwidth_test: {addr: ADDR, port: 5201}   # a stock iperf3 -s on the candidate
and live compare runs a download test against it (--bw-time, 5s after 1s of
warm-up; one candidate after another, each fills the line); recorded.bw
replays a 'linecheck bw --format json' result or a 'bw --watch' journal.
sla.min_throughput_mbps is checked on the p5 of the test's interval rates,
sla.max_oversell (a fraction) on a journal's 1 − worst-hour p50 / best-hour
p50. The report shows what was carried beside the port the offer sells.

Both address families (docs/compare.md, IPv4 and IPv6): a candidate may
list IPv4 and IPv6 targets; each family's first target is traced and each
family is judged on its own targets and route (IPv6's line class from the AS
path: AS4809 CN2 vs AS4134 163 …), side by side in the report (JSON
candidates[].families[]); the candidate's route is its worse family's.
sla: {families: [ipv4, ipv6]} requires each family to pass on its own (a
family without targets or answers fails "no data").

Load-balanced lines (docs/compare.md, Multipath): --multipath, or
multipath: true on a candidate, traces the forward route live with multipath
discovery (UDP flows by destination port toward an ICMP target, TCP flows by
source port toward a TCP one) and judges sla.line_classes on every path found:
it holds only if it holds on each, and the report names the path that fails
and the TTL where it leaves the others. A recorded forward or return trace
made with 'trace --multipath' is judged on every path with or without it.

The days of a trial: recorded.forward and recorded.return take a list of
files, glob patterns ("rec/fwd-*.json") or a 'trace --watch' journal. The
report lists each distinct route (AS path, line class) with when it was first
and last seen in the users' zone, and sla.line_classes (and
line_classes_by_carrier) holds only if every trace's class is allowed: a
failure names the time ("chinanet-163 at 21:05 on 2 Nov, cn2-gia otherwise").
--plot FILE.svg|.png draws the users' day, RTT p95 by hour of day (the HTML
report shows the same chart); an hour without answers is a gap, never 0.

A recorded delivery that fails the order (recorded.gpu against the gpu:
block) fails the candidate: it ranks among the failing, is never
recommended, and the GPU column says FAIL. --advisory-delivery keeps such a
failure a warning on the candidate only.

Exit codes: 0 at least one candidate passes (its SLA and its recorded
delivery; with --strict: all pass), 1 no candidate passes (with --strict:
any fails), 2 bad usage or bad input.`

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	c := &cobra.Command{
		Use:   "compare [flags] CANDIDATES.yaml",
		Short: "Pre-contract validation: line class, SLA verdicts and full monthly cost per candidate, ranked",
		Long:  compareLong,
		Args:  oneArg("CANDIDATES.yaml"),
		RunE:  func(c *cobra.Command, args []string) error { return runCompare(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.BoolVar(&o.offline, "offline", false, "use only the recordings; never send a probe")
		hideHopsFlag(f, &o.hideHops)
		f.BoolVar(&o.strict, "strict", false, "exit 1 when any candidate fails its SLA (default: only when none passes)")
		f.StringVar(&o.format, "format", "table", "report format: "+report.FormatList(report.CompareFormats...))
		f.StringVar(&o.table, "table", "", "with --format csv, the one table to write: "+strings.Join(report.CompareCSVNames, ", ")+" (default ranking; usage, carriers and throughput when the comparison has them)")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the tables on one line, however wide (default: fit the terminal, else 120 columns; a file written with -o: 120)")
		f.StringVar(&o.plot, "plot", "", "draw the users' day (RTT p95 by hour of day, every candidate with timed recorded probes) to `FILE`.svg or .png")
		f.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout")
		f.IntVarP(&o.count, "count", "c", 20, "live: probes per target")
		durationVarP(f, &o.interval, "interval", "i", 200*time.Millisecond, "live: interval between probes to one target (seconds, 0.2, or a Go duration, 200ms)")
		durationVarP(f, &o.timeout, "timeout", "W", time.Second, "live: reply timeout (seconds or a Go duration)")
		f.IntVar(&o.cycles, "cycles", 3, "live: trace cycles for the forward route")
		f.BoolVar(&o.multipath, "multipath", false, "trace the forward route with multipath discovery (as trace --multipath) and judge sla.line_classes on every path; as multipath: true on every candidate")
		f.StringVar(&o.asnDB, "asn-db", "", "offline IP-to-ASN file (iptoasn TSV or mmdb) besides the bundled prefix table")
		f.BoolVar(&o.noASN, "no-asn", false, noASNUsage)
		f.BoolVar(&o.advisoryDelivery, "advisory-delivery", false, "keep a failed recorded delivery (recorded.gpu against the gpu: block) a warning instead of failing the candidate")
		f.BoolVar(&o.noProjection, "no-projection", false, "leave out the month projected from a partial traffic recording (per-GB volume scaled to the month, 95th as measured)")
		f.IntVar(&o.horizon, "horizon", 0, "price every offer over `N` months of 730 hours and rank by that total (overrides the file's horizon_months)")
		f.BoolVar(&o.lint, "lint", false, "warn of each candidate's quote lacking hidden items (storage, public IPs, snapshots or backups, support) or with storage dearer than its compute")
		f.StringVar(&o.market, "market", "", "with --lint, also check card-hour prices against the bands of this dated reference `FILE` (docs/billing.md, Lint)")
		f.StringVar(&o.usage, "usage-hours", "", "rank at `H` used hours of the GPU machine in the month (overrides the offers file's usage; at most the month's hours)")
		durationVarP(f, &o.bwTime, "bw-time", "", engine.DefaultBWTime, "live: measured time of each candidate's throughput test (bandwidth_test; after 1s of warm-up)")
	})
	addPrefixTableFlag(c)
	return c
}

func runCompare(c *cobra.Command, args []string, o *compareOptions) error {
	format, err := report.ParseFormat(o.format, report.CompareFormats...)
	if err != nil {
		return badInput(err)
	}
	if err := checkCompareFlags(c, o, format); err != nil {
		return badInput(err)
	}
	if o.output != "" {
		// A FIFO or device at -o fails now, not after the whole run.
		if err := atomicfile.Check(o.output); err != nil {
			return badInput(fmt.Errorf("-o: %w", err))
		}
	}
	if o.plot != "" {
		if err := atomicfile.Check(o.plot); err != nil {
			return badInput(fmt.Errorf("--plot: %w", err))
		}
	}
	f, err := candidates.Load(args[0])
	if err != nil {
		return badInput(err)
	}
	fileWarnings(c.ErrOrStderr(), "compare", f)
	if !o.offline {
		// The same bound as ping's (compare --count 1000000000000 died
		// out of memory with a runtime stack): every probe of the run is
		// held until the verdict.
		targets := 0
		for _, cand := range f.Candidates {
			targets += max(len(cand.Targets), 1)
		}
		if err := checkProbeTotal(o.count, targets, "use a smaller --count"); err != nil {
			return badInput(err)
		}
	}
	if o.multipath {
		for i := range f.Candidates {
			f.Candidates[i].Multipath = true
		}
	}
	opt, err := compareRunOptions(c, o)
	if err != nil {
		return badInput(err)
	}
	if compareIsTerminal(os.Stderr) {
		opt.Progress = func(s string) { fmt.Fprintf(os.Stderr, "\r\033[K%s", s) }
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	r, err := compare.Run(ctx, f, opt)
	if opt.Progress != nil {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	if err != nil {
		if interrupted() {
			return errInterrupted
		}
		return badInput(err)
	}
	// Masked once, on the result every format renders, after the classes
	// and verdicts were computed on the real hops.
	r = compare.HideHops(r, o.hideHops)
	if err := writeCompare(c, o, report.CompareReport{Result: r}, format); err != nil {
		return err
	}
	if o.plot != "" {
		pf, ok, err := report.CompareHourlyChartFile(o.plot, r)
		switch {
		case err != nil:
			return fmt.Errorf("--plot: %w", err)
		case !ok:
			fmt.Fprintf(c.ErrOrStderr(), "linecheck compare: warning: --plot %s not written: no candidate has an hour of recorded probes with an answer (recorded.probes)\n", o.plot)
		default:
			if err := writeChartFiles([]report.ChartFile{pf}); err != nil {
				return err
			}
		}
	}
	return compareExit(r, o.strict)
}

// fileWarnings prints what a candidates file was accepted despite (a key
// under its old name), one line each, naming the command.
func fileWarnings(w io.Writer, cmd string, f *candidates.File) {
	if f == nil {
		return
	}
	for _, m := range f.Warnings {
		fmt.Fprintf(w, "linecheck %s: warning: %s\n", cmd, m)
	}
}

// checkCompareFlags refuses values and combinations of compare's flags
// that cannot run, before the candidates file is read.
func checkCompareFlags(c *cobra.Command, o *compareOptions, format report.Format) error {
	if err := checkHideHops(o.hideHops); err != nil {
		return err
	}
	if err := report.CheckTableFlag(format, o.table != "", report.CompareCSVNames...); err != nil {
		return err
	}
	if ext := strings.ToLower(filepath.Ext(o.plot)); o.plot != "" && ext != ".svg" && ext != ".png" {
		return fmt.Errorf("--plot %q: the file name must end in .svg or .png", o.plot)
	}
	if o.table != "" && !slices.Contains(report.CompareCSVNames, o.table) {
		return fmt.Errorf("--table %q: compare's CSV tables are %s", o.table, strings.Join(report.CompareCSVNames, ", "))
	}
	switch {
	case o.count < 1:
		return fmt.Errorf("--count %d: must be at least 1", o.count)
	case o.cycles < 1:
		return fmt.Errorf("--cycles %d: must be at least 1", o.cycles)
	case o.bwTime <= 0:
		return fmt.Errorf("--bw-time %v: must be positive", o.bwTime)
	case o.interval <= 0 || o.timeout <= 0:
		return fmt.Errorf("--interval %v, --timeout %v: both must be positive", o.interval, o.timeout)
	}
	if !o.offline {
		return nil
	}
	var live []string
	for _, n := range []string{"count", "interval", "timeout", "cycles", "bw-time"} {
		if c.Flags().Changed(n) {
			live = append(live, "--"+n)
		}
	}
	if len(live) > 0 {
		return fmt.Errorf("--offline replays the recordings and sends no probe, so %s would be ignored: "+
			"drop %s, or drop --offline to measure live", strings.Join(live, ", "), strings.Join(live, " "))
	}
	return nil
}

// compareRunOptions is the run the flags ask compare.Run for.
func compareRunOptions(c *cobra.Command, o *compareOptions) (compare.Options, error) {
	opt := compare.Options{Offline: o.offline, Now: clockFrom(c.Context())().UTC(), Count: o.count, Interval: o.interval,
		Timeout: o.timeout, TraceCycles: o.cycles, ASNDB: o.asnDB, NoASN: o.noASN, PrefixTable: prefixTableOf(c), BWTime: o.bwTime, NoProjection: o.noProjection,
		AdvisoryDelivery: o.advisoryDelivery, Prober: engine.Sender{}}
	if o.usage != "" {
		var err error
		if opt.UsageHours, err = billing.ParseUsageHours(o.usage); err != nil {
			return opt, fmt.Errorf("--usage-hours: %w", err)
		}
	}
	if c.Flags().Changed("horizon") {
		if o.horizon < 1 || o.horizon > billing.MaxHorizonMonths {
			return opt, fmt.Errorf("--horizon %d: want the contract's life in whole months, 1 to %d (e.g. 24)", o.horizon, billing.MaxHorizonMonths)
		}
		opt.HorizonMonths = o.horizon
	}
	opt.Lint = o.lint
	if o.market != "" {
		var err error
		if opt.Market, err = billing.LoadMarket(o.market); err != nil {
			return opt, fmt.Errorf("--market: %w", err)
		}
		opt.Lint = true
	}
	return opt, nil
}

// writeCompare renders the report to stdout, or with -o atomically to the
// file, saying so on stderr with the verdict.
func writeCompare(c *cobra.Command, o *compareOptions, doc report.CompareReport, format report.Format) error {
	if format.ChoosesTable() { // the one table asked for; a missing optional one is bad input, before anything is written
		if _, err := doc.CSVTable(o.table); err != nil {
			return badInput(fmt.Errorf("%w (this comparison has no %s table)", err, o.table))
		}
	}
	topt := tableOptions(c.OutOrStdout(), o.wide)
	if o.output != "" {
		topt = report.Options{Width: report.DefaultWidth, Wide: o.wide}
	}
	topt.Table = o.table
	write := func(w io.Writer) error { return report.Render(w, doc, format, topt) }
	if o.output == "" {
		return write(c.OutOrStdout())
	}
	// Atomic: a full disk or a failed render never leaves a truncated
	// report, and a previous report of that name survives a failed run.
	if err := atomicfile.Write(o.output, 0o644, write); err != nil {
		return badInput(fmt.Errorf("-o %s: %w", o.output, err))
	}
	fmt.Fprintf(c.ErrOrStderr(), "wrote %s: %s\n", o.output, doc.Result.Verdict)
	return nil
}

// compareExit is the exit status of a comparison: 130 when interrupted, 1
// when no candidate passes (with --strict: when any fails).
func compareExit(r *compare.Result, strict bool) error {
	if r.Partial {
		return errInterrupted
	}
	slaOnly := 0
	for _, e := range r.Candidates {
		if e.SLA.Pass {
			slaOnly++
		}
	}
	if n := r.Passing(); n == 0 && slaOnly > 0 {
		return verdictFailed(fmt.Sprintf("no candidate passes: %d of %d pass the SLA but fail their recorded delivery", slaOnly, len(r.Candidates)))
	} else if n == 0 {
		return verdictFailed(fmt.Sprintf("no candidate passes the SLA (%d checked)", len(r.Candidates)))
	} else if strict && n < len(r.Candidates) {
		return verdictFailed(fmt.Sprintf("--strict: %d of %d candidates fail the SLA or their recorded delivery", len(r.Candidates)-n, len(r.Candidates)))
	}
	return nil
}

// compareIsTerminal reports whether f is a character device (a terminal).
func compareIsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

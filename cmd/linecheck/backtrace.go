package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// backtraceOptions are the flags of the command.
type backtraceOptions struct {
	targets     string
	list        bool
	bundled     bool
	proto       string
	port        int
	maxTTL      int
	cycles      int
	interval    time.Duration
	timeout     time.Duration
	rate        float64
	v4, v6      bool
	format      string
	asnDB       string
	noASN       bool
	prefixTable string
	vantage     string
	samples     bool
	wide        bool
	hideHops    int
	multipath   bool
}

// DefaultBacktraceRate is the packets per second of all targets together.
const DefaultBacktraceRate = 500

func newBacktraceCmd() *cobra.Command {
	o := &backtraceOptions{}
	c := &cobra.Command{
		Use:   "backtrace [flags]",
		Short: "Return routes from this server to the Chinese carriers: line class per target (三网回程)",
		Long: `backtrace runs on the server you rent (or consider renting) and traces the
return route, the one users download over, toward every target of a target set
at once: China Telecom, China Unicom and China Mobile in the main cities. Each
route is classified by its long haul (cn2-gia, cn2-gt, chinanet-163, cu-9929,
cu-4837, cmin2, cmi, transit, unknown) and printed as one row per target:
carrier, city, line class, confidence, the evidence in one phrase ("CN2 ×5,
lands on ChinaNet Shanghai"), RTT p50/p95 and loss to the destination, and
whether it was reached. --format json adds the full linecheck.trace/v1 per target.

Traces work as in 'trace': Paris ICMP by default, --proto tcp --port 443 (or
udp), --cycles N for mtr-style statistics. All targets are traced at once and
--rate paces the probes of all of them together.

Targets: --targets FILE, YAML
  targets:
    - {name: sh-telecom, carrier: telecom, city: Shanghai, addr: 192.0.2.10}
carrier is telecom, unicom, mobile or other; addr an IP address. Without
--targets the bundled set is used (real addresses in China; 'backtrace --list'
shows them with the public source of each). Probing the bundled set needs a
person at a terminal, or --bundled in scripts: nothing traces it by accident.

--prefix-table FILE adds carrier prefixes in the bundled table's format
(tab-separated cidr, asn, name, class, china, role, source); it takes
precedence over the bundled table and over the private/reserved exclusion, so
your own numbering (or a lab) can stand in for carrier ranges.

--hide-hops N masks the hops at TTL 1 to N of every route (the server's own
network) in every format: address "hidden", no AS number, name, country or
carrier, left out of the AS path; the report says so ("hidden_hops" in JSON).
The line class is still computed on the real hops.

--multipath finds every load-balanced path toward each target (the MDA of
'trace --multipath', 95 % confidence, at most 3000 probes per target, one
target after another; UDP flows by destination port unless --proto says
otherwise) and classifies each path: a target's line class is its weakest
path's, and the report lists every path with its flows and class.

Examples:
  linecheck backtrace --list
  linecheck backtrace                               # the bundled set, from a terminal
  linecheck backtrace --targets users.yaml --cycles 10 --format json > return.json
  linecheck backtrace --targets users.yaml --proto tcp --port 443 --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error { return runBacktrace(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.targets, "targets", "", "target list `FILE` (YAML targets: [{name, carrier, city, addr}]) instead of the bundled set")
		f.BoolVar(&o.list, "list", false, "list the target set (with sources) and exit; nothing is sent")
		f.BoolVar(&o.bundled, "bundled", false, "trace the bundled target set without a terminal (scripts, cron)")
		f.StringVar(&o.proto, "proto", "icmp", "probe protocol: "+probe.ProtocolNames(probe.TraceProtocols()))
		f.IntVarP(&o.port, "port", "p", 0, "destination port for udp (default 33434) and tcp (default 80); ignored for icmp")
		f.IntVarP(&o.maxTTL, "max-ttl", "m", probe.DefaultMaxTTL, "highest TTL probed")
		f.IntVarP(&o.cycles, "cycles", "c", 1, "rounds over all TTLs per target (mtr style)")
		durationVarP(f, &o.interval, "interval", "i", time.Second, "time between the starts of two cycles (seconds, 0.5, or a Go duration, 500ms)")
		durationVarP(f, &o.timeout, "timeout", "W", probe.DefaultTraceTimeout, "a reply later than this is late, not received (seconds or a Go duration)")
		f.Float64Var(&o.rate, "rate", DefaultBacktraceRate, "packets per second of all targets together")
		f.BoolVarP(&o.v4, "ipv4", "4", false, "IPv4 targets only")
		f.BoolVarP(&o.v6, "ipv6", "6", false, "IPv6 targets only")
		f.StringVar(&o.format, "format", "table", "output format: "+report.FormatList())
		f.StringVar(&o.asnDB, "asn-db", "", "offline IP-to-ASN `FILE` (iptoasn TSV or .mmdb) used beside the bundled carrier table")
		f.BoolVar(&o.noASN, "no-asn", false, noASNUsage)
		f.StringVar(&o.prefixTable, "prefix-table", "", "carrier prefix `FILE` in the bundled table's format, ahead of the bundled table and the private/reserved exclusion")
		f.StringVar(&o.vantage, "vantage", "", "name of this server in the report (default: the host name)")
		f.BoolVar(&o.samples, "samples", false, "keep every RTT sample (samples_ms) in the JSON traces")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the table on one line, however wide (default: fit the terminal, else 120 columns)")
		hideHopsFlag(f, &o.hideHops)
		f.BoolVar(&o.multipath, "multipath", false, "find every load-balanced path toward each target (as trace --multipath; UDP unless --proto says otherwise) and classify each path")
	})
	return c
}

// addPrefixTableFlag gives cmd a --prefix-table flag, loaded (or cleared)
// before cmd runs.
func addPrefixTableFlag(cmd *cobra.Command) {
	var path string
	lazyFlags(cmd, func(f *pflag.FlagSet) {
		f.StringVar(&path, "prefix-table", "", "carrier prefix `FILE` in the bundled table's format (cidr, asn, name, class, china, role, source), ahead of the bundled table and the private/reserved exclusion")
	})
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		t, err := loadPrefixTable(path)
		if err != nil {
			return badInput(err)
		}
		withPrefixTable(c, t)
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// loadPrefixTable loads --prefix-table (nil when not given).
func loadPrefixTable(path string) (*route.PrefixTable, error) {
	if path == "" {
		return nil, nil
	}
	return route.LoadPrefixTable(path)
}

// prefixTableKey holds a command's --prefix-table in its context: the table
// is a value handed to the lookups (route.Names.Table), not process state.
type prefixTableKey struct{}

// withPrefixTable hands t to c's run function (prefixTableOf).
func withPrefixTable(c *cobra.Command, t *route.PrefixTable) {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	c.SetContext(context.WithValue(ctx, prefixTableKey{}, t))
}

// prefixTableOf is the --prefix-table its PreRunE loaded for c (nil: none).
func prefixTableOf(c *cobra.Command) *route.PrefixTable {
	if ctx := c.Context(); ctx != nil {
		if t, ok := ctx.Value(prefixTableKey{}).(*route.PrefixTable); ok {
			return t
		}
	}
	return nil
}

func runBacktrace(c *cobra.Command, _ []string, o *backtraceOptions) error {
	if err := keepPrivilegesInHelper(); err != nil {
		return err
	}
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return badInput(err)
	}
	if err := checkHideHops(o.hideHops); err != nil {
		return badInput(err)
	}
	targets, title, from, err := backtraceTargetSet(o.targets)
	if err != nil {
		return badInput(err)
	}
	out := c.OutOrStdout()
	if o.list {
		return report.Render(out, report.BacktraceList{Title: title, Targets: targets}, format, tableOptions(out, o.wide))
	}
	if o.targets == "" && !o.bundled && !(prIsTTY(os.Stdin) && prIsTTY(c.ErrOrStderr())) {
		return badInput(errors.New("no --targets FILE and no terminal: tracing the bundled target set (real addresses in China, see 'linecheck backtrace --list') " +
			"needs a person at a terminal or --bundled; give --targets FILE to trace your own list"))
	}
	table, err := loadPrefixTable(o.prefixTable)
	if err != nil {
		return badInput(err)
	}
	db, err := hopNamesDB(o.asnDB, o.noASN, table, c.ErrOrStderr())
	if err != nil {
		return badInput(err)
	}
	sel, cfg, err := backtraceSelect(c, o, targets, from)
	if err != nil {
		return badInput(err)
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	stderr := c.ErrOrStderr()
	vantage := o.vantage
	if vantage == "" {
		vantage, _ = os.Hostname()
	}
	doc := &route.BacktraceDoc{Schema: route.BacktraceSchema, Vantage: vantage, ASNData: route.DataInfo(db)}
	if o.multipath {
		doc.Results = backtraceMultipath(ctx, stderr, sel, backtraceMultipathConfig(c, o, cfg), db, o.samples)
	} else {
		results, err := traceBacktraceTargets(ctx, stderr, sel, cfg, o.rate)
		if err != nil {
			return badInput(err)
		}
		for i, t := range sel {
			// A target the interrupt came before is said once, below.
			if err := results[i].Err; err != nil && !errors.Is(err, pacing.ErrNotStarted) {
				fmt.Fprintf(stderr, "linecheck: %s (%s): %v\n", t.Name, t.Addr, err)
			}
			doc.Results = append(doc.Results, route.BacktraceOf(t, results[i].Run, results[i].Err, db, o.samples))
		}
	}
	if interrupted() {
		doc.Partial = true
		fmt.Fprintln(stderr, "linecheck: interrupted; the report covers what was traced so far")
	}
	// Masked once, after every route was classified on its real hops.
	doc = route.HideBacktraceHops(doc, o.hideHops)
	if err := report.Render(out, report.BacktraceReport{Doc: doc}, format, tableOptions(out, o.wide)); err != nil {
		return err
	}
	if interrupted() {
		return errInterrupted
	}
	return nil
}

// backtraceTargetSet is the targets of --targets FILE, or the bundled set
// without it, with the list's title and a name for where they came from.
func backtraceTargetSet(file string) (targets []route.BacktraceTarget, title, from string, err error) {
	if file == "" {
		return route.BundledTargets(), "bundled backtrace target set (data only: never probed by linecheck's tests)", "the bundled target set", nil
	}
	if targets, err = route.LoadTargets(file); err != nil {
		return nil, "", "", err
	}
	return targets, "targets of " + file, file, nil
}

// traceBacktraceTargets traces every target under one --rate budget, with
// a progress line on stderr.
func traceBacktraceTargets(ctx context.Context, stderr io.Writer, sel []route.BacktraceTarget, cfg probe.TraceConfig, rate float64) ([]pacing.TraceOutcome, error) {
	var done atomic.Int32
	stopProgress := prProgress(stderr, func() string {
		return fmt.Sprintf("backtrace: %d/%d targets done", done.Load(), len(sel))
	})
	defer stopProgress()
	names, addrs := make([]string, len(sel)), make([]netip.Addr, len(sel))
	for i, t := range sel {
		names[i], addrs[i] = t.Addr, netip.MustParseAddr(t.Addr)
	}
	return pacing.TraceAll(ctx, names, addrs, cfg, pacing.NewBurstBudget(rate, backtraceBurst), func() { done.Add(1) })
}

// backtraceSelect checks the probing flags and keeps the targets of the
// family -4/-6 asks for (from names where they came from); cfg is the
// trace of each.
func backtraceSelect(c *cobra.Command, o *backtraceOptions, targets []route.BacktraceTarget, from string) (sel []route.BacktraceTarget, cfg probe.TraceConfig, err error) {
	network, err := prNetwork(o.v4, o.v6)
	if err != nil {
		return nil, cfg, err
	}
	if !probe.Protocol(o.proto).Traces() {
		// Before any target: each trace would fail alone and the run exit 0.
		return nil, cfg, fmt.Errorf("--proto %q: use %s", o.proto, probe.ProtocolNames(probe.TraceProtocols()))
	}
	if c.Flags().Changed("port") && o.proto != "icmp" {
		if err := prCheckPort("--port", o.port); err != nil {
			return nil, cfg, err
		}
	}
	if o.cycles < 1 || o.interval <= 0 || o.timeout <= 0 {
		return nil, cfg, errors.New("--cycles, --interval and --timeout must be positive")
	}
	if err := prCheckRate("--rate", o.rate); err != nil {
		return nil, cfg, err
	}
	if o.maxTTL < 0 || o.maxTTL > 255 {
		// Before any target is traced: each would fail the same way.
		return nil, cfg, fmt.Errorf("--max-ttl %d: use 1..255", o.maxTTL)
	}
	for _, t := range targets {
		a := netip.MustParseAddr(t.Addr)
		if (network == "ip4" && !a.Is4()) || (network == "ip6" && a.Is4()) {
			continue
		}
		sel = append(sel, t)
	}
	if len(sel) == 0 {
		return nil, cfg, fmt.Errorf("no target of %s is an %s address: drop -%s or add such targets", from,
			map[string]string{"ip4": "IPv4", "ip6": "IPv6"}[network], map[string]string{"ip4": "4", "ip6": "6"}[network])
	}
	cfg = probe.TraceConfig{Proto: probe.Protocol(o.proto), Port: o.port, MaxTTL: o.maxTTL, Cycles: o.cycles,
		Interval: o.interval, Timeout: o.timeout, Rate: o.rate}
	return sel, cfg, nil
}

// backtraceBurst is how many probes (of all targets together) may leave at
// once before --rate applies: one TTL sweep of a single target.
const backtraceBurst = 16

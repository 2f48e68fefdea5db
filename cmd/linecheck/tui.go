package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/tui"
)

// tuiFlags are the options of `linecheck tui` (and of the demo's TUI).
type tuiFlags struct {
	offline  bool
	hideHops int
	speed    float64
	noColor  bool
	sort     string
	asnDB    string
	noASN    bool
	// prefixTable is --prefix-table, loaded by the command's PreRunE.
	prefixTable  *route.PrefixTable
	interval     time.Duration
	loopback     bool
	fixture      bool
	multipath    bool // --multipath: as multipath: true on every candidate
	usage        billing.Dec
	noProjection bool
	bwTime       time.Duration // live: measured time of each throughput test
	bwEvery      time.Duration // live: throughput tests again every bwEvery (0: at start and on b only)
	quiet        *engine.Quiet // held while a live throughput test runs (openTUI makes it)
	// usageText is --usage-hours as typed, parsed into usage.
	usageText string
	// horizon is --horizon: the months the cost screen prices over (0: the file's).
	horizon int
}

func newTUICmd() *cobra.Command {
	o := &tuiFlags{speed: 300, interval: time.Second, bwTime: engine.DefaultBWTime}
	c := &cobra.Command{
		Use:   "tui [flags] CANDIDATES.yaml",
		Short: "The live terminal UI: route quality and monthly cost of every candidate side by side",
		Long: `tui opens a terminal UI on a candidates file (the format of compare): one row
per candidate with its line class, RTT p50/p95 and a sparkline of recent
RTTs, jitter, loss, stretch, the SLA verdict and the monthly cost, with the
same traffic priced under fixed / per-GB / 95th offers side by side and the
cheapest marked (never an offer whose port the traffic's 95th exceeds: that
one is marked !). The rows update as probe records arrive, in compare's
ranking order unless --sort says otherwise; the SLA verdicts are compare's.

With --offline the recorded probe streams are replayed over time (--speed
times the recorded pace, looping) and nothing is sent. Without it every
target of every candidate is pinged (ICMP echo, or TCP connect time for tcp
targets) and the first target is traced continuously, mtr style (the hops
update as each cycle completes); files marked recorded_only: true (the
bundled samples) are refused live. Offers, traffic and sla are optional
here: without them the rows show route quality only.

Throughput (docs/bw.md): live, a candidate that names its iperf3 server,
  bandwidth_test: {addr: ADDR, port: 5201}   # a stock iperf3 -s on the candidate
gets a download test as in compare (--bw-time, 5s after 1s of warm-up), one
candidate after another: once after the first ping round, again on b and,
with --bw-every D, every D. Each test fills the line, so the pings and
traces pause while the tests run (their figures never count a loaded line).
THRU shows the p5 of the test's interval rates in Mbit/s (test… while it
runs, - without figures; a failed test is a warning in the status line),
checked by sla.min_throughput_mbps; the cost screen says what was carried
beside the port sold. Offline, recorded.bw is replayed instead.

Screens and keys (? shows them all):
  enter      route detail: hops mtr style, per-hop loss, the
             icmp-rate-limited flag (RL) explained, RTT percentiles,
             carrier/ASN per hop, RTT chart over time
  c  tab     cost detail: the month's traffic with the 95th line(s) and the
             commit, per-scheme breakdown, the offer's other items;
             m / d / + - 0 change the 95th method, the direction rule and a
             traffic scale factor and recompute the costs at once;
             u / U step the used hours of the GPU machine (the offers file's,
             0, 100 … the month's hours) and re-price every candidate, also
             on the overview (hourly and spot compute bill the used hours)
  s S i      sort by the next / previous column, invert the order
  b          live: run the throughput tests again now
  space p    pause / resume;  esc back;  q or ctrl+c quit

Load-balanced lines: live, a candidate with multipath: true (or every one,
with --multipath) is traced with multipath discovery as compare does: each
round finds the paths again and probes each path's own flow 10 times; the
route screen then shows every path and f switches between them.

--hide-hops N masks the hops at TTL 1 to N of every route on the route
screen (address "hidden", no name, AS number or network; the status bar says
so); line classes and verdicts are still the real hops'.

NO_COLOR (or --no-color) gives a monochrome UI. Off a terminal tui refuses
(exit 2): use compare for a report.

Examples:
  linecheck tui --offline samples/candidates.yaml
  linecheck tui --offline --speed 1200 samples/candidates.yaml
  linecheck tui --offline --usage-hours 200 samples/candidates.yaml
  linecheck tui mine.yaml
  linecheck tui --bw-time 10s --bw-every 1h mine.yaml`,
		Args: func(c *cobra.Command, args []string) error {
			if o.fixture {
				return cobra.NoArgs(c, args)
			}
			return oneArg("CANDIDATES.yaml")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error { return runTUICmd(c, args, o) },
	}
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.BoolVar(&o.offline, "offline", false, "replay the recordings only; never send a probe")
		hideHopsFlag(f, &o.hideHops)
		f.Float64Var(&o.speed, "speed", o.speed, "replay speed factor (300: a recorded 5-minute interval plays in one second)")
		f.BoolVar(&o.noColor, "no-color", false, "monochrome (as with NO_COLOR=1)")
		f.StringVar(&o.sort, "sort", "", "initial sort column: "+strings.Join(tui.SortColumns(), ", "))
		f.StringVar(&o.asnDB, "asn-db", "", "offline IP-to-ASN file (iptoasn TSV or mmdb) for carrier/ASN per hop")
		f.BoolVar(&o.noASN, "no-asn", false, noASNUsage)
		durationVarP(f, &o.interval, "interval", "i", o.interval, "live: interval between probes to one target (seconds, 0.5, or a Go duration, 500ms)")
		f.BoolVar(&o.loopback, "loopback", false, "add a live row: TCP connect time to a listener opened on 127.0.0.1 (and ICMP to 127.0.0.1 when permitted)")
		f.BoolVar(&o.multipath, "multipath", false, "live: trace each candidate's forward route with multipath discovery (as compare --multipath); f on the route screen switches paths")
		f.BoolVar(&o.fixture, "fixture", false, "run on the built-in hand-made fixture instead of a file (tests)")
		_ = f.MarkHidden("fixture")
		durationVarP(f, &o.bwTime, "bw-time", "", o.bwTime, "live: measured time of each candidate's throughput test (bandwidth_test; after 1s of warm-up)")
		durationVarP(f, &o.bwEvery, "bw-every", "", 0, "live: run the throughput tests again every `D` (0: only after the first ping round and on b; tests are heavy)")
		f.BoolVar(&o.noProjection, "no-projection", false, "leave out the month projected from a partial traffic recording (the cost detail notes it otherwise)")
		f.IntVar(&o.horizon, "horizon", 0, "price every offer over `N` months of 730 hours in the cost screen and rank by that total (overrides the file's horizon_months)")
		f.StringVar(&o.usageText, "usage-hours", "", "price every offer at `H` used hours of the GPU machine in the month (overrides the offers file's usage; u / U change it)")
	})
	addPrefixTableFlag(c)
	return c
}

func runTUICmd(c *cobra.Command, args []string, o *tuiFlags) error {
	if err := keepPrivilegesInHelper(); err != nil {
		return err
	}
	if !prPositive(o.speed) {
		return badInput(fmt.Errorf("--speed %g: want a finite factor above 0", o.speed))
	}
	if o.interval <= 0 {
		return badInput(fmt.Errorf("--interval %v: must be positive", o.interval))
	}
	switch {
	case o.bwTime <= 0:
		return badInput(fmt.Errorf("--bw-time %v: must be positive", o.bwTime))
	case o.bwEvery < 0:
		return badInput(fmt.Errorf("--bw-every %v: must not be negative (0: no repeat)", o.bwEvery))
	case o.bwEvery > 0 && o.bwEvery < o.bwTime+time.Second:
		return badInput(fmt.Errorf("--bw-every %v is shorter than one test (--bw-time %v and 1s of warm-up)", o.bwEvery, o.bwTime))
	}
	if o.offline {
		var live []string
		for _, n := range []string{"bw-time", "bw-every"} {
			if c.Flags().Changed(n) {
				live = append(live, "--"+n)
			}
		}
		if len(live) > 0 {
			return badInput(fmt.Errorf("--offline replays recorded.bw and runs no throughput test, so %s would be ignored: "+
				"drop %s, or drop --offline to measure live", strings.Join(live, ", "), strings.Join(live, " ")))
		}
	}
	if o.offline && o.multipath {
		return badInput(errors.New("--offline replays the recordings and traces nothing, so --multipath would be ignored " +
			"(a recording made with trace --multipath shows its paths without it): drop one of them"))
	}
	if o.usageText != "" {
		u, err := billing.ParseUsageHours(o.usageText)
		if err != nil {
			return badInput(fmt.Errorf("--usage-hours: %w", err))
		}
		o.usage = u
	}
	if c.Flags().Changed("horizon") && (o.horizon < 1 || o.horizon > billing.MaxHorizonMonths) {
		return badInput(fmt.Errorf("--horizon %d: want the contract's life in whole months, 1 to %d (e.g. 24)", o.horizon, billing.MaxHorizonMonths))
	}
	if cols := tui.SortColumns(); o.sort != "" && !slices.Contains(cols, o.sort) {
		return badInput(fmt.Errorf("--sort %q: use one of %s", o.sort, strings.Join(cols, ", ")))
	}
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		return badInput(errors.New("tui needs a terminal (stdin and stdout); for a report use: linecheck compare [--offline] CANDIDATES.yaml"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.fixture {
		return runTUIFeed(ctx, tui.FixtureFeed(o.speed), *o)
	}
	f, err := candidates.LoadWith(args[0], tui.LoadOptions())
	if err != nil {
		return badInput(err)
	}
	fileWarnings(c.ErrOrStderr(), "tui", f)
	if o.horizon > 0 {
		f.HorizonMonths = o.horizon
	}
	if o.multipath {
		for i := range f.Candidates {
			f.Candidates[i].Multipath = true
		}
	}
	ov := *o
	ov.prefixTable = prefixTableOf(c)
	return openTUI(ctx, f, ov)
}

// openTUI runs the UI on a loaded candidates file. demo calls it with
// tuiFlags{offline: true, speed: 300, loopback: true}.
func openTUI(ctx context.Context, f *candidates.File, o tuiFlags) error {
	if err := checkHideHops(o.hideHops); err != nil {
		return badInput(err)
	}
	// One Quiet for every live loop, the loopback row's too: all of them
	// pause while a throughput test fills the line.
	o.quiet = engine.NewQuiet()
	feed, err := tui.FeedFromCompare(f, tui.FeedOptions{Offline: o.offline, Speed: o.speed, Now: time.Now(), ASNDB: o.asnDB, NoASN: o.noASN, PrefixTable: o.prefixTable,
		Live:       engine.Options{Interval: o.interval, BWTime: o.bwTime, BWEvery: o.bwEvery, Quiet: o.quiet},
		UsageHours: o.usage, NoProjection: o.noProjection, HideHops: o.hideHops})
	if err != nil {
		// A bad file, a missing recording or offer, or a live run of a
		// recorded_only file: all bad input.
		return badInput(err)
	}
	return runTUIFeed(ctx, feed, o)
}

// runTUIFeed adds the loopback row when asked and runs the UI until quit.
func runTUIFeed(ctx context.Context, feed *tui.Feed, o tuiFlags) error {
	if o.loopback {
		closeLn, err := addLoopbackRow(ctx, feed, o.interval, o.quiet)
		if err != nil {
			return err
		}
		defer closeLn()
	}
	opts := tui.Options{NoColor: o.noColor || os.Getenv("NO_COLOR") != "", Sort: o.sort}
	// Hop names only for what is traced live from here (the model asks
	// for live routes only); an offline run replays recordings, never
	// looked up.
	if !o.offline {
		opts.Names = rdns.New(rdns.System())
	}
	return tui.Run(ctx, feed, tui.RunOptions{Options: opts})
}

// addLoopbackRow opens a TCP listener on 127.0.0.1 and adds a live row that
// measures TCP connect time to it (and ICMP echo to 127.0.0.1 when the
// system permits it). Nothing leaves the machine. Its pings pause while
// quiet (nil: never) is held for a throughput test.
func addLoopbackRow(ctx context.Context, feed *tui.Feed, interval time.Duration, quiet *engine.Quiet) (func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loopback row: %w", err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	target := "127.0.0.1 tcp/" + strconv.Itoa(port)
	feed.Snapshot.Candidates = append(feed.Snapshot.Candidates, tui.Candidate{
		Name: "loopback", Provider: "live reference row: this machine", Region: "127.0.0.1", Target: target,
		LineClass: "local", Reference: true,
	})
	feed.Snapshot.Mode += " + live loopback"
	if interval <= 0 {
		interval = time.Second
	}
	mo := engine.Options{Interval: interval, Quiet: quiet}
	feed.Live = append(feed.Live,
		tui.LoopFeeder(engine.PingLoop("loopback", candidates.Target{Addr: "127.0.0.1", Protocol: "tcp", Port: port}, mo)),
		quietICMP(tui.LoopFeeder(engine.PingLoop("loopback", candidates.Target{Addr: "127.0.0.1", Protocol: "icmp"}, mo))))
	return func() { ln.Close() }, nil
}

// quietICMP drops the loopback ICMP feeder's errors: without the privilege
// (ping_group_range, CAP_NET_RAW) the row simply shows TCP only.
func quietICMP(f tui.Feeder) tui.Feeder {
	return func(ctx context.Context, emit func(msg tui.Msg)) error {
		failed := false
		return f(ctx, func(m tui.Msg) {
			if _, ok := m.(tui.FeedErrMsg); ok {
				failed = true
				return
			}
			if !failed {
				emit(m)
			}
		})
	}
}

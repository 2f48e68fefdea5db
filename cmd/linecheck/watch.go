package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/probe"
)

// watchOpts are the long-watch flags that watch.go adds to ping and trace.
type watchOpts struct {
	watch    bool
	journal  string
	report   bool
	reportTZ string
	cycles   int // stop after this many cycles of this run (0 = until stopped)
}

const watchHelp = `

Long watches (--watch):
  --watch runs cycle after cycle until stopped (Ctrl-C, SIGTERM). Each cycle's
  result is appended to --journal FILE as one NDJSON line (linecheck.journal/v1)
  and synced to disk before the next cycle starts, so a crash or a reboot loses
  at most the cycle in progress. Run the same command again with the same
  --journal to resume: cycle numbers continue, the run number goes up, and a
  torn last line left by a crash is dropped and reported. Without --journal
  the lines go to stdout. When the watch stops, the hourly report is printed.

  --report --journal FILE prints the hourly profile of a journal: RTT
  percentiles and loss per hour of day (in --report-tz), and the availability
  (the share of cycles in which the target answered at least once). Evening-
  peak degradation is what oversold lines show.

  linecheck ping --watch --journal watch.ndjson -c 10 -i 1s 127.0.0.1
  linecheck ping --report --journal watch.ndjson --report-tz Asia/Shanghai
  linecheck trace --watch --journal route.ndjson -i 1m 127.0.0.1
  linecheck trace --report --journal route.ndjson --format json`

// addWatchFlags adds the watch flags to c and wraps its Args and RunE: the
// original command runs unchanged unless --watch or --report is given.
func addWatchFlags(c *cobra.Command, o *watchOpts, run func(c *cobra.Command, args []string) error) {
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.BoolVar(&o.watch, "watch", false, "run cycle after cycle until stopped, journaling every cycle (see Long watches)")
		f.StringVar(&o.journal, "journal", "", "append-only journal `FILE` of a --watch (resumed when it exists); the input of --report")
		f.BoolVar(&o.report, "report", false, "print the hourly profile and availability of --journal FILE and exit")
		f.StringVar(&o.reportTZ, "report-tz", "UTC", "time zone of the hours in the report (IANA name such as Asia/Shanghai, or Local)")
		f.IntVar(&o.cycles, "watch-cycles", 0, "stop a --watch after `N` cycles of this run (0: until stopped)")
		c.Long += watchHelp
	})
	origArgs, origRun := c.Args, c.RunE
	c.Args = func(cmd *cobra.Command, args []string) error {
		if o.report {
			if len(args) > 0 {
				return badInput(errors.New("--report reads --journal FILE and takes no targets"))
			}
			return nil
		}
		if origArgs != nil {
			return origArgs(cmd, args)
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case (o.report || o.watch) && cmd.Flags().Changed("hide-hops"):
			// The hourly report names the target only, no hop, and the
			// journal is the record of the real hops.
			return badInput(errors.New("--hide-hops masks the hops of a trace report; the --watch report shows no hops and " +
				"the journal keeps the real ones: drop --hide-hops"))
		case o.report:
			if err := o.checkReport(); err != nil {
				return err
			}
			return watchReport(cmd, o)
		case o.watch:
			if o.cycles < 0 {
				return badInput(fmt.Errorf("--watch-cycles %d: must not be negative", o.cycles))
			}
			return run(cmd, args)
		case o.journal != "":
			return badInput(errors.New("--journal needs --watch (to write) or --report (to read)"))
		}
		return origRun(cmd, args)
	}
}

// checkReport refuses a --report that cannot run: with --watch, or
// without --journal.
func (o *watchOpts) checkReport() error {
	switch {
	case o.report && o.watch:
		return badInput(errors.New("--report and --watch: choose one (the watch prints its report when it stops)"))
	case o.journal == "":
		return badInput(errors.New("--report needs --journal FILE"))
	}
	return nil
}

// watchLoc resolves --report-tz.
func watchLoc(name string) (*time.Location, error) { return zoneFlag("--report-tz", name) }

// zoneFlag resolves the time zone name given to flag; the error names that
// flag (gpu's --tz once read "--report-tz") and what it takes.
func zoneFlag(flag, name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%s %q: not a time zone: use an IANA name such as Asia/Shanghai, UTC or Local (%w)", flag, name, err)
	}
	return loc, nil
}

// openWatchJournal opens --journal (or stdout) and says on stderr what it resumed.
func openWatchJournal(c *cobra.Command, o *watchOpts, kind string) (appendFn func(journal.Entry) (int, error), closeFn func() error, run int, err error) {
	stderr := c.ErrOrStderr()
	if o.journal == "" {
		cycle := 0
		out := c.OutOrStdout()
		return func(e journal.Entry) (int, error) {
			cycle++
			e.Schema, e.Kind, e.Cycle, e.Run = journal.Schema, kind, cycle, 1
			b, err := json.Marshal(e)
			if err != nil {
				return 0, err
			}
			_, err = out.Write(append(b, '\n'))
			return cycle, err
		}, func() error { return nil }, 1, nil
	}
	w, rec, err := journal.Open(o.journal, kind)
	if err != nil {
		return nil, nil, 0, badInput(err)
	}
	if rec.Torn {
		fmt.Fprintf(stderr, "linecheck: %s:%d: torn last line (%d bytes, a write cut short by a crash) dropped\n",
			o.journal, rec.TornLine, rec.TornBytes)
	}
	for _, warn := range rec.Warnings {
		fmt.Fprintf(stderr, "linecheck: %s\n", warn)
	}
	if rec.Entries > 0 {
		fmt.Fprintf(stderr, "linecheck: resuming %s after cycle %d (run %d)\n", o.journal, rec.LastCycle, w.Run())
	}
	return w.Append, w.Close, w.Run(), nil
}

// watchContext ends on SIGINT or SIGTERM.
func watchContext(c *cobra.Command) (context.Context, context.CancelFunc) {
	parent := c.Context()
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

func runPingWatch(c *cobra.Command, args []string, o *pingOptions) error {
	args, cfg, loc, err := pingWatchConfig(c, args, o)
	if err != nil {
		return err
	}
	ctx, stop := watchContext(c)
	defer stop()
	targets, err := probe.ResolveTargets(ctx, args, probe.ExpandOptions{Network: cfg.Network, AllowLarge: cfg.AllowLarge, AllowBroadcast: cfg.AllowBroadcast})
	if err == nil {
		err = checkPingTotal(cfg.Count, len(targets), false)
	}
	if err != nil {
		return badInput(err)
	}
	w, err := openWatch(c, &o.watch, journal.KindPing, loc)
	if err != nil {
		return err
	}
	defer w.close()
	return w.cycles(func(first bool) (bool, error) { return pingWatchCycle(ctx, w, targets, cfg, first) })
}

// pingWatchConfig is the targets and probe configuration of ping's flags
// for a watch, checked as a one-off ping checks them (pingConfig), and the
// zone of its report. The flags of one-off output refuse --watch.
func pingWatchConfig(c *cobra.Command, args []string, o *pingOptions) ([]string, probe.PingConfig, *time.Location, error) {
	for _, n := range []string{"loop", "interim", "stream", "stream-file", "alive", "unreachable"} {
		if c.Flags().Changed(n) {
			return nil, probe.PingConfig{}, nil, badInput(fmt.Errorf("--%s does not go with --watch: a watch runs until stopped and journals every cycle (--journal)", n))
		}
	}
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return nil, probe.PingConfig{}, nil, badInput(err)
	}
	args, cfg, err := pingConfig(c, args, o, format)
	if err != nil {
		return nil, cfg, nil, err
	}
	loc, err := watchLoc(o.watch.reportTZ)
	if err != nil {
		return nil, cfg, nil, badInput(err)
	}
	return args, cfg, loc, nil
}

// pingWatchCycle probes every target once (--count probes each) and
// journals the cycle; more is false when the watch stops. A cycle that
// cannot probe, but the first, is journaled as down.
func pingWatchCycle(ctx context.Context, w *watchRun, targets []probe.Target, cfg probe.PingConfig, first bool) (more bool, err error) {
	proto := "icmp"
	if cfg.TCPPort != 0 {
		proto = "tcp"
	}
	start := time.Now()
	res, err := engine.PingCycle(ctx, targets, cfg, nil)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		if errors.Is(err, probe.ErrPrivilege) {
			return false, badInput(err)
		}
		if first {
			return false, err
		}
		// A watch runs for days: a cycle that cannot probe (network
		// down) is journaled as down for every target, and the watch
		// goes on after the time the cycle would have taken.
		fmt.Fprintf(w.stderr, "linecheck: cycle failed: %v\n", err)
		e := journal.Entry{Time: start.UTC(), Error: err.Error()}
		for _, t := range targets {
			e.Ping = append(e.Ping, journal.PingResult{Target: t.Name, Addr: t.Addr.String(), Protocol: proto, Port: cfg.TCPPort, RTTms: []float64{}})
		}
		if !engine.SleepUntil(ctx, start.Add(time.Duration(cfg.Count)*cfg.Interval)) {
			return false, nil
		}
		e.End = time.Now().UTC()
		_, err := w.write(e)
		return err == nil, err
	}
	e := journal.Entry{Time: start.UTC(), End: time.Now().UTC()}
	sent := 0
	for _, r := range res {
		sent += r.Sent
		e.Ping = append(e.Ping, journal.PingResult{Target: r.Target, Addr: r.Addr, Protocol: proto, Port: cfg.TCPPort,
			Sent: r.Sent, Recv: r.Recv, Late: r.Late, Dup: r.Dup, RTTms: nonNil(r.RTTs)})
	}
	// A cycle cut short by the stop signal is kept when it measured
	// something: its probes ended normally, the rest were never counted.
	if sent > 0 || ctx.Err() == nil {
		cycle, err := w.write(e)
		if err != nil {
			return false, err
		}
		if w.tty {
			fmt.Fprintf(w.stderr, "\r\033[Kping --watch: cycle %d%s", cycle, pingCycleText(e.Ping))
		}
	}
	return ctx.Err() == nil, nil
}

// watchRun is a running ping or trace watch: its journal, its progress
// line, and the report it ends with.
type watchRun struct {
	c      *cobra.Command
	o      *watchOpts
	loc    *time.Location
	stderr io.Writer
	tty    bool
	append func(journal.Entry) (int, error)
	close  func() error
}

// openWatch opens the watch's journal (or stdout).
func openWatch(c *cobra.Command, o *watchOpts, kind string, loc *time.Location) (*watchRun, error) {
	appendFn, closeFn, _, err := openWatchJournal(c, o, kind)
	if err != nil {
		return nil, err
	}
	stderr := c.ErrOrStderr()
	return &watchRun{c: c, o: o, loc: loc, stderr: stderr, tty: prIsTTY(stderr), append: appendFn, close: closeFn}, nil
}

// write journals one cycle and returns its number; a write that fails ends
// the watch (journalFailed).
func (w *watchRun) write(e journal.Entry) (int, error) {
	cycle, err := w.append(e)
	if err != nil {
		return 0, journalFailed(w.stderr, w.tty, err, func() error { return watchReport(w.c, w.o, w.loc) })
	}
	return cycle, nil
}

// end is watchEnd for this watch.
func (w *watchRun) end() error { return watchEnd(w.c, w.o, w.loc, w.tty) }

// cycles runs cycle (first: this run's first cycle) in the engine's watch
// loop until it returns an error or no more, or until --watch-cycles
// cycles of this run (0: until stopped), then ends the watch.
func (w *watchRun) cycles(cycle func(first bool) (more bool, err error)) error {
	if err := engine.Watch(w.o.cycles, cycle); err != nil {
		return err
	}
	return w.end()
}

// watchEnd clears the progress line of a watch that stopped and prints
// the report of its journal (none without --journal: the lines went to
// stdout).
func watchEnd(c *cobra.Command, o *watchOpts, loc *time.Location, tty bool) error {
	if tty {
		fmt.Fprint(c.ErrOrStderr(), "\r\033[K")
	}
	if o.journal == "" {
		return nil
	}
	return watchReport(c, o, loc)
}

// journalFailed ends a watch whose journal could not be written (a full
// disk): it says so, prints the report of the cycles the journal holds, and
// exits 1. Before, the watch exited with the write error and no report.
func journalFailed(stderr io.Writer, tty bool, err error, report func() error) error {
	if tty {
		fmt.Fprint(stderr, "\r\033[K")
	}
	fmt.Fprintf(stderr, "linecheck: %v: the watch stops; the report covers the cycles the journal holds\n", err)
	if rerr := report(); rerr != nil {
		fmt.Fprintln(stderr, "linecheck:", rerr)
	}
	return &exitError{code: 1, err: fmt.Errorf("the journal could not be written: %w", err)}
}

func nonNil(v []float64) []float64 {
	if v == nil {
		return []float64{}
	}
	return v
}

func pingCycleText(rs []journal.PingResult) string {
	s := ""
	for _, r := range rs {
		st, _ := stats.Summarize(r.RTTms)
		s += fmt.Sprintf("  %s %d/%d", r.Target, r.Recv, r.Sent)
		if r.Recv > 0 {
			s += " p50 " + report.MS(st.P50) + " ms"
		}
	}
	return s
}

// watchReport prints the hourly profile of --journal.
func watchReport(c *cobra.Command, o *watchOpts, locs ...*time.Location) error {
	name, _ := c.Flags().GetString("format")
	format, err := report.ParseFormat(name)
	if err != nil {
		return badInput(err)
	}
	var loc *time.Location
	if len(locs) > 0 {
		loc = locs[0]
	} else {
		var err error
		if loc, err = watchLoc(o.reportTZ); err != nil {
			return badInput(err)
		}
	}
	entries, info, err := journal.Read(o.journal)
	if err != nil {
		return badInput(err)
	}
	if len(entries) > 0 && entries[0].Kind == journal.KindBW {
		return badInput(fmt.Errorf("%s: a bw journal (throughput tests): use `linecheck bw --report --journal %s`", o.journal, o.journal))
	}
	if info.Torn {
		fmt.Fprintf(c.ErrOrStderr(), "linecheck: %s:%d: torn last line (%d bytes) left out of the report\n",
			o.journal, info.TornLine, info.TornBytes)
	}
	for _, warn := range info.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "linecheck: %s\n", warn)
	}
	r := journal.Summarize(entries, info, o.journal, loc)
	out := c.OutOrStdout()
	wide, _ := c.Flags().GetBool("wide")
	topt := tableOptions(out, wide)
	topt.Table, _ = c.Flags().GetString("table")
	return report.Render(out, report.WatchReport{Report: r}, format, topt)
}

// runTraceWatch traces the target again and again (each watch cycle is
// --cycles rounds over all TTLs; --interval apart) and journals each trace.
func runTraceWatch(c *cobra.Command, args []string, o *traceOptions) error {
	cfg, loc, err := traceWatchConfig(c, args, o)
	if err != nil {
		return badInput(err)
	}
	ctx, stop := watchContext(c)
	defer stop()
	// --prefix-table names the hops of every cycle (no AS sources here).
	var names route.ASNDB
	if t := prefixTableOf(c); t != nil {
		names = &route.Names{Table: t}
	}
	// The gate's refusal comes before the journal is created.
	if _, err := probe.ResolveTraceTarget(ctx, args[0], cfg.Network); err != nil {
		return badInput(err)
	}
	w, err := openWatch(c, &o.watch, journal.KindTrace, loc)
	if err != nil {
		return err
	}
	defer w.close()
	tw := traceWatch{w: w, target: args[0], cfg: cfg, names: names}
	return w.cycles(func(first bool) (bool, error) { return tw.cycle(ctx, first) })
}

// traceWatchConfig is the trace configuration of trace's flags for a
// watch, checked as a one-off trace checks them (traceConfigOf), and the
// zone of its report.
func traceWatchConfig(c *cobra.Command, args []string, o *traceOptions) (probe.TraceConfig, *time.Location, error) {
	fl := c.Flags()
	if err := traceProtoFlags(fl); err != nil {
		return probe.TraceConfig{}, nil, err
	}
	if err := traceJSONFlag(fl); err != nil {
		return probe.TraceConfig{}, nil, err
	}
	switch {
	case o.replay != "":
		return probe.TraceConfig{}, nil, errors.New("--watch probes live: it cannot --replay")
	case len(args) != 1:
		return probe.TraceConfig{}, nil, errors.New("trace --watch needs exactly one TARGET")
	case o.nat:
		return probe.TraceConfig{}, nil, errors.New("trace --watch does not journal NAT IDs: drop --nat, or trace once with -U --nat")
	case o.mtu:
		return probe.TraceConfig{}, nil, errors.New("trace --watch does not journal the path MTU: drop --mtu, or trace once with --mtu")
	case o.mp.on:
		return probe.TraceConfig{}, nil, errors.New("trace --watch journals one path: drop --multipath, or trace once with --multipath")
	}
	cfg, err := traceConfigOf(c, o)
	if err != nil {
		return cfg, nil, err
	}
	loc, err := watchLoc(o.watch.reportTZ)
	return cfg, loc, err
}

// traceWatch is a running trace --watch.
type traceWatch struct {
	w      *watchRun
	target string
	cfg    probe.TraceConfig
	names  route.ASNDB
	last   *route.Trace // identity of the target for a failed cycle's line
}

// cycle traces once and journals the trace; more is false when the watch
// stops. A trace that fails, but the first, is journaled as a down cycle.
// Cycles are paced as trace's own: --interval between the starts.
func (tw *traceWatch) cycle(ctx context.Context, first bool) (more bool, err error) {
	w := tw.w
	start := time.Now()
	tr, err := engine.TraceCycle(ctx, tw.target, tw.cfg, tw.names)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil // a trace cut short by the stop signal is not a full cycle
		}
		if errors.Is(err, probe.ErrPrivilege) || first {
			return false, badInput(err)
		}
		// Later failures (network down) are journaled as a down cycle.
		fmt.Fprintf(w.stderr, "linecheck: cycle failed: %v\n", err)
		if !engine.SleepUntil(ctx, start.Add(tw.cfg.Interval)) {
			return false, nil
		}
		last := tw.last
		down := &route.Trace{Schema: route.TraceSchema, Target: last.Target, Addr: last.Addr, Protocol: last.Protocol,
			Port: last.Port, Hops: []route.Hop{}}
		_, err := w.write(journal.Entry{Time: start.UTC(), End: time.Now().UTC(), Error: err.Error(), Trace: down})
		return err == nil, err
	}
	tw.last = tr
	cycle, err := w.write(journal.Entry{Time: start.UTC(), End: time.Now().UTC(), Trace: tr})
	if err != nil {
		return false, err
	}
	if w.tty {
		fmt.Fprintf(w.stderr, "\r\033[Ktrace --watch: cycle %d, %d hops, reached %v", cycle, len(tr.Hops), tr.Reached)
	}
	return engine.SleepUntil(ctx, start.Add(tw.cfg.Interval)), nil
}

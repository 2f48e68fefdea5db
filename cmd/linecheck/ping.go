package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/atomicfile"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/tsv"
	"github.com/linecheck/linecheck/probe"
)

// PingSchema names the JSON document of `linecheck ping`.
const PingSchema = report.PingSchema

type pingDoc = report.PingDoc

// pingOptions are the flags of the command.
type pingOptions struct {
	watch          watchOpts
	count          int
	interval       time.Duration
	timeout        time.Duration
	size           int
	rate           float64
	tcp            int
	v4, v6         bool
	socket         string
	allowLarge     bool
	allowBroadcast bool
	format         string
	stream         bool
	streamFile     string
	quiet          bool
	wide           bool
	table          string
	alive, unreach bool
	loop           bool
	interim        time.Duration
	file           string
	numeric        bool
	deadline       time.Duration
	ttl            int
	pattern        string
}

func newPingCmd() *cobra.Command {
	o := &pingOptions{}
	c := &cobra.Command{
		Use:   "ping [flags] TARGET...",
		Short: "Latency, jitter and loss sweep: ICMP echo or TCP connect time",
		Long: `ping sends ICMP echo requests (or, with --tcp PORT, TCP connection attempts)
to every target at once, each target every --interval, all of them under one
global --rate cap, and reports per target: sent, received, loss, late and
duplicate replies, RTT min/avg/p50/p95/p99/max/stdev and three labelled
jitter figures (rfc3550, mean_abs, pdv_p95; see docs/probe.md).

Targets are addresses, host names or CIDR prefixes. A prefix of more than a
/24 needs --allow-large (127.0.0.0/8 is exempt); broadcast and multicast
addresses need --allow-broadcast. -f FILE (fping -f) reads more targets from
FILE, or from standard input with -f -: whitespace-separated, one or more a
line, with # starting a comment.

Loss counts only probes whose wait has ended: a reply later than --timeout is
reported as late, not received. Replies that carry another process's or run's
marker are counted as foreign, never as received.

When --rate cannot keep every target's --interval, the schedule stretches and
says so on stderr.

As fping: a name that does not resolve is listed with its error and every
other target is still probed and reported (in every --format). -a lists only
the targets that replied, -u only those that did not; -l probes until Ctrl-C
and -Q N prints a summary of the last N seconds on stderr every N seconds; a
CIDR argument gets one summary line, and with -q only that line. Durations
are seconds as ping takes them (-i 0.2, -W 2) or Go durations (200ms).

The table fits the terminal (else 120 columns): columns that do not fit move
to a detail block under it; --wide keeps them on one line. --format csv is one
table (one row per target, units in the column names) that pandas.read_csv
loads as is.

Exit status (fping's): 2 when a name did not resolve (or bad usage), else 1
when a target never replied, else 0. Ctrl-C prints the summary of what was
measured, says "interrupted" and exits 130 (with -l, Ctrl-C is the normal end).

As iputils ping: -n names rows by address (ping never looks names of
addresses up); -w DEADLINE ends the run by DEADLINE: only probes whose wait
ends by then are sent (-w 5 -i 1 -W 1: 5 probes; fewer when -c says so; with
-l, the loop ends at DEADLINE); -t TTL sets the probes' TTL (hop limit);
-p HEX fills the payload after linecheck's 12-byte marker with up to 16
bytes, repeated (ICMP only); --json is --format json.

ICMP needs either unprivileged ICMP sockets (net.ipv4.ping_group_range) or
CAP_NET_RAW; the error message says exactly what to run. --tcp needs neither.

Examples:
  linecheck ping 127.0.0.1
  linecheck ping -c 100 -i 0.1 127.0.0.1 ::1 --format json
  linecheck ping -n -w 5 -t 64 -p ff00 --json 127.0.0.1
  linecheck ping -q -c 3 -i 0.01 127.0.1.0/24
  linecheck ping -a -c 1 127.0.1.0/24
  linecheck ping -f targets.txt -q -c 5
  linecheck ping -l -Q 10 127.0.0.1
  linecheck ping --rate 1000 -c 10 -i 100ms --allow-large 127.0.1.0/22
  linecheck ping --tcp 443 -c 20 127.0.0.1
  linecheck ping --stream -c 5 127.0.0.1 > probes.ndjson
  linecheck ping --stream-file probes.ndjson -c 5 127.0.0.1`,
		RunE: func(c *cobra.Command, args []string) error { return runPing(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.IntVarP(&o.count, "count", "c", probe.DefaultCount, "probes per target")
		durationVarP(f, &o.interval, "interval", "i", probe.DefaultInterval, "time between two probes to the same target (seconds as ping takes them, 0.2, or a Go duration, 200ms)")
		durationVarP(f, &o.timeout, "timeout", "W", probe.DefaultTimeout, "a reply later than this is late, not received (seconds, 2, or a Go duration, 2s)")
		f.IntVarP(&o.size, "size", "s", probe.DefaultSize, "ICMP payload bytes (at least 12)")
		f.Float64Var(&o.rate, "rate", probe.DefaultPingRate, "global cap in packets per second over all targets")
		f.IntVar(&o.tcp, "tcp", 0, "measure TCP connect time to `PORT` instead of ICMP echo")
		f.BoolVarP(&o.v4, "ipv4", "4", false, "IPv4 only (names resolve to IPv4)")
		f.BoolVarP(&o.v6, "ipv6", "6", false, "IPv6 only (names resolve to IPv6)")
		f.StringVar(&o.socket, "socket", "auto", "ICMP socket: auto (unprivileged datagram first, raw fallback), dgram or raw")
		f.BoolVar(&o.allowLarge, "allow-large", false, "allow sweeping a CIDR of more than 256 addresses")
		f.BoolVar(&o.allowBroadcast, "allow-broadcast", false, "allow broadcast and multicast targets")
		f.StringVar(&o.format, "format", "table", "output format: "+report.FormatList())
		f.BoolVar(&o.stream, "stream", false, "write one NDJSON record per probe (linecheck.probe/v1) to stdout; the summary goes to stderr")
		f.StringVar(&o.streamFile, "stream-file", "", "write the NDJSON probe records to `FILE` (the summary stays on stdout)")
		f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line; a CIDR sweep prints its one summary line instead of a row per address")
		f.StringVar(&o.table, "table", "", "with --format csv: the table to write: targets (the default); with --report: summary (default) or hours")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the table on one line, however wide (default: fit the terminal, else 120 columns)")
		f.BoolVarP(&o.alive, "alive", "a", false, "list only the targets that replied (fping -a): names one per line, or only their rows with --format")
		f.BoolVarP(&o.unreach, "unreachable", "u", false, "list only the targets that never replied, and names that did not resolve (fping -u)")
		f.BoolVarP(&o.loop, "loop", "l", false, "probe until Ctrl-C, then print the summary (fping -l); exit status as without -l")
		f.StringVarP(&o.file, "file", "f", "", "read targets from `FILE` too (- for standard input; # comments), as fping -f")
		durationVarP(f, &o.interim, "interim", "Q", 0, "with -l: print a summary of the last `N` seconds on stderr every N seconds (fping -Q)")
		f.BoolVarP(&o.numeric, "numeric", "n", false, "as ping -n: rows named by address, not by the name given (ping never looks names of addresses up)")
		durationVarP(f, &o.deadline, "deadline", "w", 0, "as ping -w: stop after `DEADLINE` in all (seconds, 5, or a Go duration): at most the probes whose wait ends by then (fewer with -c); with -l, the end of the loop")
		f.IntVarP(&o.ttl, "ttl", "t", 0, "as ping -t: the `TTL` (IPv6 hop limit) of the probes, 1..255 (default: the system's)")
		f.StringVarP(&o.pattern, "pattern", "p", "", "as ping -p: fill the ICMP payload after its 12 bytes of marker with `HEX` (up to 16 bytes, e.g. ff or 0a0b0c0d), repeated")
		switchVarP(f, &o.format, "json", "", "json", "the same as --format json")
	})
	addWatchFlags(c, &o.watch, func(c *cobra.Command, args []string) error { return runPingWatch(c, args, o) })
	return c
}

func runPing(c *cobra.Command, args []string, o *pingOptions) error {
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return badInput(err)
	}
	args, cfg, err := pingConfig(c, args, o, format)
	if err != nil {
		return err
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	rs, iv, err := pingTargets(ctx, c.ErrOrStderr(), args, o, cfg, interrupted)
	if err != nil {
		return err
	}
	if o.numeric {
		for i := range rs.targets {
			rs.targets[i].Name = rs.targets[i].Addr.String()
		}
	}
	if o.loop && o.deadline > 0 {
		// -l -w: the deadline ends the loop as Ctrl-C would, without "interrupted".
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.deadline)
		defer cancel()
	}
	rec, out, err := openPingRecorder(o, c.OutOrStdout(), c.ErrOrStderr())
	if err != nil {
		return err
	}
	defer rec.abort()
	results, sentPerTarget, err := sweepPing(ctx, c, o, rs.targets, cfg, iv, rec)
	partial := interrupted() && !o.loop
	if err != nil && !(interrupted() && results != nil) {
		if errors.Is(err, probe.ErrPrivilege) {
			return badInput(err)
		}
		if interrupted() {
			return errInterrupted
		}
		return err
	}
	if err := rec.finish(); err != nil {
		return err
	}
	for _, r := range results {
		if r.Blocked != nil {
			fmt.Fprintf(c.ErrOrStderr(), "linecheck: %s: %v\n", r.Target, r.Blocked)
		}
		if r.ClockFaults > 0 {
			fmt.Fprintf(c.ErrOrStderr(), "linecheck: %s: %d replies stamped before their probe left (the system clock stepped back): counted as received, their RTTs left out\n",
				r.Target, r.ClockFaults)
		}
	}
	doc := report.NewPingDoc(report.PingSweep{Results: results, Unresolved: rs.unresolved, Spans: rs.prefixes,
		Protocol: pingProto(o), Port: o.tcp, Count: sentPerTarget, Interval: iv, Timeout: o.timeout})
	doc.Partial = partial
	view := report.PingReport{Doc: doc, Filter: pingFilter(o.alive, o.unreach), Quiet: o.quiet}
	topt := tableOptions(out, o.wide)
	topt.Table = o.table
	if err := report.Render(out, view, format, topt); err != nil {
		return err
	}
	if partial {
		return errInterrupted
	}
	return pingExit(doc)
}

// pingConfig is the targets' arguments (with -f FILE's) and the probe
// configuration the flags ask for, checked before anything is resolved or
// sent.
func pingConfig(c *cobra.Command, args []string, o *pingOptions, format report.Format) ([]string, probe.PingConfig, error) {
	args, err := pingArgs(c, args, o.file)
	if err != nil {
		return nil, probe.PingConfig{}, err
	}
	if err := checkPingFlags(c, o, format); err != nil {
		return nil, probe.PingConfig{}, badInput(err)
	}
	network, err := prNetwork(o.v4, o.v6)
	if err != nil {
		return nil, probe.PingConfig{}, badInput(err)
	}
	pattern, _ := pingPattern(o.pattern) // checked by checkPingFlags
	if o.deadline > 0 && !o.loop {
		// iputils' -w: the run ends by the deadline; here every probe
		// sent gets its whole wait, so the last is sent a timeout before.
		o.timeout = min(o.timeout, o.deadline)
		n := int((o.deadline-o.timeout)/o.interval) + 1
		if c.Flags().Changed("count") {
			n = min(n, o.count)
		}
		o.count = n
	}
	return args, probe.PingConfig{
		TTL: o.ttl, Pattern: pattern,
		Count: o.count, Interval: o.interval, Timeout: o.timeout, Size: o.size, Rate: o.rate,
		TCPPort: o.tcp, Network: network, Socket: o.socket,
		AllowLarge: o.allowLarge, AllowBroadcast: o.allowBroadcast,
	}, nil
}

// pingTargets resolves args, says on stderr which names are not probed,
// and returns the interval each target gets under --rate (stretched, and
// said, when the rate cannot keep --interval).
func pingTargets(ctx context.Context, stderr io.Writer, args []string, o *pingOptions, cfg probe.PingConfig,
	interrupted func() bool) (pingResolved, time.Duration, error) {
	rs, err := pingResolve(ctx, args, probe.ExpandOptions{Network: cfg.Network, AllowLarge: o.allowLarge, AllowBroadcast: o.allowBroadcast}, lookupFrom(ctx))
	if err != nil {
		if interrupted() {
			return rs, 0, errInterrupted
		}
		return rs, 0, badInput(err)
	}
	targets := rs.targets
	if err := checkPingTotal(o.count, len(targets), o.loop); err != nil {
		return rs, 0, badInput(err)
	}
	for _, u := range rs.unresolved {
		fmt.Fprintf(stderr, "linecheck: %s: not probed: %s\n", u.Target, u.Error)
	}
	iv := o.interval
	if len(targets) > 0 {
		var stretched bool
		iv, stretched = probe.Schedule(len(targets), cfg)
		if stretched {
			fmt.Fprintf(stderr, "linecheck: %d targets every %s need %.0f packets/s, above --rate %g: each target's interval is stretched to %s\n",
				len(targets), o.interval, float64(len(targets))/o.interval.Seconds(), o.rate, iv.Round(time.Millisecond))
		}
	}
	return rs, iv, nil
}

// pingProto is the protocol's name in the ping document.
func pingProto(o *pingOptions) string {
	if o.tcp != 0 {
		return "tcp"
	}
	return "icmp"
}

// pingRecorder takes each probe's record: it counts them for the progress
// line and writes them to the --stream or --stream-file stream.
type pingRecorder struct {
	w             io.Writer // nil without a stream
	file          *atomicfile.File
	err           error
	done, replies atomic.Int64
}

// openPingRecorder opens the record stream the flags ask for, and returns
// where the summary goes: stdout, or stderr when the records take stdout.
func openPingRecorder(o *pingOptions, stdout, stderr io.Writer) (*pingRecorder, io.Writer, error) {
	rec := &pingRecorder{}
	switch {
	case o.stream:
		rec.w = stdout
		return rec, stderr, nil
	case o.streamFile != "":
		// The records go to a temporary file next to FILE, renamed over it
		// when the run ends, so a failed run (ENOSPC, a bad target) never
		// leaves a cut-short file or destroys the previous run's.
		f, err := atomicfile.Create(o.streamFile, 0o644)
		if err != nil {
			return nil, nil, badInput(fmt.Errorf("--stream-file: %w", err))
		}
		rec.file, rec.w = f, flushWriter{f}
	}
	return rec, stdout, nil
}

func (r *pingRecorder) record(p probe.Record) {
	if p.Status != probe.StatusDup {
		r.done.Add(1)
	}
	if p.Status == probe.StatusOK {
		r.replies.Add(1)
	}
	if r.w != nil && r.err == nil {
		r.err = probe.WriteRecord(r.w, p)
	}
}

// finish reports a failed write and puts the --stream-file in place.
func (r *pingRecorder) finish() error {
	if r.err != nil {
		return fmt.Errorf("writing the probe stream: %w", r.err)
	}
	if r.file != nil {
		if err := r.file.Commit(); err != nil {
			return fmt.Errorf("--stream-file: %w", err)
		}
	}
	return nil
}

// abort removes an uncommitted --stream-file's temporary file.
func (r *pingRecorder) abort() {
	if r.file != nil {
		r.file.Abort()
	}
}

// sweepPing probes the targets, with a progress line on stderr, once
// (--count) or in rounds until Ctrl-C (-l); it returns the results and the
// probes sent per target.
func sweepPing(ctx context.Context, c *cobra.Command, o *pingOptions, targets []probe.Target, cfg probe.PingConfig, iv time.Duration,
	rec *pingRecorder) ([]probe.PingResult, int, error) {
	if len(targets) == 0 {
		return nil, o.count, nil
	}
	total := int64(len(targets) * o.count)
	stopProgress := func() {}
	if !o.quiet && !o.loop {
		stopProgress = prProgress(c.ErrOrStderr(), func() string {
			return fmt.Sprintf("ping: %d/%d probes done, %d replies", rec.done.Load(), total, rec.replies.Load())
		})
	}
	defer stopProgress()
	// The sweep is one I/O loop (and a reader for a second family), all I/O: with a
	// second P the Go scheduler spins between wake-ups, which cost 40 % more
	// CPU than fping on the 1,000-target benchmark (docs/probe.md); with one
	// P linecheck uses about what fping does. Restored afterwards for the
	// callers that run the command in-process (tests).
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if o.loop {
		return pingLoop(ctx, c, targets, cfg, iv, o.interim, rec.record, pingProto(o))
	}
	results, err := probe.PingTargets(ctx, targets, cfg, rec.record)
	return results, o.count, err
}

// checkPingFlags refuses values and combinations of ping's flags that
// cannot run, before anything is resolved or sent.
func checkPingFlags(c *cobra.Command, o *pingOptions, format report.Format) error {
	if o.count < 1 {
		return fmt.Errorf("--count %d: must be at least 1", o.count)
	}
	if o.interval <= 0 || o.timeout <= 0 {
		return errors.New("--interval and --timeout must be positive")
	}
	if err := prCheckRate("--rate", o.rate); err != nil {
		return err
	}
	if c.Flags().Changed("tcp") {
		if err := prCheckPort("--tcp", o.tcp); err != nil {
			return err
		}
	}
	if c.Flags().Changed("ttl") && (o.ttl < 1 || o.ttl > 255) {
		return fmt.Errorf("-t, --ttl %d: use 1..255", o.ttl)
	}
	if _, err := pingPattern(o.pattern); err != nil {
		return err
	}
	if o.pattern != "" && c.Flags().Changed("tcp") {
		return errors.New("-p, --pattern fills ICMP payloads: --tcp sends none")
	}
	if c.Flags().Changed("deadline") && o.deadline <= 0 {
		return fmt.Errorf("-w, --deadline %s: must be positive", o.deadline)
	}
	if c.Flags().Changed("deadline") && o.watch.watch {
		return errors.New("-w, --deadline ends one run; --watch runs cycle after cycle: give --watch-cycles N to stop it")
	}
	if fl := c.Flags(); fl.Changed("json") && fl.Changed("format") && report.Format(o.format) != report.FormatJSON {
		return errors.New("--json is --format json: give one of them")
	}
	if o.size < 12 || o.size > 65000 {
		return fmt.Errorf("--size %d: use 12..65000 bytes", o.size)
	}
	switch o.socket {
	case "auto", "dgram", "raw":
	default:
		return fmt.Errorf("--socket %q: use auto, dgram or raw", o.socket)
	}
	if o.stream && o.streamFile != "" {
		return errors.New("--stream and --stream-file: choose one")
	}
	if err := report.CheckTableFlag(format, c.Flags().Changed("table")); err != nil {
		return err
	}
	if o.alive && o.unreach {
		return errors.New("-a (alive only) and -u (unreachable only): choose one")
	}
	if o.loop && c.Flags().Changed("count") {
		return errors.New("-l (loop until Ctrl-C) and --count: choose one; -l runs until stopped, --count N stops after N probes")
	}
	if o.interim < 0 {
		return fmt.Errorf("-Q %v: must be positive", o.interim)
	}
	if o.interim > 0 && !o.loop {
		return errors.New("-Q N prints interim summaries of a -l loop: add -l, or leave -Q out")
	}
	if o.stream && !format.ForTerminal() {
		return fmt.Errorf("--stream writes NDJSON records to stdout and the summary to stderr: it cannot also write --format %s; use --stream-file FILE to keep stdout for the %s", o.format, o.format)
	}
	return nil
}

// pingExit is fping's exit status: 2 when a name did not resolve, else 1
// when some target never replied, else 0.
func pingExit(doc report.PingDoc) error {
	if n := len(doc.Unresolved); n > 0 {
		return &exitError{code: 2, err: fmt.Errorf("%d of %d targets not probed: the name did not resolve", n, n+len(doc.Results))}
	}
	silent := 0
	for _, r := range doc.Results {
		if r.Recv == 0 {
			silent++
		}
	}
	if silent > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d targets did not reply", silent, len(doc.Results))}
	}
	return nil
}

// pingFilter is the targets -a (alive) or -u (unreachable) keep.
func pingFilter(alive, unreach bool) report.PingFilter {
	switch {
	case alive:
		return report.PingAlive
	case unreach:
		return report.PingUnreachable
	}
	return report.PingAll
}

// pingLoop is -l: rounds of probes until Ctrl-C, summed per target; with
// -Q it prints each round's summary on stderr (fping -Q), a round then
// lasting about that long.
func pingLoop(ctx context.Context, c *cobra.Command, targets []probe.Target, cfg probe.PingConfig, iv, every time.Duration,
	onRecord func(probe.Record), proto string) ([]probe.PingResult, int, error) {
	span := every
	if span <= 0 {
		span = time.Minute
	}
	cfg.Count = max(1, int(span/iv))
	var interim func([]probe.PingResult, time.Time)
	if every > 0 {
		interim = func(res []probe.PingResult, start time.Time) {
			doc := report.NewPingDoc(report.PingSweep{Results: res, Protocol: proto, Port: cfg.TCPPort, Count: cfg.Count, Interval: iv, Timeout: cfg.Timeout})
			t := report.PingTables(doc, report.FormatTable, false)
			t[0].Title = fmt.Sprintf("interim summary %s, the last %s", time.Now().UTC().Format("15:04:05Z"), time.Since(start).Round(time.Second))
			t[0].Notes = nil
			report.WriteWith(c.ErrOrStderr(), report.FormatTable, tableOptions(c.ErrOrStderr(), false), t...)
		}
	}
	return engine.PingRounds(ctx, targets, cfg, span, onRecord, interim)
}

// pingResolved is the outcome of resolving ping's arguments.
type pingResolved struct {
	targets    []probe.Target
	unresolved []report.PingUnresolved
	prefixes   []report.PingSpan
}

// lookupFunc resolves a host name to addresses (net.Resolver.LookupNetIP).
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

type lookupKey struct{}

// lookupFrom returns the resolver a test put into ctx, or the system's.
func lookupFrom(ctx context.Context) lookupFunc {
	if f, ok := ctx.Value(lookupKey{}).(lookupFunc); ok {
		return f
	}
	return net.DefaultResolver.LookupNetIP
}

// pingArgs is the ping targets: the arguments, then those of -f FILE (or
// of standard input for -f -), whitespace-separated with # comments, as
// fping -f reads them. No target at all is bad usage.
func pingArgs(c *cobra.Command, args []string, file string) ([]string, error) {
	if file != "" {
		var r io.Reader
		name := file
		if file == "-" {
			r, name = c.InOrStdin(), "standard input"
		} else {
			f, err := os.Open(file)
			if err != nil {
				return nil, badInput(fmt.Errorf("-f %s: %w", file, err))
			}
			defer f.Close()
			r = f
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		n, lineNo := len(args), 0
		for sc.Scan() {
			lineNo++
			line, _, _ := strings.Cut(sc.Text(), "#")
			args = append(args, strings.Fields(line)...)
		}
		if err := sc.Err(); err != nil {
			return nil, badInput(fmt.Errorf("-f %w", tsv.ScanError(name, lineNo+1, 1<<20, err)))
		}
		if len(args) == n {
			return nil, badInput(fmt.Errorf("-f %s: no targets in it (one or more a line; # starts a comment)", name))
		}
	}
	if len(args) == 0 {
		return nil, badInput(errors.New("ping needs at least one TARGET: an address, a host name or a CIDR prefix, " +
			"e.g. 'linecheck ping 127.0.0.1' or 'linecheck ping -c 5 127.0.1.0/24', or -f FILE\nRun 'linecheck ping --help' for usage"))
	}
	return args, nil
}

// pingResolve expands and resolves args as fping does: a name that does not
// resolve is listed with its error and the others are probed; anything else
// wrong (a prefix too large, an address the safety gate refuses, the wrong
// family) is bad input that stops the run.
func pingResolve(ctx context.Context, args []string, o probe.ExpandOptions, lookup lookupFunc) (pingResolved, error) {
	var rs pingResolved
	o = o.WithInterfaces()
	o.Lookup = lookup
	for _, a := range args {
		ts, err := probe.ResolveTargets(ctx, []string{a}, o)
		var re *probe.ResolveError
		if errors.As(err, &re) {
			if ctx.Err() != nil {
				return rs, ctx.Err()
			}
			rs.unresolved = append(rs.unresolved, report.PingUnresolved{Target: a, Error: resolveErrText(re.Err)})
			continue
		}
		if err != nil {
			return rs, err
		}
		if strings.Contains(a, "/") {
			rs.prefixes = append(rs.prefixes, report.PingSpan{Prefix: a, First: len(rs.targets), Last: len(rs.targets) + len(ts) - 1})
		}
		rs.targets = append(rs.targets, ts...)
	}
	return rs, nil
}

// resolveErrText says why a name did not resolve, without Go's wrapping.
func resolveErrText(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		switch {
		case de.IsNotFound:
			return "name does not resolve (no such host)"
		case de.IsTimeout:
			return "name lookup timed out"
		}
		return "name lookup failed: " + de.Err
	}
	return "name lookup failed: " + err.Error()
}

func prNetwork(v4, v6 bool) (string, error) {
	switch {
	case v4 && v6:
		return "", errors.New("-4 and -6: choose one")
	case v4:
		return "ip4", nil
	case v6:
		return "ip6", nil
	}
	return "", nil
}

// prCheckPort refuses a port outside 1..65535 given to flag; 0 is not a
// port a probe can be sent to.
func prCheckPort(flag string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s %d: not a port number: use 1..65535", flag, port)
	}
	return nil
}

// prCheckRate checks a packets-per-second flag (probe.CheckRate), said
// with the flag's name: NaN, infinite and below probe.MinRate are refused.
func prCheckRate(flag string, rate float64) error {
	if probe.CheckRate(rate) != nil {
		return fmt.Errorf("%s %g: give packets per second, %g (one every 100 s) or more; a large figure is as good as no cap", flag, rate, probe.MinRate)
	}
	return nil
}

// prPositive tells whether v is a positive, finite number: NaN and
// infinity are not (every comparison with NaN is false, so "v <= 0" lets
// it through).
func prPositive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// prIsTTY reports whether w is a terminal.
func prIsTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// prProgress redraws status() on w every 200 ms while w is a terminal; the
// returned func stops it and clears the line.
func prProgress(w io.Writer, status func() string) func() {
	if !prIsTTY(w) {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r\033[K"+status())
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop); wg.Wait() }) }
}

// flushWriter pushes every record of a --stream-file to its temporary file as
// it is written, so that the run can be followed there (`tail -f`).
type flushWriter struct{ f *atomicfile.File }

func (w flushWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err == nil {
		err = w.f.Flush()
	}
	return n, err
}

// maxPingProbes bounds the probes of one run (targets × --count): each is
// held in memory, about 50 bytes, until the summary; 10 million is half a
// gigabyte and 115 days of one target at the default interval.
const maxPingProbes = 10_000_000

// checkPingTotal refuses a run whose probe table would not fit
// (ping -c 1000000000000 died out of memory with a runtime stack).
func checkPingTotal(count, targets int, loop bool) error {
	if loop {
		return nil
	}
	return checkProbeTotal(count, targets, "use a smaller --count (or -l, which probes until Ctrl-C)")
}

// checkProbeTotal refuses count probes to each of targets past
// maxPingProbes; hint says what to do instead.
func checkProbeTotal(count, targets int, hint string) error {
	if targets == 0 || count <= maxPingProbes/targets {
		return nil
	}
	return fmt.Errorf("--count %d × %d target(s): more than %d probes in one run, each held in memory until the summary: %s",
		count, targets, maxPingProbes, hint)
}

// pingPattern reads -p HEX: 1 to 16 bytes in hex digits (iputils' ping -p
// takes the same); "" is no pattern.
func pingPattern(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) > 16 {
		return nil, fmt.Errorf("-p, --pattern %q: give 1 to 16 bytes as hex digits, two a byte (ff, 0a0b0c0d)", s)
	}
	return b, nil
}

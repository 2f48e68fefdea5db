package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/percentile"
	"github.com/linecheck/linecheck/probe/bw"
)

// bwOptions are the flags of the command.
type bwOptions struct {
	port           int
	duration       time.Duration
	omit           time.Duration
	interval       time.Duration
	reverse, bidir bool
	parallel       int
	udp            bool
	bitrate        string
	length         int
	v4, v6         bool
	format         string
	listen         string
	server, oneOff bool
	client         string
	connectTimeout time.Duration
	quiet          bool
	idleTimeout    time.Duration
	maxDuration    time.Duration
	wide           bool
	units          string
	bind           string
	bytes          string

	watch    watchOpts
	every    time.Duration
	floor    string
	share    float64
	evening  string
	failExit bool
}

// clockKey holds, in a command's context, the clock of the bw watch and
// of compare's report time: tests put one there (one that moves an hour
// per call, or a fixed instant for the golden files); the real one is
// time.Now.
type clockKey struct{}

// clockFrom returns the clock from ctx, time.Now when none was put in.
func clockFrom(ctx context.Context) func() time.Time {
	if ctx != nil {
		if f, ok := ctx.Value(clockKey{}).(func() time.Time); ok {
			return f
		}
	}
	return time.Now
}

// bwLong is the help text of the command.
const bwLong = `bw measures the throughput between this host and SERVER, where a stock iperf3
server runs (` + "`iperf3 -s`" + `, Debian's iperf3 3.x, or any public iperf3 server), in the
iperf3 protocol: a control connection on TCP --port (5201), then --parallel
data streams for --time after --omit seconds of warm-up.

Direction: by default this host sends (upload); --reverse makes the server
send (the download the users of a rented server see); --bidir does both at
once. --udp sends datagrams at --bitrate (default 1M per stream, as iperf3)
and reports loss, jitter and out-of-order as iperf3 computes them; with TCP,
--bitrate paces each stream (default: as fast as the path takes it).

Figures (docs/bw.md has the definitions):
  mean        bytes the receiver got / measured time after --omit (what
              iperf3 prints as the receiver's sum)
  p5 p50 p95  over the --interval rates: p5 is the floor the line held 95%
  min max     of the time, the figure an SLA's min_throughput is checked on
  retransmits the TCP sender's TCP_INFO (ours for upload, the server's for
              download); rtt ms per interval from TCP_INFO

--listen [ADDR:]PORT runs a server instead, that stock ` + "`iperf3 -c`" + ` (or another
linecheck bw) can test against; it serves one test at a time, prints each
test's result from the client's point of view, and binds 127.0.0.1 unless an
address is given (--listen 0.0.0.0:5201 to serve the network). -s (--server)
is iperf3's spelling: a server on every address at --port (default 5201), as
iperf3 -s listens; -1 (--one-off) exits after one test, as iperf3 -s -1 does.

iperf3's short flags mean the same: -c SERVER, -J (JSON), -R -P -t -O -b -u
-l -i -p, -B ADDR (the local address to leave from), -f k|m|g|K|M|G (the
tables' rate unit: Kbit/s … or KByte/s … in 1024s) and -n BYTES (send that
many, K/M/G in 1024s, over all streams instead of for --time; upload only).

Errors say what to do: a server busy with another client's test (iperf3
serves one at a time; tried again after 0.25 s, 1 s and 3 s first, as a
server still closing the last test answers busy for a moment), nothing
listening (refused), a port a firewall drops
(no answer), a program that does not speak iperf3, a test cut short (the
partial result is printed and the exit code is 1; after Ctrl-C it is 130).

Oversell over time (--watch):
  --watch runs a test every --every (default 1h) until stopped, appending each
  result to --journal FILE (NDJSON, synced; resumed when it exists, a torn last
  line from a crash dropped and reported), as ping --watch does. A test that
  cannot run (server still busy after the retries, network down) is journaled
  as failed and the watch goes on. --report
  --journal FILE prints the hourly profile: throughput p5/p50 per hour of day
  (--report-tz), the worst hour against the best (oversell = 1 − worst p50 /
  best p50), and with --floor RATE (the bandwidth sold) a verdict: oversold
  when the evening's p5 (--evening 19-23, hours of the day) is below --share
  (default 0.8) of the floor. --fail-oversold exits 1 on that verdict.

Examples:
  linecheck bw SERVER                            upload for 10 s (SERVER runs iperf3 -s)
  linecheck bw -c SERVER -R -J                   iperf3's spelling: download, JSON
  linecheck bw -B 127.0.0.1 -f M SERVER          from a local address, rates in MByte/s
  linecheck bw -n 1G -P 4 SERVER                 upload 1 GiB over 4 streams
  linecheck bw --reverse -P 4 -t 20s -O 2s SERVER
  linecheck bw --udp -b 200M --reverse SERVER
  linecheck bw --listen 127.0.0.1:5201           (then: iperf3 -c 127.0.0.1)
  linecheck bw -s -1                             on the rented server: one test from anywhere, then exit
  linecheck bw --watch --every 30m --reverse --journal hk.ndjson SERVER
  linecheck bw --report --journal hk.ndjson --floor 200M --report-tz Asia/Shanghai`

func newBWCmd() *cobra.Command {
	o := &bwOptions{}
	c := &cobra.Command{
		Use:   "bw [flags] SERVER",
		Short: "Throughput test in the iperf3 protocol: what the port really carries, and when the line is oversold",
		Long:  bwLong,
		Args: func(c *cobra.Command, args []string) error {
			if o.listen != "" || o.server || o.watch.report {
				if len(args) > 0 {
					return badInput(fmt.Errorf("--listen, --server and --report take no SERVER, got %s", strings.Join(args, " ")))
				}
				if o.client != "" {
					return badInput(errors.New("-c (--client) names the server a client tests against: it does not go with --listen, --server or --report"))
				}
				return nil
			}
			if o.client != "" {
				if len(args) > 0 {
					return badInput(fmt.Errorf("-c %s names the SERVER already, got %s as well", o.client, strings.Join(args, " ")))
				}
				return nil
			}
			return oneArg("SERVER (the host running iperf3 -s; or -c SERVER, as iperf3 -c)")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error { return runBW(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.IntVarP(&o.port, "port", "p", bw.DefaultPort, "the server's control `PORT` (UDP streams use the same number)")
		durationVarP(f, &o.duration, "time", "t", 10*time.Second, "measured time after --omit (10s, 1m, or seconds)")
		durationVarP(f, &o.omit, "omit", "O", 0, "warm-up left out of every figure, e.g. 2s to skip TCP slow start (0 by default, as in iperf3)")
		durationVarP(f, &o.interval, "interval", "i", time.Second, "reporting interval: the percentiles are over these")
		f.BoolVarP(&o.reverse, "reverse", "R", false, "the server sends: the download users of the server see")
		f.BoolVar(&o.bidir, "bidir", false, "both directions at once")
		f.IntVarP(&o.parallel, "parallel", "P", 1, "`N` streams per direction (1..128)")
		f.BoolVarP(&o.udp, "udp", "u", false, "UDP at --bitrate: loss, jitter and out-of-order")
		f.StringVarP(&o.bitrate, "bitrate", "b", "", "target `RATE` per stream, e.g. 100M (UDP default 1M; TCP: pacing, default unlimited)")
		f.IntVarP(&o.length, "length", "l", 0, "block or datagram size in `BYTES` (default 128 KiB TCP, 1460 UDP)")
		f.BoolVarP(&o.v4, "ipv4", "4", false, "IPv4 only")
		f.BoolVarP(&o.v6, "ipv6", "6", false, "IPv6 only")
		f.StringVar(&o.format, "format", "table", "output format: "+report.FormatList())
		switchVarP(f, &o.format, "json", "J", "json", "as iperf3 -J: --format json")
		f.StringVarP(&o.client, "client", "c", "", "the `SERVER` to test against, as iperf3 -c SERVER (the same as the SERVER argument)")
		f.StringVar(&o.listen, "listen", "", "run a server on `[ADDR:]PORT` for iperf3 clients (ADDR defaults to 127.0.0.1)")
		f.BoolVarP(&o.server, "server", "s", false, "run a server on every address at --port, as iperf3 -s (--listen binds one address)")
		f.BoolVarP(&o.oneOff, "one-off", "1", false, "with --server or --listen: exit after one test, as iperf3 -s -1")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the tables on one line, however wide (default: fit the terminal, else 120 columns)")
		durationVarP(f, &o.idleTimeout, "idle-timeout", "", bw.DefaultIdleTimeout, "server: end a test in which no data moved, either way, for this long")
		durationVarP(f, &o.maxDuration, "max-duration", "", bw.DefaultMaxDuration, "server: refuse tests longer than this (time + omit; iperf3 clients ask up to 24h) and cut byte-limited ones there")
		durationVarP(f, &o.connectTimeout, "connect-timeout", "", 5*time.Second, "how long to wait for the server at each setup step")
		f.BoolVarP(&o.quiet, "quiet", "q", false, "no live progress line")
		f.StringVarP(&o.units, "units", "f", "m", "as iperf3 -f: the tables' rate `UNIT`, k, m or g (Kbit/s, Mbit/s, Gbit/s) or K, M or G (KByte/s, MByte/s, GByte/s in 1024s); csv keeps bit/s")
		f.StringVarP(&o.bind, "bind", "B", "", "as iperf3 -B: the local `ADDR` the client's connections leave from")
		f.StringVarP(&o.bytes, "bytes", "n", "", "as iperf3 -n: send `BYTES` (K, M, G: 1024s, as iperf3) over all streams instead of for --time; upload only")

		w := &o.watch
		f.BoolVar(&w.watch, "watch", false, "run a test every --every until stopped, journaling each (see Oversell over time)")
		f.StringVar(&w.journal, "journal", "", "append-only journal `FILE` of a --watch (resumed when it exists); the input of --report")
		f.BoolVar(&w.report, "report", false, "print the hourly throughput profile of --journal FILE and exit")
		f.StringVar(&w.reportTZ, "report-tz", "UTC", "time zone of the hours in the report (IANA name such as Asia/Shanghai, or Local)")
		f.IntVar(&w.cycles, "watch-cycles", 0, "stop a --watch after `N` tests of this run (0: until stopped)")
		durationVarP(f, &o.every, "every", "", time.Hour, "time between the starts of two --watch tests")
		f.StringVar(&o.floor, "floor", "", "the bandwidth sold, `RATE` such as 200M: the report's oversell verdict compares the evening to it")
		f.Float64Var(&o.share, "share", 0.8, "share of --floor the evening's p5 must reach")
		f.StringVar(&o.evening, "evening", "19-23", "the evening peak as hours of the day `FROM-TO` (in --report-tz; 22-2 crosses midnight)")
		f.BoolVar(&o.failExit, "fail-oversold", false, "exit 1 when the report's verdict is oversold")
	})
	return c
}

// bwConfig reads the test flags.
func bwConfig(c *cobra.Command, o *bwOptions) (bw.Config, error) {
	cfg := bw.Config{Percentile: percentile.NearestRank, Port: o.port, Duration: o.duration, Omit: o.omit, Interval: o.interval, Reverse: o.reverse,
		Bidir: o.bidir, Parallel: o.parallel, UDP: o.udp, Length: o.length, ConnectTimeout: o.connectTimeout}
	if err := prCheckPort("--port", o.port); err != nil {
		return cfg, err
	}
	if o.parallel < 1 || o.parallel > 128 {
		return cfg, fmt.Errorf("--parallel %d: 1..128 streams (iperf3's limit)", o.parallel)
	}
	if o.interval < 100*time.Millisecond {
		return cfg, fmt.Errorf("--interval %v: at least 100ms", o.interval)
	}
	if o.omit < 0 {
		return cfg, fmt.Errorf("--omit %v: must not be negative", o.omit)
	}
	if o.duration <= 0 {
		return cfg, fmt.Errorf("--time %v: must be positive", o.duration)
	}
	if o.bitrate != "" {
		r, err := bw.ParseRate(o.bitrate)
		if err != nil {
			return cfg, fmt.Errorf("--bitrate: %w", err)
		}
		if r == 0 && o.udp {
			return cfg, errors.New("--bitrate 0 with --udp: a UDP test needs a rate (iperf3's unlimited UDP floods the path; give the rate you want to test)")
		}
		cfg.Bitrate = r
	}
	if o.reverse && o.bidir {
		return cfg, errors.New("--reverse and --bidir: choose one (--bidir measures both directions)")
	}
	switch {
	case o.v4 && o.v6:
		return cfg, errors.New("-4 and -6: choose one")
	case o.v4:
		cfg.Network = "tcp4"
	case o.v6:
		cfg.Network = "tcp6"
	}
	if o.connectTimeout <= 0 {
		return cfg, errors.New("--connect-timeout must be positive")
	}
	if o.bytes != "" {
		n, err := parseBytes(o.bytes)
		if err != nil {
			return cfg, err
		}
		switch {
		case c.Flags().Changed("time"):
			return cfg, errors.New("-n (--bytes) and -t (--time): give one, as iperf3 ends a test by one of them")
		case o.reverse || o.bidir:
			return cfg, errors.New("-n (--bytes) counts what this side sends: not with --reverse or --bidir (give -t)")
		case o.omit > 0:
			return cfg, errors.New("-n (--bytes) and --omit: a byte-limited test has no warm-up to leave out (give -t)")
		}
		cfg.Bytes = n
	}
	if o.bind != "" {
		a, err := netip.ParseAddr(o.bind)
		if err != nil {
			return cfg, fmt.Errorf("-B, --bind %q: give a local IP address (iperf3 -B takes the same)", o.bind)
		}
		cfg.LocalAddr = a.Unmap()
	}
	return cfg, nil
}

func runBW(c *cobra.Command, args []string, o *bwOptions) error {
	if err := report.CheckFormat(o.format); err != nil {
		return badInput(err)
	}
	if fl := c.Flags(); fl.Changed("json") && fl.Changed("format") && report.Format(o.format) != report.FormatJSON {
		return badInput(errors.New("-J (--json) and --format: -J is --format json; give one"))
	}
	if _, err := report.ParseBWUnit(o.units); err != nil {
		return badInput(fmt.Errorf("-f, --units %w", err))
	}
	if o.client != "" {
		args = []string{o.client}
	}
	w := &o.watch
	switch {
	case w.report:
		if err := w.checkReport(); err != nil {
			return err
		}
		return bwReport(c, o)
	case o.listen != "" && o.server:
		return badInput(errors.New("--listen and --server: choose one (--server is every address at --port; --listen ADDR:PORT one address)"))
	case o.listen != "" || o.server:
		if w.watch {
			return badInput(errors.New("--listen/--server and --watch: the watch is the client's; run the server plainly"))
		}
		return bwListen(c, o)
	case o.oneOff:
		return badInput(errors.New("--one-off applies to a server (--server or --listen): a client runs one test anyway"))
	case w.journal != "" && !w.watch:
		return badInput(errors.New("--journal needs --watch (to write) or --report (to read)"))
	}
	cfg, err := bwConfig(c, o)
	if err != nil {
		return badInput(err)
	}
	// A documentation address is refused before any socket opens (and
	// before a watch creates its journal), as compare and serve refuse it.
	if err := bw.CheckServer(args[0]); err != nil {
		return badInput(err)
	}
	if w.watch {
		return bwWatch(c, o, args[0], cfg)
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	stderr := c.ErrOrStderr()
	var onBusy func(time.Duration)
	if !o.quiet && prIsTTY(stderr) {
		cfg.Progress, onBusy = bwProgress(stderr, "bw"), bwBusyNotice(stderr, "bw")
	}
	res, err := engine.BWCycle(ctx, args[0], cfg, onBusy)
	if cfg.Progress != nil {
		// The status line goes before the result is printed on the
		// terminal below it.
		fmt.Fprint(stderr, "\r\033[K")
	}
	if res != nil {
		if werr := writeBW(c.OutOrStdout(), res, o); werr != nil {
			return werr
		}
	}
	if interrupted() {
		// Ctrl-C: the partial result is above; exit 130 as ping and trace.
		if res != nil {
			fmt.Fprintln(stderr, "linecheck: interrupted; the result covers the test so far")
		}
		return errInterrupted
	}
	if err != nil {
		if errors.Is(err, bw.ErrDocumentation) { // a name that resolved to one
			return badInput(err)
		}
		if res != nil {
			return &exitError{code: 1, err: err}
		}
		return err
	}
	return nil
}

// bwProgress draws the live line: elapsed of planned, last interval's rate.
func bwProgress(w io.Writer, what string) func(bw.Progress) {
	return func(p bw.Progress) {
		state := report.Mbps(&p.Bps) + " Mbit/s"
		if p.Omitting {
			state = "warming up (--omit)"
		}
		if p.Total <= 0 { // -n: no planned end
			fmt.Fprintf(w, "\r\033[K%s: %.0f s  %s", what, p.Elapsed.Seconds(), state)
			return
		}
		fmt.Fprintf(w, "\r\033[K%s: %.0f/%.0f s  %s", what, p.Elapsed.Seconds(), p.Total.Seconds(), state)
	}
}

// bwBusyNotice draws the status line while a busy server is waited for.
func bwBusyNotice(w io.Writer, what string) func(time.Duration) {
	return func(wait time.Duration) {
		fmt.Fprintf(w, "\r\033[K%s: server busy (another test, or the last one closing); trying again in %v", what, wait)
	}
}

func writeBW(w io.Writer, r *bw.Result, o *bwOptions) error {
	u, _ := report.ParseBWUnit(o.units) // checked in runBW
	return report.Render(w, report.BWTest{Result: r, Unit: u}, report.Format(o.format), tableOptions(w, o.wide))
}

// logNoTest says that a connection closed before it asked for a test (a
// port scan, linecheck ping --tcp or serve checking the port): the first
// one in full, then only the count at 10, 100, 1000 …, so a monitor that
// checks the port every second does not fill the log.
func logNoTest(w io.Writer, err error, n int) {
	switch {
	case n == 1:
		fmt.Fprintf(w, "linecheck bw: %v; further connections that close before a test are counted, not logged\n", err)
	case isPowerOfTen(n):
		fmt.Fprintf(w, "linecheck bw: %d connections closed before a test (port checks such as ping --tcp?)\n", n)
	}
}

func isPowerOfTen(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// bwListen serves iperf3 clients until interrupted, printing each test.
func bwListen(c *cobra.Command, o *bwOptions) error {
	flag, addr, host, port, err := bwListenAddr(o)
	if err != nil {
		return badInput(err)
	}
	ctx, _, stop := interruptContext(c.Context())
	defer stop()
	ctx, done := context.WithCancel(ctx)
	defer done()
	network := "tcp"
	if o.v4 {
		network = "tcp4"
	} else if o.v6 {
		network = "tcp6"
	}
	out, stderr := c.OutOrStdout(), c.ErrOrStderr()
	var mu sync.Mutex
	var oneErr error // the one test's error, with --one-off
	noTest := 0      // connections that closed before a test (port checks)
	if o.idleTimeout <= 0 || o.maxDuration <= 0 {
		return badInput(fmt.Errorf("--idle-timeout %v, --max-duration %v: both must be positive", o.idleTimeout, o.maxDuration))
	}
	cfg := bw.ServerConfig{Percentile: percentile.NearestRank, Addr: net.JoinHostPort(host, port), Network: network, Interval: o.interval,
		IdleTimeout: o.idleTimeout, MaxDuration: o.maxDuration,
		OnStart: func(client string, p bw.TestParams) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "linecheck bw: %s: %s %s, %d stream(s), %v (client %s)\n", client, p.Protocol, p.Direction, p.Streams, p.Duration, orVersion(p.Version))
		},
		OnResult: func(res *bw.Result, err error) {
			mu.Lock()
			defer mu.Unlock()
			if res != nil {
				if werr := writeBW(out, res, o); werr != nil {
					fmt.Fprintln(stderr, "linecheck bw:", werr)
				}
			}
			switch {
			case errors.Is(err, bw.ErrNoClient):
				noTest++
				logNoTest(stderr, err, noTest)
			case err != nil:
				fmt.Fprintln(stderr, "linecheck bw:", err)
			}
			// One test, as iperf3 -1: a connection that never sent its
			// cookie (a scan, a TCP ping of the port) was no test.
			if o.oneOff && !errors.Is(err, bw.ErrNoClient) {
				oneErr = err
				done()
			}
		}}
	srv, err := bw.Listen(cfg)
	if err != nil && o.server && host == "::" && !o.v6 {
		// No IPv6 on this host: every IPv4 address, then.
		cfg.Addr = net.JoinHostPort("0.0.0.0", port)
		srv, err = bw.Listen(cfg)
	}
	if err != nil {
		return badInput(fmt.Errorf("%s %s: %w", flag, strings.TrimPrefix(addr, ":"), err))
	}
	switch {
	case o.oneOff:
		fmt.Fprintf(stderr, "linecheck bw: listening on %s (TCP, and UDP per test) for one test; Ctrl-C stops\n", srv.Addr())
	default:
		fmt.Fprintf(stderr, "linecheck bw: listening on %s (TCP, and UDP per test); Ctrl-C stops\n", srv.Addr())
	}
	if o.server {
		fmt.Fprintf(stderr, "linecheck bw: every address: anyone who can reach port %d can run a test that fills this host's line (as with iperf3 -s); --listen ADDR:PORT binds one\n", srv.Addr().Port)
	}
	if err := srv.Serve(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if oneErr != nil {
		// The one test failed (said above, as it ended); the exit code
		// tells scripts.
		return &exitError{code: 1, err: errors.New("--one-off: the test failed (see above)")}
	}
	return nil
}

// bwListenAddr is the address the server binds: --listen [ADDR:]PORT, or
// with --server every address at --port; flag names the flag it came from,
// addr is as given, host and port its parts.
func bwListenAddr(o *bwOptions) (flag, addr, host, port string, err error) {
	flag, addr = "--listen", o.listen
	if o.server {
		// Every address, as iperf3 -s: [::] is IPv6 and IPv4 at once on
		// Linux; 0.0.0.0 with -4, or where IPv6 is off (bwListen).
		all := "::"
		if o.v4 {
			all = "0.0.0.0"
		}
		flag, addr = "--port", net.JoinHostPort(all, strconv.Itoa(o.port))
		if o.port < 0 || o.port > 65535 {
			return "", "", "", "", fmt.Errorf("--port %d: not a port number (0..65535)", o.port)
		}
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", "", "", fmt.Errorf("--listen %q: want [ADDR:]PORT, e.g. 5201 or 0.0.0.0:5201", o.listen)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", "", "", "", fmt.Errorf("--listen %q: %q is not a port number (0..65535)", o.listen, port)
	}
	return flag, addr, host, port, nil
}

func orVersion(v string) string {
	if v == "" {
		return "unknown version"
	}
	return v
}

// bwWatch runs a test every --every and journals each.
func bwWatch(c *cobra.Command, o *bwOptions, server string, cfg bw.Config) error {
	w := &o.watch
	if w.cycles < 0 {
		return badInput(fmt.Errorf("--watch-cycles %d: must not be negative", w.cycles))
	}
	if o.every <= 0 {
		return badInput(errors.New("--every must be positive"))
	}
	if o.every < cfg.Omit+cfg.Duration {
		return badInput(fmt.Errorf("--every %v is shorter than a test (--omit + --time = %v)", o.every, cfg.Omit+cfg.Duration))
	}
	if _, err := bwReportOptions(o); err != nil {
		return badInput(err)
	}
	if _, err := watchLoc(w.reportTZ); err != nil {
		return badInput(err)
	}
	ctx, stop := watchContext(c)
	defer stop()
	appendFn, closeFn, _, err := openWatchJournal(c, w, journal.KindBW)
	if err != nil {
		return err
	}
	defer closeFn()
	stderr := c.ErrOrStderr()
	tty := !o.quiet && prIsTTY(stderr)
	now := clockFrom(c.Context())
	n := 0
	err = engine.Watch(w.cycles, func(first bool) (bool, error) {
		n++
		start := now()
		wall := time.Now()
		var onBusy func(time.Duration)
		if tty {
			what := fmt.Sprintf("bw --watch: test %d", n)
			cfg.Progress, onBusy = bwProgress(stderr, what), bwBusyNotice(stderr, what)
		}
		res, err := engine.BWCycle(ctx, server, cfg, onBusy)
		if ctx.Err() != nil {
			return false, nil // a test cut short by the stop signal is not a full cycle
		}
		e := journal.Entry{Time: start.UTC(), End: start.Add(time.Since(wall)).UTC(), BW: res}
		if err != nil {
			// A watch runs for days: a test that cannot run (server busy,
			// network down) is journaled as failed, and the watch goes on.
			if errors.Is(err, bw.ErrDocumentation) { // a name now resolving to one: never tested
				return false, badInput(err)
			}
			if first && res == nil && !errors.Is(err, bw.ErrBusy) {
				return false, err
			}
			fmt.Fprintf(stderr, "\r\033[Klinecheck: test %d: %v\n", n, err)
			e.Error = err.Error()
		}
		cycle, aerr := appendFn(e)
		if aerr != nil {
			return false, journalFailed(stderr, tty, aerr, func() error { return bwReport(c, o) })
		}
		if tty && res != nil {
			fmt.Fprintf(stderr, "\r\033[Kbw --watch: test %d: %s Mbit/s mean, p5 %s", cycle, report.Mbps(res.Throughput.Mean), report.Mbps(res.Throughput.P5))
		}
		if w.cycles != 0 && n == w.cycles {
			return false, nil
		}
		return engine.SleepUntil(ctx, wall.Add(o.every)), nil
	})
	if err != nil {
		return err
	}
	if tty {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if w.journal == "" {
		return nil
	}
	return bwReport(c, o)
}

// bwReportOptions reads --floor, --share and --evening.
func bwReportOptions(o *bwOptions) (journal.BWReportOptions, error) {
	var ro journal.BWReportOptions
	if o.floor != "" {
		f, err := bw.ParseRate(o.floor)
		if err != nil || f <= 0 {
			return ro, fmt.Errorf("--floor %q: want the bandwidth sold, e.g. 200M or 1G", o.floor)
		}
		ro.Floor = f
	}
	if !(o.share > 0 && o.share <= 1) {
		return ro, fmt.Errorf("--share %g: a share of the floor, 0 < share <= 1", o.share)
	}
	ro.Share = o.share
	from, to, ok := strings.Cut(o.evening, "-")
	fh, err1 := strconv.Atoi(strings.TrimSpace(from))
	th, err2 := strconv.Atoi(strings.TrimSpace(to))
	if !ok || err1 != nil || err2 != nil || fh < 0 || fh > 23 || th < 0 || th > 24 || fh == th {
		return ro, fmt.Errorf("--evening %q: want hours of the day FROM-TO, e.g. 19-23 (19:00 to 23:00)", o.evening)
	}
	ro.FromHour, ro.ToHour = fh, th%24
	return ro, nil
}

// bwReport prints the hourly profile of --journal.
func bwReport(c *cobra.Command, o *bwOptions) error {
	w := &o.watch
	ro, err := bwReportOptions(o)
	if err != nil {
		return badInput(err)
	}
	loc, err := watchLoc(w.reportTZ)
	if err != nil {
		return badInput(err)
	}
	entries, info, err := journal.Read(w.journal)
	if err != nil {
		return badInput(err)
	}
	for _, e := range entries {
		if e.Kind != journal.KindBW {
			return badInput(fmt.Errorf("%s: holds %s cycles, not bw: use `linecheck %s --report` for it", w.journal, e.Kind, e.Kind))
		}
	}
	if info.Torn {
		fmt.Fprintf(c.ErrOrStderr(), "linecheck: %s:%d: torn last line (%d bytes) left out of the report\n", w.journal, info.TornLine, info.TornBytes)
	}
	r := journal.SummarizeBW(entries, info, w.journal, loc, ro)
	out := c.OutOrStdout()
	if err := report.Render(out, report.BWWatchReport{Report: r}, report.Format(o.format), tableOptions(out, o.wide)); err != nil {
		return err
	}
	if o.failExit && r.Verdict == "oversold" {
		return verdictFailed(r.VerdictText())
	}
	return nil
}

// parseBytes reads -n BYTES: a whole number with an optional K, M or G
// (powers of 1024, as iperf3's -n counts them).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 1 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("-n, --bytes %q: give a number of bytes, 1 or more, with K, M or G for 1024s (100M)", s)
	}
	return n * mult, nil
}

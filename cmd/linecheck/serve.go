package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/internal/pacing"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// serveOptions are serve's flags.
type serveOptions struct {
	config      string
	targets     string
	targetProto string
	targetPort  int
	listen      string
	count       int
	interval    time.Duration
	timeout     time.Duration
	rate        float64
	pause       time.Duration
	traceEvery  int
	maxTTL      int
	asnDB       string
	maxBackoff  time.Duration
	resolveRate float64
	bwEvery     time.Duration
	bwTime      time.Duration
	gpuEvery    time.Duration
	window      time.Duration
	noASN       bool
	user        string
	webConfig   string
}

// serveLong is the help text of the command.
const serveLong = `serve probes every target of every candidate in the candidates file (the
file compare reads, checked by the same loader: serve requires only candidate
names and targets, icmp or tcp with a port; every other key present is
checked too, and anything the loader rejects is refused: at start with exit
2, on SIGHUP keeping the running configuration), cycle after cycle, and
serves the results to Prometheus on /metrics. The first cycle starts at
launch. A cycle sends --count probes to each target every --interval (all
targets at once, under the global --rate cap, as ping does), then, every
--trace-every cycles, traces each target once (as trace does) for the hop
metrics and the line class.

Pacing: a target is probed again no sooner than one --interval after the
last probe of its previous cycle, and cycles, traces included, stay under
--rate, also when probes fail at once. A target whose probing fails (name
resolution, socket, privilege, a broadcast address) backs off: 1 cycle,
then 2, 4, 8 … up to --max-backoff between attempts; it is 0 in
linecheck_target_up meanwhile, and each attempt counts in
linecheck_probe_errors_total. Host names are looked up at most
--resolve-rate times a second and cached for their DNS TTL (failures for
30 s). When every target backs off, /-/healthy answers 503 with the reason.

Metrics, labelled candidate, target (address, with :port for tcp) and
protocol (hop loss adds ttl):
  linecheck_rtt_seconds              histogram, buckets 0.1 ms … 1 s
  linecheck_probes_sent_total        probes whose wait has ended
  linecheck_probes_received_total    replies within --timeout
  linecheck_probes_late_total        replies after --timeout
  linecheck_probes_duplicate_total   duplicate replies
  linecheck_probe_errors_total       failed attempts (resolution, socket, privilege; traces too)
  linecheck_target_up                1 when the target answered at least once in its --window;
                                     0 when nothing answered (refused TCP connections too),
                                     before the first answer, while backing off
  linecheck_window_loss_ratio, linecheck_window_rtt_seconds{stat}, linecheck_jitter_seconds
                                     loss, RTT (min, p50, p95, p99, max) and mean |D| jitter
                                     over the target's --window, as compare computes them
  linecheck_build_info               1, labelled version, revision, goversion
  go_*, process_*                    the Go runtime and the process (client_golang's collectors)
  linecheck_hop_loss_ratio           loss per TTL in the last trace (0..1)
  linecheck_hops                     hops in the last trace
  linecheck_hop_rtt_seconds          median RTT per TTL in the last trace
  linecheck_line_class_info          1, labelled with the route's line_class
  linecheck_path_id, linecheck_path_changes_total
                                     the route's identity (hash of its hop addresses) and
                                     how often it changed between traces
  linecheck_paths, linecheck_path_line_class_info{path}
                                     a multipath: true candidate's first target is traced with
                                     multipath discovery (as compare): its paths and their classes
Per candidate, what compare judges over the window (verdict.Evaluate on the
targets' windows, the last trace forward and the file's recorded.return):
  linecheck_candidate_{loss_ratio,rtt_seconds,jitter_seconds}, linecheck_stretch_ratio,
  linecheck_floor_rtt_seconds, linecheck_candidate_line_class_info{direction},
  linecheck_candidate_throughput_bits_per_second, linecheck_throughput_floor_bits_per_second,
  linecheck_sla_check_pass{check} (measured checks), linecheck_sla_check_nodata{check}
  (checks without data: never a pass nor a measured fail), linecheck_sla_pass{window}.
SLA windows (sla.windows, else the evening 20:00-23:00 in the users' zone) are
judged over their most recent occurrence (the current one while it lasts, else
the last one): linecheck_sla_pass{window="evening"} (window="all" is --window;
absent for a window without probes) and linecheck_sla_window_check_pass,
linecheck_sla_window_check_nodata{check,window}. Each target keeps one
occurrence of each window: (window / --window + 1) x --window's probes.
With offers: and traffic: in the file, compare's prices of that traffic:
  linecheck_monthly_cost{offer,scheme,currency,role}, linecheck_monthly_cost_converted,
  linecheck_projected_monthly_cost (a month recorded in part: month to date),
  linecheck_billed_rate_bits_per_second (the 95th billed so far), linecheck_commit_bits_per_second,
  linecheck_traffic_{p95_bits_per_second,coverage_ratio,period_start_timestamp_seconds,...}
Series exist only for the targets in the file, so cardinality is bounded by
it. Loss over a window in PromQL:
  1 - increase(linecheck_probes_received_total[1h]) / increase(linecheck_probes_sent_total[1h])

Endpoints: /metrics; /-/healthy (200, or 503 with the reason when nothing
can be probed); / (every target's state: up or backing off, its address and
last error; every candidate's figures, cost and SLA checks); /compare (the
same snapshot as compare's report: HTML, or ?format=json|csv|markdown|table).
SIGHUP re-reads --config and prices its traffic log again (a growing month
to date; a bad file is reported and the old one stays in force; series of
removed targets are deleted). SIGINT or
SIGTERM stops probing and shuts the server down gracefully.

Slow clients: serve answers 128 connections at once, 16 of them from one
client address; 3 s to send the request header, 15 s idle between
requests, and a response the client takes nothing of for 2 s is cut off.
A newcomer that finds the slots taken reclaims an idle connection, one
whose client does not read, or one that has sent no request, from the
client holding the most slots; only when every slot answers a request
that moves does it wait, and the next free slot goes to the client
holding the fewest. So a flood of idle, silent or never-reading clients
does not keep Prometheus from /metrics.

serve binds 127.0.0.1 unless told otherwise. On any other address it warns
that /metrics, / and /compare show everyone who can reach the port the
candidates, their target addresses, RTTs, loss, traced routes, prices and
errors, without authentication, unless --web.config.file asks for a
password or a client certificate (then it says which).

On the rented server, --targets FILE (a backtrace target list, the YAML of
'linecheck backtrace --targets') adds those targets under candidate
"backtrace": their traces are the return routes toward the users, and
linecheck_line_class_info carries the users' carrier and city, so a return
route that turns into an ordinary line at night shows in Prometheus:
  linecheck_line_class_info{candidate="backtrace",carrier="telecom",line_class!="cn2-gia"}
They are probed with ICMP, or with TCP where a network drops ICMP:
--targets-proto tcp --targets-port 443 (as backtrace's --proto tcp --port
443; the target label is then address:port).
--config, --targets or both; SIGHUP re-reads both.

Scaling out (several vantage points, one Prometheus, SLA rules): docs/scaleout.md.

Examples:
  linecheck serve --config candidates.yaml
  linecheck serve --config candidates.yaml --listen 10.0.0.5:9427 --count 20 --interval 500ms
  linecheck serve --targets users.yaml --trace-every 1      # return routes, on the server
  linecheck serve --targets users.yaml --targets-proto tcp --targets-port 443
  kill -HUP $(pidof linecheck)     # reload candidates.yaml`

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve --config CANDIDATES.yaml [--listen 127.0.0.1:9427]",
		Short: "Prometheus exporter: probe the candidates continuously and serve /metrics",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, args []string) error { return runServe(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.config, "config", "", "candidates `FILE` (YAML, compare's schema; names and targets are required)")
		f.StringVar(&o.targets, "targets", "", "backtrace target list `FILE` (targets: [{name, carrier, city, addr}]): return routes labelled by carrier and city")
		f.StringVar(&o.targetProto, "targets-proto", "icmp", "how the --targets list is probed (ping and trace): "+probe.ProtocolNames(probe.PingProtocols()))
		f.IntVar(&o.targetPort, "targets-port", 80, "destination port of the --targets list with --targets-proto tcp")
		f.StringVar(&o.listen, "listen", "127.0.0.1:9427", "address to serve /metrics on")
		f.IntVarP(&o.count, "count", "c", 10, "probes per target per cycle")
		durationVarP(f, &o.interval, "interval", "i", time.Second, "time between two probes to the same target (seconds, 1, or a Go duration, 1s)")
		durationVarP(f, &o.timeout, "timeout", "W", time.Second, "a reply later than this is late, not received (seconds or a Go duration)")
		f.Float64Var(&o.rate, "rate", probe.DefaultPingRate, "global cap in packets per second over all targets")
		durationVarP(f, &o.pause, "pause", "", 0, "wait between two cycles (seconds or a Go duration)")
		f.IntVar(&o.traceEvery, "trace-every", 6, "trace every target each `N`th cycle (0: never)")
		f.IntVar(&o.maxTTL, "max-ttl", 30, "highest TTL a trace probes (bounds the ttl label)")
		durationVarP(f, &o.maxBackoff, "max-backoff", "", exporter.DefaultMaxBackoff, "longest wait before a failing target is tried again (seconds or a Go duration)")
		f.Float64Var(&o.resolveRate, "resolve-rate", pacing.DefaultResolveRate, "most host-name lookups per second")
		f.StringVar(&o.asnDB, "asn-db", "", "offline IP-to-ASN `FILE` (iptoasn TSV or .mmdb) for the line class, beside the bundled carrier table")
		f.BoolVar(&o.noASN, "no-asn", false, "leave the offline IP-to-AS dataset out of the hop names (as compare --no-asn)")
		durationVarP(f, &o.window, "window", "", 5*time.Minute, "span of each target's sliding window: loss, RTT percentiles, jitter, target_up and the SLA are judged over the probes of the last `D` (seconds or a Go duration)")
		durationVarP(f, &o.bwEvery, "bw-every", "", 0, "run a throughput test against each candidate's bandwidth_test every `D` (0: never; tests are heavy, see Throughput)")
		durationVarP(f, &o.bwTime, "bw-time", "", 5*time.Second, "measured time of each throughput test")
		c.Long += serveBWHelp
		durationVarP(f, &o.gpuEvery, "gpu-every", "", 0, "sample this machine's GPUs with nvidia-smi every `D` and export linecheck_gpu_* (0: never; see GPUs)")
		c.Long += serveGPUHelp
		f.StringVar(&o.user, "user", "nobody", "started as root, answer HTTP as this `USER` of /etc/passwd once the sockets and files are open ('': stay root, without capabilities)")
		c.Long += serveUserHelp
		f.StringVar(&o.webConfig, "web.config.file", "", "TLS and basic-auth `FILE` in the format of Prometheus's exporters (tls_server_config, basic_auth_users)")
		c.Long += serveWebHelp
	})
	addPrefixTableFlag(c)
	return c
}

func runServe(c *cobra.Command, _ []string, o *serveOptions) error {
	runAs, err := serveRunAs(o.user)
	if err != nil {
		return badInput(err)
	}
	if err := prepareRunAs(runAs); err != nil {
		return err
	}
	if err := keepPrivilegesInHelper(); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return badInput(err)
	}
	tproto, err := serveTargetsProto(c, *o)
	if err != nil {
		return badInput(err)
	}
	conf, err := serveTargets(o.config, o.targets, tproto, o.targetPort)
	if err != nil {
		return badInput(err)
	}
	stderr := c.ErrOrStderr()
	fileWarnings(stderr, "serve", conf.File)
	// The hop names compare classifies routes with (the operator's prefix
	// table, --asn-db, the offline dataset unless --no-asn), so that a
	// route has the class compare gives it.
	db, note, err := route.LoadHopNames(o.asnDB, o.noASN, prefixTableOf(c))
	if err != nil {
		return badInput(err)
	}
	if note != "" {
		fmt.Fprintln(stderr, "linecheck serve: "+note)
	}
	exp := exporter.New(stderr)
	serveProcessMetrics(exp)
	exp.SetWindow(o.window, serveWindowProbes(*o), nil)
	if o.config != "" {
		exp.SetThroughputTests(o.bwEvery) // the throughput loop reads the candidates file
	}
	exp.SetHopNames(db)
	exp.SetConfig(conf, time.Now())
	exp.SetReportRenderer(serveCompareReport)

	web, err := loadWebConfig(o.webConfig)
	if err != nil {
		return badInput(err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return badInput(fmt.Errorf("--listen %s: %w", o.listen, err))
	}
	// Everything serve opens with root's ids is open: from here it is
	// --user (serve_user.go).
	if err := finishRunAs(runAs); err != nil {
		ln.Close()
		return err
	}
	if runAs != nil {
		fmt.Fprintf(stderr, "linecheck serve: running as user %s (uid %d, gid %d)\n", runAs.name, runAs.uid, runAs.gid)
	}
	srv, ln := newHTTPServer(exp.Mux(), ln, defaultHTTPLimits, web)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "linecheck serve: %s://%s/metrics, %d targets from %s\n", web.scheme(), ln.Addr(), len(conf.Targets), serveSources(o.config, o.targets))
	if w := exposureWarning(ln.Addr(), web); w != "" {
		fmt.Fprintln(stderr, w)
	}

	parent := c.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	var wg sync.WaitGroup
	if err := startServeLoops(ctx, &wg, exp, db, *o, stderr); err != nil {
		stop()
		wg.Wait()
		return badInput(err)
	}
	result := serveUntilStopped(ctx, serveErr, hup, exp, *o, tproto, ln.Addr(), stderr)
	stop()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && result == nil {
		result = err
	}
	wg.Wait()
	if result == nil {
		fmt.Fprintln(stderr, "linecheck serve: stopped")
	}
	return result
}

// check refuses flag values serve cannot run with.
func (o *serveOptions) check() error {
	rateErr := prCheckRate("--rate", o.rate)
	switch {
	case o.config == "" && o.targets == "":
		return errors.New("--config CANDIDATES.yaml (or --targets FILE, a backtrace target list) is required")
	case o.count < 1:
		return fmt.Errorf("--count %d: must be at least 1", o.count)
	case o.interval <= 0 || o.timeout <= 0:
		return errors.New("--interval and --timeout must be positive")
	case rateErr != nil:
		return rateErr
	case o.pause < 0 || o.traceEvery < 0:
		return errors.New("--pause and --trace-every must not be negative")
	case o.maxBackoff <= 0 || !prPositive(o.resolveRate):
		return errors.New("--max-backoff and --resolve-rate must be positive")
	case o.bwEvery < 0 || o.bwTime <= 0:
		return errors.New("--bw-every must not be negative and --bw-time must be positive")
	case o.bwEvery > 0 && o.bwEvery < o.bwTime+time.Second:
		return fmt.Errorf("--bw-every %v is shorter than one test (--bw-time %v and 1s of warm-up)", o.bwEvery, o.bwTime)
	case o.maxTTL < 1 || o.maxTTL > 255:
		return fmt.Errorf("--max-ttl %d: use 1..255", o.maxTTL)
	case o.window < o.interval:
		return fmt.Errorf("--window %v: must be at least one --interval (%v)", o.window, o.interval)
	}
	return nil
}

// serveWindowProbes bounds a target's window in probes: a target is sent
// at most one probe per --interval, so a --window holds no more than
// window/interval of them, plus one cycle.
func serveWindowProbes(o serveOptions) int {
	return int(o.window/o.interval) + o.count
}

// startServeLoops starts, in wg, the probe loop and, when asked for, the
// throughput and GPU loops; an error is bad input (nothing runs then).
func startServeLoops(ctx context.Context, wg *sync.WaitGroup, exp *exporter.Exporter, db route.ASNDB, o serveOptions, stderr io.Writer) error {
	loop := engine.CycleConfig{Count: o.count, Interval: o.interval, Rate: o.rate, Timeout: o.timeout, TraceProbes: o.maxTTL, ASNDB: db,
		Pause: o.pause, TraceEvery: o.traceEvery, MaxBackoff: o.maxBackoff,
		Resolver: pacing.NewResolver(nil, nil, o.resolveRate).WithHint(engine.ServeHint)}
	if o.bwEvery > 0 {
		// One Quiet for the probe cycles and the throughput tests: the
		// cycles pause while a test fills the line.
		loop.Quiet = engine.NewQuiet()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		engine.RunCycles(ctx, exp, loop)
	}()
	n, err := startServeBW(ctx, wg, exp, o.config, o.bwEvery, o.bwTime, time.Duration(o.count)*o.interval, loop.Quiet, stderr)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(stderr, "linecheck serve: throughput test of %d candidates every %v (%v each)\n", n, o.bwEvery, o.bwTime)
	}
	if o.gpuEvery != 0 {
		if err := startServeGPU(ctx, wg, exp, o.gpuEvery, stderr); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "linecheck serve: GPU samples every %v\n", o.gpuEvery)
	}
	return nil
}

// serveUntilStopped reloads the configuration on SIGHUP until ctx ends
// (SIGINT, SIGTERM) or the HTTP server fails, whose error it returns.
func serveUntilStopped(ctx context.Context, serveErr <-chan error, hup <-chan os.Signal, exp *exporter.Exporter, o serveOptions, tproto probe.Protocol, addr net.Addr, stderr io.Writer) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-serveErr:
			return fmt.Errorf("serving %s: %w", addr, err)
		case <-hup:
			nc, err := serveTargets(o.config, o.targets, tproto, o.targetPort)
			if err != nil {
				fmt.Fprintf(stderr, "linecheck serve: reload: %v (keeping the previous configuration)\n", err)
				continue
			}
			exp.SetConfig(nc, time.Now())
			fmt.Fprintf(stderr, "linecheck serve: reloaded %s: %d targets\n", serveSources(o.config, o.targets), len(nc.Targets))
		}
	}
}

// serveCompareReport renders serve's snapshot as compare's report (/compare):
// report.Render of the same document compare writes, HTML unless
// ?format= names another of compare's formats.
func serveCompareReport(w io.Writer, r *compare.Result, name string) (string, error) {
	f := report.FormatHTML
	if name != "" {
		var err error
		if f, err = report.ParseFormat(name, report.CompareFormats...); err != nil {
			return "", err
		}
	}
	return f.ContentType(), report.Render(w, report.CompareReport{Result: r}, f, report.Options{Width: report.DefaultWidth})
}

// serveTargetsProto checks --targets-proto and --targets-port: serve pings
// with icmp or tcp only (a UDP "ping" has no reply to time), and a port
// given for icmp would be ignored silently.
func serveTargetsProto(c *cobra.Command, o serveOptions) (probe.Protocol, error) {
	p, err := probe.ParsePingProtocol(o.targetProto)
	switch {
	case err != nil:
		return "", fmt.Errorf("--targets-proto %q: use %s (serve times pings; a UDP probe has no reply to time)", o.targetProto, probe.ProtocolNames(probe.PingProtocols()))
	case (c.Flags().Changed("targets-proto") || c.Flags().Changed("targets-port")) && o.targets == "":
		return "", errors.New("--targets-proto and --targets-port apply to --targets FILE, which is not given (a candidates file names each target's protocol and port itself)")
	case !p.HasPort() && c.Flags().Changed("targets-port"):
		return "", errors.New("--targets-port applies to --targets-proto tcp: ICMP has no port")
	case p.HasPort():
		if err := prCheckPort("--targets-port", o.targetPort); err != nil {
			return "", err
		}
	}
	return p, nil
}

// serveTargets reads the candidates file and the backtrace target list
// (either may be ""): the latter's targets are probed with proto (and port,
// for tcp) under candidate "backtrace", labelled with the users' carrier
// and city. The candidates file's sla block, when it has one, is judged per
// candidate (linecheck_sla_check_pass).
func serveTargets(config, targets string, proto probe.Protocol, port int) (exporter.Config, error) {
	var out exporter.Config
	if config != "" {
		c, err := exporter.LoadConfig(config, time.Now())
		if err != nil {
			return out, err
		}
		out = c
	}
	if targets != "" {
		ts, err := route.LoadTargets(targets)
		if err != nil {
			return exporter.Config{}, err
		}
		for _, t := range ts {
			et := exporter.Target{Candidate: "backtrace", Addr: t.Addr, Protocol: proto, Carrier: t.Carrier, City: t.City}
			if proto.HasPort() {
				et.Port = port
			}
			out.Targets = append(out.Targets, et)
		}
	}
	return out, nil
}

func serveSources(config, targets string) string {
	switch {
	case config != "" && targets != "":
		return config + " and " + targets
	case targets != "":
		return targets
	}
	return config
}

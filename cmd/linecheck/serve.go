package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/exporter"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

var serveOpts struct {
	config     string
	listen     string
	count      int
	interval   time.Duration
	timeout    time.Duration
	rate       float64
	pause      time.Duration
	traceEvery int
	maxTTL     int
	asnDB      string
}

var serveCmd = &cobra.Command{
	Use:   "serve --config CANDIDATES.yaml [--listen 127.0.0.1:9427]",
	Short: "Prometheus exporter: probe the candidates continuously and serve /metrics",
	Long: `serve probes every target of every candidate in the candidates file (the
file compare reads, checked by the same loader: serve requires only candidate
names and targets, icmp or tcp with a port; every other key present is
checked too, and anything the loader rejects is refused), cycle after cycle,
and serves the results to Prometheus on /metrics. The first cycle starts at
launch. A cycle sends --count probes to each target every --interval (all
targets at once, under the global --rate cap, as ping does), then, every
--trace-every cycles, traces each target once (as trace does) for the hop
metrics and the line class.

Metrics, labelled candidate, target (address, with :port for tcp) and
protocol (hop loss adds ttl):
  linecheck_rtt_seconds              histogram, buckets 0.1 ms … 1 s
  linecheck_probes_sent_total        probes whose wait has ended
  linecheck_probes_received_total    replies within --timeout
  linecheck_probes_late_total        replies after --timeout
  linecheck_probes_duplicate_total   duplicate replies
  linecheck_probe_errors_total       failed cycles (socket, privilege, resolution)
  linecheck_hop_loss_ratio           loss per TTL in the last trace (0..1)
  linecheck_hops                     hops in the last trace
  linecheck_line_class_info          1, labelled with the route's line_class
Series exist only for the targets in the file, so cardinality is bounded by
it. Loss over a window in PromQL:
  1 - increase(linecheck_probes_received_total[1h]) / increase(linecheck_probes_sent_total[1h])

Endpoints: /metrics, /-/healthy. SIGHUP re-reads --config (a bad file is
reported and the old one stays in force; series of removed targets are
deleted). SIGINT or SIGTERM stops probing and shuts the server down
gracefully. serve binds 127.0.0.1 unless told otherwise: put it behind your
own network policy before binding a public address.

Scaling out (several vantage points, one Prometheus, SLA rules): docs/scaleout.md.

Examples:
  linecheck serve --config candidates.yaml
  linecheck serve --config candidates.yaml --listen 0.0.0.0:9427 --count 20 --interval 500ms
  kill -HUP $(pidof linecheck)     # reload candidates.yaml`,
	Args: cobra.NoArgs,
	RunE: runServe,
}

func init() {
	f := serveCmd.Flags()
	f.StringVar(&serveOpts.config, "config", "", "candidates `FILE` (YAML, compare's schema; names and targets are required)")
	f.StringVar(&serveOpts.listen, "listen", "127.0.0.1:9427", "address to serve /metrics on")
	f.IntVar(&serveOpts.count, "count", 10, "probes per target per cycle")
	f.DurationVar(&serveOpts.interval, "interval", time.Second, "time between two probes to the same target")
	f.DurationVar(&serveOpts.timeout, "timeout", time.Second, "a reply later than this is late, not received")
	f.Float64Var(&serveOpts.rate, "rate", probe.DefaultPingRate, "global cap in packets per second over all targets")
	f.DurationVar(&serveOpts.pause, "pause", 0, "wait between two cycles")
	f.IntVar(&serveOpts.traceEvery, "trace-every", 6, "trace every target each `N`th cycle (0: never)")
	f.IntVar(&serveOpts.maxTTL, "max-ttl", 30, "highest TTL a trace probes (bounds the ttl label)")
	f.StringVar(&serveOpts.asnDB, "asn-db", "", "offline IP-to-ASN `FILE` (iptoasn TSV or .mmdb) for the line class, beside the bundled carrier table")
	register(serveCmd)
}

func runServe(c *cobra.Command, _ []string) error {
	o := serveOpts
	switch {
	case o.config == "":
		return badInput(errors.New("--config CANDIDATES.yaml is required"))
	case o.count < 1:
		return badInput(fmt.Errorf("--count %d: must be at least 1", o.count))
	case o.interval <= 0 || o.timeout <= 0 || o.rate <= 0:
		return badInput(errors.New("--interval, --timeout and --rate must be positive"))
	case o.pause < 0 || o.traceEvery < 0:
		return badInput(errors.New("--pause and --trace-every must not be negative"))
	case o.maxTTL < 1 || o.maxTTL > 255:
		return badInput(fmt.Errorf("--max-ttl %d: use 1..255", o.maxTTL))
	}
	targets, err := exporter.LoadTargets(o.config)
	if err != nil {
		return badInput(err)
	}
	var db route.ASNDB
	if o.asnDB != "" {
		d, err := route.LoadASNDB(o.asnDB)
		if err != nil {
			return badInput(err)
		}
		db = d
	}
	exp := exporter.New()
	exp.SetTargets(targets, time.Now())
	stderr := c.ErrOrStderr()

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return badInput(fmt.Errorf("--listen %s: %w", o.listen, err))
	}
	srv := &http.Server{Handler: exp.Mux(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "linecheck serve: http://%s/metrics, %d targets from %s\n", ln.Addr(), len(targets), o.config)

	parent := c.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	pr := &serveProber{count: o.count, interval: o.interval, timeout: o.timeout, rate: o.rate, maxTTL: o.maxTTL,
		asnDB: db, stderr: stderr}
	traceEvery := o.traceEvery
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		exp.Run(ctx, pr, exporter.LoopConfig{Pause: o.pause, TraceEvery: traceEvery})
	}()

	var result error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-serveErr:
			result = fmt.Errorf("serving %s: %w", ln.Addr(), err)
			stop()
			break loop
		case <-hup:
			ts, err := exporter.LoadTargets(o.config)
			if err != nil {
				fmt.Fprintf(stderr, "linecheck serve: reload: %v (keeping the previous configuration)\n", err)
				continue
			}
			exp.SetTargets(ts, time.Now())
			fmt.Fprintf(stderr, "linecheck serve: reloaded %s: %d targets\n", o.config, len(ts))
		}
	}
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

// serveProber runs serve's cycles on the probe engine.
type serveProber struct {
	count             int
	interval, timeout time.Duration
	rate              float64
	maxTTL            int
	asnDB             route.ASNDB
	stderr            io.Writer
	warned            sync.Map // error text → true, so a lasting failure is said once
}

func (p *serveProber) warn(t exporter.Target, err error) {
	msg := fmt.Sprintf("linecheck serve: %s %s %s: %v", t.Candidate, t.Protocol, t.Label(), err)
	if _, seen := p.warned.LoadOrStore(msg, true); !seen {
		fmt.Fprintln(p.stderr, msg)
	}
}

// Ping resolves the targets and probes them in one mixed-protocol sweep
// (probe.Sweep: icmp in one, tcp in one per port, side by side under the
// --rate cap).
func (p *serveProber) Ping(ctx context.Context, ts []exporter.Target) []exporter.PingOutcome {
	out := make([]exporter.PingOutcome, len(ts))
	var sts []probe.SweepTarget
	var idx []int
	for i, t := range ts {
		rs, err := probe.ResolveTargets(ctx, []string{t.Addr}, probe.ExpandOptions{})
		if err == nil && len(rs) != 1 {
			err = fmt.Errorf("%q is %d addresses: list each address as its own target", t.Addr, len(rs))
		}
		if err != nil {
			out[i].Err = err
			p.warn(t, err)
			continue
		}
		sts = append(sts, probe.SweepTarget{Target: rs[0], Protocol: t.Protocol, Port: t.Port})
		idx = append(idx, i)
	}
	if len(sts) == 0 {
		return out
	}
	res, err := probe.Sweep(ctx, sts, probe.PingConfig{Count: p.count, Interval: p.interval, Timeout: p.timeout, Rate: p.rate}, nil)
	for k, i := range idx {
		switch {
		case err != nil:
			out[i].Err = err
		case res[k].Err != nil:
			out[i].Err = res[k].Err
		default:
			r := res[k]
			out[i] = exporter.PingOutcome{Sent: r.Sent, Recv: r.Recv, Late: r.Late, Dup: r.Dup, RTTms: r.RTTs}
		}
		if out[i].Err != nil {
			p.warn(ts[i], out[i].Err)
		}
	}
	return out
}

// Trace traces t once (one round over all TTLs, with the target's protocol
// and port) for the hop metrics, and annotates its line class offline.
func (p *serveProber) Trace(ctx context.Context, t exporter.Target) (*route.Trace, error) {
	tr, err := probe.Trace(ctx, t.Addr, probe.TraceConfig{Proto: t.Protocol, Port: t.Port, MaxTTL: p.maxTTL,
		Cycles: 1, Timeout: p.timeout}, nil)
	if err != nil {
		p.warn(t, err)
		return nil, err
	}
	route.Annotate(tr, p.asnDB)
	return tr, nil
}

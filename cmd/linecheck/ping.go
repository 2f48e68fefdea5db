package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// PingSchema names the JSON document of `linecheck ping`.
const PingSchema = "linecheck.ping/v1"

var pingOpts struct {
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
}

var pingCmd = &cobra.Command{
	Use:   "ping [flags] TARGET...",
	Short: "Latency, jitter and loss sweep: ICMP echo or TCP connect time",
	Long: `ping sends ICMP echo requests (or, with --tcp PORT, TCP connection attempts)
to every target at once, each target every --interval, all of them under one
global --rate cap, and reports per target: sent, received, loss, late and
duplicate replies, RTT min/avg/p50/p95/p99/max/stdev and three labelled
jitter figures (rfc3550, mean_abs, pdv_p95; see docs/probe.md).

Targets are addresses, host names or CIDR prefixes. A prefix of more than a
/24 needs --allow-large (127.0.0.0/8 is exempt); broadcast and multicast
addresses need --allow-broadcast.

Loss counts only probes whose wait has ended: a reply later than --timeout is
reported as late, not received. Replies that carry another process's or run's
marker are counted as foreign, never as received.

When --rate cannot keep every target's --interval, the schedule stretches and
says so on stderr.

ICMP needs either unprivileged ICMP sockets (net.ipv4.ping_group_range) or
CAP_NET_RAW; the error message says exactly what to run. --tcp needs neither.

Examples:
  linecheck ping 127.0.0.1
  linecheck ping -c 100 -i 100ms 127.0.0.1 ::1 --format json
  linecheck ping --rate 1000 -c 10 -i 100ms 127.0.1.0/22
  linecheck ping --tcp 443 -c 20 127.0.0.1
  linecheck ping --stream -c 5 127.0.0.1 > probes.ndjson
  linecheck ping --stream-file probes.ndjson -c 5 127.0.0.1`,
	Args: cobra.MinimumNArgs(1),
	RunE: runPing,
}

func init() {
	f := pingCmd.Flags()
	f.IntVarP(&pingOpts.count, "count", "c", probe.DefaultCount, "probes per target")
	f.DurationVarP(&pingOpts.interval, "interval", "i", probe.DefaultInterval, "time between two probes to the same target (Go duration: 100ms, 1s)")
	f.DurationVarP(&pingOpts.timeout, "timeout", "W", probe.DefaultTimeout, "a reply later than this is late, not received")
	f.IntVarP(&pingOpts.size, "size", "s", probe.DefaultSize, "ICMP payload bytes (at least 12)")
	f.Float64Var(&pingOpts.rate, "rate", probe.DefaultPingRate, "global cap in packets per second over all targets")
	f.IntVar(&pingOpts.tcp, "tcp", 0, "measure TCP connect time to `PORT` instead of ICMP echo")
	f.BoolVarP(&pingOpts.v4, "ipv4", "4", false, "IPv4 only (names resolve to IPv4)")
	f.BoolVarP(&pingOpts.v6, "ipv6", "6", false, "IPv6 only (names resolve to IPv6)")
	f.StringVar(&pingOpts.socket, "socket", "auto", "ICMP socket: auto (unprivileged datagram first, raw fallback), dgram or raw")
	f.BoolVar(&pingOpts.allowLarge, "allow-large", false, "allow sweeping a CIDR of more than 256 addresses")
	f.BoolVar(&pingOpts.allowBroadcast, "allow-broadcast", false, "allow broadcast and multicast targets")
	f.StringVar(&pingOpts.format, "format", "table", "output format: table, json, csv or markdown")
	f.BoolVar(&pingOpts.stream, "stream", false, "write one NDJSON record per probe (linecheck.probe/v1) to stdout; the summary goes to stderr")
	f.StringVar(&pingOpts.streamFile, "stream-file", "", "write the NDJSON probe records to `FILE` (the summary stays on stdout)")
	register(pingCmd)
}

// pingJSON is one target of the linecheck.ping/v1 document.
type pingJSON struct {
	Target     string         `json:"target"`
	Addr       string         `json:"addr"`
	Sent       int            `json:"sent"`
	Recv       int            `json:"recv"`
	Loss       float64        `json:"loss"`
	Late       int            `json:"late"`
	Duplicates int            `json:"duplicates"`
	Foreign    int            `json:"foreign"`
	Refused    *int           `json:"refused,omitempty"`
	RTT        route.RTTStats `json:"rtt_ms"`
	Jitter     route.Jitter   `json:"jitter_ms"`
}

// pingDoc is the linecheck.ping/v1 document.
type pingDoc struct {
	Schema     string     `json:"schema"`
	Protocol   string     `json:"protocol"`
	Port       int        `json:"port,omitempty"`
	Count      int        `json:"count"`
	IntervalMS float64    `json:"interval_ms"`
	TimeoutMS  float64    `json:"timeout_ms"`
	Results    []pingJSON `json:"results"`
}

func runPing(c *cobra.Command, args []string) error {
	o := pingOpts
	if err := report.CheckFormat(o.format); err != nil {
		return badInput(err)
	}
	if o.count < 1 {
		return badInput(fmt.Errorf("--count %d: must be at least 1", o.count))
	}
	if o.interval <= 0 || o.timeout <= 0 {
		return badInput(errors.New("--interval and --timeout must be positive"))
	}
	if o.rate <= 0 {
		return badInput(fmt.Errorf("--rate %g: must be positive", o.rate))
	}
	if c.Flags().Changed("tcp") {
		if err := prCheckPort("--tcp", o.tcp); err != nil {
			return badInput(err)
		}
	}
	if o.size < 12 || o.size > 65000 {
		return badInput(fmt.Errorf("--size %d: use 12..65000 bytes", o.size))
	}
	switch o.socket {
	case "auto", "dgram", "raw":
	default:
		return badInput(fmt.Errorf("--socket %q: use auto, dgram or raw", o.socket))
	}
	if o.stream && o.streamFile != "" {
		return badInput(errors.New("--stream and --stream-file: choose one"))
	}
	network, err := prNetwork(o.v4, o.v6)
	if err != nil {
		return badInput(err)
	}
	cfg := probe.PingConfig{
		Count: o.count, Interval: o.interval, Timeout: o.timeout, Size: o.size, Rate: o.rate,
		TCPPort: o.tcp, Network: network, Socket: o.socket,
		AllowLarge: o.allowLarge, AllowBroadcast: o.allowBroadcast,
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
	defer stop()
	targets, err := probe.ResolveTargets(ctx, args, probe.ExpandOptions{Network: network, AllowLarge: o.allowLarge, AllowBroadcast: o.allowBroadcast})
	if err != nil {
		return badInput(err)
	}
	stderr := c.ErrOrStderr()
	iv, stretched := probe.Schedule(len(targets), cfg)
	if stretched {
		fmt.Fprintf(stderr, "linecheck: %d targets every %s need %.0f packets/s, above --rate %g: each target's interval is stretched to %s\n",
			len(targets), o.interval, float64(len(targets))/o.interval.Seconds(), o.rate, iv.Round(time.Millisecond))
	}

	out := c.OutOrStdout()
	var streamW io.Writer
	switch {
	case o.stream:
		streamW = out
		out = stderr
	case o.streamFile != "":
		f, err := os.Create(o.streamFile)
		if err != nil {
			return badInput(fmt.Errorf("--stream-file: %w", err))
		}
		defer f.Close()
		streamW = f
	}
	var streamErr error
	var done, replies atomic.Int64
	onRecord := func(r probe.Record) {
		if r.Status != probe.StatusDup {
			done.Add(1)
		}
		if r.Status == probe.StatusOK {
			replies.Add(1)
		}
		if streamW != nil && streamErr == nil {
			streamErr = probe.WriteRecord(streamW, r)
		}
	}
	total := int64(len(targets) * o.count)
	stopProgress := prProgress(stderr, func() string {
		return fmt.Sprintf("ping: %d/%d probes done, %d replies", done.Load(), total, replies.Load())
	})
	// The sweep is one sender and one receiver per family, all I/O: with a
	// second P the Go scheduler spins between wake-ups, which cost 40 % more
	// CPU than fping on the 1,000-target benchmark (docs/probe.md); with one
	// P linecheck uses about what fping does. Restored afterwards for the
	// callers that run the command in-process (tests).
	prev := runtime.GOMAXPROCS(1)
	results, err := probe.PingTargets(ctx, targets, cfg, onRecord)
	runtime.GOMAXPROCS(prev)
	stopProgress()
	if err != nil {
		if errors.Is(err, probe.ErrPrivilege) {
			return badInput(err)
		}
		return err
	}
	if streamErr != nil {
		return fmt.Errorf("writing the probe stream: %w", streamErr)
	}
	proto := "icmp"
	if o.tcp != 0 {
		proto = "tcp"
	}
	doc := pingDoc{Schema: PingSchema, Protocol: proto, Port: o.tcp, Count: o.count,
		IntervalMS: prMS(iv), TimeoutMS: prMS(o.timeout)}
	for _, r := range results {
		st, jt := route.Summarize(r.RTTs)
		pj := pingJSON{Target: r.Target, Addr: r.Addr, Sent: r.Sent, Recv: r.Recv, Loss: r.Loss(),
			Late: r.Late, Duplicates: r.Dup, Foreign: r.Foreign, RTT: st, Jitter: jt}
		if o.tcp != 0 {
			pj.Refused = &r.Refused
		}
		doc.Results = append(doc.Results, pj)
	}
	if o.format == "json" {
		return report.WriteJSON(out, doc)
	}
	return report.Write(out, o.format, pingTable(doc, o.format))
}

func prMS(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

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

// prFmtMS formats milliseconds for tables: 3 decimals below 10 ms, then 2, then 1.
func prFmtMS(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func prFmtPct(loss float64) string { return strconv.FormatFloat(loss*100, 'f', 1, 64) + "%" }

// prFmtLoss formats a loss fraction for format: a percentage for people
// (table, markdown), the plain fraction 0..1 for machines (csv), as in JSON.
func prFmtLoss(format string, loss float64) string {
	if format == "csv" {
		return strconv.FormatFloat(loss, 'f', -1, 64)
	}
	return prFmtPct(loss)
}

// prCheckPort refuses a port outside 1..65535 given to flag; 0 is not a
// port a probe can be sent to.
func prCheckPort(flag string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s %d: not a port number: use 1..65535", flag, port)
	}
	return nil
}

func pingTable(doc pingDoc, format string) report.Table {
	t := report.Table{
		Title: fmt.Sprintf("ping (%s%s, %d probes per target every %s)", doc.Protocol, prPortText(doc.Port), doc.Count,
			time.Duration(doc.IntervalMS*1e6)),
		Headers: []string{"target", "addr", "sent", "recv", "loss", "late", "dup", "foreign",
			"min ms", "avg ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "stdev ms", "jit rfc3550", "jit mean_abs", "pdv p95"},
		Align: "llrrrrrrrrrrrrrrrr",
	}
	for _, r := range doc.Results {
		row := []string{r.Target, r.Addr, strconv.Itoa(r.Sent), strconv.Itoa(r.Recv), prFmtLoss(format, r.Loss),
			strconv.Itoa(r.Late), strconv.Itoa(r.Duplicates), strconv.Itoa(r.Foreign)}
		if r.Recv == 0 {
			row = append(row, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")
		} else {
			row = append(row, prFmtMS(r.RTT.Min), prFmtMS(r.RTT.Avg), prFmtMS(r.RTT.P50), prFmtMS(r.RTT.P95), prFmtMS(r.RTT.P99),
				prFmtMS(r.RTT.Max), prFmtMS(r.RTT.Stdev), prFmtMS(r.Jitter.RFC3550), prFmtMS(r.Jitter.MeanAbs), prFmtMS(r.Jitter.PDVP95))
		}
		t.Rows = append(t.Rows, row)
		if r.Refused != nil && *r.Refused > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d connection attempts refused (port closed), counted as lost", r.Target, *r.Refused))
		}
	}
	t.Notes = append(t.Notes, "loss over probes whose wait ended; late = replies after --timeout (not received); percentiles nearest-rank")
	return t
}

func prPortText(p int) string {
	if p == 0 {
		return ""
	}
	return " port " + strconv.Itoa(p)
}

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

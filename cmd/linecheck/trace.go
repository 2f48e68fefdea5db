package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// traceOptions are the flags of the command.
type traceOptions struct {
	watch     watchOpts
	proto     string
	port      int
	firstTTL  int
	maxTTL    int
	cycles    int
	interval  time.Duration
	timeout   time.Duration
	flows     int
	rate      float64
	v4, v6    bool
	format    string
	replay    string
	vantage   string
	samples   bool
	mtu       bool
	nat       bool
	asnDB     string
	noASN     bool
	showIPs   bool
	noDNS     bool
	wide      bool
	table     string
	direction string
	hideHops  int
	mp        multipathOpts
	// mtr's -r and -z, accepted for the habit: what they ask is the default.
	mtrReport, mtrASN bool
}

// replayConflicts refuses the flags that shape live probes when --replay
// reads a recording instead: they would be silently ignored.
func replayConflicts(fl *pflag.FlagSet) error {
	var given []string
	// VisitAll with Changed, not Visit: Visit also walks flags set in an
	// earlier in-process run (tests) whose Changed was reset.
	fl.VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			return
		}
		switch f.Name {
		case "proto", "icmp", "udp", "udp-mtr", "tcp", "port", "first-ttl", "max-ttl", "cycles", "queries", "report-cycles", "interval",
			"timeout", "wait", "flows", "rate", "ipv4", "ipv6", "mtu", "nat", "multipath", "confidence", "max-probes", "flow-port", "mode":
			given = append(given, "--"+f.Name)
		}
	})
	if len(given) == 0 {
		return nil
	}
	return fmt.Errorf("--replay reads a recorded trace; %s shape(s) live probes and would be ignored: "+
		"drop %s, or drop --replay to trace live", strings.Join(given, ", "), strings.Join(given, " "))
}

// traceLong is the help text of the command.
const traceLong = `trace discovers the route to TARGET hop by hop. Every TTL is in flight at
once (paced by --rate), so one cycle takes about one round trip. With
--cycles N it repeats every --interval, mtr style, and reports per hop and per
responder: sent, received, loss, RTT min/avg/p50/p95/p99/max/stdev and jitter
(rfc3550, mean_abs, pdv_p95).

Probes are flow-stable (Paris traceroute): the header fields ECMP routers hash
stay fixed within a flow (ICMP: id and checksum, the sequence compensated in
the payload; UDP: ports, the probe key in the checksum; TCP SYN: ports, the
key in the sequence number). --flows N probes N flows and lists the alternate
responders per hop, each with the flows that saw it.

A hop whose loss does not carry on to later hops or the destination is
flagged icmp-rate-limited: the router did not answer, packets were not lost
(see docs/probe.md for the exact rule). A hop that never answered shows no
responders and loss 100%, flagged no-reply when later hops answer.

Responders are mapped to carriers offline (--prefix-table, the bundled carrier
table, --asn-db FILE) and the route gets a line class (cn2-gia, cu-9929,
transit …). Every public hop shows its AS number, network name and country
from the bundled IP-to-AS dataset (or the newer copy 'linecheck asn update'
fetched), and the header the AS path, the networks the route crosses with the
TTL where each begins; --no-asn leaves them out. Nothing is looked up online.

--replay FILE reads a recorded trace instead of probing and prints it in any
--format; --direction return labels a recording made on the server toward
you. A TTL the recording has no entry for reads "not recorded". The recorded
traces it reads:
{replay-formats}

Under the table: the line class, the direction it was measured in (forward:
from here toward TARGET; return: recorded from the server), its confidence and
the rule that decided it. The table fits the terminal (else 120 columns):
columns that do not fit move to a detail block; --wide keeps them on one line.
On a terminal, hops are shown by reverse DNS name (looked up once, at most 2 s
in all; -n turns it off; never for --replay or JSON/CSV). --format csv writes
one table, hops (one row per TTL and responder, with the line class) or
--table route (one row: line class, direction, confidence, rule).

Short flags as traceroute and mtr: -n, -m max TTL, -f first TTL, -q probes per
hop (= --cycles), -p port, -I/-U(-u)/-T protocol, -w wait (= --timeout);
in a group with -r, -w is mtr's wide report (--wide): trace -rwc 5 HOST runs
5 cycles and prints the wide table, as mtr -rwc 5 HOST does.
Durations are seconds (-w 2, -i 0.5) or Go durations (500ms). Ctrl-C prints
the cycles finished so far (marked "partial": true in JSON), says
"interrupted" and exits 130.

trace needs no privilege for udp and tcp: with raw sockets (root or
CAP_NET_RAW) it writes every header itself; without them it uses ordinary
UDP and TCP sockets and reads the ICMP errors from their error queue
(IP_RECVERR, as tracepath). icmp uses raw sockets, else unprivileged ICMP
sockets where net.ipv4.ping_group_range allows; otherwise the error message
says exactly what to run. The report and JSON ("mode") say which ran: raw,
datagram or recverr; the unprivileged ones do not see MPLS labels.

--mtu then finds the path MTU per hop, as tracepath does (UDP probes with
the don't-fragment bit, no privilege): an mtu column with the largest
packet that reaches each TTL, and the TTL where it drops with the router
that named the next-hop MTU (or "found by trying sizes" where none did).
With --flows N it searches N flows (source ports P..P+N-1) and lists each
flow's path MTU: an ECMP branch may carry a smaller MTU than its sibling.

--nat (with -U, IPv4) looks for address rewriting on the path as
dublin-traceroute does: each probe's IP ID is its UDP checksum, and the
checksum quoted back in each ICMP error minus the one sent is the hop's NAT
ID (nat id column, "nat_id" per hop, "nat" in the JSON); the flag nat marks
the first hop where it changes. It needs raw sockets (root or CAP_NET_RAW):
without them (recverr) the NAT ID is shown as not measured ("-"). A Linux
conntrack NAT (masquerade) restores the quoted header and is invisible to it.

--hide-hops N masks the hops at TTL 1 to N in every format (a report for a
provider need not show your own network): their address reads "hidden", with
no reverse DNS name, AS number, AS name, country or carrier, and the AS path
leaves them out; the report says so ("hidden_hops" in JSON). Statistics and
the line class are still computed on the real hops.

{multipath}
Examples:
  linecheck trace 127.0.0.1
  linecheck trace -n -q 3 -w 2 127.0.0.1
  linecheck trace -rwc 5 127.0.0.1
  linecheck trace -U -p 33434 --cycles 100 --interval 0.2 127.0.0.1
  linecheck trace -T -p 443 --flows 8 127.0.0.1 --format json
  linecheck trace --replay route.json --format markdown
  linecheck trace --replay route.json --hide-hops 2 --format json
  linecheck trace --multipath -U 127.0.0.1
  linecheck trace --multipath -U --confidence 99 --cycles 20 -i 0.2 127.0.0.1 --format json
  mtr --json -n -c 10 127.0.0.1 > mtr.json; linecheck trace --replay mtr.json`

// replayFormatsHelp lists the trace-file formats --replay reads, one line
// each, from the registry (route.TraceFormats).
func replayFormatsHelp() string {
	var b strings.Builder
	w := 0
	for _, f := range route.TraceFormats() {
		w = max(w, len(f.Name))
	}
	for _, f := range route.TraceFormats() {
		fmt.Fprintf(&b, "  %-*s  %s\n", w, f.Name, f.Title)
	}
	return b.String()
}

func newTraceCmd() *cobra.Command {
	o := &traceOptions{}
	c := &cobra.Command{
		Use:   "trace [flags] TARGET",
		Short: "Traceroute with mtr-style per-hop statistics (ICMP, UDP, TCP SYN; flow-stable)",
		Long:  strings.NewReplacer("{multipath}\n", multipathHelp, "{replay-formats}\n", replayFormatsHelp()).Replace(traceLong),
		Args: func(c *cobra.Command, args []string) error {
			if o.replay != "" {
				if len(args) > 0 {
					return badInput(fmt.Errorf("--replay %s prints the recorded trace and takes no TARGET (got %s): "+
						"drop %s to replay the file, or drop --replay to trace %s live", o.replay, strings.Join(args, " "),
						strings.Join(args, " "), args[0]))
				}
				if err := replayConflicts(c.Flags()); err != nil {
					return badInput(err)
				}
				return nil
			}
			return oneArg("TARGET (an address or host name to trace; or --replay FILE)")(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error { return runTrace(c, args, o) },
	}

	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.proto, "proto", "icmp", "probe protocol: "+probe.ProtocolNames(probe.TraceProtocols())+" (or the switches -I, -U, -T)")
		switchVarP(f, &o.proto, "icmp", "I", "icmp", "probe with ICMP echo (traceroute -I): --proto icmp")
		switchVarP(f, &o.proto, "udp", "U", "udp", "probe with UDP (traceroute -U, mtr -u): --proto udp")
		switchVarP(f, &o.proto, "udp-mtr", "u", "udp", "the same as -U (mtr spells it -u)")
		switchVarP(f, &o.proto, "tcp", "T", "tcp", "probe with TCP SYN (traceroute -T, mtr -T): --proto tcp")
		f.IntVarP(&o.port, "port", "p", 0, "destination port for udp (default 33434) and tcp (default 80); ignored for icmp")
		f.IntVarP(&o.firstTTL, "first-ttl", "f", 1, "first TTL probed")
		f.IntVarP(&o.maxTTL, "max-ttl", "m", probe.DefaultMaxTTL, "highest TTL probed")
		f.IntVarP(&o.cycles, "cycles", "c", 1, "rounds over all TTLs (mtr style): each TTL gets this many probes per flow")
		aliasVarP(f, "cycles", "queries", "q", "probes per hop, as traceroute -q takes it: the same as --cycles")
		aliasVarP(f, "cycles", "report-cycles", "", "as mtr --report-cycles takes it: the same as --cycles")
		durationVarP(f, &o.interval, "interval", "i", time.Second, "time between the starts of two cycles (seconds, 0.5, or a Go duration, 500ms)")
		durationVarP(f, &o.timeout, "timeout", "W", probe.DefaultTraceTimeout, "a reply later than this is late, not received (seconds, 2, or a Go duration, 2s)")
		aliasVarP(f, "timeout", "wait", "w", "how long to wait for a reply, as traceroute -w takes it: the same as --timeout")
		f.BoolVarP(&o.noDNS, "no-dns", "n", false, "show addresses only: no reverse DNS names for hops (names are looked up only for a table on a terminal)")
		f.IntVar(&o.flows, "flows", 1, "number of flows (Paris flow ids) probed per TTL")
		f.Float64Var(&o.rate, "rate", probe.DefaultTraceRate, "packets per second while a cycle is sent")
		f.BoolVarP(&o.v4, "ipv4", "4", false, "IPv4 only")
		f.BoolVarP(&o.v6, "ipv6", "6", false, "IPv6 only")
		f.StringVar(&o.format, "format", "table", "output format: "+report.FormatList())
		switchVarP(f, &o.format, "json", "j", "json", "as mtr -j: --format json")
		f.BoolVarP(&o.mtrReport, "mtr-report", "r", false, "as mtr -r: accepted; trace always ends with the report of its cycles")
		f.BoolVarP(&o.mtrASN, "aslookup", "z", false, "as mtr -z: accepted; AS number, network and country are shown by default (--no-asn turns them off)")
		f.BoolVar(&o.noASN, "no-asn", false, noASNUsage)
		f.BoolVarP(&o.showIPs, "show-ips", "b", false, "as mtr -b: a hop with a reverse DNS name shows the name and the address (default: the name alone)")
		f.StringVar(&o.replay, "replay", "", "print the recorded trace in `FILE` ("+route.TraceFormatTitles()+") instead of probing")
		f.StringVar(&o.vantage, "vantage", "", "with --replay of a file of several vantages (RIPE Atlas results, a Globalping measurement): show only the vantage `ID` (probe id, Globalping result number), AS (AS4134), carrier (ChinaNet) or city; default: each in turn")
		f.BoolVar(&o.samples, "samples", false, "keep every RTT sample (samples_ms) in the JSON")
		f.BoolVar(&o.mtu, "mtu", false, "also find the path MTU per hop (the largest packet that reaches each TTL, and where it drops), with UDP probes as tracepath; needs no privilege")
		f.BoolVar(&o.nat, "nat", false, "also report the NAT ID per hop (udp over IPv4, raw sockets): the quoted UDP checksum minus the one sent, non-zero behind a stateless address rewrite")
		f.BoolVar(&o.wide, "wide", false, "keep every column of the table on one line, however wide (default: fit the terminal, else 120 columns)")
		f.StringVar(&o.table, "table", "", "with --format csv: the table to write, hops (default: one row per TTL and responder), route (one row: line class, direction, confidence, rule) or, with --multipath, paths (one row per path and hop)")
		f.StringVar(&o.direction, "direction", report.Forward, "with --replay: which way the recording ran, forward (from the user's side toward the server) or return (recorded on the server toward the user)")
		f.StringVar(&o.asnDB, "asn-db", "", "offline IP-to-ASN `FILE` (iptoasn TSV or .mmdb) used beside the bundled carrier table")
		hideHopsFlag(f, &o.hideHops)
		multipathFlags(f, &o.mp)
	})
	addWatchFlags(c, &o.watch, func(c *cobra.Command, args []string) error { return runTraceWatch(c, args, o) })
	addPrefixTableFlag(c)
	return c
}

func runTrace(c *cobra.Command, args []string, o *traceOptions) error {
	fl := c.Flags()
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return badInput(err)
	}
	if err := checkHideHops(o.hideHops); err != nil {
		return badInput(err)
	}
	if err := traceProtoFlags(fl); err != nil {
		return badInput(err)
	}
	if err := traceJSONFlag(fl); err != nil {
		return badInput(err)
	}
	if o.replay == "" && fl.Changed("vantage") {
		return badInput(errors.New("--vantage picks a vantage of a --replay file; a live trace runs from here"))
	}
	if o.replay == "" && fl.Changed("direction") {
		return badInput(errors.New("--direction labels a --replay recording; a live trace always runs forward, from here toward TARGET"))
	}
	if err := multipathConflicts(fl, o); err != nil {
		return badInput(err)
	}
	if err := report.CheckTableFlag(format, fl.Changed("table"), "hops", "route", "paths"); err != nil {
		return badInput(err)
	}
	switch o.direction {
	case report.Forward, report.Return:
	default:
		return badInput(fmt.Errorf("--direction %q: use forward (recorded toward the server) or return (recorded on the server toward you)", o.direction))
	}
	db, err := hopNamesDB(o.asnDB, o.noASN, prefixTableOf(c), c.ErrOrStderr())
	if err != nil {
		return badInput(err)
	}
	var tr *route.Trace
	interruptedRun := false
	if o.replay != "" {
		ts, err := route.ReadTracesFile(o.replay)
		if err != nil {
			return badInput(err)
		}
		if ts, err = pickVantages(ts, o.replay, o.vantage, db); err != nil {
			return badInput(err)
		}
		if len(ts) > 1 {
			return renderVantages(c, ts, format, o, db)
		}
		tr = ts[0]
	} else {
		live := traceLive
		if o.mp.on {
			live = traceMultipathLive
		}
		t, cut, err := live(c, o, args[0])
		if err != nil {
			return err
		}
		tr, interruptedRun = t, cut
	}
	tr.Partial = interruptedRun
	tr = prepareTrace(tr, db, o)
	out := c.OutOrStdout()
	view := report.TraceView{Direction: o.direction, ShowIPs: o.showIPs}
	// Reverse DNS names only for people watching a live trace on a
	// terminal: never for a recording (its addresses are someone
	// else's), machine formats, or -n.
	if format.ForTerminal() && o.replay == "" && !o.noDNS && prIsTTY(out) {
		view.Names = hopNames(c.Context(), tr, rdns.New(reverseFrom(c.Context())))
	}
	topt := tableOptions(out, o.wide)
	topt.Table = o.table
	if err := report.Render(out, report.TraceReport{Trace: tr, View: view}, format, topt); err != nil {
		return err
	}
	if interruptedRun {
		return errInterrupted
	}
	return nil
}

// prepareTrace names tr's hops and vantage offline (--prefix-table, carrier
// table, --asn-db, dataset: carrier, ASN, network, country and line class),
// drops the samples unless --samples, and masks --hide-hops: after the line
// class was set on the real hops, before anything reads them for show
// (reverse DNS included).
func prepareTrace(tr *route.Trace, db route.ASNDB, o *traceOptions) *route.Trace {
	route.Annotate(tr, db)
	if !o.samples {
		for i := range tr.Hops {
			for j := range tr.Hops[i].Responders {
				tr.Hops[i].Responders[j].Samples = nil
			}
		}
	}
	return route.NewHopMask(o.hideHops, tr).Trace(tr)
}

// pickVantages keeps the traces of a recorded file that --vantage sel
// selects (all when sel is ""); a selection that matches none is an error
// naming the file's vantages. The vantages are named from db first, so
// that a carrier can be selected.
func pickVantages(ts []*route.Trace, file, sel string, db route.ASNDB) ([]*route.Trace, error) {
	if sel == "" {
		return ts, nil
	}
	for _, t := range ts {
		route.Annotate(t, db)
	}
	got := route.SelectVantages(ts, sel)
	if len(got) == 0 {
		var labels []string
		for _, t := range ts {
			if t.Vantage != nil {
				labels = append(labels, t.Vantage.Label())
			}
		}
		if len(labels) == 0 {
			return nil, fmt.Errorf("--vantage %s: %s names no vantage; drop --vantage", sel, file)
		}
		return nil, fmt.Errorf("--vantage %s: none of %s's vantages is that id, AS, carrier or city: %s", sel, file, strings.Join(labels, "; "))
	}
	return got, nil
}

// renderVantages shows each vantage's trace of a multi-vantage recording
// in turn, each table under its vantage's header; JSON is the list of the
// trace documents, each with its vantage.
func renderVantages(c *cobra.Command, ts []*route.Trace, format report.Format, o *traceOptions, db route.ASNDB) error {
	for i, t := range ts {
		ts[i] = prepareTrace(t, db, o)
	}
	out := c.OutOrStdout()
	topt := tableOptions(out, o.wide)
	topt.Table = o.table
	return report.Render(out, report.TraceSet{Traces: ts, View: report.TraceView{Direction: o.direction, ShowIPs: o.showIPs}}, format, topt)
}

// traceConfigOf is the probe configuration trace's flags ask for, checked
// before anything is sent: a one-off trace, --multipath (multipathConfig)
// and --watch (traceWatchConfig) read the flags through it alike.
func traceConfigOf(c *cobra.Command, o *traceOptions) (probe.TraceConfig, error) {
	network, err := prNetwork(o.v4, o.v6)
	if err != nil {
		return probe.TraceConfig{}, err
	}
	// --port applies to udp and tcp; icmp ignores it (help text).
	if c.Flags().Changed("port") && o.proto != "icmp" {
		if err := prCheckPort("--port", o.port); err != nil {
			return probe.TraceConfig{}, err
		}
	}
	for _, n := range []string{"first-ttl", "max-ttl"} {
		if v, _ := c.Flags().GetInt(n); c.Flags().Changed(n) && (v < 1 || v > 255) {
			return probe.TraceConfig{}, fmt.Errorf("--%s %d: a TTL is 1..255", n, v)
		}
	}
	if o.cycles < 1 || o.flows < 1 || o.interval <= 0 || o.timeout <= 0 {
		return probe.TraceConfig{}, errors.New("--cycles, --flows, --interval and --timeout must be positive")
	}
	if err := prCheckRate("--rate", o.rate); err != nil {
		return probe.TraceConfig{}, err
	}
	if o.nat && probe.Protocol(o.proto) != probe.UDP {
		return probe.TraceConfig{}, fmt.Errorf("--nat traces with udp (-U): the IP ID carries the UDP checksum; %s probes have none", o.proto)
	}
	if o.nat && o.v6 {
		return probe.TraceConfig{}, errors.New("--nat traces IPv4 only: IPv6 has no IP ID to carry the checksum; drop -6")
	}
	mode, err := traceMode(o.mp.mode)
	if err != nil {
		return probe.TraceConfig{}, err
	}
	return probe.TraceConfig{Proto: probe.Protocol(o.proto), Port: o.port, FirstTTL: o.firstTTL, MaxTTL: o.maxTTL,
		Cycles: o.cycles, Interval: o.interval, Timeout: o.timeout, Flows: o.flows, Rate: o.rate, Network: network, NAT: o.nat, Mode: mode}, nil
}

// maxTTLAnswered tells whether a router other than the target answered a
// probe at the run's highest TTL: the path is longer than --max-ttl, which
// is not the target failing to answer in time.
func maxTTLAnswered(run *probe.TraceRun) bool {
	for _, r := range run.Results {
		if r.TTL == run.MaxTTL && !r.Dest && (r.Addr != "" || r.Late) {
			return true
		}
	}
	return false
}

// traceLive traces target as the flags say: the trace, whether Ctrl-C cut
// it (the report then covers the cycles finished), or the error that
// stops the command.
func traceLive(c *cobra.Command, o *traceOptions, target string) (t *route.Trace, cut bool, err error) {
	cfg, err := traceConfigOf(c, o)
	if err != nil {
		return nil, false, badInput(err)
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	stderr := c.ErrOrStderr()
	cycle := 0
	var hops int
	stopProgress := prProgress(stderr, func() string {
		return fmt.Sprintf("trace: cycle %d/%d, %d hops", cycle, o.cycles, hops)
	})
	var onCycle func(*probe.TraceRun)
	if prIsTTY(stderr) {
		// A snapshot per cycle costs a copy and a BuildTrace over every
		// result so far: only worth it when someone watches the progress line.
		onCycle = func(r *probe.TraceRun) { cycle++; hops = len(route.BuildTrace(r).Hops) }
	}
	run, err := probe.Trace(ctx, target, cfg, onCycle)
	stopProgress()
	var counts probe.TraceCounts
	if run != nil {
		t, counts = route.BuildTrace(run), run.Counts
	}
	switch {
	case err == nil:
	case interrupted() && t != nil:
		cut = true
		fmt.Fprintln(stderr, "linecheck: interrupted; the report covers the cycles finished so far")
	case interrupted():
		return nil, false, errInterrupted
	case errors.Is(err, context.Canceled) && t != nil:
	case errors.Is(err, probe.ErrPrivilege):
		return nil, false, badInput(err)
	case t == nil:
		return nil, false, badInput(err)
	default:
		return nil, false, err
	}
	if counts != (probe.TraceCounts{}) {
		fmt.Fprintf(stderr, "linecheck: not counted as received: %d late, %d duplicate, %d foreign replies\n",
			counts.Late, counts.Duplicates, counts.Foreign)
	}
	if !t.Reached && err == nil {
		if maxTTLAnswered(run) {
			fmt.Fprintf(stderr, "linecheck: max TTL %d reached without reaching %s: a router still answered at TTL %d; try a larger --max-ttl\n",
				run.MaxTTL, t.Addr, run.MaxTTL)
		} else {
			msg := fmt.Sprintf("linecheck: %s did not answer within --timeout %v", t.Addr, o.timeout)
			if counts.Late > 0 {
				msg += fmt.Sprintf("; %d replies came later than that: try a longer --timeout", counts.Late)
			}
			fmt.Fprintln(stderr, msg)
		}
	}
	if o.mtu && !cut {
		cut = traceMTUFlows(ctx, interrupted, stderr, o, run, t)
	}
	return t, cut, nil
}

// traceMTUFlows runs trace --mtu's path MTU search, one per flow, and
// records it in t; it tells whether Ctrl-C cut it.
func traceMTUFlows(ctx context.Context, interrupted func() bool, stderr io.Writer, o *traceOptions, run *probe.TraceRun, t *route.Trace) (cut bool) {
	// One search per flow: flow 0 from the port the kernel picks, flow
	// f from that port + f, so each flow is one 5-tuple an ECMP router
	// hashes (and may send over a branch with another MTU).
	var runs []*probe.MTURun
	for f := 0; f < o.flows; f++ {
		cfg := probe.MTUConfig{MaxTTL: run.MaxTTL, Timeout: o.timeout}
		if f > 0 {
			cfg.SourcePort = (runs[0].SourcePort+f-1)%65535 + 1
		}
		m, err := probe.PathMTU(ctx, run.Addr, cfg)
		if interrupted() {
			cut = true
			fmt.Fprintln(stderr, "linecheck: interrupted; the path MTU search did not finish")
			break
		}
		if err != nil {
			fmt.Fprintf(stderr, "linecheck: path MTU (flow %d): %v\n", f, err)
			break
		}
		runs = append(runs, m)
	}
	if !cut && len(runs) > 0 {
		route.AddMTUFlows(t, runs)
	}
	return cut
}

// traceJSONFlag refuses mtr's -j beside a --format that is not json:
// the one given last would win silently.
func traceJSONFlag(fl *pflag.FlagSet) error {
	if fl.Changed("json") && fl.Changed("format") {
		if f, _ := fl.GetString("format"); report.Format(f) != report.FormatJSON {
			return errors.New("-j (--json) and --format: -j is --format json; give one")
		}
	}
	return nil
}

// traceProtoFlags refuses two protocol choices that disagree (--proto tcp
// -U, or -T -I).
func traceProtoFlags(fl *pflag.FlagSet) error {
	var given []string
	if fl.Changed("proto") {
		given = append(given, "--proto")
	}
	for _, n := range []string{"icmp", "udp", "udp-mtr", "tcp"} {
		if f := fl.Lookup(n); f != nil && f.Changed && f.Value.String() == "true" {
			given = append(given, "-"+f.Shorthand)
		}
	}
	if len(given) > 1 && !(len(given) == 2 && given[0] == "-U" && given[1] == "-u") {
		return fmt.Errorf("%s: each chooses the probe protocol; give one", strings.Join(given, " and "))
	}
	return nil
}

// mtrReportArgs reads mtr's report idiom in trace's arguments: in a group of
// short flags with -r (mtr's report mode), -w is mtr's --report-wide, not
// traceroute's -w WAIT, so `trace -rwc 5 HOST` runs 5 cycles with the wide
// table, as `mtr -rwc 5 HOST` does (issue 35). The w leaves the group and
// --wide goes before it, where it takes no value of the group's last flag.
// Other arguments, and other commands', are returned as they are.
func mtrReportArgs(args []string) []string {
	if len(args) == 0 || args[0] != "trace" {
		return args
	}
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		letters, ok := strings.CutPrefix(a, "-")
		if ok && len(letters) > 1 && !strings.HasPrefix(letters, "-") && strings.Trim(letters, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" &&
			strings.ContainsRune(letters, 'r') && strings.ContainsRune(letters, 'w') && letters[0] != 'w' {
			out = append(out, "--wide", "-"+strings.ReplaceAll(letters, "w", ""))
			continue
		}
		out = append(out, a)
	}
	return out
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

var traceOpts struct {
	proto    string
	port     int
	firstTTL int
	maxTTL   int
	cycles   int
	interval time.Duration
	timeout  time.Duration
	flows    int
	rate     float64
	v4, v6   bool
	format   string
	replay   string
	samples  bool
	asnDB    string
}

var traceCmd = &cobra.Command{
	Use:   "trace [flags] TARGET",
	Short: "Traceroute with mtr-style per-hop statistics (ICMP, UDP, TCP SYN; flow-stable)",
	Long: `trace discovers the route to TARGET hop by hop. Every TTL is in flight at
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

Responders are mapped to carriers offline (the bundled prefix table, plus
--asn-db FILE) and the route gets a line class (cn2-gia, cu-9929, transit …).

--replay FILE reads a recorded trace instead of probing: linecheck's own JSON
or the output of 'mtr --json', and prints it in any --format.

trace uses raw sockets (root or CAP_NET_RAW); without them an ICMP trace
falls back to unprivileged ICMP sockets where net.ipv4.ping_group_range
allows (no MPLS labels then). The error message says exactly what to run.

Examples:
  linecheck trace 127.0.0.1
  linecheck trace --proto udp --port 33434 --cycles 100 --interval 200ms 127.0.0.1
  linecheck trace --proto tcp --port 443 --flows 8 127.0.0.1 --format json
  linecheck trace --replay route.json --format markdown
  mtr --json -n -c 10 127.0.0.1 > mtr.json; linecheck trace --replay mtr.json`,
	Args: func(c *cobra.Command, args []string) error {
		if traceOpts.replay != "" {
			return cobra.NoArgs(c, args)
		}
		return oneArg("TARGET (an address or host name to trace; or --replay FILE)")(c, args)
	},
	RunE: runTrace,
}

func init() {
	f := traceCmd.Flags()
	f.StringVar(&traceOpts.proto, "proto", "icmp", "probe protocol: icmp, udp or tcp")
	f.IntVar(&traceOpts.port, "port", 0, "destination port for udp (default 33434) and tcp (default 80); ignored for icmp")
	f.IntVar(&traceOpts.firstTTL, "first-ttl", 1, "first TTL probed")
	f.IntVar(&traceOpts.maxTTL, "max-ttl", probe.DefaultMaxTTL, "highest TTL probed")
	f.IntVarP(&traceOpts.cycles, "cycles", "c", 1, "rounds over all TTLs (mtr style)")
	f.DurationVarP(&traceOpts.interval, "interval", "i", time.Second, "time between the starts of two cycles")
	f.DurationVarP(&traceOpts.timeout, "timeout", "W", probe.DefaultTraceTimeout, "a reply later than this is late, not received")
	f.IntVar(&traceOpts.flows, "flows", 1, "number of flows (Paris flow ids) probed per TTL")
	f.Float64Var(&traceOpts.rate, "rate", probe.DefaultTraceRate, "packets per second while a cycle is sent")
	f.BoolVarP(&traceOpts.v4, "ipv4", "4", false, "IPv4 only")
	f.BoolVarP(&traceOpts.v6, "ipv6", "6", false, "IPv6 only")
	f.StringVar(&traceOpts.format, "format", "table", "output format: table, json, csv or markdown")
	f.StringVar(&traceOpts.replay, "replay", "", "read a recorded trace (linecheck JSON or `mtr --json`) from `FILE` instead of probing")
	f.BoolVar(&traceOpts.samples, "samples", false, "keep every RTT sample (samples_ms) in the JSON")
	f.StringVar(&traceOpts.asnDB, "asn-db", "", "offline IP-to-ASN `FILE` (iptoasn TSV or .mmdb) used beside the bundled carrier table")
	register(traceCmd)
}

func runTrace(c *cobra.Command, args []string) error {
	o := traceOpts
	if err := report.CheckFormat(o.format); err != nil {
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
	var tr *route.Trace
	if o.replay != "" {
		t, err := route.ReadTraceFile(o.replay)
		if err != nil {
			return badInput(err)
		}
		tr = t
	} else {
		network, err := prNetwork(o.v4, o.v6)
		if err != nil {
			return badInput(err)
		}
		// --port applies to udp and tcp; icmp ignores it (help text).
		if c.Flags().Changed("port") && o.proto != "icmp" {
			if err := prCheckPort("--port", o.port); err != nil {
				return badInput(err)
			}
		}
		if o.cycles < 1 || o.flows < 1 || o.rate <= 0 || o.interval <= 0 || o.timeout <= 0 {
			return badInput(errors.New("--cycles, --flows, --rate, --interval and --timeout must be positive"))
		}
		cfg := probe.TraceConfig{Proto: o.proto, Port: o.port, FirstTTL: o.firstTTL, MaxTTL: o.maxTTL,
			Cycles: o.cycles, Interval: o.interval, Timeout: o.timeout, Flows: o.flows, Rate: o.rate, Network: network}
		ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
		defer stop()
		stderr := c.ErrOrStderr()
		cycle := 0
		var hops int
		stopProgress := prProgress(stderr, func() string {
			return fmt.Sprintf("trace: cycle %d/%d, %d hops", cycle, o.cycles, hops)
		})
		var onCycle func(*route.Trace)
		if prIsTTY(stderr) {
			// A snapshot per cycle costs a BuildHops over every result so far:
			// only worth it when someone watches the progress line.
			onCycle = func(t *route.Trace) { cycle++; hops = len(t.Hops) }
		}
		t, counts, err := probe.TraceCounted(ctx, args[0], cfg, onCycle)
		stopProgress()
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled) && t != nil:
			fmt.Fprintln(stderr, "linecheck: interrupted; the report covers the cycles finished so far")
		case errors.Is(err, probe.ErrPrivilege):
			return badInput(err)
		case t == nil:
			return badInput(err)
		default:
			return err
		}
		if counts != (probe.TraceCounts{}) {
			fmt.Fprintf(stderr, "linecheck: not counted as received: %d late, %d duplicate, %d foreign replies\n",
				counts.Late, counts.Duplicates, counts.Foreign)
		}
		if !t.Reached && err == nil {
			msg := fmt.Sprintf("linecheck: %s did not answer within --timeout %v", t.Addr, o.timeout)
			if counts.Late > 0 {
				msg += fmt.Sprintf("; %d replies came later than that: try a longer --timeout", counts.Late)
			}
			fmt.Fprintln(stderr, msg)
		}
		tr = t
	}
	// Carrier, ASN and line class per responder, offline (bundled table, --asn-db).
	route.Annotate(tr, db)
	if !o.samples {
		for i := range tr.Hops {
			for j := range tr.Hops[i].Responders {
				tr.Hops[i].Responders[j].Samples = nil
			}
		}
	}
	out := c.OutOrStdout()
	if o.format == "json" {
		return report.WriteJSON(out, tr)
	}
	return report.Write(out, o.format, traceTable(tr, o.format))
}

func traceTable(tr *route.Trace, format string) report.Table {
	state := "not reached"
	if tr.Reached {
		state = "reached"
	}
	title := fmt.Sprintf("trace to %s (%s), %s%s, %s", tr.Target, tr.Addr, tr.Protocol, prPortText(tr.Port), state)
	if tr.Source != "" && tr.Source != "live" {
		title += ", from " + tr.Source
	}
	if tr.LineClass != "" {
		title += ", line class " + tr.LineClass
	}
	t := report.Table{
		Title: title,
		Headers: []string{"ttl", "addr", "asn", "carrier", "sent", "recv", "loss", "min ms", "avg ms", "p50 ms", "p95 ms",
			"max ms", "stdev ms", "jit rfc3550", "jit mean_abs", "mpls", "flows", "flags"},
		Align: "rlrlrrrrrrrrrrrlll",
	}
	// Late and duplicate columns only when some hop has any: they are rare,
	// and the table is wide already.
	var anyLate, anyDup bool
	for _, h := range tr.Hops {
		anyLate = anyLate || h.Late > 0
		anyDup = anyDup || h.Duplicates > 0
	}
	if anyLate || anyDup {
		var hs []string
		al := ""
		for i, h := range t.Headers {
			hs, al = append(hs, h), al+t.Align[i:i+1]
			if h == "loss" {
				if anyLate {
					hs, al = append(hs, "late"), al+"r"
				}
				if anyDup {
					hs, al = append(hs, "dup"), al+"r"
				}
			}
		}
		t.Headers, t.Align = hs, al
	}
	// counts gives the late/dup cells after loss: the hop's counts on its
	// first row, empty on further responder rows.
	counts := func(h route.Hop, first bool) []string {
		var c []string
		if anyLate {
			c = append(c, "")
			if first {
				c[len(c)-1] = strconv.Itoa(h.Late)
			}
		}
		if anyDup {
			c = append(c, "")
			if first {
				c[len(c)-1] = strconv.Itoa(h.Duplicates)
			}
		}
		return c
	}
	for _, h := range tr.Hops {
		flags := strings.Join(h.Flags, ",")
		if len(h.Responders) == 0 {
			row := append([]string{strconv.Itoa(h.TTL), "*", "", "", strconv.Itoa(h.Sent), "0", prFmtLoss(format, h.Loss)}, counts(h, true)...)
			t.Rows = append(t.Rows, append(row, "", "", "", "", "", "", "", "", "", "", flags))
			continue
		}
		for i, r := range h.Responders {
			row := []string{"", r.Addr, asText(r.ASN), r.Carrier, "", strconv.Itoa(r.Recv), ""}
			if i == 0 {
				row[0], row[4], row[6] = strconv.Itoa(h.TTL), strconv.Itoa(h.Sent), prFmtLoss(format, h.Loss)
			}
			row = append(row, counts(h, i == 0)...)
			// A figure the source did not carry (mtr --json: percentiles,
			// jitter without mtr's jitter columns) is "-", not a measured 0.
			k := route.KnownFigures(tr, r)
			row = append(row, prFmtMS(r.RTT.Min), prFmtMS(r.RTT.Avg), prFmtKnown(k.Percentiles, r.RTT.P50),
				prFmtKnown(k.Percentiles, r.RTT.P95), prFmtMS(r.RTT.Max), prFmtMS(r.RTT.Stdev),
				prFmtKnown(k.RFC3550, r.Jitter.RFC3550), prFmtKnown(k.MeanAbs, r.Jitter.MeanAbs),
				mplsText(r.MPLS), flowsText(r.Flows))
			if i == 0 {
				row = append(row, flags)
			} else {
				row = append(row, "")
			}
			t.Rows = append(t.Rows, row)
		}
	}
	t.Notes = append(t.Notes, "loss per hop over probes whose wait ended; icmp-rate-limited: the hop's loss does not carry on downstream")
	if anyLate || anyDup {
		t.Notes = append(t.Notes, "late = replies after --timeout (counted as lost), dup = further replies to answered probes; neither is received")
	}
	if tr.Foreign > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d foreign replies (another process or run) were not counted", tr.Foreign))
	}
	if tr.Source == "mtr-json" {
		t.Notes = append(t.Notes, "from mtr --json: no percentiles, no jitter unless mtr wrote its jitter columns (- here, 0 in JSON), one address per hop")
	}
	return t
}

// prFmtKnown formats milliseconds, or "-" for a figure that is not known.
func prFmtKnown(known bool, v float64) string {
	if !known {
		return "-"
	}
	return prFmtMS(v)
}

func asText(asn int) string {
	if asn == 0 {
		return ""
	}
	return "AS" + strconv.Itoa(asn)
}

func mplsText(m []route.MPLS) string {
	var s []string
	for _, e := range m {
		s = append(s, "L="+strconv.Itoa(e.Label))
	}
	return strings.Join(s, "/")
}

func flowsText(f []int) string {
	var s []string
	for _, v := range f {
		s = append(s, strconv.Itoa(v))
	}
	return strings.Join(s, " ")
}

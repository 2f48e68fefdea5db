package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// multipathOpts are trace's --multipath flags.
type multipathOpts struct {
	on         bool
	confidence int
	maxProbes  int
	flowPort   string
	mode       string
}

// multipathHelp is the --multipath part of trace's help text.
const multipathHelp = `--multipath finds every path a load-balancing router may send you over, not
one (the Multipath Detection Algorithm of Augustin, Friedman and Teixeira,
as scamper's tracelb): at each TTL it sends flows known to reach each
router one TTL further until enough of them (6 at 95 %, 11 once two next
hops were seen, ...: --confidence 95|99) rule out one more next hop, follows
each new interface the same way, and stops at the target or --max-probes
(3000). Flows differ in the UDP destination port (default, as tracelb -P
udp-dport; --flow-port src varies the source port), the TCP source port
(-T) or the ICMP checksum (-I: many routers hash ICMP on addresses only, so
ICMP may see one path where UDP and TCP see several; the report says so).
The report draws the diamonds (where paths split and meet per TTL), lists
each path with its flows (the port numbers sent) and its share of the flows,
and flags a router that balances per packet (one flow answered from several
interfaces) instead of mapping flows to it. --cycles N then probes each
path's own flow N times, mtr style: sent, loss, RTT p50/p95 and jitter per
hop of each path; each path gets a line class, and the summary says whether
the route is one class on every path or which path differs and where it
leaves. --format json adds "multipath", "links" and "paths"; --format csv
--table paths one row per path and hop; --replay reads it back. See
docs/multipath.md.

`

// multipathFlags registers --multipath and its companions.
func multipathFlags(f *pflag.FlagSet, o *multipathOpts) {
	f.BoolVar(&o.on, "multipath", false, "find every load-balanced path (MDA, as scamper tracelb) and report each with its flows; see --confidence, --max-probes, --flow-port")
	f.IntVar(&o.confidence, "confidence", probe.DefaultConfidence, "with --multipath: 95 or 99 (%), the chance that a router's next hops were all found")
	f.IntVar(&o.maxProbes, "max-probes", probe.DefaultMaxProbes, "with --multipath: at most this many discovery probes (--cycles come on top)")
	f.StringVar(&o.flowPort, "flow-port", "dst", "with --multipath -U: the port flows differ in, dst (destination port, as tracelb -P udp-dport) or src")
	f.StringVar(&o.mode, "mode", "", "sockets: raw, datagram (icmp without privileges) or recverr (udp/tcp without privileges); default: raw when allowed, else the unprivileged one")
}

// multipathConflicts refuses flags that mean nothing beside --multipath,
// and --multipath's companions without it.
func multipathConflicts(fl *pflag.FlagSet, o *traceOptions) error {
	if !o.mp.on {
		for _, n := range []string{"confidence", "max-probes", "flow-port"} {
			if fl.Changed(n) {
				return fmt.Errorf("--%s tunes --multipath: add --multipath, or drop --%s", n, n)
			}
		}
		return nil
	}
	var given []string
	for _, n := range []string{"flows", "mtu", "nat", "watch"} {
		if fl.Changed(n) {
			given = append(given, "--"+n)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("--multipath chooses its own flows and reports paths; %s do(es) not apply to it: drop %s",
			strings.Join(given, ", "), strings.Join(given, " "))
	}
	if o.mp.confidence != 95 && o.mp.confidence != 99 {
		return fmt.Errorf("--confidence %d: use 95 or 99 (the stopping rule's tables)", o.mp.confidence)
	}
	if o.mp.maxProbes < 1 || o.mp.maxProbes > probe.MaxMultipathProbes {
		return fmt.Errorf("--max-probes %d: use 1..%d", o.mp.maxProbes, probe.MaxMultipathProbes)
	}
	switch o.mp.flowPort {
	case "dst", "src":
	default:
		return fmt.Errorf("--flow-port %q: use dst (destination port) or src (source port)", o.mp.flowPort)
	}
	if fl.Changed("flow-port") && probe.Protocol(o.proto) != probe.UDP {
		return fmt.Errorf("--flow-port chooses the UDP port flows differ in; %s flows differ in %s: drop --flow-port",
			o.proto, map[string]string{"tcp": "the source port", "icmp": "the checksum"}[o.proto])
	}
	return nil
}

// traceMode is --mode as the probe package names it.
func traceMode(s string) (probe.TraceMode, error) {
	switch m := probe.TraceMode(s); m {
	case "", probe.ModeRaw, probe.ModeDatagram, probe.ModeRecverr:
		return m, nil
	}
	return "", fmt.Errorf("--mode %q: use raw, datagram (icmp) or recverr (udp, tcp)", s)
}

// traceMultipathLive runs the discovery (and the per-path cycles) as the
// flags say: the document, whether Ctrl-C cut it, or the error.
func traceMultipathLive(c *cobra.Command, o *traceOptions, target string) (*route.Trace, bool, error) {
	cfg, err := multipathConfig(c, o)
	if err != nil {
		return nil, false, badInput(err)
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	stderr := c.ErrOrStderr()
	stopProgress := prProgress(stderr, func() string { return "trace --multipath: discovering paths" })
	run, err := probe.Multipath(ctx, target, cfg)
	stopProgress()
	cut := false
	switch {
	case err == nil:
	case interrupted() && run != nil:
		cut = true
		fmt.Fprintln(stderr, "linecheck: interrupted; the report covers the flows probed so far")
	case interrupted():
		return nil, false, errInterrupted
	case errors.Is(err, context.Canceled) && run != nil:
	case errors.Is(err, probe.ErrPrivilege) || run == nil:
		return nil, false, badInput(err)
	default:
		return nil, false, err
	}
	t := route.BuildMultipath(run)
	if run.Counts != (probe.TraceCounts{}) {
		fmt.Fprintf(stderr, "linecheck: not counted as received: %d late, %d duplicate, %d foreign replies\n",
			run.Counts.Late, run.Counts.Duplicates, run.Counts.Foreign)
	}
	if run.Stopped == probe.StoppedMaxProbes {
		fmt.Fprintf(stderr, "linecheck: --max-probes %d spent before the stopping rule was met: paths may be missing; try a larger --max-probes\n", o.mp.maxProbes)
	}
	if !t.Reached && !cut {
		fmt.Fprintf(stderr, "linecheck: %s did not answer within --timeout %v on any flow\n", t.Addr, o.timeout)
	}
	return t, cut, nil
}

// multipathConfig is the discovery's configuration from the flags.
func multipathConfig(c *cobra.Command, o *traceOptions) (probe.MultipathConfig, error) {
	tc, err := traceConfigOf(c, o)
	if err != nil {
		return probe.MultipathConfig{}, err
	}
	// The discovery chooses its flows and cycles itself.
	tc.Cycles, tc.Flows, tc.NAT = 0, 0, false
	tc.FlowDstPort = o.mp.flowPort == "dst"
	cfg := probe.MultipathConfig{TraceConfig: tc, Confidence: o.mp.confidence, MaxProbes: o.mp.maxProbes}
	// Statistics per path only when asked for: the discovery alone answers
	// "which paths", the cycles "how good is each".
	if c.Flags().Changed("cycles") {
		cfg.PathCycles = o.cycles
	}
	return cfg, nil
}

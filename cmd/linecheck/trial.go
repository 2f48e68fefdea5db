package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/trial"
	"github.com/linecheck/linecheck/probe"
	"github.com/linecheck/linecheck/yamlmsg"
)

const trialLong = `Run on the rented server: check how it was delivered against the order and
leave one bundle directory with everything it found.

Parts, in order (docs/trial.md):
  host       how the machine is delivered (bare metal, virtual machine and
             which hypervisor, container and which runtime) with the files
             that say so; CPU, sockets, cores, memory, NUMA nodes, NVMe, NICs
             (speed, driver), RDMA devices, kernel; checked against host:
  gpu        nvidia-smi -q -x and topo -m, saved in gpu/ and checked against
             gpu: as 'linecheck gpu' checks them; without nvidia-smi the part
             says "not checked" and why, and the rest still runs
  interconnect  nccl-tests' all_reduce_perf over the cards (1 MiB to 8 GiB),
             nvbandwidth's GPU-to-GPU copies, ibstat and ib_write_bw (loopback
             on the first active InfiniBand port), each when installed, saved
             in interconnect/: bus bandwidth at the largest size against
             nvlink_busbw_gbps, cards claiming SXM whose all-reduce or one
             of whose GPU pairs is PCIe-class (63 GB/s or less) fail, the
             slowest GPU pair against nvlink_pair_gbps, active InfiniBand
             ports against ib_ports and ib_gbps, ib_write_bw's average at
             its largest size against ib_write_gbps
  baseline   the command after --, run to its end: wall time and exit status
             (a non-zero exit fails the part); with GPUs, nvidia-smi samples
             every card each second meanwhile (gpu/query-log.csv): throttled
             share and reasons, max_temp_c and max_throttle_share of gpu:,
             and a card under 60 % busy without throttling reported starved
             (input, network or a shared host)
  line       with --targets FILE, the return routes toward the users'
             carriers (as backtrace --targets FILE) in line/backtrace.json;
             with --listen [ADDR:]PORT, an iperf3-protocol server (as bw
             --listen) for --duration (default 24h) that the office runs
             'linecheck bw SERVER' against, every test journalled in
             line/bw.journal and the manifest rewritten each hour

The contract file holds the order's blocks, the same keys a candidates file
gives a candidate:
  host: {form: bare-metal, min_cpu_cores: 64, min_memory_gib: 1024, min_nvme_tb: 7, nic_gbps: 100, rdma: true}
  gpu:  {count: 8, model: H100 SXM5, memory_gib: 80, interconnect: nvlink-all-pairs}
  interconnect: {nvlink_busbw_gbps: 350, nvlink_pair_gbps: 300, ib_gbps: 400, ib_ports: 8, ib_write_gbps: 360}

The bundle (--out, default trial-YYYYMMDD-HHMMSS) holds host.json, gpu/,
interconnect/, baseline.json and baseline.log, summary.txt/.md/.json/.html, and
manifest.json, written last: every file with its sha256, the versions, start
and end, the host's identity. The summary and manifest are rewritten after
each part: Ctrl-C leaves a whole bundle of what ran, marked interrupted.
compare reads the bundle as a candidate's recorded: {trial: DIR}, the line
part's files as its recorded.return and recorded.bw.

Examples:
  linecheck trial --contract order.yaml
  linecheck trial --contract order.yaml --out trial-hk1 -- python train.py --steps 200
  linecheck trial --contract order.yaml --targets users.yaml --listen 0.0.0.0:5201 --duration 24h

Exit codes: 0 no part failed, 1 a part failed (the bundle is written first),
2 bad usage or bad input, 130 interrupted (the bundle is closed first).`

type trialOptions struct {
	contract  string
	out       string
	nvidiaSMI string
	arp       string
	ibstat    string
	nvb       string
	ibwr      string
	root      string
	targets   string
	listen    string
	duration  time.Duration
}

func newTrialCmd() *cobra.Command {
	o := &trialOptions{}
	c := &cobra.Command{
		Use:   "trial [flags] [-- BASELINE COMMAND…]",
		Short: "On the rented server: host form and inventory, GPUs and a baseline run against the order, in one bundle",
		Long:  trialLong,
		RunE:  func(c *cobra.Command, args []string) error { return runTrial(c, o, args) },
	}
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.contract, "contract", "", "the order: `FILE` with host: and/or gpu: blocks (YAML)")
		f.StringVar(&o.out, "out", "", "bundle `DIR` to create (new or empty; default trial-YYYYMMDD-HHMMSS)")
		f.StringVar(&o.nvidiaSMI, "nvidia-smi", "nvidia-smi", "the nvidia-smi `PROGRAM` to run")
		f.StringVar(&o.arp, "all-reduce-perf", "all_reduce_perf", "nccl-tests' all_reduce_perf `PROGRAM` (run when found)")
		f.StringVar(&o.ibstat, "ibstat", "ibstat", "the ibstat `PROGRAM` (run when found)")
		f.StringVar(&o.nvb, "nvbandwidth", "nvbandwidth", "NVIDIA's nvbandwidth `PROGRAM` (run when found)")
		f.StringVar(&o.ibwr, "ib-write-bw", "ib_write_bw", "perftest's ib_write_bw `PROGRAM` (run when found, in loopback)")
		f.StringVar(&o.targets, "targets", "", "line part: backtrace toward the targets of `FILE` (backtrace's --targets format)")
		f.StringVar(&o.listen, "listen", "", "line part: serve throughput tests on `[ADDR:]PORT` (as bw --listen; ADDR defaults to 127.0.0.1, give 0.0.0.0 for the office)")
		durationVarP(f, &o.duration, "duration", "", 24*time.Hour, "line part: how long --listen serves (seconds or a Go duration, 24h)")
		f.StringVar(&o.root, "host-root", "/", "read the host's /proc, /sys and markers under `DIR` (a copy of another machine's)")
	})
	return c
}

func runTrial(c *cobra.Command, o *trialOptions, args []string) error {
	if dash := c.ArgsLenAtDash(); dash > 0 || (dash < 0 && len(args) > 0) {
		return badInput(fmt.Errorf("trial: the baseline command goes after --: linecheck trial [flags] -- %q …", args[0]))
	}
	var ct trial.Contract
	if o.contract != "" {
		b, err := yamlmsg.ReadFile(o.contract)
		if err != nil {
			return badInput(fmt.Errorf("--contract: %w", err))
		}
		if ct, err = trial.ParseContract(b, o.contract); err != nil {
			return badInput(err)
		}
	}
	if st, err := os.Stat(o.root); err != nil || !st.IsDir() {
		return badInput(fmt.Errorf("--host-root %s: not a directory", o.root))
	}
	line, err := trialLine(c, o)
	if err != nil {
		return badInput(err)
	}
	start := time.Now()
	if o.out == "" {
		o.out = "trial-" + start.UTC().Format("20060102-150405")
	}
	hostname, _ := os.Hostname()
	id := trial.Identity{Hostname: hostname, MachineID: machineID(o.root)}
	b, err := trial.Create(o.out, start, map[string]string{"linecheck": version}, id)
	if err != nil {
		return badInput(err)
	}
	ctx, interrupted, stop := interruptContext(c.Context())
	defer stop()
	errOut := c.ErrOrStderr()
	runErr := trial.Run(ctx, b, trial.Options{Root: o.root, Contract: ct, Baseline: args, NVIDIASMI: o.nvidiaSMI,
		AllReducePerf: o.arp, IBStat: o.ibstat, NVBandwidth: o.nvb, IBWriteBW: o.ibwr, Line: line,
		Progress: func(s string) { fmt.Fprintln(errOut, "trial: "+s) }})
	summary, _ := os.ReadFile(b.Dir + "/summary.txt")
	c.OutOrStdout().Write(summary)
	fmt.Fprintf(errOut, "bundle: %s (manifest.json lists every file with its sha256)\n", b.Dir)
	if interrupted() {
		return errInterrupted
	}
	if runErr != nil {
		return runErr
	}
	for _, p := range b.Parts() {
		if p.Status == trial.StatusFail || p.Status == trial.StatusError {
			return verdictFailed(fmt.Sprintf("trial: part %s: %s", p.Name, p.Reason))
		}
	}
	return nil
}

// trialLine checks the line part's flags before anything runs: the
// targets file read, --listen an [ADDR:]PORT, --duration positive.
func trialLine(c *cobra.Command, o *trialOptions) (trial.Line, error) {
	var l trial.Line
	if o.targets != "" {
		targets, _, from, err := backtraceTargetSet(o.targets)
		if err != nil {
			return l, err
		}
		db, err := hopNamesDB("", false, nil, c.ErrOrStderr())
		if err != nil {
			return l, err
		}
		l.Targets, l.TargetsFrom, l.ASN = targets, from, db
		l.Trace = probe.TraceConfig{Proto: probe.ICMP, MaxTTL: probe.DefaultMaxTTL, Cycles: 1, Interval: time.Second,
			Timeout: probe.DefaultTraceTimeout, Rate: DefaultBacktraceRate}
		l.Rate = DefaultBacktraceRate
		l.Vantage, _ = os.Hostname()
	}
	if o.listen != "" {
		addr := o.listen
		if !strings.Contains(addr, ":") {
			addr = ":" + addr
		}
		_, port, err := net.SplitHostPort(addr)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 0 || p > 65535 {
			return l, fmt.Errorf("--listen %q: want [ADDR:]PORT, e.g. 5201 or 0.0.0.0:5201", o.listen)
		}
		if o.duration <= 0 {
			return l, fmt.Errorf("--duration %v: must be positive", o.duration)
		}
		l.Listen, l.Duration = addr, o.duration
	}
	return l, nil
}

// machineID is /etc/machine-id under root, "" when absent.
func machineID(root string) string {
	b, err := os.ReadFile(root + "/etc/machine-id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

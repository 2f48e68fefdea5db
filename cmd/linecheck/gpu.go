package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/linecheck/linecheck/internal/readlimit"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/report"
)

// gpuOptions are the flags of `linecheck gpu`.
type gpuOptions struct {
	from, xml, text, query, topo string
	contract                     string
	nvidiaSMI                    string
	format                       string
	wide                         bool

	// the watch (gpu_watch.go)
	watch    bool
	every    time.Duration
	journal  string
	cycles   int
	report   bool
	queryLog string
	plot     string
	tz       string
}

const gpuLong = `gpu reports what the NVIDIA driver says about this server's GPUs, the way
a buyer checks a rental against the order: per card the product name, the
form factor derived from the evidence (SXM5, SXM4, PCIe, NVL: the product
name, the PCI device id, NVLink to every other card, a power limit no PCIe
card has), memory, the power limit in force beside the default and max,
PCIe generation and width (current and max), ECC and MIG modes, driver and
CUDA versions, serial and UUID; and the card-to-card matrix (NVLink count
per pair, or the PCIe path: PIX, PXB, PHB, NODE, SYS) with each card's
nearest NIC.

Inputs: without any input flag, nvidia-smi is run here (nvidia-smi -q -x and
nvidia-smi topo -m). To judge files a provider sent, --from DIR reads
whichever of these are there:
  nvidia-smi-q.xml   nvidia-smi -q -x
  nvidia-smi-q.txt   nvidia-smi -q (or -a)
  query.csv          nvidia-smi --query-gpu=index,name,memory.total,… --format=csv
  topo.txt           nvidia-smi topo -m
and --xml, --text, --query, --topo take one file each. The query CSV and the
topo matrix alone (what forums and providers usually paste) are enough.

Contract (--contract FILE, a YAML file with a gpu: block, the same block a
candidate of compare takes):
  gpu:
    count: 8                         cards, at least
    model: H100 SXM5                 as buyers write it: H100 PCIe, H100 NVL, H200, A100 80GB
    memory_gib: 80                   per card, 3% below allowed (the driver's reservation)
    interconnect: nvlink-all-pairs   or nvlink-pairs (bridged pairs), pcie
    power_limit_w: 700               the limit in force on every card, at least
    pcie_gen: 5                      the link's max generation, at least
    ecc: true
    mig: false
Each key is a check with its required and measured value; a figure no input
gives fails its check ("no data"). Exit 1 when a check fails.

Formats: table (default), json (linecheck.gpu/v1), csv, markdown.
docs/gpu.md has the rules (form factor, model matching) and examples.

Examples:
  linecheck gpu                                   on the rented server
  linecheck gpu --contract order.yaml             … against the order
  linecheck gpu --from ./provider-files --contract order.yaml --format json
  linecheck gpu --query query.csv --topo topo.txt`

func newGPUCmd() *cobra.Command {
	o := &gpuOptions{}
	c := &cobra.Command{
		Use:   "gpu [flags]",
		Short: "What GPU server was delivered (model, form factor, memory, power cap, NVLink, ECC, MIG) against the contract",
		Long:  gpuLong,
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runGPU(c, o) },
	}
	lazyFlags(c, func(f *pflag.FlagSet) {
		f.StringVar(&o.from, "from", "", "read saved outputs from `DIR` ("+gpu.FileXML+", "+gpu.FileQText+", "+gpu.FileCSV+", "+gpu.FileTopo+", whichever are there)")
		f.StringVar(&o.xml, "xml", "", "read nvidia-smi -q -x from `FILE`")
		f.StringVar(&o.text, "text", "", "read nvidia-smi -q (text) from `FILE`")
		f.StringVar(&o.query, "query", "", "read nvidia-smi --query-gpu=… --format=csv from `FILE`")
		f.StringVar(&o.topo, "topo", "", "read nvidia-smi topo -m from `FILE`")
		f.StringVar(&o.contract, "contract", "", "check against the gpu: block of `FILE` (YAML)")
		f.StringVar(&o.nvidiaSMI, "nvidia-smi", "nvidia-smi", "the nvidia-smi `PROGRAM` to run when no input is given")
		f.StringVar(&o.format, "format", "table", "output `FORMAT`: "+report.FormatList())
		f.BoolVar(&o.wide, "wide", false, "keep every column of a table on one line")
		f.BoolVar(&o.watch, "watch", false, "sample temperature, power, clocks, utilisation, throttle reasons and ECC every --every until stopped, journaling every sample (see Under load)")
		durationVarP(f, &o.every, "every", "", 5*time.Second, "time between samples of a --watch (5s, 1m, or seconds)")
		f.StringVar(&o.journal, "journal", "", "append-only journal `FILE` of a --watch (resumed when it exists); the input of --report")
		f.IntVar(&o.cycles, "watch-cycles", 0, "stop a --watch after `N` samples of this run (0: until stopped)")
		f.BoolVar(&o.report, "report", false, "print the per-card summary of --journal FILE (or --query-log FILE) and exit")
		f.StringVar(&o.queryLog, "query-log", "", "--report over `FILE`, a log of nvidia-smi --query-gpu=timestamp,index,… --format=csv -l N")
		f.StringVar(&o.plot, "plot", "", "with --report (or when a --watch stops): draw the temperature curve of every card to `FILE`.svg or .png")
		f.StringVar(&o.tz, "tz", "Local", "time zone nvidia-smi's timestamps of --query-log are in (IANA name, or Local)")
	})
	c.Long += gpuWatchHelp
	return c
}

func runGPU(c *cobra.Command, o *gpuOptions) error {
	format, err := report.ParseFormat(o.format)
	if err != nil {
		return badInput(err)
	}
	ct, err := gpuContract(o)
	if err != nil {
		return err
	}
	switch {
	case o.watch && o.report:
		return badInput(errors.New("--report and --watch: choose one (the watch prints its report when it stops)"))
	case o.report:
		return gpuReport(c, o, ct)
	case o.watch:
		return gpuWatch(c, o, ct)
	case o.journal != "" || o.queryLog != "" || o.plot != "":
		return badInput(errors.New("--journal, --query-log and --plot go with --watch or --report"))
	}
	m, err := gpuMachine(c.Context(), o)
	if err != nil {
		return err
	}
	d := gpu.NewDoc(m, ct)
	out := c.OutOrStdout()
	if err := report.Render(out, report.GPUReport{Doc: d}, format, tableOptions(out, o.wide)); err != nil {
		return err
	}
	return gpuVerdict(d.Verdict, d.Checks, "the delivery does not meet the contract")
}

// gpuVerdict exits 1 naming the failed checks.
func gpuVerdict(verdict string, checks []gpu.Check, what string) error {
	if verdict != gpu.VerdictFail {
		return nil
	}
	var failed []string
	for _, ch := range checks {
		if !ch.Pass {
			failed = append(failed, ch.Name)
		}
	}
	return verdictFailed("gpu: " + what + ": " + strings.Join(failed, ", "))
}

// gpuContract reads --contract.
func gpuContract(o *gpuOptions) (*gpu.Contract, error) {
	if o.contract == "" {
		return nil, nil
	}
	b, err := readlimit.ReadFile(o.contract, readlimit.Document)
	if err != nil {
		return nil, badInput(fmt.Errorf("--contract: %w", err))
	}
	v, err := gpu.ParseContractFile(b, o.contract)
	if err != nil {
		return nil, badInput(err)
	}
	return &v, nil
}

// gpuMachine reads the inputs the flags name, or runs nvidia-smi.
func gpuMachine(ctx context.Context, o *gpuOptions) (*gpu.Machine, error) {
	files := gpu.Files{XML: o.xml, QText: o.text, CSV: o.query, Topo: o.topo}
	if o.from != "" {
		d, err := gpu.FromDir(o.from)
		if err != nil {
			return nil, badInput(err)
		}
		// a file flag beside --from wins for its kind
		if files.XML == "" {
			files.XML = d.XML
		}
		if files.QText == "" {
			files.QText = d.QText
		}
		if files.CSV == "" {
			files.CSV = d.CSV
		}
		if files.Topo == "" {
			files.Topo = d.Topo
		}
	}
	if files != (gpu.Files{}) {
		m, err := gpu.Read(files)
		if err != nil {
			return nil, badInput(err)
		}
		return m, nil
	}
	return liveMachine(ctx, o.nvidiaSMI)
}

// nvidiaSMITimeout bounds one nvidia-smi run: a driver in a bad state can
// hang it, and a report that never comes helps nobody.
const nvidiaSMITimeout = 60 * time.Second

// runNVIDIASMI runs the program with args and returns its stdout.
func runNVIDIASMI(ctx context.Context, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, nvidiaSMITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > 400 {
			msg = msg[:400] + "…"
		}
		return nil, fmt.Errorf("%s %s: %v: %s", prog, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// liveMachine runs nvidia-smi here: -q -x for the cards, topo -m for the
// matrix (a failing topo, as on a single-card VM, leaves the matrix out).
func liveMachine(ctx context.Context, prog string) (*gpu.Machine, error) {
	if _, err := exec.LookPath(prog); err != nil {
		return nil, badInput(fmt.Errorf("%s not found (%v): run linecheck gpu on the GPU server, or give saved outputs with --from DIR (or --xml, --text, --query, --topo)", prog, err))
	}
	b, err := runNVIDIASMI(ctx, prog, "-q", "-x")
	if err != nil {
		return nil, err
	}
	m, err := gpu.ParseXML(b, prog+" -q -x")
	if err != nil {
		return nil, err
	}
	inputs := []string{prog + " -q -x"}
	var topo *gpu.Topology
	if tb, err := runNVIDIASMI(ctx, prog, "topo", "-m"); err == nil {
		if topo, err = gpu.ParseTopo(tb, prog+" topo -m"); err != nil {
			return nil, err
		}
		inputs = append(inputs, prog+" topo -m")
	}
	out, err := gpu.Merge(topo, m)
	if err != nil {
		return nil, err
	}
	out.Inputs = inputs
	return out, nil
}

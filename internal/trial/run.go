package trial

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/host"
)

// Options say how to run a trial.
type Options struct {
	// Root is the filesystem root the host part reads ("/" on the machine).
	Root     string
	Contract Contract
	// Baseline is the buyer's command (argv) run during the GPU watch; nil: none.
	Baseline []string
	// NVIDIASMI is the nvidia-smi program (a name looked up in PATH, or a path).
	NVIDIASMI string
	// Progress, when set, receives one line per step.
	Progress func(string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// AllReducePerf and IBStat are the nccl-tests and infiniband-diags
	// programs the interconnect part runs when installed ("all_reduce_perf"
	// and "ibstat" when empty).
	AllReducePerf string
	IBStat        string
	// NVBandwidth and IBWriteBW are NVIDIA's nvbandwidth and perftest's
	// ib_write_bw ("nvbandwidth" and "ib_write_bw" when empty).
	NVBandwidth string
	IBWriteBW   string

	// Line is the line part: the backtrace and the throughput server.
	Line Line

	// What the GPU part found, for the interconnect part.
	gpuCards int
	gpuForm  string
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) progress(format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

// Part names, in the order they run.
const (
	PartHost         = "host"
	PartGPU          = "gpu"
	PartBaseline     = "baseline"
	PartInterconnect = "interconnect"
	PartLine         = "line"
)

// Run runs the parts into b: each part's files, then the summary and
// manifest rewritten, so the bundle is whole after every part. When ctx
// ends (Ctrl-C) the running part is marked interrupted, the parts not run
// are listed as such, and the bundle is closed; Run returns ctx's error.
func Run(ctx context.Context, b *Bundle, o Options) error {
	parts := []struct {
		name string
		run  func(context.Context, *Bundle, *Options) Part
	}{
		{PartHost, runHost},
		{PartGPU, runGPU},
		{PartInterconnect, runInterconnect},
		{PartBaseline, runBaseline},
		{PartLine, runLine},
	}
	for i, p := range parts {
		if ctx.Err() != nil {
			for _, rest := range parts[i:] {
				b.SetPart(Part{Name: rest.name, Status: StatusInterrupted, Reason: "not run: the trial was stopped before it"})
			}
			return errors.Join(ctx.Err(), b.Interrupted(o.now()))
		}
		o.progress("%s …", p.name)
		part := p.run(ctx, b, &o)
		b.SetPart(part)
		if part.Reason != "" {
			o.progress("%s: %s: %s", p.name, part.Status, part.Reason)
		} else {
			o.progress("%s: %s", p.name, part.Status)
		}
		if err := b.Sync(o.now(), false); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errors.Join(ctx.Err(), b.Interrupted(o.now()))
	}
	return b.Sync(o.now(), true)
}

// HostFile is the host part's output.
const HostFile = "host.json"

// HostRecord is host.json: the form with its evidence, the inventory, and
// the checks against the contract's host: block.
type HostRecord struct {
	Form      host.Form      `json:"form"`
	Inventory host.Inventory `json:"inventory"`
	Checks    []host.Check   `json:"checks"`
	Verdict   string         `json:"verdict"`
	Contract  *host.Contract `json:"contract,omitempty"`
}

func runHost(_ context.Context, b *Bundle, o *Options) Part {
	root := o.Root
	if root == "" {
		root = "/"
	}
	rec := HostRecord{Form: host.DetectForm(root), Inventory: host.ReadInventory(root), Checks: []host.Check{}, Contract: o.Contract.Host}
	if o.Contract.Host != nil {
		rec.Checks = host.CheckHost(*o.Contract.Host, rec.Form, rec.Inventory)
	}
	rec.Verdict = host.Verdict(rec.Checks)
	b.manifest.Host.Form = rec.Form.Kind
	b.manifest.Host.Kernel = rec.Inventory.Kernel
	p := Part{Name: PartHost, Files: []string{HostFile}}
	if err := b.WriteJSON(HostFile, rec); err != nil {
		return Part{Name: PartHost, Status: StatusError, Reason: err.Error()}
	}
	p.Lines = append(p.Lines, describeForm(rec.Form))
	for _, e := range rec.Form.Evidence {
		p.Lines = append(p.Lines, "evidence: "+e)
	}
	p.Lines = append(p.Lines, describeInventory(rec.Inventory))
	var failed []string
	for _, c := range rec.Checks {
		line := fmt.Sprintf("%s: required %v, measured %s", c.Name, c.Required, orDash(c.Measured))
		if !c.Pass {
			line += " FAIL"
			failed = append(failed, c.Name)
		}
		p.Lines = append(p.Lines, line)
	}
	switch rec.Verdict {
	case "pass":
		p.Status = StatusPass
	case "fail":
		p.Status, p.Reason = StatusFail, "fails the host: block: "+strings.Join(failed, ", ")
	default:
		p.Status, p.Reason = StatusRan, "no host: block in the contract: nothing checked"
	}
	return p
}

func describeForm(f host.Form) string {
	switch f.Kind {
	case host.FormContainer:
		s := "form: container (" + f.Container + ")"
		if f.Hypervisor != "" {
			s += " in a virtual machine (hypervisor " + f.Hypervisor + ")"
		}
		return s
	case host.FormVM:
		return "form: virtual machine (hypervisor " + f.Hypervisor + ")"
	case host.FormBareMetal:
		return "form: bare metal"
	}
	return "form: unknown (no DMI, no hypervisor flag, no container marker)"
}

func describeInventory(in host.Inventory) string {
	n := func(p *int) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	mem := "-"
	if in.MemoryGiB != nil {
		mem = fmt.Sprintf("%.1f GiB", *in.MemoryGiB)
	}
	nvme := "-"
	if tb := in.NVMeTB(); tb != nil {
		nvme = fmt.Sprintf("%.2f TB in %d", *tb, len(in.NVMe))
	}
	var nics []string
	for _, c := range in.NICs {
		sp := "speed -"
		if c.SpeedMbps != nil {
			sp = fmt.Sprintf("%d Mb/s", *c.SpeedMbps)
		}
		nics = append(nics, fmt.Sprintf("%s (%s, %s)", c.Name, orDashS(c.Driver), sp))
	}
	return fmt.Sprintf("CPU %s, %s sockets, %s cores, %s threads; memory %s; NUMA nodes %s; NVMe %s; NICs %s; RDMA %s; kernel %s",
		orDashS(in.CPUModel), n(in.Sockets), n(in.Cores), n(in.Threads), mem, n(in.NUMANodes), nvme,
		orDashS(strings.Join(nics, ", ")), orDashS(strings.Join(in.RDMA, ", ")), orDashS(in.Kernel))
}

func orDash(v any) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(v)
}

func orDashS(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// GPUDir holds the GPU part's saved nvidia-smi outputs, what compare's
// recorded.gpu and `linecheck gpu --from` read.
const GPUDir = "gpu"

func runGPU(ctx context.Context, b *Bundle, o *Options) Part {
	prog := o.NVIDIASMI
	if prog == "" {
		prog = "nvidia-smi"
	}
	p := Part{Name: PartGPU}
	if _, err := exec.LookPath(prog); err != nil {
		p.Status, p.Reason = StatusNotChecked, prog+" not found: no NVIDIA driver on this machine, the GPU part was not checked"
		return p
	}
	xml, err := output(ctx, prog, "-q", "-x")
	if err != nil {
		p.Status, p.Reason = StatusError, err.Error()
		return p
	}
	if err := b.WriteFile(filepath.Join(GPUDir, gpu.FileXML), xml); err != nil {
		p.Status, p.Reason = StatusError, err.Error()
		return p
	}
	p.Files = append(p.Files, GPUDir+"/"+gpu.FileXML)
	// A single card has no matrix: a failing topo -m leaves it out.
	if topo, err := output(ctx, prog, "topo", "-m"); err == nil {
		if err := b.WriteFile(filepath.Join(GPUDir, gpu.FileTopo), topo); err == nil {
			p.Files = append(p.Files, GPUDir+"/"+gpu.FileTopo)
		}
	}
	files, err := gpu.FromDir(filepath.Join(b.Dir, GPUDir))
	if err == nil {
		var m *gpu.Machine
		if m, err = gpu.Read(files); err == nil {
			d := gpu.NewDoc(m, o.Contract.GPU)
			for _, c := range d.Checks {
				line := fmt.Sprintf("%s: required %v, measured %s", c.Name, c.Required, orDash(c.Measured))
				if !c.Pass {
					line += " FAIL"
				}
				p.Lines = append(p.Lines, line)
			}
			p.Lines = append([]string{fmt.Sprintf("%d cards", len(m.Cards))}, p.Lines...)
			o.gpuCards = len(m.Cards)
			b.SetVersion("nvidia_driver", m.Driver)
			b.SetVersion("cuda", m.CUDA)
			if len(m.Cards) > 0 {
				o.gpuForm = m.Cards[0].FormFactor
			}
			switch d.Verdict {
			case gpu.VerdictPass:
				p.Status = StatusPass
			case gpu.VerdictFail:
				var failed []string
				for _, c := range d.Checks {
					if !c.Pass {
						failed = append(failed, c.Name)
					}
				}
				p.Status, p.Reason = StatusFail, "fails the gpu: block: "+strings.Join(failed, ", ")
			default:
				p.Status, p.Reason = StatusRan, "no gpu: block in the contract: nothing checked"
			}
			return p
		}
	}
	p.Status, p.Reason = StatusError, err.Error()
	return p
}

func output(ctx context.Context, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Files of the baseline part.
const (
	BaselineFile = "baseline.json"
	BaselineLog  = "baseline.log"
)

// BaselineRecord is baseline.json: the buyer's command, its wall time and
// how it ended.
type BaselineRecord struct {
	Command []string  `json:"command"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	WallS   float64   `json:"wall_s"`
	// ExitCode is nil when the command did not exit by itself (a signal,
	// or it could not start).
	ExitCode    *int   `json:"exit_code"`
	Signal      string `json:"signal,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
}

func runBaseline(ctx context.Context, b *Bundle, o *Options) Part {
	p := Part{Name: PartBaseline}
	if len(o.Baseline) == 0 {
		p.Status, p.Reason = StatusNotChecked, "no baseline command (give one after --)"
		return p
	}
	logf, err := os.Create(filepath.Join(b.Dir, BaselineLog))
	if err != nil {
		p.Status, p.Reason = StatusError, err.Error()
		return p
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, o.Baseline[0], o.Baseline[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Ctrl-C: the command is asked to stop as the terminal would, then
	// killed if it lingers.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	watch, werr := startWatch(b, o)
	rec := BaselineRecord{Command: o.Baseline, Started: o.now().UTC()}
	runErr := cmd.Run()
	rec.Ended = o.now().UTC()
	var watchLines, starved, watchFailed []string
	switch {
	case werr != nil:
		watchLines = []string{"GPU samples not taken: " + werr.Error()}
	case watch != nil:
		samples, err := watch.stop()
		if err != nil {
			watchLines = []string{"GPU samples not read: " + err.Error()}
		} else {
			watchLines, starved, watchFailed = judgeWatch(samples, o.Contract.GPU)
		}
		p.Files = append(p.Files, GPUDir+"/"+QueryLogFile)
	}
	rec.WallS = rec.Ended.Sub(rec.Started).Seconds()
	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			rec.Signal = ws.Signal().String()
		} else {
			code := st.ExitCode()
			rec.ExitCode = &code
		}
	} else if runErr != nil {
		rec.Error = runErr.Error()
	}
	rec.Interrupted = ctx.Err() != nil
	p.Files = append([]string{BaselineFile, BaselineLog}, p.Files...)
	if err := b.WriteJSON(BaselineFile, rec); err != nil {
		p.Status, p.Reason = StatusError, err.Error()
		return p
	}
	p.Lines = append([]string{fmt.Sprintf("command: %s", strings.Join(rec.Command, " ")), fmt.Sprintf("wall time %.3f s", rec.WallS)}, watchLines...)
	switch {
	case rec.Interrupted:
		p.Status, p.Reason = StatusInterrupted, fmt.Sprintf("stopped after %.3f s", rec.WallS)
	case rec.Error != "":
		p.Status, p.Reason = StatusError, rec.Error
	case rec.Signal != "":
		p.Status, p.Reason = StatusFail, "killed by "+rec.Signal
	case *rec.ExitCode != 0:
		p.Status, p.Reason = StatusFail, fmt.Sprintf("exit status %d", *rec.ExitCode)
	case len(watchFailed) > 0:
		p.Status, p.Reason = StatusFail, "under the baseline the GPUs fail the gpu: block: "+strings.Join(watchFailed, ", ")
	case len(starved) > 0:
		p.Status, p.Reason = StatusRan, "exit status 0; GPU "+strings.Join(starved, ", ")+" starved (input, network or shared host)"
	case watch != nil:
		p.Status, p.Reason = StatusRan, "exit status 0"
	default:
		p.Status, p.Reason = StatusRan, "exit status 0; no GPUs to sample during it"
	}
	return p
}

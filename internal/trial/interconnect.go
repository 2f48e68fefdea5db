package trial

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/interconnect"
)

// Files of the interconnect part.
const (
	InterconnectDir = "interconnect"
	AllReduceFile   = "all_reduce_perf.txt"
	IBStatFile      = "ibstat.txt"
)

// runInterconnect runs nccl-tests' all_reduce_perf over the GPU part's
// cards (two or more) and ibstat, each when installed, saves their
// outputs, and checks the interconnect: block and the form factor the
// cards claim (an SXM part with PCIe-class all-reduce fails).
func runInterconnect(ctx context.Context, b *Bundle, o *Options) Part {
	p := Part{Name: PartInterconnect}
	var missing []string
	var ar *interconnect.AllReduce
	var ports []interconnect.IBPort
	ct := interconnect.Contract{}
	if o.Contract.Interconnect != nil {
		ct = *o.Contract.Interconnect
	}
	save := func(rel string, out []byte) error {
		if err := b.WriteFile(rel, out); err != nil {
			return err
		}
		p.Files = append(p.Files, filepath.ToSlash(rel))
		return nil
	}

	arp := o.AllReducePerf
	if arp == "" {
		arp = "all_reduce_perf"
	}
	switch _, err := exec.LookPath(arp); {
	case err != nil:
		missing = append(missing, arp+" not found")
	case o.gpuCards < 2:
		missing = append(missing, fmt.Sprintf("all-reduce needs 2 or more GPUs, the GPU part found %d", o.gpuCards))
	default:
		// 1 MiB to 8 GiB: the largest sizes reach the links' bandwidth.
		out, err := output(ctx, arp, "-b", "1M", "-e", "8G", "-f", "2", "-g", strconv.Itoa(o.gpuCards))
		rel := filepath.Join(InterconnectDir, AllReduceFile)
		if err == nil {
			err = save(rel, out)
		}
		if err == nil {
			ar, err = interconnect.ParseAllReduce(out, rel)
		}
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		r, _ := ar.Largest()
		p.Lines = append(p.Lines, fmt.Sprintf("all-reduce bus bandwidth at %d bytes: %.2f GB/s", r.Bytes, *ar.BusBWAtLargest()))
	}

	ibs := o.IBStat
	if ibs == "" {
		ibs = "ibstat"
	}
	if _, err := exec.LookPath(ibs); err != nil {
		missing = append(missing, ibs+" not found")
	} else {
		out, err := output(ctx, ibs)
		rel := filepath.Join(InterconnectDir, IBStatFile)
		if err == nil {
			err = save(rel, out)
		}
		if err == nil {
			ports, err = interconnect.ParseIBStat(out, rel)
		}
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
	}

	var failed []string
	checks := interconnect.CheckAll(ct, ar, ports, o.gpuForm)
	for _, c := range checks {
		line := fmt.Sprintf("%s: required %v, measured %s", c.Name, c.Required, orDash(c.Measured))
		if c.Note != "" {
			line += " (" + c.Note + ")"
		}
		if !c.Pass {
			line += " FAIL"
			failed = append(failed, c.Name)
		}
		p.Lines = append(p.Lines, line)
	}
	ran := ar != nil || ports != nil
	switch {
	case len(failed) > 0:
		p.Status, p.Reason = StatusFail, "fails: "+strings.Join(failed, ", ")
		if len(missing) > 0 {
			p.Reason += " (" + strings.Join(missing, "; ") + ")"
		}
	case !ran:
		p.Status, p.Reason = StatusNotChecked, strings.Join(missing, "; ")
	case len(checks) == 0:
		p.Status, p.Reason = StatusRan, "no interconnect: block in the contract: nothing checked"
	default:
		p.Status = StatusPass
		if len(missing) > 0 {
			p.Reason = strings.Join(missing, "; ")
		}
	}
	return p
}

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
	var failed, missing []string
	ran := false
	check := func(name string, pass bool, line string) {
		if !pass {
			line += " FAIL"
			failed = append(failed, name)
		}
		p.Lines = append(p.Lines, line)
	}
	ct := o.Contract.Interconnect
	if ct == nil {
		ct = &interconnect.Contract{}
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
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		ran = true
		rel := filepath.Join(InterconnectDir, AllReduceFile)
		if err := b.WriteFile(rel, out); err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		p.Files = append(p.Files, filepath.ToSlash(rel))
		ar, err := interconnect.ParseAllReduce(out, rel)
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		bus := ar.BusBWAtLargest()
		r, _ := ar.Largest()
		p.Lines = append(p.Lines, fmt.Sprintf("all-reduce bus bandwidth at %d bytes: %.2f GB/s", r.Bytes, *bus))
		if ct.NVLinkBusBWGbps != nil {
			check("nvlink_busbw_gbps", *bus >= *ct.NVLinkBusBWGbps, fmt.Sprintf("nvlink_busbw_gbps: required %v, measured %.2f", *ct.NVLinkBusBWGbps, *bus))
		}
		if o.gpuForm != "" {
			cc := interconnect.CheckFormFactor(o.gpuForm, ar)
			check("form_factor", cc.Pass, "form factor "+o.gpuForm+": "+cc.Note)
		}
	}

	ibs := o.IBStat
	if ibs == "" {
		ibs = "ibstat"
	}
	if _, err := exec.LookPath(ibs); err != nil {
		missing = append(missing, ibs+" not found")
	} else {
		out, err := output(ctx, ibs)
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		ran = true
		rel := filepath.Join(InterconnectDir, IBStatFile)
		if err := b.WriteFile(rel, out); err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		p.Files = append(p.Files, filepath.ToSlash(rel))
		ports, err := interconnect.ParseIBStat(out, rel)
		if err != nil {
			p.Status, p.Reason = StatusError, err.Error()
			return p
		}
		for _, c := range interconnect.CheckIB(ports, ct.IBPorts, ct.IBGbps) {
			line := fmt.Sprintf("%s: required %v, measured %s", c.Name, c.Required, orDash(c.Measured))
			if c.Note != "" {
				line += " (" + c.Note + ")"
			}
			check(c.Name, c.Pass, line)
		}
	}
	// A key of the order that no tool here could measure fails: the order
	// asked for it and nothing shows it was delivered.
	if ct.NVLinkBusBWGbps != nil && !hasLine(p.Lines, "nvlink_busbw_gbps") {
		check("nvlink_busbw_gbps", false, "nvlink_busbw_gbps: required "+fmt.Sprint(*ct.NVLinkBusBWGbps)+", not measured")
	}
	for _, k := range []struct {
		name string
		set  bool
	}{{"ib_ports", ct.IBPorts != nil}, {"ib_gbps", ct.IBGbps != nil}} {
		if k.set && !hasLine(p.Lines, k.name) {
			check(k.name, false, k.name+": not measured")
		}
	}
	switch {
	case len(failed) > 0:
		p.Status, p.Reason = StatusFail, "fails: "+strings.Join(failed, ", ")
		if len(missing) > 0 {
			p.Reason += " (" + strings.Join(missing, "; ") + ")"
		}
	case !ran:
		p.Status, p.Reason = StatusNotChecked, strings.Join(missing, "; ")
	case o.Contract.Interconnect == nil && o.gpuForm == "":
		p.Status, p.Reason = StatusRan, "no interconnect: block in the contract: nothing checked"
	default:
		p.Status = StatusPass
		if len(missing) > 0 {
			p.Reason = strings.Join(missing, "; ")
		}
	}
	return p
}

func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix+":") {
			return true
		}
	}
	return false
}

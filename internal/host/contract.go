package host

import (
	"errors"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// Contract is what the order says of the machine (a candidate's host:
// block); an absent key is not checked.
type Contract struct {
	// Form is bare-metal, vm or container: what was sold.
	Form         string   `yaml:"form"`
	MinCPUCores  *int     `yaml:"min_cpu_cores"`
	MinMemoryGiB *float64 `yaml:"min_memory_gib"`
	MinNVMeTB    *float64 `yaml:"min_nvme_tb"`
	// NICGbps is the speed the fastest NIC must link at.
	NICGbps *float64 `yaml:"nic_gbps"`
	// RDMA: true requires an RDMA device, false requires none.
	RDMA *bool `yaml:"rdma"`
}

// Check is one contract key against what was measured.
type Check struct {
	Name     string `json:"name"`
	Required any    `json:"required"`
	// Measured is nil when the machine did not say (the check fails).
	Measured any    `json:"measured"`
	Pass     bool   `json:"pass"`
	Note     string `json:"note,omitempty"`
}

// DecodeContract decodes a host: block strictly: an unknown key or a bad
// value is an error naming path, line and key.
func DecodeContract(n *yaml.Node, path string) (Contract, error) {
	var c Contract
	if n.Kind != yaml.MappingNode {
		return c, fmt.Errorf("%s:%d: host: must be a mapping (form: bare-metal, min_cpu_cores: 64, …)", path, n.Line)
	}
	if err := yamlmsg.DecodeStrict(n, &c); err != nil {
		return c, yamlmsg.FileError(path, err)
	}
	line := func(key string) int {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
		return n.Line
	}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: host.%s: %s", path, line(key), key, fmt.Sprintf(format, a...)))
	}
	switch c.Form {
	case "", FormBareMetal, FormVM, FormContainer:
	default:
		bad("form", "%q: use bare-metal, vm or container", c.Form)
	}
	if c.MinCPUCores != nil && *c.MinCPUCores < 1 {
		bad("min_cpu_cores", "%d: physical cores, 1 or more", *c.MinCPUCores)
	}
	for key, v := range map[string]*float64{"min_memory_gib": c.MinMemoryGiB, "min_nvme_tb": c.MinNVMeTB, "nic_gbps": c.NICGbps} {
		if v != nil && (*v <= 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			bad(key, "%v: a number above 0", *v)
		}
	}
	return c, errors.Join(errs...)
}

// CheckHost checks the form and inventory against the contract, one Check
// per key given, in the contract's key order.
func CheckHost(c Contract, f Form, in Inventory) []Check {
	var out []Check
	if c.Form != "" {
		ch := Check{Name: "form", Required: c.Form, Measured: f.Kind, Pass: f.Kind == c.Form}
		if f.Kind == FormUnknown {
			ch.Measured, ch.Note = nil, "no marker either way"
		}
		switch {
		case f.Container != "" && f.Hypervisor != "":
			ch.Note = f.Container + " container in a " + f.Hypervisor + " VM"
		case f.Container != "":
			ch.Note = f.Container + " container"
		case f.Hypervisor != "":
			ch.Note = f.Hypervisor + " VM"
		}
		out = append(out, ch)
	}
	atLeast := func(name string, req float64, got *float64, unit string) {
		ch := Check{Name: name, Required: req, Pass: got != nil && *got >= req}
		if got != nil {
			ch.Measured = round2(*got)
		} else {
			ch.Note = "no " + unit + " found"
		}
		out = append(out, ch)
	}
	if c.MinCPUCores != nil {
		var got *float64
		if in.Cores != nil {
			v := float64(*in.Cores)
			got = &v
		}
		atLeast("min_cpu_cores", float64(*c.MinCPUCores), got, "CPU topology")
	}
	if c.MinMemoryGiB != nil {
		atLeast("min_memory_gib", *c.MinMemoryGiB, in.MemoryGiB, "MemTotal")
	}
	if c.MinNVMeTB != nil {
		atLeast("min_nvme_tb", *c.MinNVMeTB, in.NVMeTB(), "NVMe disk")
	}
	if c.NICGbps != nil {
		atLeast("nic_gbps", *c.NICGbps, in.MaxNICGbps(), "NIC with a link speed")
	}
	if c.RDMA != nil {
		has := len(in.RDMA) > 0
		out = append(out, Check{Name: "rdma", Required: *c.RDMA, Measured: has, Pass: has == *c.RDMA})
	}
	return out
}

// Verdict is pass when every check passes, fail when one fails, none
// without checks.
func Verdict(checks []Check) string {
	if len(checks) == 0 {
		return "none"
	}
	for _, c := range checks {
		if !c.Pass {
			return "fail"
		}
	}
	return "pass"
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

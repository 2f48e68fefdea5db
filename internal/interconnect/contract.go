package interconnect

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// Contract is an order's interconnect: block; an absent key is not checked.
type Contract struct {
	// NVLinkBusBWGbps is the all-reduce bus bandwidth (GB/s) at the
	// largest size all_reduce_perf ran.
	NVLinkBusBWGbps *float64 `yaml:"nvlink_busbw_gbps"`
	// IBGbps is the rate every active InfiniBand port must link at.
	IBGbps *float64 `yaml:"ib_gbps"`
	// IBPorts is how many active InfiniBand ports there must be.
	IBPorts *int `yaml:"ib_ports"`
}

// DecodeContract decodes an interconnect: block strictly, errors naming
// path, line and key.
func DecodeContract(n *yaml.Node, path string) (Contract, error) {
	var c Contract
	if n.Kind != yaml.MappingNode {
		return c, fmt.Errorf("%s:%d: interconnect: must be a mapping (nvlink_busbw_gbps: 350, ib_gbps: 400, ib_ports: 8)", path, n.Line)
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
	if c.NVLinkBusBWGbps != nil && *c.NVLinkBusBWGbps <= 0 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.nvlink_busbw_gbps: %v: GB/s above 0", path, line("nvlink_busbw_gbps"), *c.NVLinkBusBWGbps))
	}
	if c.IBGbps != nil && *c.IBGbps <= 0 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.ib_gbps: %v: Gb/s above 0", path, line("ib_gbps"), *c.IBGbps))
	}
	if c.IBPorts != nil && *c.IBPorts < 1 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.ib_ports: %d: 1 or more", path, line("ib_ports"), *c.IBPorts))
	}
	return c, errors.Join(errs...)
}

// CheckAll checks the interconnect: block and the form-factor cross-check
// on what was measured: ar is all_reduce_perf's run, ports ibstat's
// listing (nil: that tool did not run here), form the form factor the
// cards claim ("" unknown). A key of the block that nothing measured
// fails: the order asked for it and nothing shows it was delivered. The
// trial and compare both judge with it.
func CheckAll(ct Contract, ar *AllReduce, ports []IBPort, form string) []Check {
	var out []Check
	if ct.NVLinkBusBWGbps != nil {
		c := Check{Name: "nvlink_busbw_gbps", Required: *ct.NVLinkBusBWGbps}
		if ar == nil {
			c.Note = "not measured (no all_reduce_perf output)"
		} else if bus := ar.BusBWAtLargest(); bus != nil {
			c.Measured, c.Pass = *bus, *bus >= *ct.NVLinkBusBWGbps
		}
		out = append(out, c)
	}
	if ar != nil && strings.HasPrefix(strings.ToUpper(form), "SXM") {
		cc := CheckFormFactor(form, ar)
		out = append(out, Check{Name: "form_factor", Required: form + ": above PCIe class", Measured: deref(cc.BusBWGBps), Pass: cc.Pass, Note: cc.Note})
	}
	if ports == nil {
		for _, k := range []struct {
			name string
			req  any
		}{{"ib_ports", ct.IBPorts}, {"ib_gbps", ct.IBGbps}} {
			switch v := k.req.(type) {
			case *int:
				if v != nil {
					out = append(out, Check{Name: k.name, Required: *v, Note: "not measured (no ibstat output)"})
				}
			case *float64:
				if v != nil {
					out = append(out, Check{Name: k.name, Required: *v, Note: "not measured (no ibstat output)"})
				}
			}
		}
		return out
	}
	return append(out, CheckIB(ports, ct.IBPorts, ct.IBGbps)...)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

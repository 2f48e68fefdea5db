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
	// NVLinkPairGbps is the least GB/s every GPU pair must copy at in
	// nvbandwidth's one-way device-to-device testcases (the slowest pair).
	NVLinkPairGbps *float64 `yaml:"nvlink_pair_gbps"`
	// IBWriteGbps is the least ib_write_bw average (Gb/s) at the largest
	// message size it ran.
	IBWriteGbps *float64 `yaml:"ib_write_gbps"`
}

// Measured is what the interconnect tools printed, each nil when that
// tool did not run.
type Measured struct {
	AllReduce   *AllReduce
	IBPorts     []IBPort
	NVBandwidth *NVBandwidth
	IBWriteBW   *IBWriteBW
}

// Ran says whether any tool's output is there.
func (m Measured) Ran() bool {
	return m.AllReduce != nil || m.IBPorts != nil || m.NVBandwidth != nil || m.IBWriteBW != nil
}

// DecodeContract decodes an interconnect: block strictly, errors naming
// path, line and key.
func DecodeContract(n *yaml.Node, path string) (Contract, error) {
	var c Contract
	if n.Kind != yaml.MappingNode {
		return c, fmt.Errorf("%s:%d: interconnect: must be a mapping (nvlink_busbw_gbps: 350, nvlink_pair_gbps: 300, ib_gbps: 400, ib_ports: 8, ib_write_gbps: 360)", path, n.Line)
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
	if c.NVLinkPairGbps != nil && *c.NVLinkPairGbps <= 0 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.nvlink_pair_gbps: %v: GB/s above 0", path, line("nvlink_pair_gbps"), *c.NVLinkPairGbps))
	}
	if c.IBWriteGbps != nil && *c.IBWriteGbps <= 0 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.ib_write_gbps: %v: Gb/s above 0", path, line("ib_write_gbps"), *c.IBWriteGbps))
	}
	if c.IBPorts != nil && *c.IBPorts < 1 {
		errs = append(errs, fmt.Errorf("%s:%d: interconnect.ib_ports: %d: 1 or more", path, line("ib_ports"), *c.IBPorts))
	}
	return c, errors.Join(errs...)
}

// CheckAll checks the interconnect: block and the form-factor cross-check
// on what was measured (a tool that did not run here is nil in m), form
// the form factor the cards claim ("" unknown). A key of the block that
// nothing measured fails: the order asked for it and nothing shows it was
// delivered. The trial and compare both judge with it.
func CheckAll(ct Contract, m Measured, form string) []Check {
	ar, ports := m.AllReduce, m.IBPorts
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
	if m.NVBandwidth != nil && strings.HasPrefix(strings.ToUpper(form), "SXM") {
		// The NVLink domain complete: on an SXM part every pair copies
		// above what PCIe carries; one at or below it went over PCIe.
		if p, ok := m.NVBandwidth.SlowestPeerPair(); ok {
			c := Check{Name: "nvlink_all_pairs", Required: form + ": every pair above PCIe class", Measured: p.GBps, Pass: p.GBps > PCIeClassCeilingGBps}
			if c.Pass {
				c.Note = fmt.Sprintf("slowest pair %.2f GB/s: NVLink", p.GBps)
			} else {
				c.Note = fmt.Sprintf("GPU %d → GPU %d copies at %.2f GB/s in %s, PCIe-class (at most %.1f GB/s over PCIe 5.0 x16): that pair is not on NVLink", p.Row, p.Col, p.GBps, p.Test, PCIeClassCeilingGBps)
			}
			out = append(out, c)
		}
	}
	if ct.NVLinkPairGbps != nil {
		c := Check{Name: "nvlink_pair_gbps", Required: *ct.NVLinkPairGbps}
		if m.NVBandwidth == nil {
			c.Note = "not measured (no nvbandwidth output)"
		} else if p, ok := m.NVBandwidth.SlowestPeerPair(); ok {
			c.Measured, c.Pass = p.GBps, p.GBps >= *ct.NVLinkPairGbps
			c.Note = fmt.Sprintf("slowest pair GPU %d → GPU %d in %s", p.Row, p.Col, p.Test)
		} else {
			c.Note = "nvbandwidth ran no GPU-to-GPU testcase (device_to_device_memcpy_read_ce and the like)"
		}
		out = append(out, c)
	}
	if ct.IBWriteGbps != nil {
		c := Check{Name: "ib_write_gbps", Required: *ct.IBWriteGbps}
		if m.IBWriteBW == nil {
			c.Note = "not measured (no ib_write_bw output)"
		} else if r, ok := m.IBWriteBW.Largest(); ok {
			c.Measured, c.Pass = r.AvgGbps, r.AvgGbps >= *ct.IBWriteGbps
			c.Note = fmt.Sprintf("average at %d-byte messages", r.Bytes)
		}
		out = append(out, c)
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

package interconnect

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/yamlmsg"
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

package trial

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/host"
	"github.com/linecheck/linecheck/internal/interconnect"
	"github.com/linecheck/linecheck/yamlmsg"
)

// Contract is what the order says, from trial --contract: a host: block
// and a gpu: block (the candidates file's keys), either optional.
type Contract struct {
	Host         *host.Contract
	GPU          *gpu.Contract
	Interconnect *interconnect.Contract
}

// ParseContract reads a contract file; an unknown top-level key, a typo
// in a block or a bad value is an error naming file, line and key.
func ParseContract(b []byte, path string) (Contract, error) {
	var c Contract
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		return c, yamlmsg.FileError(path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return c, fmt.Errorf("%s: a contract file is a mapping with host: and/or gpu: blocks (host: {form: bare-metal, …}, gpu: {count: 8, …})", path)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "host":
			h, err := host.DecodeContract(v, path)
			if err != nil {
				return c, err
			}
			c.Host = &h
		case "gpu":
			g, err := gpu.DecodeContract(v, path)
			if err != nil {
				return c, err
			}
			c.GPU = &g
		case "interconnect":
			ic, err := interconnect.DecodeContract(v, path)
			if err != nil {
				return c, err
			}
			c.Interconnect = &ic
		default:
			return c, fmt.Errorf("%s:%d: %q: not a contract key (use host:, gpu: and interconnect:)", path, k.Line, k.Value)
		}
	}
	if c.Host == nil && c.GPU == nil && c.Interconnect == nil {
		return c, fmt.Errorf("%s:%d: none of host:, gpu:, interconnect: (host: {form: bare-metal, min_cpu_cores: 64}, gpu: {count: 8, model: H100 SXM5})", path, top.Line)
	}
	return c, nil
}

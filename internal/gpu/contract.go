package gpu

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// Contract is the `gpu:` block of a candidate (or of `gpu --contract FILE`):
// what was ordered. A nil field or empty string is not required.
type Contract struct {
	Count        *int     `yaml:"count" json:"count,omitempty"`
	Model        string   `yaml:"model" json:"model,omitempty"`
	MemoryGiB    *float64 `yaml:"memory_gib" json:"memory_gib,omitempty"`
	Interconnect string   `yaml:"interconnect" json:"interconnect,omitempty"`
	PowerLimitW  *float64 `yaml:"power_limit_w" json:"power_limit_w,omitempty"`
	PCIeGen      *int     `yaml:"pcie_gen" json:"pcie_gen,omitempty"`
	ECC          *bool    `yaml:"ecc" json:"ecc,omitempty"`
	MIG          *bool    `yaml:"mig" json:"mig,omitempty"`
	// MaxTempC and MaxThrottleShare are checked on a watch (gpu --report):
	// the highest temperature any card reached, and the share of samples
	// any card was throttled.
	MaxTempC         *float64 `yaml:"max_temp_c" json:"max_temp_c,omitempty"`
	MaxThrottleShare *float64 `yaml:"max_throttle_share" json:"max_throttle_share,omitempty"`
}

// Empty reports a contract that requires nothing.
func (c Contract) Empty() bool { return c == Contract{} }

// DecodeContract decodes and validates a `gpu:` mapping node; errors carry
// path and line.
func DecodeContract(n *yaml.Node, path string) (Contract, error) {
	var c Contract
	if n.Kind != yaml.MappingNode {
		return c, fmt.Errorf("%s:%d: gpu: must be a mapping (count: 8, model: H100 SXM5, …)", path, n.Line)
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
		errs = append(errs, fmt.Errorf("%s:%d: gpu.%s: %s", path, line(key), key, fmt.Sprintf(format, a...)))
	}
	if c.Count != nil && *c.Count < 1 {
		bad("count", "%d: the number of cards ordered, 1 or more", *c.Count)
	}
	if c.Model != "" {
		if _, err := ParseModel(c.Model); err != nil {
			bad("model", "%v", err)
		}
	}
	if c.MemoryGiB != nil && *c.MemoryGiB <= 0 {
		bad("memory_gib", "%v: memory per card in GiB, above 0", *c.MemoryGiB)
	}
	if c.Interconnect != "" {
		if _, ok := interconnectRank[c.Interconnect]; !ok {
			bad("interconnect", "%q: use nvlink-all-pairs, nvlink-pairs or pcie", c.Interconnect)
		}
	}
	if c.PowerLimitW != nil && *c.PowerLimitW <= 0 {
		bad("power_limit_w", "%v: the power cap per card in W, above 0", *c.PowerLimitW)
	}
	if c.PCIeGen != nil && (*c.PCIeGen < 1 || *c.PCIeGen > 7) {
		bad("pcie_gen", "%d: a PCIe generation, 1 to 7", *c.PCIeGen)
	}
	if c.MaxTempC != nil && (*c.MaxTempC <= 0 || *c.MaxTempC > 150) {
		bad("max_temp_c", "%v: a temperature in °C, above 0 and at most 150", *c.MaxTempC)
	}
	if c.MaxThrottleShare != nil && (*c.MaxThrottleShare < 0 || *c.MaxThrottleShare > 1) {
		bad("max_throttle_share", "%v: a share of time, 0 to 1 (0.05 = 5 %%)", *c.MaxThrottleShare)
	}
	return c, errors.Join(errs...)
}

// ParseContractFile reads a file whose top level holds a `gpu:` block.
func ParseContractFile(b []byte, path string) (Contract, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return Contract{}, yamlmsg.FileError(path, err)
	}
	if err := yamlmsg.OneDocument(dec, path, "a contract file"); err != nil {
		return Contract{}, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Contract{}, fmt.Errorf("%s: a contract file is a mapping with a gpu: block (gpu: {count: 8, model: H100 SXM5, …})", path)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value == "gpu" {
			return DecodeContract(top.Content[i+1], path)
		}
	}
	return Contract{}, fmt.Errorf("%s:%d: no gpu: block (gpu: {count: 8, model: H100 SXM5, interconnect: nvlink-all-pairs, …})", path, top.Line)
}

// Model is a model as a buyer writes it (package doc).
type Model struct {
	Family []string // H100; RTX 4090
	Form   string   // SXM, SXM4, SXM5, PCIe, NVL or ""
	GB     int      // 0: not named
}

var gbToken = regexp.MustCompile(`^(\d+)(GB|G|GIB)$`)

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToUpper(s), func(r rune) bool { return r == ' ' || r == '-' || r == '_' || r == '/' || r == ',' })
}

// ParseModel reads "H100 SXM5", "H100 PCIe 80GB", "H200", "RTX 4090".
func ParseModel(s string) (Model, error) {
	var m Model
	for _, t := range tokens(s) {
		switch {
		case t == "NVIDIA":
		case t == "SXM" || t == "SXM4" || t == "SXM5":
			m.Form = t
		case t == "PCIE":
			m.Form = FormPCIe
		case t == "NVL":
			m.Form = FormNVL
		case gbToken.MatchString(t):
			fmt.Sscanf(gbToken.FindStringSubmatch(t)[1], "%d", &m.GB)
		default:
			m.Family = append(m.Family, t)
		}
	}
	if len(m.Family) == 0 {
		return m, fmt.Errorf("%q names no GPU family: write it as buyers do, e.g. H100 SXM5, H100 PCIe, H200, A100 80GB", s)
	}
	return m, nil
}

func (m Model) String() string {
	s := strings.Join(m.Family, " ")
	if m.Form != "" {
		s += " " + m.Form
	}
	if m.GB > 0 {
		s += fmt.Sprintf(" %dGB", m.GB)
	}
	return s
}

// MemoryTolerance is how far below the size sold a card's reported memory
// may be and still be that size: the driver reports what is left after its
// own reservation (81559 MiB = 79.6 GiB on an "80 GB" H100, 95830 MiB =
// 93.6 GiB on a "94 GB" H100 NVL).
const MemoryTolerance = 0.03

// MatchModel reports whether card c is model m, and why not.
func MatchModel(m Model, c Card) (bool, string) {
	name := tokens(c.Name)
	if len(name) == 0 {
		return false, "no product name reported"
	}
	found := false
	for i := 0; i+len(m.Family) <= len(name) && !found; i++ {
		ok := true
		for j, f := range m.Family {
			if name[i+j] != f {
				ok = false
				break
			}
		}
		found = ok
	}
	if !found {
		return false, fmt.Sprintf("%q is not a %s", c.Name, strings.Join(m.Family, " "))
	}
	if m.Form != "" {
		ff := c.FormFactor
		switch {
		case m.Form == FormSXM && strings.HasPrefix(ff, "SXM"):
		case m.Form == ff:
		case strings.HasPrefix(m.Form, "SXM") && ff == FormSXM:
			// "SXM" evidence only (topology, power): the generation is the family's
		default:
			return false, fmt.Sprintf("%q is %s, not %s", c.Name, ff, m.Form)
		}
	}
	if m.GB > 0 {
		gb := 0
		for _, t := range name {
			if g := gbToken.FindStringSubmatch(t); g != nil {
				fmt.Sscanf(g[1], "%d", &gb)
			}
		}
		switch {
		case gb > 0 && gb != m.GB:
			return false, fmt.Sprintf("%q is the %d GB board, not %d GB", c.Name, gb, m.GB)
		case gb == 0 && c.MemoryMiB == nil:
			return false, fmt.Sprintf("%q: no memory size reported to tell %d GB", c.Name, m.GB)
		case gb == 0 && math.Abs(*c.MemoryMiB/1024-float64(m.GB)) > float64(m.GB)*MemoryTolerance:
			return false, fmt.Sprintf("%q has %.1f GiB, not %d GB", c.Name, *c.MemoryMiB/1024, m.GB)
		}
	}
	return true, ""
}

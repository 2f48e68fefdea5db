package gpu

import (
	"fmt"
	"sort"
	"strings"
)

// Schema names the document of `linecheck gpu`.
const Schema = "linecheck.gpu/v1"

// Form factors DeriveFormFactor gives.
const (
	FormSXM5    = "SXM5"
	FormSXM4    = "SXM4"
	FormSXM     = "SXM"
	FormPCIe    = "PCIe"
	FormNVL     = "NVL"
	FormUnknown = "unknown"
)

// Card is one GPU as the driver reports it. Pointers are nil where no input
// gave the figure: absent is not zero.
type Card struct {
	Index  int    `json:"index"`
	Name   string `json:"name,omitempty"`
	BusID  string `json:"bus_id,omitempty"`
	UUID   string `json:"uuid,omitempty"`
	Serial string `json:"serial,omitempty"`
	// DeviceID is the PCI device id as the driver writes it (0x233010DE).
	DeviceID string `json:"pci_device_id,omitempty"`
	// MemoryMiB is the total framebuffer memory.
	MemoryMiB *float64 `json:"memory_mib"`
	// PowerLimitW is the limit in force (enforced); Default and Max the
	// board's default and the highest that may be set.
	PowerLimitW        *float64 `json:"power_limit_w"`
	DefaultPowerLimitW *float64 `json:"default_power_limit_w"`
	MaxPowerLimitW     *float64 `json:"max_power_limit_w"`
	PCIeGenCurrent     *int     `json:"pcie_gen_current"`
	PCIeGenMax         *int     `json:"pcie_gen_max"`
	PCIeWidthCurrent   *int     `json:"pcie_width_current"`
	PCIeWidthMax       *int     `json:"pcie_width_max"`
	// ECC and MIG are the current modes: "Enabled", "Disabled", or "N/A"
	// (the card has no such mode); empty when no input said.
	ECC string `json:"ecc,omitempty"`
	MIG string `json:"mig,omitempty"`
	// MIGDevices counts the MIG instances listed (XML and -q text only).
	MIGDevices *int `json:"mig_devices"`
	// FormFactor and its Evidence are derived (DeriveFormFactor).
	FormFactor string   `json:"form_factor"`
	Evidence   []string `json:"form_factor_evidence"`
	// Sources names the inputs that said something about this card.
	Sources []string `json:"sources"`
}

// Machine is what the inputs say about one server.
type Machine struct {
	Driver string `json:"driver_version,omitempty"`
	CUDA   string `json:"cuda_version,omitempty"`
	Cards  []Card `json:"cards"`
	// Topology is nil without a topo matrix.
	Topology *Topology `json:"topology"`
	// Inputs are the files read (or commands run), in order.
	Inputs []string `json:"inputs"`
}

// Topology is the `nvidia-smi topo -m` matrix.
type Topology struct {
	// GPUs are the matrix's GPU names (GPU0 …), NICs its NIC names as the
	// NIC legend resolves them (mlx5_0), or as written.
	GPUs []string `json:"gpus"`
	NICs []string `json:"nics"`
	// Links[i][j] is the path between GPU i and GPU j: X, NV#, PIX, PXB,
	// PHB, NODE or SYS. NICLinks[i][k] between GPU i and NIC k.
	Links    [][]string `json:"links"`
	NICLinks [][]string `json:"nic_links"`
	// CPUAffinity and NUMAAffinity per GPU, as written ("" when absent).
	CPUAffinity  []string `json:"cpu_affinity"`
	NUMAAffinity []string `json:"numa_affinity"`
}

// NVLinks returns the NVLink count of a cell ("NV18" → 18), 0 for a PCIe path.
func NVLinks(cell string) int {
	if !strings.HasPrefix(cell, "NV") {
		return 0
	}
	n := 0
	for _, r := range cell[2:] {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// pathRank orders PCIe path kinds from nearest to farthest (topo -m legend).
var pathRank = map[string]int{"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}

// Interconnect kinds a contract names, weakest first.
const (
	InterconnectPCIe           = "pcie"
	InterconnectNVLinkPairs    = "nvlink-pairs"
	InterconnectNVLinkAllPairs = "nvlink-all-pairs"
)

var interconnectRank = map[string]int{InterconnectPCIe: 0, InterconnectNVLinkPairs: 1, InterconnectNVLinkAllPairs: 2}

// Interconnect classifies the card-to-card matrix: nvlink-all-pairs when
// every pair of cards has NVLink, nvlink-pairs when every card has NVLink to
// at least one other, else pcie. Detail says what was seen (the NVLink
// counts, or the farthest PCIe path).
func (t *Topology) Interconnect() (kind, detail string) {
	n := len(t.GPUs)
	if n < 2 {
		return InterconnectPCIe, "one card: no card-to-card path"
	}
	all, each := true, true
	counts := map[int]int{}
	worst := ""
	for i := 0; i < n; i++ {
		peers := 0
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			c := t.Links[i][j]
			if k := NVLinks(c); k > 0 {
				peers++
				if i < j {
					counts[k]++
				}
			} else {
				all = false
				if pathRank[c] > pathRank[worst] {
					worst = c
				}
			}
		}
		if peers == 0 {
			each = false
		}
	}
	var parts []string
	var ks []int
	for k := range counts {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d pairs NV%d", counts[k], k))
	}
	switch {
	case all:
		return InterconnectNVLinkAllPairs, strings.Join(parts, ", ")
	case each:
		return InterconnectNVLinkPairs, strings.Join(parts, ", ") + "; others over PCIe, farthest " + worst
	default:
		d := "no NVLink; farthest PCIe path " + worst
		if len(parts) > 0 {
			d = strings.Join(parts, ", ") + "; a card without NVLink; farthest PCIe path " + worst
		}
		return InterconnectPCIe, d
	}
}

// NICAffinity returns, per GPU, the NICs nearest to it and the path kind
// (PIX nearest … SYS farthest); nil without NICs.
func (t *Topology) NICAffinity() []NICPath {
	if len(t.NICs) == 0 {
		return nil
	}
	out := make([]NICPath, len(t.GPUs))
	for i := range t.GPUs {
		best := 99
		for k, c := range t.NICLinks[i] {
			r, ok := pathRank[c]
			if !ok {
				continue
			}
			if r < best {
				best = r
				out[i] = NICPath{GPU: t.GPUs[i], Path: c, NICs: []string{t.NICs[k]}}
			} else if r == best {
				out[i].NICs = append(out[i].NICs, t.NICs[k])
			}
		}
		if best == 99 {
			out[i] = NICPath{GPU: t.GPUs[i]}
		}
	}
	return out
}

// NICPath is a GPU's nearest NICs.
type NICPath struct {
	GPU  string   `json:"gpu"`
	Path string   `json:"path,omitempty"`
	NICs []string `json:"nics"`
}

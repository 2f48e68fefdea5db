package gpu

import (
	"fmt"
	"github.com/linecheck/linecheck/internal/readlimit"
	"os"
	"path/filepath"
	"strings"
)

// Input file names `--from DIR` looks for.
const (
	FileXML   = "nvidia-smi-q.xml"
	FileQText = "nvidia-smi-q.txt"
	FileCSV   = "query.csv"
	FileTopo  = "topo.txt"
)

// Files names the inputs to read; empty fields are not read.
type Files struct {
	XML, QText, CSV, Topo string
}

// FromDir returns the inputs of DIR that exist; an error when none does.
func FromDir(dir string) (Files, error) {
	var f Files
	st, err := os.Stat(dir)
	if err != nil {
		return f, fmt.Errorf("--from %s: %w", dir, err)
	}
	if !st.IsDir() {
		return f, fmt.Errorf("--from %s: not a directory (give the files on --xml, --text, --query or --topo)", dir)
	}
	pick := func(name string) string {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	f = Files{XML: pick(FileXML), QText: pick(FileQText), CSV: pick(FileCSV), Topo: pick(FileTopo)}
	if f == (Files{}) {
		return f, fmt.Errorf("--from %s: none of %s, %s, %s, %s is there", dir, FileXML, FileQText, FileCSV, FileTopo)
	}
	return f, nil
}

// Read parses the files given and merges them (Merge).
func Read(f Files) (*Machine, error) {
	var parts []*Machine
	var inputs []string
	read := func(path string, parse func([]byte, string) (*Machine, error)) error {
		if path == "" {
			return nil
		}
		b, err := readlimit.ReadFile(path, readlimit.ToolOutput)
		if err != nil {
			return err
		}
		m, err := parse(b, path)
		if err != nil {
			return err
		}
		parts = append(parts, m)
		inputs = append(inputs, path)
		return nil
	}
	if err := read(f.XML, ParseXML); err != nil {
		return nil, err
	}
	if err := read(f.QText, ParseQText); err != nil {
		return nil, err
	}
	if err := read(f.CSV, ParseQueryCSV); err != nil {
		return nil, err
	}
	var topo *Topology
	if f.Topo != "" {
		b, err := readlimit.ReadFile(f.Topo, readlimit.ToolOutput)
		if err != nil {
			return nil, err
		}
		if topo, err = ParseTopo(b, f.Topo); err != nil {
			return nil, err
		}
		inputs = append(inputs, f.Topo)
	}
	m, err := Merge(topo, parts...)
	if err != nil {
		return nil, err
	}
	m.Inputs = inputs
	return m, nil
}

// Merge joins what several inputs say about one machine. Cards are matched
// by PCI bus id where both have one, else by index; a figure one input
// gives and another lacks is taken; two inputs that disagree on a card's
// product name or UUID are an error (files of two machines). A topology
// without any other input gives the cards by its GPU rows.
func Merge(topo *Topology, parts ...*Machine) (*Machine, error) {
	out := &Machine{Topology: topo}
	for _, p := range parts {
		if out.Driver == "" {
			out.Driver = p.Driver
		}
		if out.CUDA == "" {
			out.CUDA = p.CUDA
		}
		for _, c := range p.Cards {
			k := -1
			for i, o := range out.Cards {
				if c.BusID != "" && o.BusID != "" {
					if c.BusID == o.BusID {
						k = i
					}
				} else if c.Index == o.Index {
					k = i
				}
				if k >= 0 {
					break
				}
			}
			if k < 0 {
				out.Cards = append(out.Cards, c)
				continue
			}
			if err := fill(&out.Cards[k], c); err != nil {
				return nil, err
			}
		}
	}
	if topo != nil {
		if len(out.Cards) == 0 {
			for i := range topo.GPUs {
				out.Cards = append(out.Cards, Card{Index: i, Sources: []string{"topo"}})
			}
		} else if len(topo.GPUs) != len(out.Cards) {
			return nil, fmt.Errorf("the topo matrix shows %d GPUs, the other inputs %d cards: are they from the same machine?", len(topo.GPUs), len(out.Cards))
		}
	}
	DeriveFormFactor(out)
	return out, nil
}

func fill(dst *Card, c Card) error {
	same := func(field, a, b string) error {
		if a != "" && b != "" && !strings.EqualFold(a, b) {
			return fmt.Errorf("card %d: %s is %q in %s but %q in %s: the inputs are not from the same machine",
				dst.Index, field, a, strings.Join(dst.Sources, ", "), b, strings.Join(c.Sources, ", "))
		}
		return nil
	}
	if err := same("product name", dst.Name, c.Name); err != nil {
		return err
	}
	if err := same("UUID", dst.UUID, c.UUID); err != nil {
		return err
	}
	fillUnset(&dst.Name, c.Name)
	fillUnset(&dst.BusID, c.BusID)
	fillUnset(&dst.UUID, c.UUID)
	fillUnset(&dst.Serial, c.Serial)
	fillUnset(&dst.DeviceID, c.DeviceID)
	fillUnset(&dst.ECC, c.ECC)
	fillUnset(&dst.MIG, c.MIG)
	fillUnset(&dst.MemoryMiB, c.MemoryMiB)
	fillUnset(&dst.PowerLimitW, c.PowerLimitW)
	fillUnset(&dst.DefaultPowerLimitW, c.DefaultPowerLimitW)
	fillUnset(&dst.MaxPowerLimitW, c.MaxPowerLimitW)
	fillUnset(&dst.PCIeGenCurrent, c.PCIeGenCurrent)
	fillUnset(&dst.PCIeGenMax, c.PCIeGenMax)
	fillUnset(&dst.PCIeWidthCurrent, c.PCIeWidthCurrent)
	fillUnset(&dst.PCIeWidthMax, c.PCIeWidthMax)
	fillUnset(&dst.MIGDevices, c.MIGDevices)
	dst.Sources = append(dst.Sources, c.Sources...)
	return nil
}

// fillUnset sets *d to v when *d is still unset (its zero value: "" or nil).
func fillUnset[T comparable](d *T, v T) {
	var zero T
	if *d == zero {
		*d = v
	}
}

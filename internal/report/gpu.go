package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/gpu"
)

// dash is the cell of a figure without data.
const dash = "-"

func fcell(p *float64, prec int) string {
	if p == nil {
		return dash
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func icell(p *int) string {
	if p == nil {
		return dash
	}
	return strconv.Itoa(*p)
}

func scell(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// anyCell writes a check's required or measured value.
func anyCell(v any) string {
	switch x := v.(type) {
	case nil:
		return dash
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// GPUTables renders the `linecheck gpu` document: the cards, the form
// factor evidence, the card-to-card matrix with NIC affinity, and the
// contract checks.
func GPUTables(d gpu.Doc) []Table {
	cards := Table{Name: "cards", Title: "GPU cards", Align: "rllrrrrrllll",
		Headers: []string{"#", "product", "form", "memory GiB", "power W", "default W", "max W", "PCIe gen", "width", "ECC", "MIG", "UUID"},
		Movable: []string{"UUID", "default W", "max W", "width"}}
	for _, c := range d.Cards {
		mem := dash
		if c.MemoryMiB != nil {
			mem = strconv.FormatFloat(*c.MemoryMiB/1024, 'f', 1, 64)
		}
		mig := scell(c.MIG)
		if c.MIGDevices != nil && c.MIG == "Enabled" {
			mig += fmt.Sprintf(" (%d)", *c.MIGDevices)
		}
		cards.Rows = append(cards.Rows, []string{strconv.Itoa(c.Index), scell(c.Name), c.FormFactor, mem,
			fcell(c.PowerLimitW, 0), fcell(c.DefaultPowerLimitW, 0), fcell(c.MaxPowerLimitW, 0),
			icell(c.PCIeGenCurrent) + "/" + icell(c.PCIeGenMax), icell(c.PCIeWidthCurrent) + "/" + icell(c.PCIeWidthMax),
			scell(c.ECC), mig, scell(c.UUID)})
	}
	var notes []string
	if d.Driver != "" || d.CUDA != "" {
		notes = append(notes, fmt.Sprintf("driver %s, CUDA %s", scell(d.Driver), scell(d.CUDA)))
	}
	notes = append(notes, "PCIe gen and width: current/max (the link trains down when idle); power W is the limit in force")
	notes = append(notes, "read from "+strings.Join(d.Inputs, ", "))
	cards.Notes = notes

	ev := Table{Name: "evidence", Title: "Form factor evidence", Headers: []string{"cards", "form", "evidence"}}
	// cards with the same evidence share a row
	type group struct {
		idx  []string
		form string
	}
	var order []string
	groups := map[string]*group{}
	for _, c := range d.Cards {
		k := c.FormFactor + "|" + strings.Join(c.Evidence, "; ")
		g, ok := groups[k]
		if !ok {
			g = &group{form: c.FormFactor}
			groups[k] = g
			order = append(order, k)
		}
		g.idx = append(g.idx, strconv.Itoa(c.Index))
	}
	for _, k := range order {
		e := strings.SplitN(k, "|", 2)[1]
		if e == "" {
			e = "nothing in the inputs tells (give nvidia-smi -q -x, -q, or the topo matrix)"
		}
		ev.Rows = append(ev.Rows, []string{strings.Join(groups[k].idx, ","), groups[k].form, e})
	}
	tables := []Table{cards, ev}

	if t := d.Topology; t != nil {
		h := append([]string{""}, t.GPUs...)
		h = append(h, "nearest NIC", "CPU affinity", "NUMA")
		mt := Table{Name: "topology", Title: "Card-to-card paths (nvidia-smi topo -m)", Headers: h}
		aff := d.NICAffinity
		for i, g := range t.GPUs {
			row := append([]string{g}, t.Links[i]...)
			nic := dash
			if aff != nil && aff[i].Path != "" {
				nic = aff[i].Path + " " + strings.Join(aff[i].NICs, ",")
			}
			row = append(row, nic, scell(t.CPUAffinity[i]), scell(t.NUMAAffinity[i]))
			mt.Rows = append(mt.Rows, row)
		}
		if d.Interconnect != nil {
			mt.Notes = append(mt.Notes, fmt.Sprintf("interconnect: %s (%s)", d.Interconnect.Kind, d.Interconnect.Detail))
		}
		mt.Notes = append(mt.Notes, "NV# = # bonded NVLinks; PCIe paths from nearest: PIX, PXB, PHB, NODE, SYS (crosses the CPU sockets' interconnect)")
		tables = append(tables, mt)
	}
	if len(d.Checks) > 0 {
		tables = append(tables, CheckTable("checks", "Delivery against the contract: "+strings.ToUpper(d.Verdict), d.Checks))
	}
	return tables
}

// CheckTable renders gpu checks (delivery or watch).
func CheckTable(name, title string, checks []gpu.Check) Table {
	t := Table{Name: name, Title: title, Headers: []string{"check", "required", "measured", "pass", "note"}}
	for _, c := range checks {
		p := "FAIL"
		if c.Pass {
			p = "pass"
		}
		t.Rows = append(t.Rows, []string{c.Name, anyCell(c.Required), anyCell(c.Measured), p, c.Note})
	}
	return t
}

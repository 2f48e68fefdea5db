package gpu

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

var (
	headerSplit = regexp.MustCompile(`\t+| {2,}`)
	nicLegend   = regexp.MustCompile(`^\s*(NIC\d+)\s*:\s*(\S+)\s*$`)
	gpuName     = regexp.MustCompile(`^GPU\d+$`)
)

// validCell reports a topo -m cell: X (self), NV# or a PCIe path kind (SOC
// is what drivers before 384 called SYS).
func validCell(c string) bool {
	if c == "X" || NVLinks(c) > 0 {
		return true
	}
	_, ok := pathRank[c]
	return ok
}

// ParseTopo reads `nvidia-smi topo -m`: the header row of device names, a
// row per GPU (and per NIC), then the legend; the NIC legend resolves NIC0
// to its device name.
func ParseTopo(b []byte, name string) (*Topology, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	ln := 0
	p := &topoParser{name: name, t: &Topology{}, nicCol: map[string]int{}}
	legend := map[string]string{}
	inMatrix, done := false, false
	for sc.Scan() {
		ln++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		// Terminal colours, as some pastes keep them.
		raw = ansi.ReplaceAllString(raw, "")
		if m := nicLegend.FindStringSubmatch(raw); m != nil {
			legend[m[1]] = m[2]
			continue
		}
		if strings.TrimSpace(raw) == "" {
			if inMatrix {
				done = true
			}
			continue
		}
		if done || strings.HasPrefix(strings.TrimSpace(raw), "Legend") {
			done = done || inMatrix
			continue
		}
		if p.devs == nil {
			inMatrix = p.header(raw, ln)
			continue
		}
		if err := p.row(raw, ln); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, perr(name, ln, "%v", err)
	}
	if err := p.check(ln); err != nil {
		return nil, err
	}
	t := p.t
	for k, n := range t.NICs {
		if d, ok := legend[n]; ok {
			t.NICs[k] = d
		}
	}
	return t, nil
}

// topoParser is ParseTopo's state once the matrix header is read.
type topoParser struct {
	name       string
	t          *Topology
	devs       []string // matrix columns
	headerLine int
	nicCol     map[string]int
}

// header reads the matrix header's device names when raw is one (it
// starts with GPU0); lines before it (a prompt, a title) are passed over.
func (p *topoParser) header(raw string, ln int) bool {
	f := headerSplit.Split(strings.TrimSpace(raw), -1)
	if len(f) == 0 || !gpuName.MatchString(f[0]) {
		return false // a prompt or a title before the matrix
	}
	for _, h := range f {
		if h == "CPU Affinity" || h == "NUMA Affinity" || h == "GPU NUMA ID" {
			break
		}
		p.devs = append(p.devs, h)
	}
	p.headerLine = ln
	for i, d := range p.devs {
		if gpuName.MatchString(d) {
			p.t.GPUs = append(p.t.GPUs, d)
		} else {
			p.nicCol[d] = i
			p.t.NICs = append(p.t.NICs, d)
		}
	}
	return true
}

// row reads a matrix row: a GPU's paths to every device and its CPU and
// NUMA affinity (NIC rows are passed over).
func (p *topoParser) row(raw string, ln int) error {
	t, devs, name := p.t, p.devs, p.name
	f := strings.Fields(raw)
	row := f[0]
	if !gpuName.MatchString(row) {
		if _, isNIC := p.nicCol[row]; isNIC || strings.HasPrefix(row, "NIC") || strings.HasPrefix(row, "mlx") {
			return nil // NIC rows repeat the GPU rows' NIC columns
		}
		return perr(name, ln, "row %q is neither a GPU of the header (line %d) nor a NIC: not a topo -m matrix", row, p.headerLine)
	}
	cells := f[1:]
	if len(cells) < len(devs) {
		return perr(name, ln, "row %s has %d cells, the header (line %d) names %d devices: the matrix is cut short", row, len(cells), p.headerLine, len(devs))
	}
	var gl, nl []string
	for i, d := range devs {
		c := cells[i]
		if c == "SOC" {
			c = "SYS"
		}
		if !validCell(c) {
			return perr(name, ln, "row %s, column %s: %q is not a topo -m path (X, NV#, PIX, PXB, PHB, NODE, SYS)", row, d, cells[i])
		}
		if gpuName.MatchString(d) {
			gl = append(gl, c)
		} else {
			nl = append(nl, c)
		}
	}
	if len(t.Links) >= len(t.GPUs) {
		return perr(name, ln, "more GPU rows than the header's %d GPUs", len(t.GPUs))
	}
	if want := t.GPUs[len(t.Links)]; row != want {
		return perr(name, ln, "row %s where %s was expected: rows must follow the header's order", row, want)
	}
	if gl[len(t.Links)] != "X" {
		return perr(name, ln, "row %s has %q on its own column, not X", row, gl[len(t.Links)])
	}
	rest := cells[len(devs):]
	cpu, numa := "", ""
	if len(rest) > 0 {
		cpu = rest[0]
	}
	if len(rest) > 1 {
		numa = rest[1]
	}
	t.Links = append(t.Links, gl)
	t.NICLinks = append(t.NICLinks, nl)
	t.CPUAffinity = append(t.CPUAffinity, cpu)
	t.NUMAAffinity = append(t.NUMAAffinity, numa)
	return nil
}

// check refuses a matrix without a header, cut short (ln: the last line)
// or not symmetric.
func (p *topoParser) check(ln int) error {
	t, name := p.t, p.name
	if p.devs == nil {
		return perr(name, 0, "no matrix header (a line starting GPU0 GPU1 …): not the output of nvidia-smi topo -m")
	}
	if len(t.Links) != len(t.GPUs) {
		return perr(name, ln, "%d GPU rows for the header's %d GPUs (line %d): the matrix is cut short", len(t.Links), len(t.GPUs), p.headerLine)
	}
	for i := range t.GPUs {
		for j := range t.GPUs {
			if t.Links[i][j] != t.Links[j][i] {
				return perr(name, p.headerLine+1+i, "%s–%s is %s but %s–%s is %s: the matrix is not symmetric", t.GPUs[i], t.GPUs[j], t.Links[i][j], t.GPUs[j], t.GPUs[i], t.Links[j][i])
			}
		}
	}
	return nil
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

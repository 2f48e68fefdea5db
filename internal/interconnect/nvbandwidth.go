package interconnect

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// NVBandwidth is one run of NVIDIA's nvbandwidth: its devices and one
// matrix per testcase it ran.
type NVBandwidth struct {
	// Devices are the "Device N: NAME (bus)" lines' names, in order (older
	// versions print none).
	Devices []string `json:"devices,omitempty"`
	Tests   []NVTest `json:"tests"`
}

// NVTest is one testcase of nvbandwidth: a matrix of GB/s per pair
// (rows and columns as its title names them: "GPU(row) -> GPU(column)"),
// a cell nil where nvbandwidth printed N/A (a device to itself, or peers
// that cannot reach each other).
type NVTest struct {
	// Name is the testcase ("device_to_device_memcpy_read_ce"), from its
	// "Running NAME." line or its SUM line.
	Name string `json:"name"`
	// Title is the matrix's title line; Unit what its parentheses say
	// ("GB/s"; "ns" for the latency testcases).
	Title  string       `json:"title"`
	Unit   string       `json:"unit"`
	Cols   []int        `json:"cols"`
	Rows   []int        `json:"rows"`
	Matrix [][]*float64 `json:"matrix"`
	// Sum is the "SUM NAME value" line, nil without one.
	Sum *float64 `json:"sum"`
}

// PeerTest says whether t measures GPU-to-GPU copies one way: the
// device_to_device testcases but the bidirectional ones (whose figure is
// one direction while the other runs) and the latency ones.
func (t *NVTest) PeerTest() bool {
	return strings.HasPrefix(t.Name, "device_to_device_memcpy_") && !strings.Contains(t.Name, "bidirectional") &&
		!strings.Contains(t.Name, "latency") && t.Unit == "GB/s"
}

// Pair is one cell of a matrix.
type Pair struct {
	Test string  `json:"test"`
	Row  int     `json:"row"`
	Col  int     `json:"col"`
	GBps float64 `json:"gbps"`
}

// SlowestPeerPair is the slowest cell of the GPU-to-GPU testcases
// (PeerTest), and false when the run has none of them or only N/A.
func (n *NVBandwidth) SlowestPeerPair() (Pair, bool) {
	var best Pair
	found := false
	for _, t := range n.Tests {
		if !t.PeerTest() {
			continue
		}
		for i, row := range t.Matrix {
			for j, v := range row {
				if v != nil && (!found || *v < best.GBps) {
					best, found = Pair{Test: t.Name, Row: t.Rows[i], Col: t.Cols[j], GBps: *v}, true
				}
			}
		}
	}
	return best, found
}

// ParseNVBandwidth reads nvbandwidth's text output: per testcase a
// "Running NAME." line (older versions: "Running benchmark NAME."), a
// title ending in "(UNIT)", a header of column numbers, one row per
// source with a figure or N/A per column, and a "SUM NAME value" line.
// Lines it does not know (versions, notes, asserts) are skipped. name is
// used in errors ("file:line: …").
func ParseNVBandwidth(b []byte, name string) (*NVBandwidth, error) {
	out := &NVBandwidth{Tests: []NVTest{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	running := ""
	titleLine := map[int]int{} // test index → its title's line, for errors
	var cur *NVTest            // the matrix being read, until a blank or SUM line
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case line == "":
			cur = nil
		case strings.HasPrefix(line, "Device ") && strings.Contains(line, ": "):
			_, v, _ := strings.Cut(line, ": ")
			if i := strings.LastIndex(v, " ("); i > 0 {
				v = v[:i]
			}
			out.Devices = append(out.Devices, v)
		case f[0] == "Running":
			running = strings.TrimSuffix(f[len(f)-1], ".")
			cur = nil
		case f[0] == "SUM":
			if len(f) != 3 {
				return nil, fmt.Errorf("%s:%d: SUM: want \"SUM testcase value\", got %q", name, n, line)
			}
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: SUM %s: %q is not a number", name, n, f[1], f[2])
			}
			if len(out.Tests) == 0 {
				return nil, fmt.Errorf("%s:%d: SUM %s before any matrix", name, n, f[1])
			}
			t := &out.Tests[len(out.Tests)-1]
			if t.Name == "" {
				t.Name = f[1]
			} else if t.Name != f[1] {
				return nil, fmt.Errorf("%s:%d: SUM names %s, the matrix above is %s", name, n, f[1], t.Name)
			}
			t.Sum, cur = &v, nil
		// "GPU(row) -> GPU(column)"; early versions "GPU(columns) <- CPU(rows)".
		case strings.HasSuffix(line, ")") && strings.Contains(line, "(row") && strings.Contains(line, "(column"):
			unit := line[strings.LastIndex(line, "(")+1 : len(line)-1]
			titleLine[len(out.Tests)] = n
			out.Tests = append(out.Tests, NVTest{Name: running, Title: line, Unit: unit})
			running = ""
			cur = &out.Tests[len(out.Tests)-1]
		case cur != nil && cur.Cols == nil:
			for _, c := range f {
				v, err := strconv.Atoi(c)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: header of %q: column %q is not a device number", name, n, cur.Title, c)
				}
				cur.Cols = append(cur.Cols, v)
			}
		case cur != nil:
			r, err := strconv.Atoi(f[0])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: row of %q: %q is not a device number", name, n, cur.Title, f[0])
			}
			if len(f)-1 != len(cur.Cols) {
				return nil, fmt.Errorf("%s:%d: row %d of %q has %d figures, the header %d columns", name, n, r, cur.Title, len(f)-1, len(cur.Cols))
			}
			row := make([]*float64, len(cur.Cols))
			for j, s := range f[1:] {
				if s == "N/A" {
					continue
				}
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || v < 0 {
					return nil, fmt.Errorf("%s:%d: row %d column %d of %q: %q is not a figure (a number or N/A)", name, n, r, cur.Cols[j], cur.Title, s)
				}
				row[j] = &v
			}
			cur.Rows = append(cur.Rows, r)
			cur.Matrix = append(cur.Matrix, row)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out.Tests) == 0 {
		return nil, fmt.Errorf("%s: no bandwidth matrix: is this the output of nvbandwidth?", name)
	}
	for i, t := range out.Tests {
		if len(t.Rows) == 0 {
			return nil, fmt.Errorf("%s:%d: %q: a title with no rows under it", name, titleLine[i], t.Title)
		}
	}
	return out, nil
}

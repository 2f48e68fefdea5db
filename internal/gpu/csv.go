package gpu

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// queryColumn is a --query-gpu field name without its unit ("memory.total"
// of "memory.total [MiB]"); names nvidia-smi accepts as aliases are folded
// to one.
func queryColumn(h string) string {
	h = strings.TrimSpace(h)
	if i := strings.Index(h, " ["); i >= 0 {
		h = h[:i]
	}
	h = strings.ToLower(h)
	switch h {
	case "gpu_name":
		return "name"
	case "gpu_serial":
		return "serial"
	case "gpu_uuid":
		return "uuid"
	case "gpu_bus_id":
		return "pci.bus_id"
	case "enforced.power.limit", "power.limit":
		return h
	case "clocks.current.sm":
		return "clocks.sm"
	case "clocks.current.memory":
		return "clocks.mem"
	case "clocks_throttle_reasons.active", "clocks_event_reasons.active":
		return "clocks_event_reasons.active"
	}
	if strings.HasPrefix(h, "clocks_throttle_reasons.") {
		return "clocks_event_reasons." + strings.TrimPrefix(h, "clocks_throttle_reasons.")
	}
	return h
}

// csvTable is a parsed query CSV: the folded column names and the rows with
// the line each came from.
type csvTable struct {
	cols  []string
	index map[string]int
	rows  [][]string
	lines []int
}

func (t *csvTable) get(row []string, col string) (string, bool) {
	i, ok := t.index[col]
	if !ok {
		return "", false
	}
	return strings.TrimSpace(row[i]), true
}

// csvCells reads the cells of one row into typed fields, gathering every
// cell's error so that one message names all the bad columns.
type csvCells struct {
	t    *csvTable
	row  []string
	errs []string
}

// num reads column col, when the table has it, into dst (nil: no figure).
func (c *csvCells) num(dst **float64, col string) {
	if v, ok := c.t.get(c.row, col); ok {
		if err := setNum(dst, v); err != nil {
			c.errs = append(c.errs, fmt.Sprintf("column %s: %v", col, err))
		}
	}
}

// int reads column col, when the table has it, into dst (nil: no figure).
func (c *csvCells) int(dst **int, col string) {
	if v, ok := c.t.get(c.row, col); ok {
		if err := setInt(dst, v); err != nil {
			c.errs = append(c.errs, fmt.Sprintf("column %s: %v", col, err))
		}
	}
}

// powerLimit reads the power cap in force into dst: enforced.power.limit
// (what the power management holds the board under) when the row has it,
// else power.limit (the limit software set). Inventory and watch read it
// alike.
func (c *csvCells) powerLimit(dst **float64) {
	c.num(dst, "enforced.power.limit")
	if *dst == nil {
		c.num(dst, "power.limit")
	}
}

// readQueryCSV parses what `nvidia-smi --query-gpu=… --format=csv` prints,
// also several runs appended to one file (`-l 5`, or a loop that prints the
// header every time: repeated headers are skipped).
func readQueryCSV(b []byte, name string) (*csvTable, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	t := &csvTable{index: map[string]int{}}
	var header []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, perr(name, pe.Line, "not CSV: %v", pe.Err)
			}
			return nil, perr(name, 0, "%v", err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if header == nil {
			for _, h := range rec {
				if strings.ContainsAny(h, "0123456789") && !strings.Contains(h, ".") && !strings.Contains(h, "[") && queryColumn(h) != "index" {
					return nil, perr(name, line, "the first line must be the header nvidia-smi prints with --format=csv (got %q): run the query without noheader", strings.Join(rec, ", "))
				}
			}
			header = rec
			for i, h := range rec {
				c := queryColumn(h)
				if c == "" {
					return nil, perr(name, line, "column %d has no name", i+1)
				}
				if _, dup := t.index[c]; dup {
					return nil, perr(name, line, "column %q twice", c)
				}
				t.cols = append(t.cols, c)
				t.index[c] = i
			}
			continue
		}
		if sameHeader(rec, header) {
			continue
		}
		if len(rec) != len(header) {
			return nil, perr(name, line, "%d fields, the header has %d: the line is cut short or a value holds a comma", len(rec), len(header))
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	if header == nil {
		return nil, perr(name, 0, "empty: save the output of nvidia-smi --query-gpu=… --format=csv")
	}
	return t, nil
}

func sameHeader(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.TrimSpace(a[i]) != strings.TrimSpace(b[i]) {
			return false
		}
	}
	return true
}

// InventoryQuery is the --query-gpu list `linecheck gpu` runs for the
// inventory; any subset of it (with the header) is read as well.
const InventoryQuery = "index,name,pci.bus_id,pci.device_id,serial,uuid,memory.total,driver_version,power.limit,enforced.power.limit,power.default_limit,power.max_limit,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,ecc.mode.current,mig.mode.current"

// ParseQueryCSV reads the inventory from a query CSV: one row per card; the
// columns present are used, the others stay absent.
func ParseQueryCSV(b []byte, name string) (*Machine, error) {
	t, err := readQueryCSV(b, name)
	if err != nil {
		return nil, err
	}
	if len(t.rows) == 0 {
		return nil, perr(name, 1, "a header and no card: the output is cut short")
	}
	if _, ok := t.index["name"]; !ok {
		if _, ok := t.index["index"]; !ok {
			return nil, perr(name, 1, "neither an index nor a name column: nothing says which card a row is")
		}
	}
	m := &Machine{}
	src := "csv:" + name
	seen := map[int]int{}
	for k, row := range t.rows {
		ln := t.lines[k]
		c := Card{Index: k, Sources: []string{src}}
		cells := csvCells{t: t, row: row}
		num, intc := cells.num, cells.int
		var idx *int
		intc(&idx, "index")
		if idx != nil {
			c.Index = *idx
		}
		if v, ok := t.get(row, "name"); ok {
			c.Name = v
		}
		if v, ok := t.get(row, "pci.bus_id"); ok {
			c.BusID = normBusID(v)
		}
		if v, ok := t.get(row, "pci.device_id"); ok {
			c.DeviceID = clean(v)
		}
		if v, ok := t.get(row, "serial"); ok {
			c.Serial = clean(v)
		}
		if v, ok := t.get(row, "uuid"); ok {
			c.UUID = clean(v)
		}
		if v, ok := t.get(row, "driver_version"); ok && m.Driver == "" {
			m.Driver = clean(v)
		}
		num(&c.MemoryMiB, "memory.total")
		cells.powerLimit(&c.PowerLimitW)
		num(&c.DefaultPowerLimitW, "power.default_limit")
		num(&c.MaxPowerLimitW, "power.max_limit")
		intc(&c.PCIeGenCurrent, "pcie.link.gen.current")
		intc(&c.PCIeGenMax, "pcie.link.gen.max")
		intc(&c.PCIeWidthCurrent, "pcie.link.width.current")
		intc(&c.PCIeWidthMax, "pcie.link.width.max")
		if v, ok := t.get(row, "ecc.mode.current"); ok {
			c.ECC = mode(v)
		}
		if v, ok := t.get(row, "mig.mode.current"); ok {
			c.MIG = mode(v)
		}
		if len(cells.errs) > 0 {
			return nil, perr(name, ln, "%s", strings.Join(cells.errs, "\n"))
		}
		if prev, dup := seen[c.Index]; dup {
			return nil, perr(name, ln, "card index %d twice (first on line %d): keep one run of the query in the file", c.Index, prev)
		}
		seen[c.Index] = ln
		m.Cards = append(m.Cards, c)
	}
	return m, nil
}

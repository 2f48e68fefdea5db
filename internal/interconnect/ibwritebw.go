package interconnect

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// IBWriteBW is one run of perftest's ib_write_bw (or another perftest
// bandwidth test: ib_send_bw, ib_read_bw print the same table).
type IBWriteBW struct {
	// Test is the title line ("RDMA_Write BW Test"), "" when the output
	// was cut before it; LinkType the "Link type" field (IB, Ethernet).
	Test     string `json:"test,omitempty"`
	LinkType string `json:"link_type,omitempty"`
	// Unit is the table's as printed: "Gb/sec" (--report_gbits) or
	// "MB/sec" (perftest's MB is 2^20 bytes).
	Unit string    `json:"unit"`
	Rows []IBWRRow `json:"rows"`
}

// IBWRRow is one message size of the table. Bandwidths are converted to
// Gb/s (10^9 bit/s) whatever unit the table used.
type IBWRRow struct {
	Bytes      int64   `json:"bytes"`
	Iterations int64   `json:"iterations"`
	PeakGbps   float64 `json:"peak_gbps"`
	AvgGbps    float64 `json:"avg_gbps"`
	// MsgRateMpps is the MsgRate column, millions of messages a second.
	MsgRateMpps float64 `json:"msg_rate_mpps"`
}

// Largest is the row of the largest message, and false without rows.
func (w *IBWriteBW) Largest() (IBWRRow, bool) {
	if len(w.Rows) == 0 {
		return IBWRRow{}, false
	}
	best := w.Rows[0]
	for _, r := range w.Rows[1:] {
		if r.Bytes > best.Bytes {
			best = r
		}
	}
	return best, true
}

// mbSecToGbps converts perftest's MB/sec (2^20 bytes a second: its
// format factor is 0x100000 for MB/sec and 125000000 for Gb/sec) to Gb/s.
const mbSecToGbps = 1 << 20 * 8 / 1e9

// ParseIBWriteBW reads perftest's text output: the parameter block (the
// title, "Link type") and the table under the "#bytes #iterations BW
// peak[UNIT] BW average[UNIT] MsgRate[Mpps]" header. name is used in
// errors ("file:line: …").
func ParseIBWriteBW(b []byte, name string) (*IBWriteBW, error) {
	out := &IBWriteBW{Rows: []IBWRRow{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inTable := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "#bytes"):
			unit, err := headerUnit(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			if out.Unit != "" && out.Unit != unit {
				return nil, fmt.Errorf("%s:%d: a second table in %s, the first was in %s", name, n, unit, out.Unit)
			}
			out.Unit, inTable = unit, true
		case strings.HasPrefix(line, "---"):
			inTable = false
		case strings.HasSuffix(line, " Test") && !strings.Contains(line, ":"):
			out.Test = line
		case strings.HasPrefix(line, "Link type"):
			if _, v, ok := strings.Cut(line, ":"); ok {
				out.LinkType = strings.TrimSpace(v)
			}
		case inTable:
			r, err := ibwrRow(strings.Fields(line), out.Unit)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			out.Rows = append(out.Rows, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out.Rows) == 0 {
		return nil, fmt.Errorf("%s: no result rows under a \"#bytes #iterations BW peak…\" header: is this the output of ib_write_bw?", name)
	}
	return out, nil
}

// headerUnit is the bandwidth unit of the table's header line.
func headerUnit(line string) (string, error) {
	_, rest, ok := strings.Cut(line, "BW average[")
	if !ok {
		return "", fmt.Errorf("table header without a \"BW average[UNIT]\" column: %q", line)
	}
	unit, _, _ := strings.Cut(rest, "]")
	if unit != "Gb/sec" && unit != "MB/sec" {
		return "", fmt.Errorf("BW average in %q: want Gb/sec or MB/sec", unit)
	}
	return unit, nil
}

func ibwrRow(f []string, unit string) (IBWRRow, error) {
	names := []string{"#bytes", "#iterations", "BW peak", "BW average", "MsgRate"}
	if len(f) < len(names) {
		return IBWRRow{}, fmt.Errorf("a row of %d fields, want %d (%s): %q", len(f), len(names), strings.Join(names, ", "), strings.Join(f, " "))
	}
	var r IBWRRow
	ints := []*int64{&r.Bytes, &r.Iterations}
	for i, p := range ints {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 {
			return r, fmt.Errorf("%s: %q is not a count", names[i], f[i])
		}
		*p = v
	}
	floats := []*float64{&r.PeakGbps, &r.AvgGbps, &r.MsgRateMpps}
	for i, p := range floats {
		s := f[i+2]
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return r, fmt.Errorf("%s: %q is not a number", names[i+2], s)
		}
		*p = v
	}
	if unit == "MB/sec" {
		r.PeakGbps *= mbSecToGbps
		r.AvgGbps *= mbSecToGbps
	}
	return r, nil
}

// Package interconnect reads what the GPU and InfiniBand interconnect
// measured: the text outputs of nccl-tests' all_reduce_perf (bus bandwidth
// per size, nccl.go), NVIDIA's nvbandwidth (GB/s per device pair,
// nvbandwidth.go), ibstat (ports, ibstat.go) and perftest's ib_write_bw
// (bandwidth per message size, ibwritebw.go), one reader a file; checks
// them against an order's interconnect: block (contract.go), and
// cross-checks all_reduce_perf with the form factor the cards claim.
//
// Bus bandwidth is nccl-tests' busbw: for all-reduce, algbw × 2(n−1)/n
// with n ranks, comparable across rank counts. The figure judged is the
// one at the largest size run (the better of out-of-place and in-place):
// small sizes measure latency, not the links.
package interconnect

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// AllReduce is one all_reduce_perf run.
type AllReduce struct {
	// Ranks counts the "#  Rank N …" device lines (0 when the output has
	// none); Devices are their GPU names, in rank order.
	Ranks   int      `json:"ranks"`
	Devices []string `json:"devices,omitempty"`
	Rows    []Row    `json:"rows"`
	// AvgBusBW is the "# Avg bus bandwidth" line, nil without one.
	AvgBusBW *float64 `json:"avg_bus_bw_gbps"`
}

// Row is one size of the run; bus bandwidths in GB/s.
type Row struct {
	Bytes           int64   `json:"bytes"`
	OutOfPlaceBusBW float64 `json:"out_of_place_busbw_gbps"`
	InPlaceBusBW    float64 `json:"in_place_busbw_gbps"`
}

// Largest is the row of the largest size, and false without rows.
func (a *AllReduce) Largest() (Row, bool) {
	if len(a.Rows) == 0 {
		return Row{}, false
	}
	best := a.Rows[0]
	for _, r := range a.Rows[1:] {
		if r.Bytes > best.Bytes {
			best = r
		}
	}
	return best, true
}

// BusBWAtLargest is the better bus bandwidth at the largest size, nil
// without rows.
func (a *AllReduce) BusBWAtLargest() *float64 {
	r, ok := a.Largest()
	if !ok {
		return nil
	}
	v := max(r.OutOfPlaceBusBW, r.InPlaceBusBW)
	return &v
}

// ParseAllReduce reads all_reduce_perf's text output, in the layout of
// nccl-tests 2.x (size count type redop root, then time, algbw, busbw,
// #wrong out-of-place and in-place) or the older one without redop and
// root. name is used in errors ("file:line: …").
func ParseAllReduce(b []byte, name string) (*AllReduce, error) {
	out := &AllReduce{Rows: []Row{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			body := strings.TrimSpace(strings.TrimPrefix(line, "#"))
			if f := strings.Fields(body); len(f) > 0 && f[0] == "Rank" {
				// "Rank 0 Group 0 Pid 1 on host device 0 [bus] NVIDIA GB10"
				if i := strings.Index(body, "] "); i >= 0 {
					out.Devices = append(out.Devices, strings.TrimSpace(body[i+2:]))
				}
				out.Ranks++
			}
			if v, ok := strings.CutPrefix(body, "Avg bus bandwidth"); ok {
				v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					out.AvgBusBW = &f
				}
			}
			continue
		}
		f := strings.Fields(line)
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue // NCCL INFO lines, warnings: not rows
		}
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: a row of %d fields: %q", name, n, len(f), line)
		}
		// After size, count and type: redop (a word) in 2.x, then the
		// numbers; root is one more number before time in 2.x.
		i := 3
		for i < len(f) && !isNumber(f[i]) {
			i++
		}
		nums := f[i:]
		if len(nums) == 9 {
			nums = nums[1:] // root
		}
		if len(nums) != 8 {
			return nil, fmt.Errorf("%s:%d: a row of all_reduce_perf has 8 figures after the type (time, algbw, busbw, errors, out-of-place then in-place), this one %d: %q", name, n, len(nums), line)
		}
		oop, err1 := strconv.ParseFloat(nums[2], 64)
		ip, err2 := strconv.ParseFloat(nums[6], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: busbw %q / %q is not a number", name, n, nums[2], nums[6])
		}
		out.Rows = append(out.Rows, Row{Bytes: size, OutOfPlaceBusBW: oop, InPlaceBusBW: ip})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out.Rows) == 0 {
		return nil, fmt.Errorf("%s: no result rows: is this the output of all_reduce_perf?", name)
	}
	return out, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// PCIeClassCeilingGBps is the most a collective's bus bandwidth can reach
// over PCIe: one PCIe 5.0 x16 direction, 32 GT/s × 16 lanes × 128/130 / 8
// = 63.0 GB/s. An all-reduce above it went over NVLink; at or below it,
// over PCIe or a link no faster.
const PCIeClassCeilingGBps = 32 * 16 * 128.0 / 130 / 8

// CrossCheck is the form-factor cross-check: cards claiming SXM (NVLink
// through NVSwitch) whose all-reduce is PCIe-class fail.
type CrossCheck struct {
	FormFactor string   `json:"form_factor"`
	BusBWGBps  *float64 `json:"busbw_gbps"`
	Pass       bool     `json:"pass"`
	Note       string   `json:"note"`
}

// CheckFormFactor judges the claimed form factor ("SXM5", "PCIe", "NVL"
// …) against the bus bandwidth at the largest size: an SXM part must
// exceed PCIeClassCeilingGBps; other form factors are not judged (pass).
func CheckFormFactor(form string, a *AllReduce) CrossCheck {
	c := CrossCheck{FormFactor: form, BusBWGBps: a.BusBWAtLargest(), Pass: true}
	if !strings.HasPrefix(strings.ToUpper(form), "SXM") {
		c.Note = "only SXM parts are cross-checked"
		return c
	}
	switch {
	case c.BusBWGBps == nil:
		c.Pass, c.Note = false, "no result rows"
	case *c.BusBWGBps <= PCIeClassCeilingGBps:
		c.Pass = false
		c.Note = fmt.Sprintf("%s claims NVLink through NVSwitch, but the all-reduce bus bandwidth at the largest size is %.2f GB/s, PCIe-class (at most %.1f GB/s over PCIe 5.0 x16)", form, *c.BusBWGBps, PCIeClassCeilingGBps)
	default:
		c.Note = fmt.Sprintf("%.2f GB/s is above what PCIe carries: NVLink", *c.BusBWGBps)
	}
	return c
}

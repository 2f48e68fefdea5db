package interconnect

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// IBPort is one port of an ibstat listing.
type IBPort struct {
	CA        string `json:"ca"`
	Port      int    `json:"port"`
	State     string `json:"state"`
	PhysState string `json:"physical_state"`
	// RateGbps is the "Rate:" line (the link's signalling rate as ibstat
	// prints it, 200 for HDR); nil when the listing stops before it.
	RateGbps *float64 `json:"rate_gbps"`
	// LinkLayer is InfiniBand, or Ethernet for a RoCE port; "" when absent.
	LinkLayer string `json:"link_layer"`
}

// ParseIBStat reads the text of `ibstat`: one "CA 'name'" block per
// adapter, "Port N:" blocks inside it. Lines of other tools (ibwarn,
// ibpanic) are skipped. name is used in errors.
func ParseIBStat(b []byte, name string) ([]IBPort, error) {
	var out []IBPort
	ca := ""
	var cur *IBPort
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "CA '"); ok {
			ca, cur = strings.TrimSuffix(v, "'"), nil
			continue
		}
		if v, ok := strings.CutPrefix(line, "Port "); ok && strings.HasSuffix(v, ":") && ca != "" {
			num, err := strconv.Atoi(strings.TrimSuffix(v, ":"))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: port %q is not a number", name, n, v)
			}
			out = append(out, IBPort{CA: ca, Port: num})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			cur.State = v
		case "Physical state":
			cur.PhysState = v
		case "Rate":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: rate %q is not a number", name, n, v)
			}
			cur.RateGbps = &r
		case "Link layer":
			cur.LinkLayer = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no CA port: is this the output of ibstat?", name)
	}
	return out, nil
}

// Check is one key of the interconnect: block (or the form-factor
// cross-check) against what was measured; Measured is nil when nothing
// measured it (the check fails).
type Check struct {
	Name     string `json:"name"`
	Required any    `json:"required"`
	Measured any    `json:"measured"`
	Pass     bool   `json:"pass"`
	Note     string `json:"note,omitempty"`
}

// CheckIB checks ports (nil: not checked) and gbps (nil: not checked):
// at least ports active InfiniBand ports, each at least gbps. The ports
// that count are the active ones whose link layer is InfiniBand (RoCE
// ports are Ethernet: told apart, not counted).
func CheckIB(ports []IBPort, minPorts *int, gbps *float64) []Check {
	var active []IBPort
	roce := 0
	for _, p := range ports {
		if p.State != "Active" {
			continue
		}
		switch p.LinkLayer {
		case "InfiniBand":
			active = append(active, p)
		case "Ethernet":
			roce++
		}
	}
	var out []Check
	if minPorts != nil {
		c := Check{Name: "ib_ports", Required: *minPorts, Measured: len(active), Pass: len(active) >= *minPorts}
		if roce > 0 {
			c.Note = fmt.Sprintf("%d active RoCE (Ethernet) ports not counted", roce)
		}
		out = append(out, c)
	}
	if gbps != nil {
		c := Check{Name: "ib_gbps", Required: *gbps, Pass: len(active) > 0}
		var slowest *float64
		for _, p := range active {
			if p.RateGbps == nil {
				c.Pass, c.Note = false, p.CA+" port "+strconv.Itoa(p.Port)+": no rate"
				continue
			}
			if slowest == nil || *p.RateGbps < *slowest {
				r := *p.RateGbps
				slowest = &r
			}
		}
		if slowest != nil {
			c.Measured = *slowest
			c.Pass = c.Pass && *slowest >= *gbps
		} else if c.Note == "" {
			c.Note = "no active InfiniBand port"
		}
		out = append(out, c)
	}
	return out
}

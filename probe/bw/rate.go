package bw

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseRate reads a rate in bit/s as iperf3 writes it: a number with an
// optional k, M, G or T suffix (powers of 1000, as line rates are sold;
// "100M" = 10^8 bit/s), optionally followed by "bps" or "bit/s".
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	for _, unit := range []string{"bit/s", "bps", "b/s"} {
		t = strings.TrimSuffix(t, unit)
	}
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v != v || v > 1e15 {
		return 0, fmt.Errorf("rate %q: want a number of bit/s with an optional k, M, G suffix (100M = 100 Mbit/s)", s)
	}
	return v * mult, nil
}

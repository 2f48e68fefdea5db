package netlab

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file reads the output of the real tools (traceroute, mtr, ping) that
// lab tests use as independent references.

// TracerouteHops reads the output of `traceroute -n` and returns, per hop
// (index 0 = TTL 1), the distinct addresses that answered in order of first
// appearance; a hop with only `*` has no addresses.
func TracerouteHops(out string) ([][]string, error) {
	var hops [][]string
	for i, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(line, "traceroute") {
			continue
		}
		ttl, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, fmt.Errorf("traceroute output line %d: %q: no hop number", i+1, line)
		}
		if ttl != len(hops)+1 {
			return nil, fmt.Errorf("traceroute output line %d: hop %d after hop %d", i+1, ttl, len(hops))
		}
		var addrs []string
		for _, tok := range f[1:] {
			if ip := net.ParseIP(tok); ip != nil && !contains(addrs, ip.String()) {
				addrs = append(addrs, ip.String())
			}
		}
		hops = append(hops, addrs)
	}
	if len(hops) == 0 {
		return nil, fmt.Errorf("traceroute output: no hops in %q", out)
	}
	return hops, nil
}

// MTRHub is one line of an `mtr --json` report.
type MTRHub struct {
	TTL  int     // mtr's "count": the hop number
	Host string  // address, or "???" for no answer
	Loss float64 // percent
	Sent int
	Avg  float64 // ms
	Best float64 // ms
}

// MTRReport reads `mtr --json` output (mtr 0.95: report.hubs with "count",
// "host", "Loss%", "Snt", "Avg", "Best").
func MTRReport(out []byte) ([]MTRHub, error) {
	var doc struct {
		Report struct {
			Hubs []map[string]any `json:"hubs"`
		} `json:"report"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("mtr --json: %w", err)
	}
	var hubs []MTRHub
	for i, h := range doc.Report.Hubs {
		var hub MTRHub
		var ok bool
		if hub.TTL, ok = jsonInt(h["count"]); !ok {
			return nil, fmt.Errorf("mtr --json: hub %d: count %v", i, h["count"])
		}
		hub.Host, _ = h["host"].(string)
		hub.Loss, _ = jsonFloat(h["Loss%"])
		hub.Sent, _ = jsonInt(h["Snt"])
		hub.Avg, _ = jsonFloat(h["Avg"])
		hub.Best, _ = jsonFloat(h["Best"])
		hubs = append(hubs, hub)
	}
	return hubs, nil
}

func jsonFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func jsonInt(v any) (int, bool) {
	f, ok := jsonFloat(v)
	return int(f), ok
}

// PingResult is what iputils `ping` printed.
type PingResult struct {
	Sent, Recv, Dups int
	RTTs             []float64 // ms of the non-duplicate replies, in arrival order
	Seqs             []int     // icmp_seq of the non-duplicate replies, in arrival order
}

var (
	pingReplyRE = regexp.MustCompile(`icmp_seq=(\d+) .*time=([0-9.]+) ms`)
	pingSumRE   = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received(?:, \+(\d+) duplicates)?`)
)

// PingOutput reads the output of iputils `ping` (not -q).
func PingOutput(out string) (PingResult, error) {
	var r PingResult
	for _, line := range strings.Split(out, "\n") {
		if m := pingReplyRE.FindStringSubmatch(line); m != nil {
			if strings.Contains(line, "(DUP!)") {
				continue
			}
			v, _ := strconv.ParseFloat(m[2], 64)
			seq, _ := strconv.Atoi(m[1])
			r.RTTs = append(r.RTTs, v)
			r.Seqs = append(r.Seqs, seq)
		}
	}
	m := pingSumRE.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("ping output: no summary line in %q", truncate(out, 300))
	}
	r.Sent, _ = strconv.Atoi(m[1])
	r.Recv, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		r.Dups, _ = strconv.Atoi(m[3])
	}
	return r, nil
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package netlab

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// maxTTLClass is the highest TTL with its own loss rule; TTLs above it share
// the rule with key maxTTLClass+1.
const maxTTLClass = 64

// Loss drops packets that enter router k (1..Hops) from the client side,
// in nftables' prerouting hook: hop k and every later hop lose them, the
// hops before k do not. With everyNth > 0 it drops every Nth packet
// (numgen inc: the Nth, 2Nth, …); otherwise it drops the fraction pct
// (0..100, percent, steps of 0.01) at random (numgen random). Both 0 removes
// the rule.
//
// Packets are counted separately per TTL (hop limit) with which they arrive,
// one rule each, so that probes of different TTLs interleaving in any order
// all lose exactly every Nth: a trace of C cycles (C a multiple of N) loses
// exactly C/N probes at each hop from k on. Dropped reports the counts.
func (l *Lab) Loss(router int, everyNth int, pct float64) error {
	if router < 1 || router > l.cfg.Hops {
		return fmt.Errorf("netlab %s: loss: router %d out of 1..%d", l.cfg.Prefix, router, l.cfg.Hops)
	}
	if everyNth < 0 || pct < 0 || pct > 100 {
		return fmt.Errorf("netlab %s: loss: every %d, %v%%: want every >= 0 and 0..100%%", l.cfg.Prefix, everyNth, pct)
	}
	iif := l.links[router-1].ifR
	var b strings.Builder
	b.WriteString("table inet netlab {\n  chain pre {\n    type filter hook prerouting priority raw; policy accept;\n  }\n}\n")
	b.WriteString("flush chain inet netlab pre\n")
	var match string
	switch {
	case everyNth == 1 || (everyNth == 0 && pct >= 100):
		match = ""
	case everyNth > 1:
		match = fmt.Sprintf("numgen inc mod %d == %d ", everyNth, everyNth-1)
	case pct > 0:
		match = fmt.Sprintf("numgen random mod 10000 < %d ", int(pct*100+0.5))
	default:
		return l.nft(router, b.String())
	}
	// The link's own IPv6 control traffic passes and is never counted: ND,
	// and MLD, whose reports go out with hop limit 1 and so would share
	// (and shift) the counter of the probes that arrive with hop limit 1.
	fmt.Fprintf(&b, "add rule inet netlab pre iifname %q icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert, nd-redirect, "+
		"mld-listener-query, mld-listener-report, mld-listener-done, mld2-listener-report } accept\n", iif)
	for _, fam := range []struct{ tag, field string }{{"v4", "ip ttl"}, {"v6", "ip6 hoplimit"}} {
		for ttl := 1; ttl <= maxTTLClass+1; ttl++ {
			cmp := strconv.Itoa(ttl)
			if ttl > maxTTLClass {
				cmp = "> " + strconv.Itoa(maxTTLClass)
			}
			fmt.Fprintf(&b, "add rule inet netlab pre iifname %q %s %s %scounter drop comment \"%s ttl %d\"\n",
				iif, fam.field, cmp, match, fam.tag, ttl)
		}
	}
	return l.nft(router, b.String())
}

// Dropped returns how many packets the Loss rule of router k has dropped,
// keyed by the TTL (IPv6: hop limit) they arrived with; key 65 counts all
// TTLs above 64. A probe sent by the client with TTL h (h >= k) arrives at
// router k with TTL h-k+1.
func (l *Lab) Dropped(router int, v6 bool) (map[int]int, error) {
	if router < 1 || router > l.cfg.Hops {
		return nil, fmt.Errorf("netlab %s: dropped: router %d out of 1..%d", l.cfg.Prefix, router, l.cfg.Hops)
	}
	out, err := nsCommand(l.nodes[router].name, "nft", "-j", "list", "chain", "inet", "netlab", "pre").Output()
	if err != nil {
		return nil, fmt.Errorf("netlab %s: r%d: nft list: %w", l.cfg.Prefix, router, err)
	}
	var doc struct {
		Nftables []struct {
			Rule *struct {
				Comment string            `json:"comment"`
				Expr    []json.RawMessage `json:"expr"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("netlab %s: r%d: nft json: %w", l.cfg.Prefix, router, err)
	}
	tag := "v4 ttl "
	if v6 {
		tag = "v6 ttl "
	}
	res := map[int]int{}
	for _, it := range doc.Nftables {
		if it.Rule == nil || !strings.HasPrefix(it.Rule.Comment, tag) {
			continue
		}
		ttl, err := strconv.Atoi(strings.TrimPrefix(it.Rule.Comment, tag))
		if err != nil {
			continue
		}
		for _, e := range it.Rule.Expr {
			var c struct {
				Counter *struct {
					Packets int `json:"packets"`
				} `json:"counter"`
			}
			if json.Unmarshal(e, &c) == nil && c.Counter != nil && c.Counter.Packets > 0 {
				res[ttl] += c.Counter.Packets
			}
		}
	}
	return res, nil
}

// ICMPRateLimit switches the kernel's ICMP error rate limiting at router k
// back on (the kernel defaults of a new namespace: a per-destination token
// bucket of 1 message per second (IPv6: 10) after a small burst, for
// time-exceeded, unreachable and parameter-problem, plus a global 1000/s
// budget) or off
// again (the lab default). Echo replies are never limited.
func (l *Lab) ICMPRateLimit(router int, on bool) error {
	if router < 1 || router > l.cfg.Hops {
		return fmt.Errorf("netlab %s: icmp rate limit: router %d out of 1..%d", l.cfg.Prefix, router, l.cfg.Hops)
	}
	kv := [][2]string{
		{"net/ipv4/icmp_ratelimit", "0"},
		{"net/ipv4/icmp_ratemask", "0"},
		{"net/ipv4/icmp_msgs_per_sec", "1000000"},
		{"net/ipv4/icmp_msgs_burst", "1000000"},
		{"net/ipv6/icmp/ratelimit", "0"},
	}
	if on {
		kv = [][2]string{
			{"net/ipv4/icmp_ratelimit", "1000"},
			{"net/ipv4/icmp_ratemask", "6168"},
			{"net/ipv4/icmp_msgs_per_sec", "1000"},
			{"net/ipv4/icmp_msgs_burst", "50"},
			{"net/ipv6/icmp/ratelimit", "100"},
		}
	}
	return setSysctls(l.nodes[router].name, kv)
}

func (l *Lab) nft(router int, script string) error {
	cmd := nsCommand(l.nodes[router].name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netlab %s: r%d: nft: %w: %s", l.cfg.Prefix, router, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ICMPLoss makes router k (1..Hops) drop the fraction pct (0..100, percent)
// of the ICMP time-exceeded messages it generates itself (IPv4 and IPv6), in
// the output hook: hop k shows loss that no later hop shows. 100 makes a
// silent hop; 0 removes the rule. ICMPDropped reports the count.
func (l *Lab) ICMPLoss(router int, pct float64) error {
	if router < 1 || router > l.cfg.Hops {
		return fmt.Errorf("netlab %s: icmp loss: router %d out of 1..%d", l.cfg.Prefix, router, l.cfg.Hops)
	}
	if pct < 0 || pct > 100 {
		return fmt.Errorf("netlab %s: icmp loss %v%%: want 0..100", l.cfg.Prefix, pct)
	}
	var b strings.Builder
	b.WriteString("table inet netlab {\n  chain out {\n    type filter hook output priority raw; policy accept;\n  }\n}\n")
	b.WriteString("flush chain inet netlab out\n")
	if pct > 0 {
		match := ""
		if pct < 100 {
			// numgen random mod 10000 < 10000 is rejected, hence no match at 100.
			match = fmt.Sprintf("numgen random mod 10000 < %d ", int(pct*100+0.5))
		}
		fmt.Fprintf(&b, "add rule inet netlab out icmp type time-exceeded %scounter drop comment \"icmp loss\"\n", match)
		fmt.Fprintf(&b, "add rule inet netlab out icmpv6 type time-exceeded %scounter drop comment \"icmp loss\"\n", match)
	}
	return l.nft(router, b.String())
}

// ICMPDropped returns how many time-exceeded messages the ICMPLoss rule of
// router k has dropped.
func (l *Lab) ICMPDropped(router int) (int, error) {
	if router < 1 || router > l.cfg.Hops {
		return 0, fmt.Errorf("netlab %s: icmp dropped: router %d out of 1..%d", l.cfg.Prefix, router, l.cfg.Hops)
	}
	out, err := nsCommand(l.nodes[router].name, "nft", "-j", "list", "chain", "inet", "netlab", "out").Output()
	if err != nil {
		return 0, fmt.Errorf("netlab %s: r%d: nft list: %w", l.cfg.Prefix, router, err)
	}
	var doc struct {
		Nftables []struct {
			Rule *struct {
				Comment string `json:"comment"`
				Expr    []struct {
					Counter *struct {
						Packets int `json:"packets"`
					} `json:"counter"`
				} `json:"expr"`
			} `json:"rule"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, fmt.Errorf("netlab %s: r%d: nft json: %w", l.cfg.Prefix, router, err)
	}
	n := 0
	for _, it := range doc.Nftables {
		if it.Rule == nil || it.Rule.Comment != "icmp loss" {
			continue
		}
		for _, e := range it.Rule.Expr {
			if e.Counter != nil {
				n += e.Counter.Packets
			}
		}
	}
	return n, nil
}

// ClientBlock makes the client's own firewall drop every packet the client
// sends to dst (an nftables rule in the client namespace's output hook), as
// a host firewall that blocks one destination does: the kernel then fails
// the sender's sendto or connect with EPERM. An empty dst removes the rule.
func (l *Lab) ClientBlock(dst string) error {
	script := "table inet netlab_block {\n  chain out {\n    type filter hook output priority filter; policy accept;\n  }\n}\nflush chain inet netlab_block out\n"
	if dst != "" {
		a, err := netip.ParseAddr(dst)
		if err != nil {
			return fmt.Errorf("netlab %s: client block: %w", l.cfg.Prefix, err)
		}
		field := "ip daddr"
		if a.Is6() {
			field = "ip6 daddr"
		}
		script += fmt.Sprintf("add rule inet netlab_block out %s %s counter drop\n", field, a)
	}
	return l.nft(0, script)
}

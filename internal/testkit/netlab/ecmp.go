package netlab

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Topology names the shape of a lab.
type Topology string

// The lab's shapes. In each ECMP shape the splitting router spreads the
// flows to everything behind the point where the branches meet over
// equal-cost next hops (a multipath route hashed as Config.Hash says), and
// replies to the client always return by the chain (the first branch), so
// that each router answers a trace from one address. Side routers are named
// after the chain router they stand beside: r2b and r2c beside r2.
const (
	// Chain is client, r1..rN, server: one path.
	Chain Topology = ""
	// Diamond2 adds r2b beside r2 (links 100: r1–r2b, 101: r2b–r3): r1
	// splits over r2 and r2b, which meet at r3. Needs Hops >= 3.
	// Config.Multipath is the same.
	Diamond2 Topology = "diamond2"
	// Diamond3 adds r2b and r2c beside r2 (links 100, 101 as Diamond2; 102:
	// r1–r2c, 103: r2c–r3): r1 has three equal-cost next hops. Needs Hops >= 3.
	Diamond3 Topology = "diamond3"
	// Nested splits at r1 over the chain (r2, r3, r4) and a branch r2b that
	// splits again over r3b and r3c, which meet at r4b; both branches meet
	// at r5. Links 100: r1–r2b, 101: r2b–r3b, 102: r2b–r3c, 103: r3b–r4b,
	// 104: r3c–r4b, 105: r4b–r5. Three paths: r2 r3 r4, r2b r3b r4b,
	// r2b r3c r4b. Needs Hops >= 5.
	Nested Topology = "nested"
)

// HashPolicy is the multipath hash the routers use.
type HashPolicy string

const (
	// HashFields (the default) is net.ipv4.fib_multipath_hash_policy=3 with
	// the custom fields source and destination address, protocol and both
	// ports, falling back to policy 1 on kernels without it. It hashes the
	// header of every packet, as a router on a wire does.
	HashFields HashPolicy = ""
	// HashL4 is fib_multipath_hash_policy=1, the layer-4 hash (addresses,
	// protocol, ports). A forwarded packet that carries its sender's socket
	// hash (a TCP or connected UDP socket's sk_txhash) is spread by that
	// hash instead of its ports; raw-socket probes carry none.
	HashL4 HashPolicy = "l4"
	// HashL3 is fib_multipath_hash_policy=0: addresses only, so that every
	// flow between two hosts takes one path.
	HashL3 HashPolicy = "l3"
)

// Wire is a userspace TUN link (the tunlink program) that replaces a veth:
// Delay, Jitter (uniform ±), Loss, Dup and Reorder apply to packets going
// away from the client, replies cross it unimpaired.
type Wire struct {
	// Into names the router whose link from its splitting router becomes the
	// wire, without the prefix ("r2", "r2b", "r3c"): the wire impairs that
	// branch from that router on. Empty for Config.TUNLink's wire.
	Into          string
	Delay, Jitter time.Duration
	// Loss, Dup and Reorder are fractions 0..1 of the packets.
	Loss, Dup, Reorder float64
	// Seed seeds the random draws (0 means 1).
	Seed int64
	// Change, when set, changes the wire's delay, jitter and loss at a
	// scheduled time.
	Change *Change
}

// Change is a scheduled change of a userspace wire: from At on (the wall
// clock), the packets read get Delay, Jitter (uniform ±Jitter) and Loss
// instead of the wire's own. A line that degrades at a known time — an
// evening's peak, squeezed into minutes for a test (issue 30).
type Change struct {
	At            time.Time
	Delay, Jitter time.Duration
	Loss          float64
}

func (c Config) topology() Topology {
	if c.Topology == Chain && c.Multipath {
		return Diamond2
	}
	return c.Topology
}

func (c Config) checkECMP() error {
	t := c.topology()
	switch t {
	case Chain:
	case Diamond2, Diamond3:
		if c.Hops < 3 {
			return fmt.Errorf("netlab %s: multipath needs at least 3 hops, have %d", c.Prefix, c.Hops)
		}
	case Nested:
		if c.Hops < 5 {
			return fmt.Errorf("netlab %s: the nested topology needs at least 5 hops, have %d", c.Prefix, c.Hops)
		}
	default:
		return fmt.Errorf("netlab %s: topology %q: want %q, %q, %q or none", c.Prefix, t, Diamond2, Diamond3, Nested)
	}
	if t != Chain && (c.TUNLink == 1 || c.TUNLink == 2) {
		return fmt.Errorf("netlab %s: TUN link %d: links 1 and 2 are the multipath split; use 0 or 3..%d, or a Wire into a branch", c.Prefix, c.TUNLink, c.Hops)
	}
	switch c.Hash {
	case HashFields, HashL4, HashL3:
	default:
		return fmt.Errorf("netlab %s: hash %q: want %q, %q or none (custom fields)", c.Prefix, c.Hash, HashL4, HashL3)
	}
	seen := map[string]bool{}
	for _, w := range c.Wires {
		if !slices.Contains(splitTargets(t), w.Into) {
			return fmt.Errorf("netlab %s: wire into %q: topology %q splits into %v only", c.Prefix, w.Into, t, splitTargets(t))
		}
		if seen[w.Into] {
			return fmt.Errorf("netlab %s: two wires into %q", c.Prefix, w.Into)
		}
		seen[w.Into] = true
		for name, p := range map[string]float64{"loss": w.Loss, "dup": w.Dup, "reorder": w.Reorder} {
			if p < 0 || p > 1 {
				return fmt.Errorf("netlab %s: wire into %s: %s %v: want a fraction 0..1", c.Prefix, w.Into, name, p)
			}
		}
		if w.Jitter > w.Delay || w.Delay < 0 || w.Jitter < 0 {
			return fmt.Errorf("netlab %s: wire into %s: jitter %v, delay %v: want 0 <= jitter <= delay", c.Prefix, w.Into, w.Jitter, w.Delay)
		}
	}
	return nil
}

// splitTargets lists the routers right behind a split: the first router of
// every branch, the ones a Wire may lead into.
func splitTargets(t Topology) []string {
	switch t {
	case Diamond2:
		return []string{"r2", "r2b"}
	case Diamond3:
		return []string{"r2", "r2b", "r2c"}
	case Nested:
		return []string{"r2", "r2b", "r3b", "r3c"}
	}
	return nil
}

// planECMP adds the side routers and links of the topology and replaces the
// chain's routes with the shortest-path routes of the whole graph.
func (l *Lab) planECMP() {
	byShort := map[string]*node{}
	for _, nd := range l.nodes {
		byShort[nd.short] = nd
	}
	side := func(short string) *node {
		nd := &node{name: l.cfg.Prefix + short, short: short, router: true, handle: -1}
		l.nodes = append(l.nodes, nd)
		byShort[short] = nd
		return nd
	}
	next := 100
	join := func(a, b string) {
		i := strconv.Itoa(next - 100)
		l.links = append(l.links, &link{idx: next, left: byShort[a], right: byShort[b], ifL: "m" + i + "a", ifR: "m" + i + "b"})
		next++
	}
	switch l.cfg.topology() {
	case Diamond2:
		side("r2b")
		join("r1", "r2b")
		join("r2b", "r3")
	case Diamond3:
		side("r2b")
		side("r2c")
		join("r1", "r2b")
		join("r2b", "r3")
		join("r1", "r2c")
		join("r2c", "r3")
	case Nested:
		for _, s := range []string{"r2b", "r3b", "r3c", "r4b"} {
			side(s)
		}
		join("r1", "r2b")
		join("r2b", "r3b")
		join("r2b", "r3c")
		join("r3b", "r4b")
		join("r3c", "r4b")
		join("r4b", "r5")
	}
	l.routeGraph()
	for _, w := range l.cfg.Wires {
		nd := byShort[w.Into]
		w := w
		nd.up.setWire(&w)
	}
}

// setWire makes lk a TUN link with the impairments of w.
func (lk *link) setWire(w *Wire) {
	if w.Seed == 0 {
		w.Seed = 1
	}
	lk.tun, lk.wire = true, w
	i := strconv.Itoa(lk.idx)
	lk.ifL, lk.ifR = "t"+i+"a", "t"+i+"b"
}

// neighbor is a node's neighbour over a link.
type neighbor struct {
	nd  *node
	lk  *link
	end int // the neighbour's end of lk (1 left, 2 right)
}

func (l *Lab) neighbors(nd *node) []neighbor {
	var out []neighbor
	for _, lk := range l.links {
		switch nd {
		case lk.left:
			out = append(out, neighbor{lk.right, lk, 2})
		case lk.right:
			out = append(out, neighbor{lk.left, lk, 1})
		}
	}
	// Chain nodes first, then side nodes in the order they were made, so
	// that the first of several equal next hops is the chain's.
	slices.SortStableFunc(out, func(a, b neighbor) int { return l.nodeIndex(a.nd) - l.nodeIndex(b.nd) })
	return out
}

func (l *Lab) nodeIndex(nd *node) int { return slices.Index(l.nodes, nd) }

// distances returns every node's hop count to the nearest of from (BFS).
func (l *Lab) distances(from []*node) map[*node]int {
	d := map[*node]int{}
	queue := append([]*node(nil), from...)
	for _, nd := range from {
		d[nd] = 0
	}
	for len(queue) > 0 {
		nd := queue[0]
		queue = queue[1:]
		for _, nb := range l.neighbors(nd) {
			if _, ok := d[nb.nd]; !ok {
				d[nb.nd] = d[nd] + 1
				queue = append(queue, nb.nd)
			}
		}
	}
	return d
}

// routeGraph gives every router a route to every subnet it is not on, over
// every neighbour on a shortest path: equal-cost next hops away from the
// client become a multipath route; toward the client only the first
// (the chain's) is kept, so that replies take one path and each router
// answers from one address. It also sets each node's depth and up link and
// marks a merge router's other upstream addresses deprecated (IPv6).
func (l *Lab) routeGraph() {
	client := l.nodes[0]
	depth := l.distances([]*node{client})
	for _, nd := range l.nodes {
		nd.depth = depth[nd]
	}
	for _, nd := range l.nodes[1:] {
		nd.up = nil
		for _, nb := range l.neighbors(nd) {
			if nb.nd.depth == nd.depth-1 {
				if nd.up == nil {
					nd.up = nb.lk
				} else if nb.lk.right == nd {
					nb.lk.deprecateR = true
				}
			}
		}
	}
	for _, nd := range l.nodes {
		if !nd.router {
			continue
		}
		var rs []route
		for _, lk := range l.links {
			if lk.left == nd || lk.right == nd {
				continue
			}
			d := l.distances([]*node{lk.left, lk.right})
			var gws [][2]int
			upstream := true
			for _, nb := range l.neighbors(nd) {
				if d[nb.nd] == d[nd]-1 {
					gws = append(gws, [2]int{nb.lk.idx, nb.end})
					if nb.nd.depth > nd.depth {
						upstream = false
					}
				}
			}
			if upstream && len(gws) > 1 {
				gws = gws[:1]
			}
			rs = append(rs, route{lk.idx, gws})
		}
		nd.routes = rs
	}
}

// node returns the node with the short name (c, s, r3, r2b).
func (l *Lab) node(short string) (*node, error) {
	for _, nd := range l.nodes {
		if nd.short == short {
			return nd, nil
		}
	}
	return nil, fmt.Errorf("netlab %s: no node %q", l.cfg.Prefix, short)
}

// Node returns the namespace of the node with the short name: "c", "s",
// "r3", "r2b".
func (l *Lab) Node(short string) (string, error) {
	nd, err := l.node(short)
	if err != nil {
		return "", err
	}
	return nd.name, nil
}

// NodeAddr returns the address from which the node with the short name
// answers a trace from the client: its end of the link its replies to the
// client leave by (the client's own address for "c").
func (l *Lab) NodeAddr(short string, v6 bool) (string, error) {
	nd, err := l.node(short)
	if err != nil {
		return "", err
	}
	return l.traceAddr(nd, v6), nil
}

func (l *Lab) traceAddr(nd *node, v6 bool) string {
	if nd.up == nil {
		return l.ClientAddr(v6)
	}
	return addr(v6, nd.up.idx, 2)
}

// PathRouters lists, for every equal-cost path from the client to the
// server, the short names of the routers it crosses (hop 1 first, the server
// "s" last), chain path first.
func (l *Lab) PathRouters() [][]string {
	var out [][]string
	var walk func(nd *node, acc []string)
	walk = func(nd *node, acc []string) {
		acc = append(acc, nd.short)
		if nd == l.nodes[l.cfg.Hops+1] {
			out = append(out, slices.Clone(acc))
			return
		}
		for _, nb := range l.neighbors(nd) {
			if nb.nd.depth == nd.depth+1 {
				walk(nb.nd, acc)
			}
		}
	}
	walk(l.nodes[1], nil)
	return out
}

// Paths lists every equal-cost path as the addresses a trace from the
// client sees at TTL 1, 2, … (the server last), chain path first.
func (l *Lab) Paths(v6 bool) [][]string {
	var out [][]string
	for _, p := range l.PathRouters() {
		var as []string
		for _, short := range p {
			nd, _ := l.node(short)
			as = append(as, l.traceAddr(nd, v6))
		}
		out = append(out, as)
	}
	return out
}

// Flow is what the routers hash a probe's path on, besides the client's
// and server's addresses: the protocol ("udp", "tcp" or "icmp", which means
// ICMPv6 in an IPv6 question) and, for UDP and TCP, the ports.
type Flow struct {
	Proto            string
	SrcPort, DstPort int
}

// ipproto is the flow's protocol as `ip route get … ipproto` takes it:
// "icmp" is protocol 1 to ip -6 as well, which the kernel rejects there
// ("Unsupported ip proto"); ICMPv6 is ipv6-icmp (58).
func (f Flow) ipproto(v6 bool) string {
	if v6 && f.Proto == "icmp" {
		return "ipv6-icmp"
	}
	return f.Proto
}

func (f Flow) String() string {
	if f.Proto == "icmp" {
		return "icmp"
	}
	return fmt.Sprintf("%s %d→%d", f.Proto, f.SrcPort, f.DstPort)
}

// FlowPaths asks the routers' kernels where each flow from the client to
// the server goes: `ip route get SERVER from CLIENT iif IF ipproto P sport S
// dport D` in each router's namespace, IF being the router's link toward the
// client, names the next hop the router's forwarding picks for that flow.
// Following the next hops from router 1 gives the path; it is returned as
// the addresses a trace sees at TTL 1, 2, … (the server last), one path per
// flow. This is the oracle for every flow a multipath trace maps. One `ip
// -batch` process per router answers all flows.
func (l *Lab) FlowPaths(flows []Flow, v6 bool) ([][]string, error) {
	dst, src := l.ServerAddr(v6), l.ClientAddr(v6)
	byAddr := map[string]*node{}
	for _, lk := range l.links {
		byAddr[addr(v6, lk.idx, 1)] = lk.left
		byAddr[addr(v6, lk.idx, 2)] = lk.right
	}
	hops := map[*node][]string{} // router → next-hop gateway per flow
	for _, nd := range l.nodes {
		if !nd.router {
			continue
		}
		var script strings.Builder
		iif := nd.up.ifR
		for _, f := range flows {
			fmt.Fprintf(&script, "route get %s from %s iif %s ipproto %s", dst, src, iif, f.ipproto(v6))
			if f.Proto != "icmp" && f.Proto != "ipv6-icmp" {
				fmt.Fprintf(&script, " sport %d dport %d", f.SrcPort, f.DstPort)
			}
			script.WriteString("\n")
		}
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		cmd := nsCommand(nd.name, "ip", fam, "-batch", "-")
		cmd.Stdin = strings.NewReader(script.String())
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("netlab %s: %s: ip route get: %w: %s", l.cfg.Prefix, nd.name, err, strings.TrimSpace(string(out)))
		}
		gws, err := routeGetGateways(string(out), dst)
		if err != nil {
			return nil, fmt.Errorf("netlab %s: %s: %w", l.cfg.Prefix, nd.name, err)
		}
		if len(gws) != len(flows) {
			return nil, fmt.Errorf("netlab %s: %s: ip route get answered %d of %d flows: %s", l.cfg.Prefix, nd.name, len(gws), len(flows), out)
		}
		hops[nd] = gws
	}
	server := l.nodes[l.cfg.Hops+1]
	var paths [][]string
	for i, f := range flows {
		var p []string
		nd := l.nodes[1]
		for nd != server {
			p = append(p, l.traceAddr(nd, v6))
			gw := hops[nd][i]
			if gw == "" { // on-link: the server's own link
				nd = server
				break
			}
			next, ok := byAddr[gw]
			if !ok || len(p) > len(l.nodes) {
				return nil, fmt.Errorf("netlab %s: flow %v: %s routes via %q, not a lab router", l.cfg.Prefix, f, nd.name, gw)
			}
			nd = next
		}
		paths = append(paths, append(p, l.traceAddr(server, v6)))
	}
	return paths, nil
}

// routeGetGateways reads the answers of `ip -batch` route get commands for
// dst: per answer the "via" gateway, or "" for a directly connected dst.
func routeGetGateways(out, dst string) ([]string, error) {
	var gws []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue
		}
		if f[0] != dst {
			return nil, fmt.Errorf("ip route get: unexpected line %q", line)
		}
		gw := ""
		if i := slices.Index(f, "via"); i >= 0 && i+1 < len(f) {
			gw = f[i+1]
			if gw == "inet" || gw == "inet6" { // "via inet6 ADDR"
				if i+2 < len(f) {
					gw = f[i+2]
				}
			}
		}
		gws = append(gws, gw)
	}
	return gws, nil
}

// NextHop asks router short's kernel (`ip route get … iif …` in its
// namespace) which neighbour it forwards flow f from the client to the
// server through, and returns the address that neighbour answers a trace
// from ("" when the server is on the router's own link).
func (l *Lab) NextHop(short string, f Flow, v6 bool) (string, error) {
	nd, err := l.node(short)
	if err != nil {
		return "", err
	}
	if !nd.router {
		return "", fmt.Errorf("netlab %s: %s is not a router", l.cfg.Prefix, short)
	}
	fam := "-4"
	if v6 {
		fam = "-6"
	}
	args := []string{fam, "route", "get", l.ServerAddr(v6), "from", l.ClientAddr(v6), "iif", nd.up.ifR, "ipproto", f.ipproto(v6)}
	if f.Proto != "icmp" && f.Proto != "ipv6-icmp" {
		args = append(args, "sport", strconv.Itoa(f.SrcPort), "dport", strconv.Itoa(f.DstPort))
	}
	out, err := nsCommand(nd.name, "ip", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("netlab %s: %s: ip %s: %w: %s", l.cfg.Prefix, nd.name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	gws, err := routeGetGateways(string(out), l.ServerAddr(v6))
	if err != nil || len(gws) != 1 {
		return "", fmt.Errorf("netlab %s: %s: ip route get: %v: %s", l.cfg.Prefix, nd.name, err, out)
	}
	if gws[0] == "" {
		return "", nil
	}
	for _, lk := range l.links {
		if (lk.left == nd && addr(v6, lk.idx, 2) == gws[0]) || (lk.right == nd && addr(v6, lk.idx, 1) == gws[0]) {
			other := lk.right
			if lk.right == nd {
				other = lk.left
			}
			return l.traceAddr(other, v6), nil
		}
	}
	return "", fmt.Errorf("netlab %s: %s routes via %s, not a neighbour", l.cfg.Prefix, nd.name, gws[0])
}

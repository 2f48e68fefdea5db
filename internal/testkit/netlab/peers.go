package netlab

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file runs and reads the multipath peers of a multipath trace:
// scamper's tracelb (the MDA, through sc_warts2json) and dublin-traceroute
// (a fixed number of flows).

// HopAddr is an interface seen at a TTL.
type HopAddr struct {
	TTL  int
	Addr string
}

// HopLink joins an interface at TTL to one at TTL+1 that a flow reached next.
type HopLink struct {
	TTL      int // the From side's TTL
	From, To string
}

// FlowHop is one answered probe: flow Flow at TTL answered from Addr.
type FlowHop struct {
	Flow, TTL int
	Addr      string
}

// TraceLB is one scamper tracelb result.
type TraceLB struct {
	Method           string // udp-dport, icmp-echo, ...
	Src, Dst         string
	SrcPort, DstPort int // the base ports: with udp-dport a flow id is its destination port
	Confidence       int
	Probes           int // probec: every probe sent
	// NodeCount and LinkCount are scamper's own counts. scamper makes a node
	// only where it enumerated next hops and folds the interfaces between
	// two such nodes into the link's hops, so these count fewer than Nodes
	// and Links.
	NodeCount, LinkCount int
	// Nodes and Links are every interface that answered, per TTL, and every
	// pair of interfaces at consecutive TTLs one flow crossed: the diamond
	// as a multipath trace reports it.
	Nodes []HopAddr
	Links []HopLink
	// Answers lists every answered probe.
	Answers []FlowHop
}

// ParseTraceLB reads sc_warts2json output (one JSON object per line) and
// returns its tracelb results.
func ParseTraceLB(out []byte) ([]TraceLB, error) {
	var res []TraceLB
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("sc_warts2json line %d: %w", line, err)
		}
		if head.Type != "tracelb" {
			continue
		}
		var doc tracelbDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("sc_warts2json line %d: tracelb: %w", line, err)
		}
		res = append(res, doc.trace())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sc_warts2json output: %w", err)
	}
	return res, nil
}

// tracelbDoc is one tracelb object of sc_warts2json.
type tracelbDoc struct {
	Method     string `json:"method"`
	Src        string `json:"src"`
	Dst        string `json:"dst"`
	Sport      int    `json:"sport"`
	Dport      int    `json:"dport"`
	Confidence int    `json:"confidence"`
	Probec     int    `json:"probec"`
	Nodec      int    `json:"nodec"`
	Linkc      int    `json:"linkc"`
	Firsthop   int    `json:"firsthop"`
	Nodes      []struct {
		Addr string `json:"addr"`
		// Each element is one hop of one of the node's links: the
		// probes of that TTL grouped by the address that answered.
		Links [][]tracelbProbeset `json:"links"`
	} `json:"nodes"`
}

// tracelbProbeset is the probes of one TTL that one address answered.
type tracelbProbeset struct {
	Addr   string `json:"addr"`
	Probes []struct {
		TTL    int `json:"ttl"`
		FlowID int `json:"flowid"`
		Replyc int `json:"replyc"`
	} `json:"probes"`
}

// trace is the document as a TraceLB: its answers, then the nodes and
// links they make.
func (doc *tracelbDoc) trace() TraceLB {
	t := TraceLB{Method: doc.Method, Src: doc.Src, Dst: doc.Dst, SrcPort: doc.Sport, DstPort: doc.Dport,
		Confidence: doc.Confidence, Probes: doc.Probec, NodeCount: doc.Nodec, LinkCount: doc.Linkc}
	answered, nodeTTL := doc.answers(&t)
	nodes := map[HopAddr]bool{}
	links := map[HopLink]bool{}
	for _, a := range t.Answers {
		nodes[HopAddr{a.TTL, a.Addr}] = true
	}
	for _, nd := range doc.Nodes {
		ttl, ok := nodeTTL[nd.Addr]
		if !ok {
			continue // the last node: it has no links
		}
		nodes[HopAddr{ttl, nd.Addr}] = true
		for _, hop := range nd.Links {
			for _, ps := range hop {
				for _, p := range ps.Probes {
					if p.Replyc == 0 {
						continue
					}
					if p.TTL == ttl+1 {
						links[HopLink{ttl, nd.Addr, ps.Addr}] = true
						continue
					}
					for _, from := range answered[[2]int{p.FlowID, p.TTL - 1}] {
						links[HopLink{p.TTL - 1, from, ps.Addr}] = true
					}
				}
			}
		}
	}
	t.Nodes, t.Links = sortedNodes(nodes), sortedLinks(links)
	return t
}

// answers appends every (flow, TTL, address) that answered to t.Answers
// and returns them by (flow, TTL), with each node's TTL: one less than the
// TTL its links begin at (the last node, which has no links, has none).
func (doc *tracelbDoc) answers(t *TraceLB) (map[[2]int][]string, map[string]int) {
	answered := map[[2]int][]string{} // (flow, ttl) → addresses
	nodeTTL := map[string]int{}
	for _, nd := range doc.Nodes {
		min := 0
		for _, hop := range nd.Links {
			for _, ps := range hop {
				for _, p := range ps.Probes {
					if min == 0 || p.TTL < min {
						min = p.TTL
					}
					if p.Replyc > 0 {
						k := [2]int{p.FlowID, p.TTL}
						if !slices.Contains(answered[k], ps.Addr) {
							answered[k] = append(answered[k], ps.Addr)
							t.Answers = append(t.Answers, FlowHop{p.FlowID, p.TTL, ps.Addr})
						}
					}
				}
			}
		}
		if min > 0 {
			nodeTTL[nd.Addr] = min - 1
		}
	}
	return answered, nodeTTL
}

// Dublin is a dublin-traceroute result (its trace.json), by flow.
type Dublin struct {
	Flows []DublinFlow
}

// DublinFlow is one of dublin-traceroute's flows: its ports and what
// answered at each TTL.
type DublinFlow struct {
	SrcPort, DstPort int
	Hops             []DublinHop // in the order of the file, TTL ascending
}

// DublinHop is one probe of a flow. ICMPType and ICMPCode are the real ones:
// dublin-traceroute writes them into each other's field (a time exceeded,
// type 11 code 0, appears as "type": 0, "code": 11), and ParseDublin swaps
// them back.
type DublinHop struct {
	TTL                int
	Addr               string // "" when nothing answered
	ICMPType, ICMPCode int
	NATID              int
}

// ParseDublin reads dublin-traceroute's trace.json.
func ParseDublin(b []byte) (Dublin, error) {
	var doc struct {
		Flows map[string][]struct {
			NATID int `json:"nat_id"`
			Sent  struct {
				IP struct {
					TTL int `json:"ttl"`
				} `json:"ip"`
				UDP struct {
					Sport int `json:"sport"`
					Dport int `json:"dport"`
				} `json:"udp"`
			} `json:"sent"`
			Received *struct {
				IP struct {
					Src string `json:"src"`
				} `json:"ip"`
				ICMP struct {
					Type int `json:"type"`
					Code int `json:"code"`
				} `json:"icmp"`
			} `json:"received"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Dublin{}, fmt.Errorf("dublin-traceroute trace.json: %w", err)
	}
	if doc.Flows == nil {
		return Dublin{}, fmt.Errorf("dublin-traceroute trace.json: no \"flows\"")
	}
	var d Dublin
	for key, hops := range doc.Flows {
		dport, err := strconv.Atoi(key)
		if err != nil {
			return Dublin{}, fmt.Errorf("dublin-traceroute trace.json: flow key %q: want a port number", key)
		}
		f := DublinFlow{DstPort: dport}
		for i, h := range hops {
			if h.Sent.UDP.Dport != dport {
				return Dublin{}, fmt.Errorf("dublin-traceroute trace.json: flow %s probe %d: sent to port %d", key, i, h.Sent.UDP.Dport)
			}
			f.SrcPort = h.Sent.UDP.Sport
			dh := DublinHop{TTL: h.Sent.IP.TTL, NATID: h.NATID}
			if h.Received != nil {
				dh.Addr = h.Received.IP.Src
				dh.ICMPType, dh.ICMPCode = h.Received.ICMP.Code, h.Received.ICMP.Type
			}
			f.Hops = append(f.Hops, dh)
		}
		d.Flows = append(d.Flows, f)
	}
	slices.SortFunc(d.Flows, func(a, b DublinFlow) int { return a.DstPort - b.DstPort })
	return d, nil
}

// Graph returns the interfaces per TTL and the links between consecutive
// TTLs that a set of paths (as Paths returns them: the address at TTL 1
// first) crosses.
func Graph(paths [][]string) ([]HopAddr, []HopLink) {
	nodes := map[HopAddr]bool{}
	links := map[HopLink]bool{}
	for _, p := range paths {
		for i, a := range p {
			if a == "" {
				continue
			}
			nodes[HopAddr{i + 1, a}] = true
			if i+1 < len(p) && p[i+1] != "" {
				links[HopLink{i + 1, a, p[i+1]}] = true
			}
		}
	}
	return sortedNodes(nodes), sortedLinks(links)
}

// sortedKeys returns the keys of m (never nil) in cmp's order.
func sortedKeys[K comparable](m map[K]bool, cmp func(a, b K) int) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, cmp)
	return out
}

// sortedNodes orders nodes by TTL, then address.
func sortedNodes(m map[HopAddr]bool) []HopAddr {
	return sortedKeys(m, func(a, b HopAddr) int {
		return cmp.Or(cmp.Compare(a.TTL, b.TTL), strings.Compare(a.Addr, b.Addr))
	})
}

// sortedLinks orders links by TTL, then the From and the To address.
func sortedLinks(m map[HopLink]bool) []HopLink {
	return sortedKeys(m, func(a, b HopLink) int {
		return cmp.Or(cmp.Compare(a.TTL, b.TTL), strings.Compare(a.From, b.From), strings.Compare(a.To, b.To))
	})
}

// RunTraceLB runs `scamper -O warts -I "tracelb -P METHOD -c CONFIDENCE
// [extra…] SERVER"` in the client's namespace, converts its output with
// sc_warts2json and returns the result and scamper's wall time. extra adds
// tracelb options (e.g. "-W", "15": the shortest wait between probes
// scamper accepts, 150 ms, instead of its default 250 ms).
func (l *Lab) RunTraceLB(method string, confidence int, extra ...string) (TraceLB, time.Duration, error) {
	return l.RunTraceLBFamily(false, method, confidence, extra...)
}

// RunTraceLBFamily is RunTraceLB to the server's IPv6 address when v6 is
// true (the lab must have IPv6), its IPv4 address otherwise.
func (l *Lab) RunTraceLBFamily(v6 bool, method string, confidence int, extra ...string) (TraceLB, time.Duration, error) {
	dir, err := os.MkdirTemp("", "netlab-tracelb")
	if err != nil {
		return TraceLB{}, 0, err
	}
	defer os.RemoveAll(dir)
	warts := filepath.Join(dir, "tracelb.warts")
	cmdline := strings.Join(append(append([]string{"tracelb", "-P", method, "-c", strconv.Itoa(confidence)}, extra...), l.ServerAddr(v6)), " ")
	// -p 1000: scamper's own packet-rate cap (20 pps by default) must not be
	// what paces tracelb; its wait between probes is.
	cmd := l.Exec(l.Client(), "scamper", "-p", "1000", "-O", "warts", "-o", warts, "-I", cmdline)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return TraceLB{}, took, fmt.Errorf("scamper %s: %w: %s", cmdline, err, out)
	}
	js, err := nsCommand(l.Client(), "sc_warts2json", warts).Output()
	if err != nil {
		return TraceLB{}, took, fmt.Errorf("sc_warts2json: %w", err)
	}
	res, err := ParseTraceLB(js)
	if err != nil {
		return TraceLB{}, took, err
	}
	if len(res) != 1 {
		return TraceLB{}, took, fmt.Errorf("scamper %s: %d tracelb results, want 1: %s", cmdline, len(res), js)
	}
	return res[0], took, nil
}

// RunDublin runs dublin-traceroute to the server in the client's namespace
// with npaths flows (extra adds options: "--sport=N", "--dport=N") and
// returns its trace.json. dublin-traceroute resolves
// every address it sees: the client's namespace gets a resolv.conf naming
// 127.0.0.1 for the run (`ip netns exec` binds /etc/netns/NS/resolv.conf
// over /etc/resolv.conf), so no query leaves the lab. libtins, under it,
// picks its interface from the default route and aborts without one: the
// client gets a default route toward router 1 for the run (no router has a
// default route, so it leads nowhere outside the lab).
func (l *Lab) RunDublin(npaths, maxTTL int, extra ...string) (Dublin, error) {
	etc := filepath.Join("/etc/netns", l.Client())
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return Dublin{}, err
	}
	defer os.RemoveAll(etc)
	if err := os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644); err != nil {
		return Dublin{}, err
	}
	gw := addr(false, 0, 2)
	if out, err := nsCommand(l.Client(), "ip", "route", "add", "default", "via", gw).CombinedOutput(); err != nil {
		return Dublin{}, fmt.Errorf("client default route: %w: %s", err, out)
	}
	defer func() { _ = nsCommand(l.Client(), "ip", "route", "del", "default").Run() }()
	dir, err := os.MkdirTemp("", "netlab-dublin")
	if err != nil {
		return Dublin{}, err
	}
	defer os.RemoveAll(dir)
	args := append([]string{l.ServerAddr(false), "--npaths=" + strconv.Itoa(npaths), "--max-ttl=" + strconv.Itoa(maxTTL)}, extra...)
	cmd := l.Exec(l.Client(), "dublin-traceroute", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return Dublin{}, fmt.Errorf("dublin-traceroute: %w: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trace.json"))
	if err != nil {
		return Dublin{}, err
	}
	return ParseDublin(b)
}

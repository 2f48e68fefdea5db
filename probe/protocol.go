package probe

import (
	"fmt"
	"slices"
	"strings"
)

// protocolSpec is one protocol linecheck probes with: what ping does with
// it (its driver; nil when ping has none) and what trace does (whether it
// traces with it, its default port). Each protocol's spec lives in its own
// file beside its ping driver (ping_icmp.go, ping_tcp.go, trace_udp.go);
// protocols lists them once.
type protocolSpec struct {
	name Protocol
	// ping is the ping sweep's driver for it; nil when ping has none.
	ping *pingProtocol
	// trace is true when trace probes with it.
	trace bool
	// port is true when its targets name a port (trace's default below).
	port bool
	// tracePort is trace's destination port when none is given.
	tracePort int
}

// protocols are the protocols, in the order messages list them. A new
// protocol is its file and its line here.
var protocols = []protocolSpec{
	icmpSpec,
	udpSpec,
	tcpSpec,
}

func protocolOf(p Protocol) (protocolSpec, bool) {
	for _, s := range protocols {
		if s.name == p {
			return s, true
		}
	}
	return protocolSpec{}, false
}

func protocolsWhere(keep func(protocolSpec) bool) []Protocol {
	var out []Protocol
	for _, s := range protocols {
		if keep(s) {
			out = append(out, s.name)
		}
	}
	return out
}

// PingProtocols are the protocols ping, compare's and serve's targets probe
// with (icmp, tcp).
func PingProtocols() []Protocol {
	return protocolsWhere(func(s protocolSpec) bool { return s.ping != nil })
}

// TraceProtocols are the protocols trace probes with (icmp, udp, tcp).
func TraceProtocols() []Protocol { return protocolsWhere(func(s protocolSpec) bool { return s.trace }) }

// ProtocolNames names ps for a message: "icmp or tcp", "icmp, udp or tcp".
func ProtocolNames(ps []Protocol) string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = string(p)
	}
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Pings tells whether ping probes with p (PingProtocols).
func (p Protocol) Pings() bool { s, ok := protocolOf(p); return ok && s.ping != nil }

// Traces tells whether trace probes with p (TraceProtocols).
func (p Protocol) Traces() bool { s, ok := protocolOf(p); return ok && s.trace }

// HasPort tells whether p's targets name a port (tcp, udp; not icmp).
func (p Protocol) HasPort() bool { s, _ := protocolOf(p); return s.port }

// ParseProtocol reads a protocol name; "" is ICMP.
func ParseProtocol(s string) (Protocol, error) {
	if s == "" {
		return ICMP, nil
	}
	if _, ok := protocolOf(Protocol(s)); ok {
		return Protocol(s), nil
	}
	names := protocolsWhere(func(protocolSpec) bool { return true })
	slices.Sort(names)
	return "", fmt.Errorf("protocol %q: use %s", s, ProtocolNames(names))
}

// ParsePingProtocol reads the protocol of a ping target; "" is ICMP. The
// error names PingProtocols: "protocol "udp": use icmp or tcp".
func ParsePingProtocol(s string) (Protocol, error) {
	p, err := ParseProtocol(s)
	if err != nil || !p.Pings() {
		return "", fmt.Errorf("protocol %q: use %s", s, ProtocolNames(PingProtocols()))
	}
	return p, nil
}

// ParseTraceProtocol reads the protocol of a trace; "" is ICMP. The error
// names TraceProtocols: "protocol "sctp": use icmp, udp or tcp".
func ParseTraceProtocol(s string) (Protocol, error) {
	p, err := ParseProtocol(s)
	if err != nil || !p.Traces() {
		return "", fmt.Errorf("protocol %q: use %s", s, ProtocolNames(TraceProtocols()))
	}
	return p, nil
}

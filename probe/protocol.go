package probe

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// protocolSpec is one protocol linecheck probes with: what ping does with
// it (its driver; nil when ping has none) and what trace does (its probes
// and their replies, its default port). Each protocol's spec lives in its
// own file beside its ping driver (ping_icmp.go, ping_tcp.go,
// trace_udp.go), its trace part in trace_<name>.go; protocols lists them
// once.
type protocolSpec struct {
	name Protocol
	// ping is the ping sweep's driver for it; nil when ping has none.
	ping *pingProtocol
	// trace is how trace probes with it; nil when trace does not.
	trace traceProto
	// port is true when its targets name a port (trace's default below).
	port bool
	// tracePort is trace's destination port when none is given.
	tracePort int
	// nat is true when trace can detect NAT with it (TraceConfig.NAT).
	nat bool
}

// traceProto is one protocol's part in a trace: the probe it builds for a
// TTL, flow and key, the sockets it needs and how a reply is matched to its
// probe. The socket-mode drivers (tracedriver.go, tracerecverr.go,
// tracedgram.go) own the sockets' life, the reading and the flows, and ask
// the protocol for the rest. Each is in trace_<name>.go (icmpTrace,
// udpTrace, tcpTrace).
type traceProto interface {
	// flowField is the header field its flows differ in under cfg.
	flowField(cfg TraceConfig) FlowField
	// unprivileged is the mode it traces in without raw sockets:
	// ModeRecverr (then it is a recverrProto) or ModeDatagram (ICMP's
	// ping sockets, dgramDriver).
	unprivileged() TraceMode

	// rawOpen opens what d needs beside its ICMP socket (d.l4, with its
	// filters) and sets d's source ports (d.sportBase) and d.nat; l4
	// tells whether d.l4 receives replies. On an error it has closed
	// what it opened.
	rawOpen(d *rawDriver, open func(proto int) (*sock, error)) (l4 bool, err error)
	// rawProbe is the packet of p and the socket it leaves from;
	// withTTL is true when the packet carries its IP header with the TTL
	// (no setsockopt).
	rawProbe(d *rawDriver, p TraceProbe) (s *sock, b []byte, withTTL bool)
	// rawFlow is flow's header fields (FlowNamer).
	rawFlow(d *rawDriver, flow int) FlowIdent
	// rawReply matches a packet that is no ICMP error: a segment from
	// d.l4 (l4), or another ICMP message (an echo reply). ok=false for
	// unrelated traffic, a *ForeignError for another run's.
	rawReply(d *rawDriver, r TraceReply, b []byte, l4 bool) (TraceReply, bool, error)
	// rawQuoted matches the probe q an ICMP error about d.dst quotes,
	// setting r.Key (and the NAT ID).
	rawQuoted(d *rawDriver, r TraceReply, q quoted) (TraceReply, bool, error)
}

// recverrProto is a traceProto that traces from ordinary sockets with
// IP_RECVERR (ModeRecverr, recverrDriver).
type recverrProto interface {
	traceProto
	// recverrFlow readies flow fl of d (its socket and reader, or its
	// turn token) on first use.
	recverrFlow(d *recverrDriver, fl *recverrFlow) error
	// recverrSend sends p on flow fl; the replies go to d.in.
	recverrSend(d *recverrDriver, fl *recverrFlow, p TraceProbe) (time.Time, error)
}

// traceProtoOf is p's trace part; nil when trace does not probe with p.
func traceProtoOf(p Protocol) traceProto { s, _ := protocolOf(p); return s.trace }

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
func TraceProtocols() []Protocol {
	return protocolsWhere(func(s protocolSpec) bool { return s.trace != nil })
}

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
func (p Protocol) Traces() bool { s, ok := protocolOf(p); return ok && s.trace != nil }

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

package probe

import (
	"encoding/binary"
	"net/netip"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ICMP message types used here (RFC 792, RFC 4443).
const (
	icmp4EchoReply    = 0
	icmp4Unreachable  = 3
	icmp4Echo         = 8
	icmp4TimeExceeded = 11
	icmp6Unreachable  = 1
	icmp6TimeExceeded = 3
	icmp6Echo         = 128
	icmp6EchoReply    = 129

	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
)

// onesSum adds b as big-endian 16-bit words to sum (ones-complement, not folded).
func onesSum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// checksum is the Internet checksum (RFC 1071) of b with an initial sum.
func checksum(init uint32, b []byte) uint16 { return ^fold(onesSum(init, b)) }

// pseudoSum is the ones-complement sum of the IPv4 or IPv6 pseudo-header.
func pseudoSum(src, dst netip.Addr, proto int, length int) uint32 {
	var s uint32
	s = onesSum(s, src.AsSlice())
	s = onesSum(s, dst.AsSlice())
	if src.Is4() {
		s += uint32(proto) + uint32(length)
	} else {
		s += uint32(length>>16) + uint32(length&0xffff) + uint32(proto)
	}
	return s
}

// compensate returns the 16-bit word that, added to a message whose
// ones-complement sum (with that word and the checksum field zero) is partial,
// makes the folded sum equal want. It is how a Paris probe keeps its checksum
// constant while the sequence number changes.
func compensate(partial uint32, want uint16) uint16 {
	// want = partial + x (ones complement) → x = want + ^partial.
	x := fold(uint32(want) + uint32(^fold(partial)))
	return x
}

// parisEcho builds an ICMP echo request whose checksum field (and so every
// byte a router could hash) is the same for every seq of a flow: the first
// two payload bytes compensate the sequence number. For ICMPv6 the kernel
// writes the checksum, but since the message sum is constant so is it.
func parisEcho(v6 bool, id, seq uint16, flow int, size int) []byte {
	if size < 4 {
		size = 4
	}
	b := make([]byte, 8+size)
	if v6 {
		b[0] = icmp6Echo
	} else {
		b[0] = icmp4Echo
	}
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	want := icmpFlowSum(flow)
	x := compensate(onesSum(0, b), want)
	binary.BigEndian.PutUint16(b[8:], x)
	if !v6 {
		binary.BigEndian.PutUint16(b[2:], ^want)
	}
	return b
}

// udpProbe builds a UDP datagram whose checksum equals key (1..0xfffe): the
// ports stay fixed for the flow and the probe key hides in the checksum, as
// Paris traceroute does.
func udpProbe(src, dst netip.Addr, sport, dport int, key uint16, size int) []byte {
	if size < 2 {
		size = 2
	}
	b := make([]byte, 8+size)
	binary.BigEndian.PutUint16(b[0:], uint16(sport))
	binary.BigEndian.PutUint16(b[2:], uint16(dport))
	binary.BigEndian.PutUint16(b[4:], uint16(len(b)))
	partial := onesSum(pseudoSum(src, dst, protoUDP, len(b)), b)
	x := compensate(partial, ^key)
	binary.BigEndian.PutUint16(b[8:], x)
	binary.BigEndian.PutUint16(b[6:], key)
	return b
}

// ipv4Header builds the 20-byte IPv4 header of a probe written with
// IP_HDRINCL: the kernel fills in the total length and the header checksum;
// the don't-fragment bit is set as the kernel sets it on its own probes.
func ipv4Header(src, dst netip.Addr, proto, ttl int, id uint16, payload int) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+payload))
	binary.BigEndian.PutUint16(h[4:], id)
	binary.BigEndian.PutUint16(h[6:], 0x4000)
	h[8], h[9] = byte(ttl), byte(proto)
	s4, d4 := src.As4(), dst.As4()
	copy(h[12:], s4[:])
	copy(h[16:], d4[:])
	return h
}

// tcpSYN builds a TCP SYN (with an MSS option) carrying seq.
func tcpSYN(src, dst netip.Addr, sport, dport int, seq uint32) []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint16(b[0:], uint16(sport))
	binary.BigEndian.PutUint16(b[2:], uint16(dport))
	binary.BigEndian.PutUint32(b[4:], seq)
	b[12] = 6 << 4 // data offset: 6 words
	b[13] = 0x02   // SYN
	binary.BigEndian.PutUint16(b[14:], 65535)
	b[20], b[21] = 2, 4 // MSS
	binary.BigEndian.PutUint16(b[22:], 1460)
	binary.BigEndian.PutUint16(b[16:], checksum(pseudoSum(src, dst, protoTCP, len(b)), b))
	return b
}

// Parsing what comes back uses golang.org/x/net/icmp (and ipv4.ParseHeader);
// only the construction above is hand-written: icmp.Message.Marshal computes
// the ICMP checksum itself, so it cannot hold the checksum of a flow constant
// with a compensating payload word, nor hide the probe key in a UDP checksum
// or a TCP sequence number (x/net builds no UDP or TCP at all).

// icmpProtocol is the IANA protocol number icmp.ParseMessage takes.
func icmpProtocol(v6 bool) int {
	if v6 {
		return protoICMPv6
	}
	return protoICMP
}

// ipv4Payload strips the IPv4 header that IPv4 raw sockets deliver (IPv6 raw
// sockets deliver none); ok is false for a packet too short for its header.
func ipv4Payload(b []byte) ([]byte, bool) {
	h, err := ipv4.ParseHeader(b)
	if err != nil {
		return nil, false
	}
	return b[h.Len:], true
}

// echoReplyData returns the data of the echo reply in b (after the ICMP
// type, code, checksum, id and sequence number), b being what a socket of
// the family of v6 delivered: an IPv4 header in front when raw4. It accepts
// exactly what ipv4Payload and parseEchoReply do, without their
// allocations: a sweep runs it for every reply (the data aliases b).
func echoReplyData(v6, raw4 bool, b []byte) ([]byte, bool) {
	if raw4 {
		if len(b) < ipv4.HeaderLen {
			return nil, false
		}
		hl := int(b[0]&0x0f) << 2
		if hl < ipv4.HeaderLen || len(b) < hl {
			return nil, false
		}
		b = b[hl:]
	}
	want := byte(icmp4EchoReply)
	if v6 {
		want = icmp6EchoReply
	}
	if len(b) < 8 || b[0] != want {
		return nil, false
	}
	return b[8:], true
}

// parseEchoReply returns the echo reply in msg (an ICMP or ICMPv6 message,
// IP header stripped); ok is false for anything else, echo requests included
// (a raw socket on loopback sees our own).
func parseEchoReply(v6 bool, msg []byte) (*icmp.Echo, bool) {
	m, err := icmp.ParseMessage(icmpProtocol(v6), msg)
	if err != nil || m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply {
		return nil, false
	}
	e, ok := m.Body.(*icmp.Echo)
	return e, ok
}

// icmpError is a time-exceeded or destination-unreachable message: the
// original datagram it quotes and its RFC 4884 extensions.
type icmpError struct {
	unreach bool
	data    []byte
	exts    []icmp.Extension
}

// parseICMPError parses msg (IP header stripped) as a time-exceeded or
// destination-unreachable message; ok is false for any other message.
//
// x/net finds the extension structure where RFC 4884's length field says and,
// when that length is 0 or under 128 bytes or nothing valid is there, after a
// fixed 128 bytes: the RFC 4950 §5 "non-compliant" layout of routers that
// predate RFC 4884. An extension whose checksum does not verify is ignored
// (the whole body is then the quoted datagram). So no fallback is needed here.
func parseICMPError(v6 bool, msg []byte) (icmpError, bool) {
	m, err := icmp.ParseMessage(icmpProtocol(v6), msg)
	if err != nil {
		return icmpError{}, false
	}
	switch b := m.Body.(type) {
	case *icmp.TimeExceeded:
		return icmpError{data: b.Data, exts: b.Extensions}, true
	case *icmp.DstUnreach:
		return icmpError{unreach: true, data: b.Data, exts: b.Extensions}, true
	}
	return icmpError{}, false
}

// quoted is the probe found inside an ICMP error: the original datagram's
// destination, protocol and first transport bytes.
type quoted struct {
	dst   netip.Addr
	proto int
	id    uint16 // IPv4 identification (0 for IPv6)
	l4    []byte
}

// parseQuoted reads the original datagram quoted in an ICMP error (the
// icmp.TimeExceeded or icmp.DstUnreach Data).
func parseQuoted(v6 bool, data []byte) (quoted, bool) {
	var q quoted
	if !v6 {
		h, err := ipv4.ParseHeader(data)
		if err != nil || h.Version != 4 || len(data) < h.Len+8 {
			return q, false
		}
		q.dst, _ = netip.AddrFromSlice(h.Dst.To4())
		q.proto = h.Protocol
		q.id = uint16(h.ID)
		q.l4 = data[h.Len:]
		return q, true
	}
	// x/net/ipv6 has no header parser (its Header is for control messages);
	// the fixed 40-byte header is a few lines. Extension headers are not
	// followed: our probes carry none.
	if len(data) < 48 || data[0]>>4 != 6 {
		return q, false
	}
	q.dst = netip.AddrFrom16([16]byte(data[24:40]))
	q.proto = int(data[6])
	q.l4 = data[40:]
	return q, true
}

// mplsLabels returns the RFC 4950 incoming MPLS label stacks (class 1,
// C-type 1) among RFC 4884 extensions, outermost label first.
func mplsLabels(exts []icmp.Extension) []MPLS {
	var out []MPLS
	for _, e := range exts {
		ls, ok := e.(*icmp.MPLSLabelStack)
		if !ok || ls.Class != 1 || ls.Type != 1 {
			continue
		}
		for _, l := range ls.Labels {
			out = append(out, MPLS{Label: l.Label, TC: l.TC, S: l.S, TTL: l.TTL})
		}
	}
	return out
}

// parseMPLS returns the MPLS label stack of an ICMP time-exceeded or
// unreachable message msg (ICMP header included, IP header stripped).
func parseMPLS(v6 bool, msg []byte) []MPLS {
	e, ok := parseICMPError(v6, msg)
	if !ok {
		return nil
	}
	return mplsLabels(e.exts)
}

package probe

import (
	"encoding/binary"
	"net/netip"

	"github.com/linecheck/linecheck/internal/route"
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

// echoMessage builds an ICMP echo request (v6 selects ICMPv6 types).
func echoMessage(v6 bool, id, seq uint16, payload []byte) []byte {
	b := make([]byte, 8+len(payload))
	if v6 {
		b[0] = icmp6Echo
	} else {
		b[0] = icmp4Echo
	}
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], payload)
	if !v6 {
		binary.BigEndian.PutUint16(b[2:], checksum(0, b))
	}
	return b
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
	want := uint16(0x1000 + flow*0x101)
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

// quoted is the probe found inside an ICMP error: the original datagram's
// destination, protocol and first transport bytes.
type quoted struct {
	dst   netip.Addr
	proto int
	l4    []byte
}

// parseQuoted reads the original datagram quoted in an ICMP error body
// (after the 8-byte ICMP header).
func parseQuoted(v6 bool, body []byte) (quoted, bool) {
	var q quoted
	if !v6 {
		if len(body) < 20 || body[0]>>4 != 4 {
			return q, false
		}
		ihl := int(body[0]&0x0f) * 4
		if ihl < 20 || len(body) < ihl+8 {
			return q, false
		}
		q.dst = netip.AddrFrom4([4]byte(body[16:20]))
		q.proto = int(body[9])
		q.l4 = body[ihl:]
		return q, true
	}
	if len(body) < 48 || body[0]>>4 != 6 {
		return q, false
	}
	q.dst = netip.AddrFrom16([16]byte(body[24:40]))
	q.proto = int(body[6])
	q.l4 = body[40:]
	return q, true
}

// parseMPLS returns the MPLS label stack from the RFC 4884 extension structure
// of an ICMP time-exceeded or unreachable message msg (ICMP header included).
// RFC 4884 puts the original datagram's length (32-bit words for ICMPv4,
// 64-bit words for ICMPv6) in the header; routers that predate it (RFC 4950
// §5 "non-compliant") append the extension after a fixed 128 bytes with the
// length left 0, so that offset is tried too.
func parseMPLS(v6 bool, msg []byte) []route.MPLS {
	if len(msg) < 8 {
		return nil
	}
	var off int
	if v6 {
		off = int(msg[4]) * 8
	} else {
		off = int(msg[5]) * 4
	}
	if off == 0 {
		off = 128
	}
	off += 8
	if len(msg) < off+4 {
		return nil
	}
	ext := msg[off:]
	if ext[0]>>4 != 2 {
		return nil
	}
	if cs := binary.BigEndian.Uint16(ext[2:]); cs != 0 && checksum(0, ext) != 0 {
		return nil
	}
	var out []route.MPLS
	objs := ext[4:]
	for len(objs) >= 4 {
		l := int(binary.BigEndian.Uint16(objs))
		if l < 4 || l > len(objs) {
			break
		}
		class, ctype := objs[2], objs[3]
		if class == 1 && ctype == 1 {
			for p := objs[4:l]; len(p) >= 4; p = p[4:] {
				v := binary.BigEndian.Uint32(p)
				out = append(out, route.MPLS{
					Label: int(v >> 12),
					TC:    int(v>>9) & 7,
					S:     v>>8&1 == 1,
					TTL:   int(v & 0xff),
				})
			}
		}
		objs = objs[l:]
	}
	return out
}

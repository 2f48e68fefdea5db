package probe

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

var (
	src4 = netip.MustParseAddr("10.77.0.1")
	dst4 = netip.MustParseAddr("10.77.3.2")
	src6 = netip.MustParseAddr("fd77::1")
	dst6 = netip.MustParseAddr("fd77:3::2")
)

func TestParisEchoKeepsTheChecksumOfAFlow(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		sums := map[int]uint16{}
		for flow := 0; flow < 3; flow++ {
			for _, seq := range []uint16{1, 2, 300, 0xfffe} {
				b := parisEcho(v6, 0x1234, seq, flow, 32)
				if got := binary.BigEndian.Uint16(b[6:]); got != seq {
					t.Fatalf("seq field %d, want %d", got, seq)
				}
				// The ones-complement sum of the message (checksum field zeroed)
				// is what the kernel's ICMPv6 checksum depends on.
				c := append([]byte(nil), b...)
				c[2], c[3] = 0, 0
				s := fold(onesSum(0, c))
				if old, ok := sums[flow]; ok && old != s {
					t.Errorf("v6=%v flow %d: message sum %#x for seq %d, %#x before", v6, flow, s, seq, old)
				}
				sums[flow] = s
				if !v6 && checksum(0, b) != 0 {
					t.Errorf("flow %d seq %d: ICMPv4 checksum does not verify", flow, seq)
				}
			}
		}
		if sums[0] == sums[1] || sums[1] == sums[2] {
			t.Errorf("v6=%v: flows share a checksum: %v", v6, sums)
		}
	}
}

func TestUDPProbeCarriesTheKeyInAValidChecksum(t *testing.T) {
	for _, c := range []struct{ src, dst netip.Addr }{{src4, dst4}, {src6, dst6}} {
		for _, key := range []uint16{1, 0x8000, 0xfffe} {
			b := udpProbe(c.src, c.dst, 40000, 33434, key, 24)
			if got := binary.BigEndian.Uint16(b[6:]); got != key {
				t.Errorf("%s: checksum field %#x, want key %#x", c.dst, got, key)
			}
			if checksum(pseudoSum(c.src, c.dst, protoUDP, len(b)), b) != 0 {
				t.Errorf("%s key %#x: UDP checksum does not verify", c.dst, key)
			}
			if binary.BigEndian.Uint16(b[0:]) != 40000 || binary.BigEndian.Uint16(b[2:]) != 33434 {
				t.Errorf("ports changed")
			}
		}
	}
}

func TestTCPSYNChecksumVerifies(t *testing.T) {
	for _, c := range []struct{ src, dst netip.Addr }{{src4, dst4}, {src6, dst6}} {
		b := tcpSYN(c.src, c.dst, 40000, 443, 0x12340007)
		if checksum(pseudoSum(c.src, c.dst, protoTCP, len(b)), b) != 0 {
			t.Errorf("%s: TCP checksum does not verify", c.dst)
		}
		if b[13] != 0x02 || binary.BigEndian.Uint32(b[4:]) != 0x12340007 {
			t.Errorf("flags %#x seq %#x", b[13], binary.BigEndian.Uint32(b[4:]))
		}
	}
}

// timeExceeded4 builds what a raw IPv4 ICMP socket delivers: outer IP header,
// ICMP time exceeded (or unreachable) from "from", quoting an IPv4 datagram to
// dst with protocol proto and transport bytes l4, padded to 128 bytes and
// followed by ext when ext is not nil (RFC 4884 length set when compliant).
func timeExceeded4(typ byte, from, dst netip.Addr, proto byte, l4 []byte, ext []byte, compliant bool) []byte {
	q := make([]byte, 20)
	q[0] = 0x45
	q[8] = 1
	q[9] = proto
	copy(q[12:], src4.AsSlice())
	copy(q[16:], dst.AsSlice())
	q = append(q, l4...)
	icmp := []byte{typ, 0, 0, 0, 0, 0, 0, 0}
	if ext != nil {
		for len(q) < 128 {
			q = append(q, 0)
		}
		if compliant {
			icmp[5] = byte(len(q) / 4)
		}
	}
	icmp = append(icmp, q...)
	icmp = append(icmp, ext...)
	ip := make([]byte, 20)
	ip[0] = 0x45
	ip[9] = protoICMP
	copy(ip[12:], from.AsSlice())
	return append(ip, icmp...)
}

// mplsExt is an RFC 4884 extension with one RFC 4950 object: label 24001,
// TC 5, bottom of stack, TTL 1 — and a second entry label 16, TC 0, not S, TTL 255.
func mplsExt() []byte {
	e1 := uint32(24001)<<12 | 5<<9 | 1<<8 | 1
	e2 := uint32(16)<<12 | 0<<9 | 0<<8 | 255
	obj := []byte{0, 12, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(obj[4:], e1)
	binary.BigEndian.PutUint32(obj[8:], e2)
	ext := append([]byte{0x20, 0, 0, 0}, obj...)
	binary.BigEndian.PutUint16(ext[2:], checksum(0, ext))
	return ext
}

func TestParseMPLS(t *testing.T) {
	want := []MPLS{{Label: 24001, TC: 5, S: true, TTL: 1}, {Label: 16, TC: 0, S: false, TTL: 255}}
	echo := []byte{8, 0, 0, 0, 0x12, 0x34, 0, 7}
	for _, compliant := range []bool{true, false} {
		pkt := timeExceeded4(icmp4TimeExceeded, src4, dst4, protoICMP, echo, mplsExt(), compliant)
		if got := parseMPLS(false, pkt[20:]); !reflect.DeepEqual(got, want) {
			t.Errorf("compliant=%v: %+v, want %+v", compliant, got, want)
		}
	}
	bad := mplsExt()
	bad[2] ^= 0xff
	if got := parseMPLS(false, timeExceeded4(icmp4TimeExceeded, src4, dst4, protoICMP, echo, bad, true)[20:]); got != nil {
		t.Errorf("bad extension checksum accepted: %+v", got)
	}
	if got := parseMPLS(false, timeExceeded4(icmp4TimeExceeded, src4, dst4, protoICMP, echo, nil, false)[20:]); got != nil {
		t.Errorf("no extension, got %+v", got)
	}
}

func TestDecodeMatchesQuotedProbes(t *testing.T) {
	router := netip.MustParseAddr("10.77.1.2")
	icmpD := &rawDriver{cfg: TraceConfig{Proto: "icmp", Flows: 1}, dst: dst4, id: 0x1234}
	udpD := &rawDriver{cfg: TraceConfig{Proto: "udp", Port: 33434, Flows: 2}, dst: dst4, sportBase: 40000}
	tcpD := &rawDriver{cfg: TraceConfig{Proto: "tcp", Port: 443, Flows: 1}, dst: dst4, id: 0x1234, sportBase: 40000}
	udp := func(sport, dport, sum uint16) []byte {
		b := make([]byte, 8)
		binary.BigEndian.PutUint16(b, sport)
		binary.BigEndian.PutUint16(b[2:], dport)
		binary.BigEndian.PutUint16(b[6:], sum)
		return b
	}
	tcpHdr := func(sport, dport uint16, seq, ack uint32, flags byte) []byte {
		b := make([]byte, 20)
		binary.BigEndian.PutUint16(b, sport)
		binary.BigEndian.PutUint16(b[2:], dport)
		binary.BigEndian.PutUint32(b[4:], seq)
		binary.BigEndian.PutUint32(b[8:], ack)
		b[12], b[13] = 5<<4, flags
		ip := make([]byte, 20)
		ip[0] = 0x45
		return append(ip, b...)
	}
	tests := []struct {
		name    string
		d       *rawDriver
		pkt     rxPacket
		ok      bool
		foreign bool
		key     uint16
		dest    bool
	}{
		{"icmp time exceeded quoting our echo", icmpD,
			rxPacket{packet: packet{from: router, data: timeExceeded4(icmp4TimeExceeded, router, dst4, protoICMP, []byte{8, 0, 0, 0, 0x12, 0x34, 0, 7}, nil, false)}},
			true, false, 7, false},
		{"icmp time exceeded quoting another run's echo", icmpD,
			rxPacket{packet: packet{from: router, data: timeExceeded4(icmp4TimeExceeded, router, dst4, protoICMP, []byte{8, 0, 0, 0, 0x99, 0x99, 0, 7}, nil, false)}},
			false, true, 0, false},
		{"icmp error about another destination is skipped", icmpD,
			rxPacket{packet: packet{from: router, data: timeExceeded4(icmp4TimeExceeded, router, src4, protoICMP, []byte{8, 0, 0, 0, 0x12, 0x34, 0, 7}, nil, false)}},
			false, false, 0, false},
		{"echo reply from the target", icmpD,
			rxPacket{packet: packet{from: dst4, data: append(append([]byte{0x45}, make([]byte, 19)...), 0, 0, 0, 0, 0x12, 0x34, 0, 9)}},
			true, false, 9, true},
		{"udp time exceeded, flow 1", udpD,
			rxPacket{packet: packet{from: router, data: timeExceeded4(icmp4TimeExceeded, router, dst4, protoUDP, udp(40001, 33434, 0x0abc), nil, false)}},
			true, false, 0x0abc, false},
		{"udp port unreachable from the target", udpD,
			rxPacket{packet: packet{from: dst4, data: timeExceeded4(icmp4Unreachable, dst4, dst4, protoUDP, udp(40000, 33434, 5), nil, false)}},
			true, false, 5, true},
		{"udp quoted source port outside our flows", udpD,
			rxPacket{packet: packet{from: router, data: timeExceeded4(icmp4TimeExceeded, router, dst4, protoUDP, udp(40002, 33434, 5), nil, false)}},
			false, true, 0, false},
		{"tcp syn-ack from the target", tcpD,
			rxPacket{l4: true, packet: packet{from: dst4, data: tcpHdr(443, 40000, 555, 0x12340007+1, 0x12)}},
			true, false, 7, true},
		{"tcp rst from the target", tcpD,
			rxPacket{l4: true, packet: packet{from: dst4, data: tcpHdr(443, 40000, 0, 0x12340008+1, 0x14)}},
			true, false, 8, true},
		{"tcp reply to another run's sequence", tcpD,
			rxPacket{l4: true, packet: packet{from: dst4, data: tcpHdr(443, 40000, 0, 0x55550008+1, 0x14)}},
			false, true, 0, false},
		{"our own outgoing syn seen on loopback is skipped", tcpD,
			rxPacket{l4: true, packet: packet{from: dst4, data: tcpHdr(443, 40000, 0x12340007, 0, 0x02)}},
			false, false, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok, err := tc.d.decode(tc.pkt)
			if tc.foreign != errors.Is(err, ErrForeign) {
				t.Fatalf("err %v, foreign want %v", err, tc.foreign)
			}
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if ok && (r.Key != tc.key || r.Dest != tc.dest) {
				t.Errorf("key %d dest %v, want %d %v", r.Key, r.Dest, tc.key, tc.dest)
			}
		})
	}
}

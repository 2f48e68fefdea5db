package probe

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// rfc1624 updates checksum hc for the 16-bit words old replaced by new, as
// a router rewriting a header does (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
func rfc1624(hc uint16, old, new []uint16) uint16 {
	s := uint32(^hc)
	for i := range old {
		s += uint32(^old[i]) + uint32(new[i])
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// words4 is an IPv4 address as its two 16-bit words.
func words4(a string) []uint16 {
	b := netip.MustParseAddr(a).As4()
	return []uint16{uint16(b[0])<<8 | uint16(b[1]), uint16(b[2])<<8 | uint16(b[3])}
}

// The NAT ID of a source rewrite 10.77.0.1 → 10.77.3.1: the rewrite adds
// 0x0301 − 0x0001 = 0x0300 to the checksummed sum, so the checksum drops by
// 0x300, and quoted − sent = −0x300 = 0xFD00 (64768), whatever the sent
// checksum: also for the small ones, where the incremental update wraps past
// 0 and the plain 16-bit difference would read 0xFCFF.
func TestTraceNATIDOfAStatelessSourceRewrite(t *testing.T) {
	old, new := words4("10.77.0.1"), words4("10.77.3.1")
	for _, sent := range []uint16{1, 2, 0x2ff, 0x300, 0x301, 0x1234, 0x8000, 0xfd00, 0xfffe} {
		quoted := rfc1624(sent, old, new)
		if got := TraceNATID(sent, quoted); got != 0xfd00 {
			t.Errorf("sent %#04x, quoted %#04x: NAT ID %#04x, want 0xfd00", sent, quoted, got)
		}
	}
	// The way back (10.77.3.1 → 10.77.0.1) is +0x300; no rewrite is 0.
	for _, sent := range []uint16{1, 0x8000, 0xfffe} {
		if got := TraceNATID(sent, rfc1624(sent, new, old)); got != 0x300 {
			t.Errorf("sent %#04x: reverse NAT ID %#04x, want 0x0300", sent, got)
		}
		if got := TraceNATID(sent, sent); got != 0 {
			t.Errorf("sent %#04x unchanged: NAT ID %#04x, want 0", sent, got)
		}
	}
	// A rewritten checksum of 0 goes on the wire as 0xffff (RFC 768): the
	// same one's-complement value, the same NAT ID.
	if got := TraceNATID(0x0300, 0xffff); got != 0xfd00 {
		t.Errorf("quoted 0xffff for 0: NAT ID %#04x, want 0xfd00", got)
	}
}

// timeExceeded wraps the probe b (IPv4 header and UDP) as router from
// quotes it back to the client, outer IPv4 header included (as a raw socket
// delivers it).
func timeExceeded(from, to netip.Addr, b []byte) []byte {
	m := append([]byte{icmp4TimeExceeded, 0, 0, 0, 0, 0, 0, 0}, b...)
	binary.BigEndian.PutUint16(m[2:], checksum(0, m))
	return append(ipv4Header(from, to, protoICMP, 64, 0, len(m)), m...)
}

// A raw udp driver with NAT on matches a reply by the quoted IP ID and
// reads the NAT ID from the quoted checksum: a probe whose source the
// router before the responder rewrote (10.77.0.1 → 10.77.3.1, checksum
// recomputed from scratch here) still matches its key and reads 0xFD00;
// one quoted as sent reads 0. Without NAT the rewritten probe matches no
// key of the run.
func TestRawDriverReadsTheNATIDFromTheQuotedChecksum(t *testing.T) {
	src, rw, dst := netip.MustParseAddr("10.77.0.1"), netip.MustParseAddr("10.77.3.1"), netip.MustParseAddr("10.77.2.2")
	hop := netip.MustParseAddr("10.77.1.2")
	const sport, key = 40000, 0x0042
	d := &rawDriver{cfg: TraceConfig{Proto: UDP, Port: DefaultUDPPort, Flows: 1}, dst: dst, src: src, sportBase: sport, nat: true}
	udp := udpProbe(src, dst, sport, DefaultUDPPort, key, 24)
	sent := append(ipv4Header(src, dst, protoUDP, 2, key, len(udp)), udp...)

	r, ok, err := d.decode(rxPacket{packet: packet{data: timeExceeded(hop, src, sent), from: hop}})
	if err != nil || !ok || r.Key != key || !r.HasNATID || r.NATID != 0 {
		t.Fatalf("as sent: %+v ok %v err %v, want key %#x NAT ID 0", r, ok, err, key)
	}

	nat := append([]byte(nil), udp...)
	binary.BigEndian.PutUint16(nat[6:], 0)
	binary.BigEndian.PutUint16(nat[6:], checksum(pseudoSum(rw, dst, protoUDP, len(nat)), nat))
	rewritten := append(ipv4Header(rw, dst, protoUDP, 1, key, len(nat)), nat...)
	r, ok, err = d.decode(rxPacket{packet: packet{data: timeExceeded(hop, src, rewritten), from: hop}})
	if err != nil || !ok || r.Key != key || !r.HasNATID || r.NATID != 0xfd00 {
		t.Fatalf("rewritten: %+v ok %v err %v, want key %#x NAT ID 0xfd00", r, ok, err, key)
	}

	d.nat = false
	r, ok, err = d.decode(rxPacket{packet: packet{data: timeExceeded(hop, src, rewritten), from: hop}})
	if ok && r.Key == key || r.HasNATID {
		t.Errorf("without NAT: %+v ok %v err %v, want no match of key %#x and no NAT ID", r, ok, err, key)
	}
}

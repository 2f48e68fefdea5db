package probe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// quotedEcho is the start of the datagram a router quotes: an IPv4 or IPv6
// header to dst carrying our echo request (id, seq), padded with pad bytes.
func quotedEcho(dst netip.Addr, id, seq uint16, pad int) []byte {
	var ip []byte
	echo := []byte{icmp4Echo, 0, 0, 0, 0, 0, 0, 0}
	if dst.Is4() {
		ip = make([]byte, 20)
		ip[0], ip[8], ip[9] = 0x45, 1, protoICMP
		copy(ip[12:], src4.AsSlice())
		copy(ip[16:], dst.AsSlice())
	} else {
		ip = make([]byte, 40)
		ip[0], ip[6], ip[7] = 0x60, protoICMPv6, 1
		copy(ip[8:], src6.AsSlice())
		copy(ip[24:], dst.AsSlice())
		echo[0] = icmp6Echo
	}
	binary.BigEndian.PutUint16(echo[4:], id)
	binary.BigEndian.PutUint16(echo[6:], seq)
	return append(append(ip, echo...), make([]byte, pad)...)
}

// The oracle is x/net's own encoder: icmp.Message.Marshal lays out the RFC
// 4884 extension structure (padding, length field, extension checksum) and
// the RFC 4950 label entries independently of the hand-built mplsExt.
func TestMPLSFromXNetMarshalledErrors(t *testing.T) {
	labels := []icmp.MPLSLabel{{Label: 24001, TC: 5, S: false, TTL: 1}, {Label: 1048575, TC: 7, S: true, TTL: 254}}
	want := []MPLS{{Label: 24001, TC: 5, S: false, TTL: 1}, {Label: 1048575, TC: 7, S: true, TTL: 254}}
	router4, router6 := netip.MustParseAddr("10.77.1.2"), netip.MustParseAddr("fd77:1::2")
	tests := []struct {
		name    string
		v6      bool
		typ     icmp.Type
		pad     int  // quoted bytes beyond the echo: > 128 in all moves the extension
		zeroLen bool // RFC 4950 §5 non-compliant: length field 0, extension at 128
		dest    bool
		router  netip.Addr
	}{
		{"ipv4 time exceeded, compliant", false, ipv4.ICMPTypeTimeExceeded, 0, false, false, router4},
		{"ipv4 time exceeded, length 0 (non-compliant)", false, ipv4.ICMPTypeTimeExceeded, 0, true, false, router4},
		{"ipv4 time exceeded, 160-byte quote", false, ipv4.ICMPTypeTimeExceeded, 132, false, false, router4},
		{"ipv4 unreachable from the target", false, ipv4.ICMPTypeDestinationUnreachable, 0, false, true, dst4},
		{"ipv6 time exceeded, compliant", true, ipv6.ICMPTypeTimeExceeded, 0, false, false, router6},
		{"ipv6 time exceeded, length 0 (non-compliant)", true, ipv6.ICMPTypeTimeExceeded, 0, true, false, router6},
		{"ipv6 time exceeded, 184-byte quote", true, ipv6.ICMPTypeTimeExceeded, 136, false, false, router6},
		{"ipv6 unreachable from the target", true, ipv6.ICMPTypeDestinationUnreachable, 0, false, true, dst6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := dst4
			if tc.v6 {
				dst = dst6
			}
			q := quotedEcho(dst, 0x1234, 7, tc.pad)
			exts := []icmp.Extension{&icmp.MPLSLabelStack{Class: 1, Type: 1, Labels: labels}}
			var body icmp.MessageBody = &icmp.TimeExceeded{Data: q, Extensions: exts}
			if tc.typ == ipv4.ICMPTypeDestinationUnreachable || tc.typ == ipv6.ICMPTypeDestinationUnreachable {
				body = &icmp.DstUnreach{Data: q, Extensions: exts}
			}
			msg, err := (&icmp.Message{Type: tc.typ, Body: body}).Marshal(nil)
			if err != nil {
				t.Fatal(err)
			}
			lenByte := 5
			if tc.v6 {
				lenByte = 4
			}
			if msg[lenByte] == 0 {
				t.Fatalf("x/net wrote no RFC 4884 length: % x", msg[:8])
			}
			if tc.zeroLen {
				if len(q) > 128 {
					t.Fatal("a non-compliant extension sits at 128 bytes: quote at most 128")
				}
				msg[lenByte] = 0
			}
			if got := parseMPLS(tc.v6, msg); !reflect.DeepEqual(got, want) {
				t.Errorf("parseMPLS: %+v, want %+v", got, want)
			}
			data := msg
			if !tc.v6 {
				ip := make([]byte, 20)
				ip[0], ip[9] = 0x45, protoICMP
				copy(ip[12:], tc.router.AsSlice())
				data = append(ip, msg...)
			}
			d := &rawDriver{cfg: TraceConfig{Proto: "icmp", Flows: 1}, v6: tc.v6, dst: dst, id: 0x1234}
			r, ok, err := d.decode(rxPacket{packet: packet{from: tc.router, data: data}})
			if err != nil || !ok {
				t.Fatalf("decode: ok %v err %v", ok, err)
			}
			if r.Key != 7 || r.Dest != tc.dest || !reflect.DeepEqual(r.MPLS, want) {
				t.Errorf("decode: key %d dest %v mpls %+v, want 7 %v %+v", r.Key, r.Dest, r.MPLS, tc.dest, want)
			}
		})
	}
}

// Only class 1 C-type 1 objects are incoming label stacks: an object of
// another class, class 1 with another C-type, or no extension at all give none.
func TestMPLSIgnoresOtherObjectsAndPlainErrors(t *testing.T) {
	q := quotedEcho(dst4, 0x1234, 7, 0)
	entry := []byte{0x05, 0xdc, 0x11, 0x01} // label 24001, S, TTL 1
	for _, exts := range [][]icmp.Extension{
		nil,
		{&icmp.RawExtension{Data: append([]byte{0, 8, 3, 1}, entry...)}},
		{&icmp.RawExtension{Data: append([]byte{0, 8, 1, 2}, entry...)}},
	} {
		msg, err := (&icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: q, Extensions: exts}}).Marshal(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseMPLS(false, msg); got != nil {
			t.Errorf("extensions %v: labels %+v, want none", exts, got)
		}
	}
}

// Echo replies marshalled by x/net decode to their sequence number (the key).
func TestDecodeXNetEchoReply(t *testing.T) {
	for _, c := range []struct {
		v6  bool
		dst netip.Addr
		typ icmp.Type
	}{{false, dst4, ipv4.ICMPTypeEchoReply}, {true, dst6, ipv6.ICMPTypeEchoReply}} {
		msg, err := (&icmp.Message{Type: c.typ, Body: &icmp.Echo{ID: 0x1234, Seq: 0xbeef, Data: []byte("payload")}}).Marshal(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !c.v6 {
			msg = append(append([]byte{0x45}, make([]byte, 19)...), msg...)
		}
		d := &rawDriver{cfg: TraceConfig{Proto: "icmp", Flows: 1}, v6: c.v6, dst: c.dst, id: 0x1234}
		r, ok, err := d.decode(rxPacket{packet: packet{from: c.dst, data: msg}})
		if err != nil || !ok || r.Key != 0xbeef || !r.Dest {
			t.Errorf("v6=%v: %+v ok %v err %v, want key 0xbeef at the destination", c.v6, r, ok, err)
		}
	}
}

// An IPv4 header length (IHL 15 = 60 bytes) longer than the packet is
// refused, not sliced past.
func TestDecodeRefusesATruncatedIPv4Header(t *testing.T) {
	pkt := append([]byte{0x4f}, make([]byte, 27)...)
	d := &rawDriver{cfg: TraceConfig{Proto: "icmp", Flows: 1}, dst: dst4, id: 0x1234}
	for _, tcp := range []bool{false, true} {
		if _, ok, err := d.decode(rxPacket{l4: tcp, packet: packet{from: dst4, data: pkt}}); ok || err != nil {
			t.Errorf("tcp=%v: ok %v err %v, want skipped", tcp, ok, err)
		}
	}
}

// echoReplyData, the sweep's allocation-free reply parser, accepts exactly
// what x/net's parsers do (ipv4.ParseHeader, icmp.ParseMessage) and returns
// the same echo data, on real replies, other ICMP types and every
// truncation of them.
func TestEchoReplyDataAgreesWithXNet(t *testing.T) {
	echo := func(typ icmp.Type, data []byte) []byte {
		b, err := (&icmp.Message{Type: typ, Body: &icmp.Echo{ID: 7, Seq: 9, Data: data}}).Marshal(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withIPv4 := func(opts int, msg []byte) []byte {
		h := make([]byte, 20+opts)
		h[0] = 0x40 | byte((20+opts)/4)
		h[9] = 1
		return append(h, msg...)
	}
	payload := []byte("nonce123\x00\x00\x00\x05abcdefgh")
	msgs4 := [][]byte{echo(ipv4.ICMPTypeEchoReply, payload), echo(ipv4.ICMPTypeEchoReply, nil),
		echo(ipv4.ICMPTypeEcho, payload), echo(ipv4.ICMPTypeDestinationUnreachable, payload)}
	msgs6 := [][]byte{echo(ipv6.ICMPTypeEchoReply, payload), echo(ipv6.ICMPTypeEchoRequest, payload)}
	xnet := func(v6, raw4 bool, b []byte) ([]byte, bool) {
		if raw4 {
			var ok bool
			if b, ok = ipv4Payload(b); !ok {
				return nil, false
			}
		}
		e, ok := parseEchoReply(v6, b)
		if !ok {
			return nil, false
		}
		return e.Data, true
	}
	check := func(name string, v6, raw4 bool, b []byte) {
		for n := 0; n <= len(b); n++ {
			got, gok := echoReplyData(v6, raw4, b[:n])
			want, wok := xnet(v6, raw4, b[:n])
			if gok != wok || !bytes.Equal(got, want) {
				t.Errorf("%s[:%d]: %q %v, x/net %q %v", name, n, got, gok, want, wok)
			}
		}
	}
	for i, m := range msgs4 {
		check(fmt.Sprintf("v4 dgram %d", i), false, false, m)
		check(fmt.Sprintf("v4 raw %d", i), false, true, withIPv4(0, m))
		check(fmt.Sprintf("v4 raw+options %d", i), false, true, withIPv4(8, m))
	}
	for i, m := range msgs6 {
		check(fmt.Sprintf("v6 %d", i), true, false, m)
	}
	bad := withIPv4(0, msgs4[0])
	bad[0] = 0x44 // header length 16 < 20
	check("v4 raw short IHL", false, true, bad)
}

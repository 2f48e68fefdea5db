package probe

import (
	"encoding/binary"
	"fmt"
)

// icmpTrace is ICMP's part in a trace: Paris echo requests (parisEcho)
// whose sequence number is the probe key and whose payload keeps each
// flow's checksum, matched by the echo id in an echo reply or in the
// request an ICMP error quotes. In raw mode they leave the ICMP socket that
// also receives; without privileges ICMP traces over ping sockets
// (ModeDatagram, dgramDriver), where the kernel owns the id.
type icmpTrace struct{}

func (icmpTrace) flowField(TraceConfig) FlowField { return FlowICMP }

func (icmpTrace) unprivileged() TraceMode { return ModeDatagram }

// rawOpen opens nothing: probes leave the ICMP socket.
func (icmpTrace) rawOpen(*rawDriver, func(int) (*sock, error)) (bool, error) { return false, nil }

func (icmpTrace) rawProbe(d *rawDriver, p TraceProbe) (*sock, []byte, bool) {
	return d.icmp, parisEcho(d.v6, d.id, p.Key, p.Flow, 32), false
}

// rawFlow is flow's ICMP checksum.
func (icmpTrace) rawFlow(_ *rawDriver, flow int) FlowIdent {
	return FlowIdent{ID: int(icmpFlowSum(flow))}
}

// rawReply matches the target's echo reply by the run's id.
func (icmpTrace) rawReply(d *rawDriver, r TraceReply, b []byte, l4 bool) (TraceReply, bool, error) {
	if l4 {
		return r, false, nil
	}
	e, ok := parseEchoReply(d.v6, b)
	if !ok || r.From != d.dst {
		return r, false, nil
	}
	if uint16(e.ID) != d.id {
		return r, false, &ForeignError{Reason: fmt.Sprintf("echo reply from %s with id %d", r.From, e.ID)}
	}
	r.Key, r.Dest = uint16(e.Seq), true
	return r, true, nil
}

// rawQuoted matches a quoted echo request by the run's id.
func (icmpTrace) rawQuoted(d *rawDriver, r TraceReply, q quoted) (TraceReply, bool, error) {
	want := byte(icmp4Echo)
	if d.v6 {
		want = icmp6Echo
	}
	l4 := q.l4
	if q.proto != protoICMP && q.proto != protoICMPv6 || len(l4) < 8 || l4[0] != want {
		return r, false, nil
	}
	if id := binary.BigEndian.Uint16(l4[4:]); id != d.id {
		return r, false, &ForeignError{Reason: fmt.Sprintf("quoted echo id %d", id)}
	}
	r.Key = binary.BigEndian.Uint16(l4[6:])
	return r, true, nil
}

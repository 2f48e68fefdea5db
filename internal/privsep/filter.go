package privsep

import (
	"errors"

	"github.com/linecheck/linecheck/probe"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A raw socket receives a copy of every packet of its protocol that the
// host receives: a raw TCP socket every segment of every connection, a raw
// UDP socket every datagram, a raw ICMP socket every ICMP message. Whoever
// holds the descriptor sets its options, so the helper's restrictions must
// be ones the holder cannot lift: a classic BPF socket filter, attached by
// the helper and locked (SO_LOCK_FILTER: no later SO_ATTACH_FILTER,
// SO_ATTACH_BPF or SO_DETACH_FILTER succeeds), keeps to what the probes
// read.
//
//   - ICMP and ICMPv6: echo reply, time exceeded and destination
//     unreachable, the three types the probes decode (their own ICMP_FILTER
//     narrows further; it can be changed, the BPF filter cannot).
//   - UDP: nothing. The probes only send on it.
//   - TCP: segments with RST, or SYN and ACK, that carry no data, to the
//     source ports of raw TCP probes (below the ephemeral ports): the
//     answers to a SYN probe. No segment of a connection's data ever
//     passes, nor the handshake of a connection from an ephemeral port.

// accepted is the length a filter keeps of a packet it lets through (all of
// it: an IP datagram is shorter).
const accepted = 1 << 18

// ipHeader sets X to the offset of the transport header: a raw IPv4 socket
// sees the IP header first, a raw IPv6 socket the transport header.
func ipHeader(v6 bool) bpf.Instruction {
	if v6 {
		return bpf.LoadConstant{Dst: bpf.RegX, Val: 0}
	}
	return bpf.LoadMemShift{Off: 0}
}

// icmpFilter accepts the ICMP (ICMPv6) messages of the given types.
func icmpFilter(v6 bool, types ...uint8) []bpf.Instruction {
	prog := []bpf.Instruction{ipHeader(v6), bpf.LoadIndirect{Off: 0, Size: 1}}
	for i, t := range types {
		// Skip the rest of the comparisons and the drop.
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(t), SkipTrue: uint8(len(types) - i)})
	}
	return append(prog, bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: accepted})
}

// tcpAnswerFilter accepts TCP segments to the ports of raw TCP probes
// (probe.RawTCPPortLow to RawTCPPortHigh, below the ephemeral ports of the
// host's own connections) that have RST set, or SYN and ACK, and no data
// (the packet's length is exactly its headers').
func tcpAnswerFilter(v6 bool) []bpf.Instruction {
	const rst, synAck = 0x04, 0x12
	return []bpf.Instruction{
		ipHeader(v6),
		bpf.LoadIndirect{Off: 2, Size: 2}, // destination port
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: probe.RawTCPPortLow, SkipFalse: 13},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: probe.RawTCPPortHigh, SkipTrue: 12},
		bpf.LoadIndirect{Off: 13, Size: 1}, // flags
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: rst, SkipTrue: 2},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: synAck},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: synAck, SkipFalse: 8},
		bpf.LoadIndirect{Off: 12, Size: 1}, // data offset, in words, in the high nibble
		bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
		bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 2},
		bpf.ALUOpX{Op: bpf.ALUOpAdd}, // + the IPv4 header
		bpf.TAX{},
		bpf.LoadExtension{Num: bpf.ExtLen},
		bpf.JumpIfX{Cond: bpf.JumpEqual, SkipFalse: 1},
		bpf.RetConstant{Val: accepted},
		bpf.RetConstant{Val: 0},
	}
}

// nothingFilter drops every packet.
func nothingFilter() []bpf.Instruction { return []bpf.Instruction{bpf.RetConstant{Val: 0}} }

// filterFor is the filter of a raw socket of the family and protocol
// (allowed has admitted them).
func filterFor(domain, proto int) []bpf.Instruction {
	v6 := domain == unix.AF_INET6
	switch proto {
	case unix.IPPROTO_ICMP:
		return icmpFilter(v6, 0, 3, 11) // echo reply, unreachable, time exceeded
	case unix.IPPROTO_ICMPV6:
		return icmpFilter(v6, 129, 1, 3) // echo reply, unreachable, time exceeded
	case unix.IPPROTO_TCP:
		return tcpAnswerFilter(v6)
	}
	return nothingFilter()
}

// restrict attaches prog to socket fd and locks it, then drops whatever
// the socket queued before the filter was in place.
func restrict(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_LOCK_FILTER, 1); err != nil {
		return err
	}
	var buf [1]byte
	for range 1 << 16 {
		_, _, err := unix.Recvfrom(fd, buf[:], unix.MSG_DONTWAIT|unix.MSG_TRUNC)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
	}
	return errors.New("the socket's queue does not drain")
}

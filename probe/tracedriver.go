package probe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// rawDriver is the socket Driver: probes leave through raw sockets so that
// every header field a router may hash is ours to fix (Paris), and replies come
// in through a raw ICMP socket (time exceeded, unreachable, echo reply) and,
// for TCP, the raw TCP socket (SYN-ACK, RST).
type rawDriver struct {
	cfg       TraceConfig
	v6        bool
	dst, src  netip.Addr
	id        uint16 // ICMP id, and the high half of TCP sequence numbers
	sportBase int    // UDP/TCP source port of flow 0; flow f uses sportBase+f
	// flowDst: udp flows differ in the destination port (Port+f) from
	// one source port (sportBase), TraceConfig.FlowDstPort.
	flowDst bool
	// nat: udp over IPv4 with NAT IDs. Probes are written with their IPv4
	// header (IP_HDRINCL) so that the IP ID carries the UDP checksum (the
	// probe key); replies are matched by the quoted IP ID, which a
	// stateless address rewrite leaves alone, not by the quoted checksum,
	// which it changes.
	nat bool

	icmp *sock // receives ICMP; sends the ICMP probes
	l4   *sock // udp: send only; tcp: send and receive
	mu   sync.Mutex

	in   chan rxPacket
	stop chan struct{}
	wg   sync.WaitGroup
}

type rxPacket struct {
	packet
	tcp bool // from the TCP socket
}

// RawTCPPortLow and RawTCPPortHigh bound the source ports [low, high) of a
// raw TCP trace's SYN probes: below Linux's ephemeral ports (32768 to 60999
// by default), so that the answers it waits for are not the handshakes of
// the host's own connections. The privilege separation's socket helper
// (internal/privsep) lets a raw TCP socket read answers to these ports only.
const (
	RawTCPPortLow  = 20000
	RawTCPPortHigh = 32768
)

// randIntn picks the run's ICMP id and source ports: they only need to
// differ between runs, and math/rand/v2's generator (seeded by the runtime)
// costs nothing to start, where crypto/rand's first use costs a one-shot
// trace a tenth of a millisecond.
func randIntn(n int) int { return rand.IntN(n) }

// rxQueue is how many replies a raw driver's readers hold for Receive, and
// rxBufSize the most of one reply they read (an ICMP error quotes at most
// 1,280 bytes, RFC 4884 extensions included; a bigger packet is no reply to
// a probe of ours). A backtrace opens one driver per target, thousands at
// once: with 4,096 slots and 64 KiB per reader, 3,000 drivers held about
// 1.4 GB and an interrupted run stalled in the garbage collector for
// seconds (issue 35). A full queue holds the reader back, not the replies:
// they wait in the socket's buffer with their kernel stamps.
const (
	rxQueue   = 256
	rxBufSize = 4096
)

func openRawDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	d := &rawDriver{cfg: cfg, v6: dst.Is6(), dst: dst, in: make(chan rxPacket, rxQueue), stop: make(chan struct{})}
	d.id = uint16(1 + randIntn(0xfffe))
	d.sportBase = 20000 + randIntn(30000)
	if cfg.Proto == TCP {
		d.sportBase = RawTCPPortLow + randIntn(RawTCPPortHigh-RawTCPPortLow-64) // 64 flows at most
	}
	d.flowDst = cfg.Proto == UDP && cfg.FlowDstPort
	src, err := sourceFor(dst)
	if err != nil {
		return nil, err
	}
	d.src = src
	icmpProto := unix.IPPROTO_ICMP
	if d.v6 {
		icmpProto = unix.IPPROTO_ICMPV6
	}
	open := func(proto int) (*sock, error) {
		s, err := openSock(cfg.OpenSocket, d.v6, unix.SOCK_RAW, proto)
		if err != nil && isPermission(err) {
			return nil, privilegeError("trace needs raw sockets", err, false)
		}
		return s, err
	}
	if d.icmp, err = open(icmpProto); err != nil {
		return nil, err
	}
	if d.v6 {
		err = d.icmp.filterICMP(icmp6EchoReply, icmp6TimeExceeded, icmp6Unreachable)
	} else {
		err = d.icmp.filterICMP(icmp4EchoReply, icmp4TimeExceeded, icmp4Unreachable)
	}
	if err != nil {
		d.icmp.Close()
		return nil, fmt.Errorf("ICMP filter: %w", err)
	}
	switch cfg.Proto {
	case UDP:
		if d.l4, err = open(unix.IPPROTO_UDP); err != nil {
			d.icmp.Close()
			return nil, err
		}
		if cfg.NAT && !d.v6 {
			d.nat = true
			if err := d.l4.control(func(fd int) error {
				return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_HDRINCL, 1)
			}); err != nil {
				d.icmp.Close()
				d.l4.Close()
				return nil, fmt.Errorf("IP_HDRINCL for NAT detection: %w", err)
			}
		}
		// This socket only sends; a filter that accepts nothing keeps every
		// UDP datagram on the host from being copied into it.
		_ = d.l4.control(func(fd int) error {
			prog := []unix.SockFilter{{Code: 0x06, K: 0}} // BPF_RET|BPF_K 0
			return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
				&unix.SockFprog{Len: 1, Filter: &prog[0]})
		})
	case TCP:
		if d.l4, err = open(unix.IPPROTO_TCP); err != nil {
			d.icmp.Close()
			return nil, err
		}
		// A raw TCP socket gets a copy of every segment the host receives:
		// beside a bulk transfer its buffer fills within milliseconds and
		// the kernel drops the target's answers with the rest (seen on a
		// loaded machine: 25,000 drops during one loopback trace, and its
		// last probes lost). The kernel keeps only segments from the
		// target's port to this run's source ports, as decodeTCP would.
		// A socket from the privilege separation's helper comes with a
		// locked filter of its own (answers to a SYN only, no data), which
		// no other may replace; decodeTCP picks this run's among them.
		if err := d.l4.control(func(fd int) error {
			if locked, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_LOCK_FILTER); err == nil && locked != 0 {
				return nil
			}
			return attachFilter(fd, tcpReplyFilter(d.v6, cfg.Port, d.sportBase, cfg.Flows))
		}); err != nil {
			d.icmp.Close()
			d.l4.Close()
			return nil, fmt.Errorf("TCP reply filter: %w", err)
		}
	}
	d.read(d.icmp, false)
	if cfg.Proto == TCP {
		d.read(d.l4, true)
	}
	return d, nil
}

// tcpReplyFilter is a socket filter that accepts the TCP segments sent from
// port to the source ports [sportBase, sportBase+flows) and drops every
// other. A raw IPv4 socket sees the IP header first (its length is read
// from the packet); a raw IPv6 socket sees the TCP header.
func tcpReplyFilter(v6 bool, port, sportBase, flows int) []bpf.Instruction {
	var hdr bpf.Instruction = bpf.LoadMemShift{Off: 0} // X = IPv4 header length
	if v6 {
		hdr = bpf.LoadConstant{Dst: bpf.RegX, Val: 0}
	}
	return []bpf.Instruction{
		hdr,
		bpf.LoadIndirect{Off: 0, Size: 2}, // source port
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port), SkipFalse: 4},
		bpf.LoadIndirect{Off: 2, Size: 2}, // destination port
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: uint32(sportBase), SkipFalse: 2},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: uint32(sportBase + max(flows, 1)), SkipTrue: 1},
		bpf.RetConstant{Val: 1 << 18},
		bpf.RetConstant{Val: 0},
	}
}

// attachFilter attaches the classic BPF program prog to socket fd.
func attachFilter(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]})
}

func (d *rawDriver) read(s *sock, tcp bool) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		buf := make([]byte, rxBufSize)
		oob := make([]byte, oobSize)
		for {
			p, err := s.recv(buf, oob)
			if err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			p.data = append([]byte(nil), p.data...)
			select {
			case d.in <- rxPacket{packet: p, tcp: tcp}:
			case <-d.stop:
				return
			}
		}
	}()
}

// Mode is ModeRaw.
func (d *rawDriver) Mode() TraceMode { return ModeRaw }

// Close closes the sockets and waits for the readers.
func (d *rawDriver) Close() error {
	close(d.stop)
	d.icmp.Close()
	if d.l4 != nil {
		d.l4.Close()
	}
	d.wg.Wait()
	return nil
}

// Send builds and sends one flow-stable probe.
func (d *rawDriver) Send(p TraceProbe) (time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.icmp
	var b []byte
	fi := d.FlowIdent(p.Flow)
	sport := fi.SrcPort
	switch d.cfg.Proto {
	case ICMP:
		b = parisEcho(d.v6, d.id, p.Key, p.Flow, 32)
	case UDP:
		s = d.l4
		b = udpProbe(d.src, d.dst, sport, fi.DstPort, p.Key, 24)
		if d.nat {
			// The TTL is in the header written here: no setsockopt.
			b = append(ipv4Header(d.src, d.dst, protoUDP, p.TTL, p.Key, len(b)), b...)
			return d.sendNow(s, b)
		}
	case TCP:
		s = d.l4
		b = tcpSYN(d.src, d.dst, sport, d.cfg.Port, uint32(d.id)<<16|uint32(p.Key))
	}
	if err := s.setTTL(p.TTL); err != nil {
		return time.Time{}, err
	}
	return d.sendNow(s, b)
}

// FlowIdent is flow's ports (udp, tcp) or ICMP checksum.
func (d *rawDriver) FlowIdent(flow int) FlowIdent {
	switch {
	case d.cfg.Proto == ICMP:
		return FlowIdent{ID: int(icmpFlowSum(flow))}
	case d.flowDst:
		return FlowIdent{ID: d.cfg.Port + flow, SrcPort: d.sportBase, DstPort: d.cfg.Port + flow}
	}
	return FlowIdent{ID: d.sportBase + flow, SrcPort: d.sportBase + flow, DstPort: d.cfg.Port}
}

// ourUDP tells whether quoted udp ports are one of this run's flows.
func (d *rawDriver) ourUDP(sp, dp int) bool {
	if d.flowDst {
		return sp == d.sportBase && dp >= d.cfg.Port && dp < d.cfg.Port+d.cfg.Flows
	}
	return dp == d.cfg.Port && sp >= d.sportBase && sp < d.sportBase+d.cfg.Flows
}

// sendNow sends b on s and words the errors.
func (d *rawDriver) sendNow(s *sock, b []byte) (time.Time, error) {
	at, err := s.sendTo(b, d.dst, 0)
	if err != nil && isFirewall(err) {
		return at, firewallError("sending a trace probe", d.dst, err)
	}
	if err != nil && isPermission(err) {
		if berr := broadcastSendError("sending a trace probe", d.dst, err); berr != err {
			return at, berr
		}
		return at, privilegeError("sending a trace probe", err, false)
	}
	return at, err
}

// Receive returns the next reply that belongs to this run.
func (d *rawDriver) Receive(ctx context.Context) (TraceReply, error) {
	for {
		var p rxPacket
		select {
		case p = <-d.in:
		default:
			select {
			case <-ctx.Done():
				return TraceReply{}, ctx.Err()
			case p = <-d.in:
			}
		}
		r, ok, err := d.decode(p)
		if err != nil {
			return TraceReply{}, err
		}
		if ok {
			return r, nil
		}
	}
}

// decode matches one packet: ok=false for unrelated traffic, a *ForeignError
// for another run's replies.
func (d *rawDriver) decode(p rxPacket) (TraceReply, bool, error) {
	b := p.data
	if !d.v6 {
		var ok bool
		if b, ok = ipv4Payload(b); !ok {
			return TraceReply{}, false, nil
		}
	}
	r := TraceReply{From: p.from, At: p.at}
	if p.tcp {
		return d.decodeTCP(r, b)
	}
	if e, ok := parseEchoReply(d.v6, b); ok {
		if d.cfg.Proto != ICMP || p.from != d.dst {
			return r, false, nil
		}
		if uint16(e.ID) != d.id {
			return r, false, &ForeignError{Reason: fmt.Sprintf("echo reply from %s with id %d", p.from, e.ID)}
		}
		r.Key, r.Dest = uint16(e.Seq), true
		return r, true, nil
	}
	ie, ok := parseICMPError(d.v6, b)
	if !ok {
		return r, false, nil
	}
	q, ok := parseQuoted(d.v6, ie.data)
	if !ok || q.dst != d.dst {
		return r, false, nil
	}
	l4 := q.l4
	switch d.cfg.Proto {
	case ICMP:
		want := byte(icmp4Echo)
		if d.v6 {
			want = icmp6Echo
		}
		if q.proto != protoICMP && q.proto != protoICMPv6 || len(l4) < 8 || l4[0] != want {
			return r, false, nil
		}
		if id := binary.BigEndian.Uint16(l4[4:]); id != d.id {
			return r, false, &ForeignError{Reason: fmt.Sprintf("quoted echo id %d", id)}
		}
		r.Key = binary.BigEndian.Uint16(l4[6:])
	case UDP:
		if q.proto != protoUDP || len(l4) < 8 {
			return r, false, nil
		}
		sp, dp := int(binary.BigEndian.Uint16(l4)), int(binary.BigEndian.Uint16(l4[2:]))
		if !d.ourUDP(sp, dp) {
			return r, false, &ForeignError{Reason: fmt.Sprintf("quoted UDP ports %d→%d", sp, dp)}
		}
		r.Key = binary.BigEndian.Uint16(l4[6:])
		if d.nat {
			// The probe's checksum was its key, and so is its IP ID.
			r.Key = q.id
			r.NATID, r.HasNATID = TraceNATID(q.id, binary.BigEndian.Uint16(l4[6:])), true
		}
	case TCP:
		if q.proto != protoTCP || len(l4) < 8 {
			return r, false, nil
		}
		sp, dp := int(binary.BigEndian.Uint16(l4)), int(binary.BigEndian.Uint16(l4[2:]))
		seq := binary.BigEndian.Uint32(l4[4:])
		if dp != d.cfg.Port || sp < d.sportBase || sp >= d.sportBase+d.cfg.Flows || uint16(seq>>16) != d.id {
			return r, false, &ForeignError{Reason: fmt.Sprintf("quoted TCP ports %d→%d seq %d", sp, dp, seq)}
		}
		r.Key = uint16(seq)
	}
	// An unreachable from the target itself (port unreachable for UDP,
	// protocol or admin unreachable otherwise) is the destination answering.
	r.Dest = ie.unreach && p.from == d.dst
	r.MPLS = mplsLabels(ie.exts)
	return r, true, nil
}

func (d *rawDriver) decodeTCP(r TraceReply, b []byte) (TraceReply, bool, error) {
	if len(b) < 20 || r.From != d.dst {
		return r, false, nil
	}
	sp, dp := int(binary.BigEndian.Uint16(b)), int(binary.BigEndian.Uint16(b[2:]))
	flags := b[13]
	const syn, rst, ack = 0x02, 0x04, 0x10
	if sp != d.cfg.Port || flags&(rst|ack) == 0 || (flags&syn != 0 && flags&ack == 0) {
		return r, false, nil
	}
	if dp < d.sportBase || dp >= d.sportBase+d.cfg.Flows {
		return r, false, nil
	}
	seq := binary.BigEndian.Uint32(b[8:]) - 1 // the ack number acknowledges our SYN
	if flags&ack == 0 || uint16(seq>>16) != d.id {
		return r, false, &ForeignError{Reason: fmt.Sprintf("TCP reply from %s:%d acking %d", r.From, sp, seq+1)}
	}
	r.Key, r.Dest = uint16(seq), true
	return r, true, nil
}

package probe

import (
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// udpSpec is UDP: trace only (port DefaultUDPPort and up, as
// traceroute); ping has no UDP driver, since a UDP probe has no reply to
// time unless the port is closed.
var udpSpec = protocolSpec{name: UDP, trace: udpTrace{}, port: true, tracePort: DefaultUDPPort, nat: true}

// udpTrace is UDP's part in a trace: datagrams whose payload makes the UDP
// checksum the probe key (udpProbe), flows told apart by the source port
// (or, with TraceConfig.FlowDstPort, the destination port), matched by the
// ports and checksum an ICMP error quotes. Raw mode sends from a raw UDP
// socket that receives nothing (with NAT detection over IPv4 the IPv4
// header is written too, its IP ID the key); without privileges it sends
// from one ordinary socket per flow and reads the errors from its error
// queue (ModeRecverr), all TTLs in flight at once.
type udpTrace struct{}

func (udpTrace) flowField(cfg TraceConfig) FlowField {
	if cfg.FlowDstPort {
		return FlowUDPDstPort
	}
	return FlowUDPSrcPort
}

func (udpTrace) unprivileged() TraceMode { return ModeRecverr }

// rawOpen opens the raw UDP socket the probes leave from.
func (udpTrace) rawOpen(d *rawDriver, open func(int) (*sock, error)) (bool, error) {
	d.sportBase = 20000 + randIntn(30000)
	var err error
	if d.l4, err = open(unix.IPPROTO_UDP); err != nil {
		return false, err
	}
	if d.cfg.NAT && !d.v6 {
		d.nat = true
		if err := d.l4.control(func(fd int) error {
			return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_HDRINCL, 1)
		}); err != nil {
			d.l4.Close()
			return false, fmt.Errorf("IP_HDRINCL for NAT detection: %w", err)
		}
	}
	// This socket only sends; a filter that accepts nothing keeps every
	// UDP datagram on the host from being copied into it.
	_ = d.l4.control(func(fd int) error {
		prog := []unix.SockFilter{{Code: 0x06, K: 0}} // BPF_RET|BPF_K 0
		return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
			&unix.SockFprog{Len: 1, Filter: &prog[0]})
	})
	return false, nil
}

func (udpTrace) rawProbe(d *rawDriver, p TraceProbe) (*sock, []byte, bool) {
	fi := d.FlowIdent(p.Flow)
	b := udpProbe(d.src, d.dst, fi.SrcPort, fi.DstPort, p.Key, udpPayloadLen)
	if d.nat {
		// The TTL is in the header written here: no setsockopt.
		return d.l4, append(ipv4Header(d.src, d.dst, protoUDP, p.TTL, p.Key, len(b)), b...), true
	}
	return d.l4, b, false
}

func (udpTrace) rawFlow(d *rawDriver, flow int) FlowIdent { return d.portFlow(flow) }

// rawReply matches nothing: only ICMP errors answer a UDP probe.
func (udpTrace) rawReply(_ *rawDriver, r TraceReply, _ []byte, _ bool) (TraceReply, bool, error) {
	return r, false, nil
}

// rawQuoted matches a quoted datagram by its ports; its checksum (with NAT
// detection its IP ID) is the key.
func (udpTrace) rawQuoted(d *rawDriver, r TraceReply, q quoted) (TraceReply, bool, error) {
	l4 := q.l4
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
	return r, true, nil
}

// recverrFlow opens the flow's socket and its reader.
func (udpTrace) recverrFlow(d *recverrDriver, fl *recverrFlow) error {
	if err := d.openUDP(fl); err != nil {
		return err
	}
	d.wg.Add(1)
	go d.readUDP(fl)
	return nil
}

func (udpTrace) recverrSend(d *recverrDriver, fl *recverrFlow, p TraceProbe) (time.Time, error) {
	return d.sendUDP(fl, p)
}

// ourUDP tells whether quoted udp ports are one of this run's flows.
func (d *rawDriver) ourUDP(sp, dp int) bool {
	if d.flowDst {
		return sp == d.sportBase && dp >= d.cfg.Port && dp < d.cfg.Port+d.cfg.Flows
	}
	return dp == d.cfg.Port && sp >= d.sportBase && sp < d.sportBase+d.cfg.Flows
}

// udpPayloadLen is the UDP payload of a probe (as the raw driver's).
const udpPayloadLen = 24

// openUDP opens the flow's UDP socket on a port of its own.
func (d *recverrDriver) openUDP(fl *recverrFlow) error {
	s, err := openSock(d.cfg.OpenSocket, d.v6, unix.SOCK_DGRAM, unix.IPPROTO_UDP)
	if err != nil {
		return fmt.Errorf("opening a UDP socket: %w", err)
	}
	err = s.control(func(fd int) error {
		if err := setRecverr(fd, d.v6); err != nil {
			return err
		}
		if err := unix.Bind(fd, wildcard(d.v6, 0)); err != nil {
			return err
		}
		fl.port, err = boundPort(fd)
		return err
	})
	if err != nil {
		s.Close()
		return fmt.Errorf("UDP socket for the trace: %w", err)
	}
	fl.s = s
	return nil
}

// readUDP moves the flow socket's errors into d.in until it is closed.
// Datagrams that the destination sent back (a service on the port) are read
// and dropped.
func (d *recverrDriver) readUDP(fl *recverrFlow) {
	defer d.wg.Done()
	readErrQueue(fl.s.rc, 2048, func(m errQueueRead) (TraceReply, bool) {
		if !m.errq {
			return TraceReply{}, false
		}
		// An error's address is where the datagram went (its port included).
		return d.decodeUDP(fl, sockaddrPort(m.addr, d.cfg.Port), m.data, m.oob)
	}, d.in, d.stop)
}

// decodeUDP matches an error about one of the flow's datagrams: data is the
// payload the router quoted, and the probe key is the UDP checksum it gave.
// A router that quoted less than the whole payload (RFC 792 asks for 8 bytes
// of the datagram only; Linux quotes all of it) cannot be matched.
func (d *recverrDriver) decodeUDP(fl *recverrFlow, dport int, data, oob []byte) (TraceReply, bool) {
	r, ok := icmpErrorReply(d.v6, d.dst, oob)
	if !ok || len(data) != udpPayloadLen {
		return r, false
	}
	hdr := make([]byte, 8, 8+udpPayloadLen)
	hdr[0], hdr[1] = byte(fl.port>>8), byte(fl.port)
	hdr[2], hdr[3] = byte(dport>>8), byte(dport)
	hdr[5] = 8 + udpPayloadLen
	r.Key = checksum(pseudoSum(d.src, d.dst, protoUDP, 8+udpPayloadLen), append(hdr, data...))
	return r, r.Key != 0 && r.Key != 0xffff
}

func (d *recverrDriver) sendUDP(fl *recverrFlow, p TraceProbe) (time.Time, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if err := fl.s.setTTL(p.TTL); err != nil {
		return time.Time{}, err
	}
	dport := d.cfg.Port
	if d.flowDst {
		dport += p.Flow
	}
	b := udpProbe(d.src, d.dst, fl.port, dport, p.Key, udpPayloadLen)[8:]
	at, err := sendPastErrors(fl.s, b, d.dst, dport)
	if err != nil {
		return at, broadcastSendError("sending a trace probe", d.dst, err)
	}
	return at, nil
}

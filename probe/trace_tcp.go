package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// tcpTrace is TCP's part in a trace: SYNs to the port, flows told apart by
// the source port, the probe key in the low half of the sequence number.
// In raw mode the SYN is written whole and its answers (SYN-ACK, RST) are
// read from the raw TCP socket, matched by the acknowledged sequence
// number; ICMP errors by the quoted ports and sequence number. Without
// privileges (ModeRecverr) each probe is a non-blocking connect() of its
// own, one at a time per flow (see recverrDriver).
type tcpTrace struct{}

func (tcpTrace) flowField(TraceConfig) FlowField { return FlowTCPSrcPort }

func (tcpTrace) unprivileged() TraceMode { return ModeRecverr }

// rawOpen opens the raw TCP socket the SYNs leave from and their answers
// come in on.
func (tcpTrace) rawOpen(d *rawDriver, open func(int) (*sock, error)) (bool, error) {
	d.sportBase = RawTCPPortLow + randIntn(RawTCPPortHigh-RawTCPPortLow-64) // 64 flows at most
	var err error
	if d.l4, err = open(unix.IPPROTO_TCP); err != nil {
		return false, err
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
		return attachFilter(fd, tcpReplyFilter(d.v6, d.cfg.Port, d.sportBase, d.cfg.Flows))
	}); err != nil {
		d.l4.Close()
		return false, fmt.Errorf("TCP reply filter: %w", err)
	}
	return true, nil
}

func (tcpTrace) rawProbe(d *rawDriver, p TraceProbe) (*sock, []byte, bool) {
	sport := d.FlowIdent(p.Flow).SrcPort
	return d.l4, tcpSYN(d.src, d.dst, sport, d.cfg.Port, uint32(d.id)<<16|uint32(p.Key)), false
}

func (tcpTrace) rawFlow(d *rawDriver, flow int) FlowIdent { return d.portFlow(flow) }

// rawReply matches the target's SYN-ACK or RST read from the TCP socket.
func (tcpTrace) rawReply(d *rawDriver, r TraceReply, b []byte, l4 bool) (TraceReply, bool, error) {
	if !l4 {
		return r, false, nil
	}
	return d.decodeTCP(r, b)
}

// rawQuoted matches a quoted SYN by its ports and the run's half of the
// sequence number; the other half is the key.
func (tcpTrace) rawQuoted(d *rawDriver, r TraceReply, q quoted) (TraceReply, bool, error) {
	l4 := q.l4
	if q.proto != protoTCP || len(l4) < 8 {
		return r, false, nil
	}
	sp, dp := int(binary.BigEndian.Uint16(l4)), int(binary.BigEndian.Uint16(l4[2:]))
	seq := binary.BigEndian.Uint32(l4[4:])
	if dp != d.cfg.Port || sp < d.sportBase || sp >= d.sportBase+d.cfg.Flows || uint16(seq>>16) != d.id {
		return r, false, &ForeignError{Reason: fmt.Sprintf("quoted TCP ports %d→%d seq %d", sp, dp, seq)}
	}
	r.Key = uint16(seq)
	return r, true, nil
}

// recverrFlow gives the flow its turn token: one attempt at a time.
func (tcpTrace) recverrFlow(_ *recverrDriver, fl *recverrFlow) error {
	fl.free = make(chan struct{}, 1)
	fl.free <- struct{}{}
	return nil
}

// recverrSend waits for the flow's turn and starts the attempt.
func (tcpTrace) recverrSend(d *recverrDriver, fl *recverrFlow, p TraceProbe) (time.Time, error) {
	select {
	case <-fl.free:
	case <-d.stop:
		return time.Time{}, net.ErrClosed
	}
	if fl.destTTL > 0 && p.TTL > fl.destTTL {
		fl.free <- struct{}{}
		return time.Time{}, ErrPastDestination
	}
	at, err := d.connect(fl, p)
	if err != nil {
		fl.free <- struct{}{}
	}
	return at, err
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

// tcpSYNRetry is when the kernel sends a connection attempt's SYN again
// (TCP_TIMEOUT_INIT), less a margin: an attempt is given up before it.
const tcpSYNRetry = time.Second - 10*time.Millisecond

// connect starts one TCP connection attempt for p; a goroutine watches it
// and hands the token of the flow back once it is decided.
func (d *recverrDriver) connect(fl *recverrFlow, p TraceProbe) (time.Time, error) {
	open := socketFunc(d.cfg.OpenSocket)
	family := unix.AF_INET
	var sa unix.Sockaddr
	if d.v6 {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Addr: d.dst.As16(), Port: d.cfg.Port}
	} else {
		sa = &unix.SockaddrInet4{Addr: d.dst.As4(), Port: d.cfg.Port}
	}
	fd, err := open(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return time.Time{}, fmt.Errorf("opening a TCP socket: %w", err)
	}
	setup := func() error {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		// The port is the flow's: it must be bindable again right after
		// the previous attempt, and closing sends a RST (linger 0) rather
		// than leaving the pair in TIME_WAIT.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			return err
		}
		if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0}); err != nil {
			return err
		}
		if err := setRecverr(fd, d.v6); err != nil {
			return err
		}
		var err error
		if d.v6 {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, p.TTL)
		} else {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TTL, p.TTL)
		}
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, wildcard(d.v6, fl.port)); err != nil {
			return fmt.Errorf("binding the flow's source port %d: %w", fl.port, err)
		}
		if fl.port == 0 {
			fl.port, err = boundPort(fd)
		}
		return err
	}
	if err := setup(); err != nil {
		unix.Close(fd)
		return time.Time{}, fmt.Errorf("TCP socket for the trace: %w", err)
	}
	at := time.Now()
	err = unix.Connect(fd, sa)
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return at, broadcastSendError("sending a trace probe", d.dst, err)
	}
	f := os.NewFile(uintptr(fd), "trace-tcp")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return at, err
	}
	d.wg.Add(1)
	go d.watch(fl, p, f, rc, at)
	return at, nil
}

// watch waits for one connection attempt's outcome, delivers it, closes the
// socket and frees the flow.
func (d *recverrDriver) watch(fl *recverrFlow, p TraceProbe, f *os.File, rc syscall.RawConn, at time.Time) {
	defer d.wg.Done()
	d.mu.Lock()
	d.live[f] = struct{}{}
	deadline := at.Add(min(d.cfg.Timeout+traceGrace, tcpSYNRetry))
	if d.closed {
		deadline = time.Now()
	}
	d.mu.Unlock()
	_ = f.SetWriteDeadline(deadline)
	buf := make([]byte, 512)
	oob := make([]byte, 512)
	var r TraceReply
	var ok bool
	_ = rc.Write(func(fd uintptr) bool {
		n, oobn, _, _, rerr := unix.Recvmsg(int(fd), buf, oob, unix.MSG_ERRQUEUE)
		if rerr == nil {
			r, ok = d.decodeTCP(fl, buf[:n], oob[:oobn])
			if ok {
				return true
			}
		}
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return true
		}
		switch info.State {
		case unix.BPF_TCP_SYN_SENT:
			return false
		case unix.BPF_TCP_ESTABLISHED:
			// The SYN-ACK. The kernel timed the handshake (tcpi_rtt, µs,
			// its first sample); 0 means it took no sample.
			r, ok = TraceReply{From: d.dst, Dest: true, At: time.Now()}, true
			if info.Rtt > 0 {
				r.At = at.Add(time.Duration(info.Rtt) * time.Microsecond)
			}
			// The RST that closing sends leaves with the default TTL, as
			// the kernel's answer to a raw probe's SYN-ACK does, not with
			// the probe's (where it would count as another probe of that
			// TTL in any per-TTL accounting on the path).
			if d.v6 {
				_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, -1)
			} else {
				_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TTL, -1)
			}
			return true
		}
		soerr, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && syscall.Errno(soerr) == unix.ECONNREFUSED {
			r, ok = TraceReply{From: d.dst, Dest: true, At: time.Now()}, true // the RST
		}
		return true
	})
	d.mu.Lock()
	delete(d.live, f)
	d.mu.Unlock()
	f.Close()
	if ok {
		r.Key = p.Key
		if r.Dest && (fl.destTTL == 0 || p.TTL < fl.destTTL) {
			fl.destTTL = p.TTL
		}
		select {
		case d.in <- r:
		case <-d.stop:
		}
	}
	fl.free <- struct{}{}
}

// decodeTCP matches an error about the attempt: data is the TCP header the
// router quoted (ports first).
func (d *recverrDriver) decodeTCP(fl *recverrFlow, data, oob []byte) (TraceReply, bool) {
	r, ok := icmpErrorReply(d.v6, d.dst, oob)
	if !ok || len(data) < 4 {
		return r, false
	}
	sp, dp := int(data[0])<<8|int(data[1]), int(data[2])<<8|int(data[3])
	return r, sp == fl.port && dp == d.cfg.Port
}

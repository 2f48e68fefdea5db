package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// recverrDriver is the unprivileged UDP and TCP trace Driver (ModeRecverr):
// ordinary sockets with IP_RECVERR / IPV6_RECVERR, the TTL set per probe,
// and the time-exceeded and unreachable messages read from the socket's
// error queue (MSG_ERRQUEUE), with the offender's address in the
// sock_extended_err control message, as tracepath does. It needs no
// capability at all. ICMP extensions (MPLS) do not reach an error queue.
//
// Flows stay Paris-stable: each flow has its own source port, bound once and
// kept for the whole run, so every TTL of a flow carries the same addresses
// and ports.
//
//   - UDP: one socket per flow. The payload is the raw driver's (two bytes
//     make the checksum the kernel computes equal the probe key), so the
//     packets on the wire are the raw mode's; the error queue hands back the
//     quoted payload, from which the key is computed again. All TTLs are in
//     flight at once.
//   - TCP: one non-blocking connect() per probe, bound to the flow's port,
//     ending in time exceeded (error queue), the destination's SYN-ACK
//     (connected) or RST (ECONNREFUSED). The kernel allows one connection
//     attempt per address and port pair, so a flow sends its TTLs one at a
//     time: Send waits until the flow's previous attempt is decided, and
//     once the destination answered a flow at TTL d, Send refuses the
//     flow's higher TTLs with ErrPastDestination. Each attempt is given up
//     just before the kernel would retransmit its SYN (1 s), so no reply to
//     a second SYN is ever taken for the first one's.
type recverrDriver struct {
	cfg      TraceConfig
	v6       bool
	dst, src netip.Addr
	flows    []*recverrFlow // opened on first use (flow)
	// flowDst: udp flows share flow 0's socket and differ in the
	// destination port (Port+f), TraceConfig.FlowDstPort.
	flowDst bool

	in   chan TraceReply
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex            // flows, live, closed
	live   map[*os.File]struct{} // tcp attempts waiting, woken by Close
	closed bool
}

// recverrFlow is one flow's source port and, for UDP, its socket.
type recverrFlow struct {
	port int // bound source port (tcp: 0 until the first attempt)

	s  *sock // udp
	mu sync.Mutex

	// tcp: free holds a token while no attempt of the flow is in flight;
	// destTTL (the lowest TTL the destination answered, 0 for none) is read
	// and written only by whoever holds the token.
	free    chan struct{}
	destTTL int
}

// udpPayloadLen is the UDP payload of a probe (as the raw driver's).
const udpPayloadLen = 24

// tcpSYNRetry is when the kernel sends a connection attempt's SYN again
// (TCP_TIMEOUT_INIT), less a margin: an attempt is given up before it.
const tcpSYNRetry = time.Second - 10*time.Millisecond

func openRecverrDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	if cfg.Proto != UDP && cfg.Proto != TCP {
		return nil, fmt.Errorf("mode recverr traces with udp or tcp, not %s", cfg.Proto)
	}
	src, err := sourceFor(dst)
	if err != nil {
		return nil, err
	}
	d := &recverrDriver{cfg: cfg, v6: dst.Is6(), dst: dst, src: src, in: make(chan TraceReply, 4096),
		stop: make(chan struct{}), live: make(map[*os.File]struct{}), flows: make([]*recverrFlow, cfg.Flows),
		flowDst: cfg.Proto == UDP && cfg.FlowDstPort}
	// Flow 0 now, so that a socket error is the open's; the others when
	// first sent (a multipath run may name hundreds and use few).
	if _, err := d.flow(0); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// flow is flow f's port and socket, opened on first use. With flowDst
// every flow is the one socket of flow 0 (its destination port differs).
func (d *recverrDriver) flow(f int) (*recverrFlow, error) {
	if f < 0 || f >= len(d.flows) {
		return nil, fmt.Errorf("flow %d: the driver was opened for %d", f, len(d.flows))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.flowDst && f > 0 && d.flows[0] != nil {
		d.flows[f] = d.flows[0]
	}
	if fl := d.flows[f]; fl != nil {
		return fl, nil
	}
	if d.closed {
		return nil, net.ErrClosed
	}
	fl := &recverrFlow{}
	if d.cfg.Proto == UDP {
		if err := d.openUDP(fl); err != nil {
			return nil, err
		}
		d.wg.Add(1)
		go d.readUDP(fl)
	} else {
		fl.free = make(chan struct{}, 1)
		fl.free <- struct{}{}
	}
	d.flows[f] = fl
	return fl, nil
}

// FlowIdent is flow's ports: the bound source port (0 for a tcp flow
// not sent yet) and the destination port.
func (d *recverrDriver) FlowIdent(flow int) FlowIdent {
	fi := FlowIdent{DstPort: d.cfg.Port}
	if d.flowDst {
		fi.DstPort += flow
		flow = 0
	}
	d.mu.Lock()
	if flow >= 0 && flow < len(d.flows) && d.flows[flow] != nil {
		fi.SrcPort = d.flows[flow].port
	}
	d.mu.Unlock()
	fi.ID = fi.SrcPort
	if d.flowDst {
		fi.ID = fi.DstPort
	}
	return fi
}

// wildcard is the any-address sockaddr with port.
func wildcard(v6 bool, port int) unix.Sockaddr {
	if v6 {
		return &unix.SockaddrInet6{Port: port}
	}
	return &unix.SockaddrInet4{Port: port}
}

func boundPort(fd int) (int, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port, nil
	case *unix.SockaddrInet6:
		return a.Port, nil
	}
	return 0, fmt.Errorf("socket bound to %T", sa)
}

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

// sockaddrPort is sa's port, or def when sa has none.
func sockaddrPort(sa unix.Sockaddr, def int) int {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port
	case *unix.SockaddrInet6:
		return a.Port
	}
	return def
}

// Mode is ModeRecverr.
func (d *recverrDriver) Mode() TraceMode { return ModeRecverr }

// Send sends one probe (see recverrDriver for how TCP waits).
func (d *recverrDriver) Send(p TraceProbe) (time.Time, error) {
	fl, err := d.flow(p.Flow)
	if err != nil {
		return time.Time{}, err
	}
	if d.cfg.Proto == UDP {
		return d.sendUDP(fl, p)
	}
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

// Receive returns the next reply (queued ones first, see Driver).
func (d *recverrDriver) Receive(ctx context.Context) (TraceReply, error) {
	return receiveQueued(ctx, d.in)
}

// Close ends the attempts in flight, closes the sockets and waits for the
// goroutines.
func (d *recverrDriver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.stop)
	for f := range d.live {
		_ = f.SetWriteDeadline(time.Now())
	}
	d.mu.Unlock()
	for i, fl := range d.flows {
		if fl != nil && fl.s != nil && (i == 0 || fl != d.flows[0]) {
			fl.s.Close()
		}
	}
	d.wg.Wait()
	return nil
}

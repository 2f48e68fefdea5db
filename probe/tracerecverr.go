package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
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
// and ports. The driver holds the flows, the replies and the closing; the
// protocol (recverrProto: trace_udp.go, trace_tcp.go) opens a flow and sends
// a probe:
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
	tp       recverrProto // the protocol's part (trace_udp.go, trace_tcp.go)
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

func openRecverrDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	tp, ok := traceProtoOf(cfg.Proto).(recverrProto)
	if !ok {
		return nil, fmt.Errorf("mode recverr traces with %s, not %s", ProtocolNames(protocolsWhere(func(s protocolSpec) bool {
			_, ok := s.trace.(recverrProto)
			return ok
		})), cfg.Proto)
	}
	src, err := sourceFor(dst)
	if err != nil {
		return nil, err
	}
	d := &recverrDriver{cfg: cfg, tp: tp, v6: dst.Is6(), dst: dst, src: src, in: make(chan TraceReply, 4096),
		stop: make(chan struct{}), live: make(map[*os.File]struct{}), flows: make([]*recverrFlow, cfg.Flows),
		flowDst: tp.flowField(cfg) == FlowUDPDstPort}
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
	if err := d.tp.recverrFlow(d, fl); err != nil {
		return nil, err
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
	return d.tp.recverrSend(d, fl, p)
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

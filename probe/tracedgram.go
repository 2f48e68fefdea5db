package probe

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/sys/unix"
)

// dgramDriver is the unprivileged ICMP trace Driver: echo requests leave an
// ICMP datagram socket ("ping socket", allowed by net.ipv4.ping_group_range)
// with the TTL set per probe; echo replies come back on the socket and the
// time-exceeded and unreachable messages on its error queue (IP_RECVERR), as
// mtr-packet does without privileges. The kernel owns the echo id and routes
// to this socket only what answers it, so nothing foreign arrives. The probes
// are still Paris-stable: the id is fixed per socket and the payload keeps the
// checksum fixed per flow. ICMP extensions (MPLS) are not visible this way.
// The mode is ICMP's alone (a ping socket sends echo requests and nothing
// else): it asks no traceProto, and icmpTrace names it as its unprivileged
// mode.
type dgramDriver struct {
	s   *sock
	dst netip.Addr
	mu  sync.Mutex

	in   chan TraceReply
	stop chan struct{}
	wg   sync.WaitGroup
}

func openDgramDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	proto := unix.IPPROTO_ICMP
	if dst.Is6() {
		proto = unix.IPPROTO_ICMPV6
	}
	s, err := openSock(cfg.OpenSocket, dst.Is6(), unix.SOCK_DGRAM, proto)
	if err != nil {
		return nil, err
	}
	err = s.control(func(fd int) error { return setRecverr(fd, dst.Is6()) })
	if err != nil {
		s.Close()
		return nil, err
	}
	d := &dgramDriver{s: s, dst: dst, in: make(chan TraceReply, 4096), stop: make(chan struct{})}
	d.wg.Add(1)
	go d.read()
	return d, nil
}

// read moves replies and errors into d.in until the socket is closed.
func (d *dgramDriver) read() {
	defer d.wg.Done()
	readErrQueue(d.s.rc, 65536, func(m errQueueRead) (TraceReply, bool) {
		return decodeDgram(d.s.v6, d.dst, m.data, m.oob, m.addr, m.errq)
	}, d.in, d.stop)
}

// decodeDgram turns what a ping socket read into a reply: an echo reply
// (data = the ICMP message, from = the target), or from the error queue the
// quoted echo request with the ICMP type and the offender in IP_RECVERR.
func decodeDgram(v6 bool, dst netip.Addr, data, oob []byte, from unix.Sockaddr, errq bool) (TraceReply, bool) {
	if len(data) < 8 {
		return TraceReply{}, false
	}
	if !errq {
		e, ok := parseEchoReply(v6, data)
		if !ok {
			return TraceReply{}, false
		}
		r := TraceReply{Key: uint16(e.Seq), From: sockaddrAddr(from), Dest: true, At: kernelTime(oob)}
		if r.At.IsZero() {
			r.At = time.Now()
		}
		return r, r.From == dst
	}
	r, ok := icmpErrorReply(v6, dst, oob)
	if !ok {
		return r, false
	}
	// data is our own echo request, which the error is about.
	m, err := icmp.ParseMessage(icmpProtocol(v6), data)
	if err != nil {
		return r, false
	}
	e, ok := m.Body.(*icmp.Echo)
	if !ok {
		return r, false
	}
	r.Key = uint16(e.Seq)
	return r, true
}

func sockaddrAddr(sa unix.Sockaddr) netip.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(a.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(a.Addr)
	}
	return netip.Addr{}
}

// Send sends one Paris echo request with the probe's TTL.
func (d *dgramDriver) Send(p TraceProbe) (time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.s.setTTL(p.TTL); err != nil {
		return time.Time{}, err
	}
	// The kernel writes the id and the checksum; the id is the same for every
	// probe of this socket, so the compensated payload keeps the checksum too.
	b := parisEcho(d.s.v6, 0, p.Key, p.Flow, 32)
	b[2], b[3] = 0, 0
	return sendPastErrors(d.s, b, d.dst, 0)
}

// Receive returns the next reply (queued ones first, see Driver).
func (d *dgramDriver) Receive(ctx context.Context) (TraceReply, error) {
	return receiveQueued(ctx, d.in)
}

// FlowIdent is flow's ICMP checksum (the kernel owns the echo id).
func (d *dgramDriver) FlowIdent(flow int) FlowIdent { return FlowIdent{ID: int(icmpFlowSum(flow))} }

// Mode is ModeDatagram.
func (d *dgramDriver) Mode() TraceMode { return ModeDatagram }

// Close closes the socket and waits for the reader.
func (d *dgramDriver) Close() error {
	close(d.stop)
	d.s.Close()
	d.wg.Wait()
	return nil
}

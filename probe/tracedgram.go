package probe

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"
	"unsafe"

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
type dgramDriver struct {
	s   *sock
	dst netip.Addr
	mu  sync.Mutex
	ttl int

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
	err = s.control(func(fd int) error {
		if dst.Is6() {
			return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
		}
		return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVERR, 1)
	})
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
	buf := make([]byte, 65536)
	oob := make([]byte, 512)
	for {
		var n, oobn int
		var from unix.Sockaddr
		var errq bool
		var rerr error
		err := d.s.rc.Read(func(fd uintptr) bool {
			// The error queue first: an error wakes the poller as EPOLLERR.
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_ERRQUEUE)
			if rerr == nil {
				errq = true
				return true
			}
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil {
			return
		}
		if rerr != nil {
			// EINTR, or the socket's pending error: every ICMP error sets
			// it after queueing itself, so once the queue was read empty a
			// plain read can still return it (and clear it). Ending the
			// reader there lost every later reply; only Close ends it.
			continue
		}
		r, ok := decodeDgram(d.s.v6, d.dst, buf[:n], oob[:oobn], from, errq)
		if !ok {
			continue
		}
		select {
		case d.in <- r:
		case <-d.stop:
			return
		}
	}
}

// decodeDgram turns what a ping socket read into a reply: an echo reply
// (data = the ICMP message, from = the target), or from the error queue the
// quoted echo request with the ICMP type and the offender in IP_RECVERR.
func decodeDgram(v6 bool, dst netip.Addr, data, oob []byte, from unix.Sockaddr, errq bool) (TraceReply, bool) {
	r := TraceReply{At: kernelTime(oob)}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if len(data) < 8 {
		return r, false
	}
	if !errq {
		e, ok := parseEchoReply(v6, data)
		if !ok {
			return r, false
		}
		r.Key, r.From, r.Dest = uint16(e.Seq), sockaddrAddr(from), true
		return r, r.From == dst
	}
	ee, offender, ok := extendedErr(v6, oob)
	if !ok {
		return r, false
	}
	var exceeded, unreach uint8 = icmp4TimeExceeded, icmp4Unreachable
	if v6 {
		exceeded, unreach = icmp6TimeExceeded, icmp6Unreachable
	}
	if ee.Type != exceeded && ee.Type != unreach {
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
	r.Key, r.From = uint16(e.Seq), offender
	r.Dest = ee.Type == unreach && offender == dst
	return r, offender.IsValid()
}

// extendedErr finds the IP_RECVERR / IPV6_RECVERR control message: the ICMP
// type and code and, after it, the offender's address (SO_EE_OFFENDER).
func extendedErr(v6 bool, oob []byte) (unix.SockExtendedErr, netip.Addr, bool) {
	var ee unix.SockExtendedErr
	level, typ, origin := unix.IPPROTO_IP, unix.IP_RECVERR, uint8(unix.SO_EE_ORIGIN_ICMP)
	if v6 {
		level, typ, origin = unix.IPPROTO_IPV6, unix.IPV6_RECVERR, unix.SO_EE_ORIGIN_ICMP6
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return ee, netip.Addr{}, false
	}
	for _, m := range msgs {
		if int(m.Header.Level) != level || int(m.Header.Type) != typ {
			continue
		}
		size := int(unsafe.Sizeof(ee))
		if len(m.Data) < size {
			return ee, netip.Addr{}, false
		}
		ee = *(*unix.SockExtendedErr)(unsafe.Pointer(&m.Data[0]))
		if ee.Origin != origin {
			return ee, netip.Addr{}, false
		}
		sa := m.Data[size:]
		switch {
		case !v6 && len(sa) >= unix.SizeofSockaddrInet4:
			return ee, netip.AddrFrom4([4]byte(sa[4:8])), true
		case v6 && len(sa) >= unix.SizeofSockaddrInet6:
			return ee, netip.AddrFrom16([16]byte(sa[8:24])), true
		}
		return ee, netip.Addr{}, false
	}
	return ee, netip.Addr{}, false
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
	if p.TTL != d.ttl {
		if err := d.s.setTTL(p.TTL); err != nil {
			return time.Time{}, err
		}
		d.ttl = p.TTL
	}
	// The kernel writes the id and the checksum; the id is the same for every
	// probe of this socket, so the compensated payload keeps the checksum too.
	b := parisEcho(d.s.v6, 0, p.Key, p.Flow, 32)
	b[2], b[3] = 0, 0
	return sendPastErrors(d.s, b, d.dst, 0)
}

// sendPastErrors sends b on a socket with IP_RECVERR. Every ICMP error also
// sets such a socket's pending error, and the next sendto returns it (and
// sends nothing) while the error itself waits on the error queue. Such an
// error is consumed by that sendto, so sending again works; a real one (no
// route) comes back every time.
func sendPastErrors(s *sock, b []byte, dst netip.Addr, port int) (time.Time, error) {
	var at time.Time
	var err error
	for range 4 {
		at, err = s.sendTo(b, dst, port)
		if !errors.Is(err, unix.EHOSTUNREACH) && !errors.Is(err, unix.ENETUNREACH) &&
			!errors.Is(err, unix.ECONNREFUSED) && !errors.Is(err, unix.EHOSTDOWN) && !errors.Is(err, unix.EPROTO) {
			break
		}
	}
	return at, err
}

// Receive returns the next reply (queued ones first, see Driver).
func (d *dgramDriver) Receive(ctx context.Context) (TraceReply, error) {
	select {
	case r := <-d.in:
		return r, nil
	default:
	}
	select {
	case <-ctx.Done():
		return TraceReply{}, ctx.Err()
	case r := <-d.in:
		return r, nil
	}
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

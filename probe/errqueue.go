package probe

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sockets with IP_RECVERR / IPV6_RECVERR, as the unprivileged trace drivers
// use them (dgramDriver over ping sockets, recverrDriver over UDP): the
// kernel queues the ICMP errors that answer a socket's datagrams on the
// socket's error queue, with the ICMP type and the offender in a
// sock_extended_err control message, and the drivers read that queue and
// the socket's ordinary datagrams with one reader.

// setRecverr turns on IP_RECVERR (IPV6_RECVERR).
func setRecverr(fd int, v6 bool) error {
	if v6 {
		return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVERR, 1)
}

// errQueueRead is one read of a socket with IP_RECVERR: an error-queue
// entry (errq; data is what the error quotes, addr where the datagram went)
// or an ordinary datagram (data is its payload, addr its sender).
type errQueueRead struct {
	data, oob []byte
	addr      unix.Sockaddr
	errq      bool
}

// readErrQueue reads the socket behind rc until it is closed, or stop is
// closed while a reply waits for room in in: every read (bufSize bytes at
// most) goes to decode, and each reply decode makes of one goes to in.
// data and oob are reused by the next read.
func readErrQueue(rc syscall.RawConn, bufSize int, decode func(errQueueRead) (TraceReply, bool),
	in chan<- TraceReply, stop <-chan struct{}) {
	buf := make([]byte, bufSize)
	oob := make([]byte, 512)
	for {
		var m errQueueRead
		var n, oobn int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			// The error queue first: an error wakes the poller as EPOLLERR.
			n, oobn, _, m.addr, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_ERRQUEUE)
			if rerr == nil {
				m.errq = true
				return true
			}
			n, oobn, _, m.addr, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
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
		m.data, m.oob = buf[:n], oob[:oobn]
		r, ok := decode(m)
		if !ok {
			continue
		}
		select {
		case in <- r:
		case <-stop:
			return
		}
	}
}

// icmpErrorReply makes a reply of an error-queue entry's control data: ok
// is false unless it is an ICMP time exceeded or unreachable with its
// offender. From is the offender, Dest whether it is the destination dst
// answering; the driver matches the probe (Key) from what the error quotes.
func icmpErrorReply(v6 bool, dst netip.Addr, oob []byte) (TraceReply, bool) {
	ee, offender, ok := extendedErr(v6, oob)
	if !ok || !offender.IsValid() {
		return TraceReply{}, false
	}
	var exceeded, unreach uint8 = icmp4TimeExceeded, icmp4Unreachable
	if v6 {
		exceeded, unreach = icmp6TimeExceeded, icmp6Unreachable
	}
	if ee.Type != exceeded && ee.Type != unreach {
		return TraceReply{}, false
	}
	r := TraceReply{From: offender.Unmap(), At: kernelTime(oob)}
	if r.At.IsZero() {
		r.At = time.Now()
	}
	// An unreachable from the target itself (port unreachable for UDP,
	// admin or protocol unreachable otherwise) is the destination answering.
	r.Dest = ee.Type == unreach && r.From == dst
	return r, true
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

// receiveQueued is the error-queue drivers' Receive: the next reply from
// in, queued ones first (see Driver).
func receiveQueued(ctx context.Context, in <-chan TraceReply) (TraceReply, error) {
	select {
	case r := <-in:
		return r, nil
	default:
	}
	select {
	case <-ctx.Done():
		return TraceReply{}, ctx.Err()
	case r := <-in:
		return r, nil
	}
}

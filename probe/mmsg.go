package probe

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A sweep sends and reads its echoes in batches, one sendmmsg(2) or
// recvmmsg(2) per batch: a 1,000-target sweep at 1,000 packets/s then makes
// a few hundred system calls a second instead of one per probe and reply.
// The calls are raw system calls on the non-blocking socket (as sendTo and
// recvmsg are): golang.org/x/net's ReadBatch and WriteBatch would build the
// message headers anew on every call and go through the poller each time.

// maxBatch is how many messages one sendmmsg or recvmmsg call carries.
const maxBatch = 64

// mmsgBuf holds the message headers, address and data buffers of batched
// calls, allocated once per sweep and reused for every call.
type mmsgBuf struct {
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // room for either family
	bufs  [][]byte
	oobs  [][]byte // receive only
}

// newMmsgBuf allocates n slots of size bytes each (and oob bytes of control
// data each, 0 for sends), the headers pointing at them.
func newMmsgBuf(n, size, oob int) *mmsgBuf {
	b := &mmsgBuf{
		hdrs:  make([]unix.Mmsghdr, n),
		iovs:  make([]unix.Iovec, n),
		names: make([]unix.RawSockaddrInet6, n),
		bufs:  make([][]byte, n),
		oobs:  make([][]byte, n),
	}
	data := make([]byte, n*size)
	var ctl []byte
	if oob > 0 {
		ctl = make([]byte, n*oob)
	}
	for i := range n {
		b.bufs[i] = data[i*size : (i+1)*size : (i+1)*size]
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(size)
		h := &b.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Iov = &b.iovs[i]
		h.Iovlen = 1
		if oob > 0 {
			b.oobs[i] = ctl[i*oob : (i+1)*oob : (i+1)*oob]
			h.Control = &b.oobs[i][0]
		}
	}
	return b
}

// setDest sets slot i's destination address and its message length.
func (b *mmsgBuf) setDest(i int, addr netip.Addr, n int) {
	h := &b.hdrs[i].Hdr
	if addr.Is4() {
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&b.names[i]))
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: addr.As4()}
		h.Namelen = unix.SizeofSockaddrInet4
	} else {
		b.names[i] = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: addr.As16()}
		h.Namelen = unix.SizeofSockaddrInet6
	}
	b.iovs[i].SetLen(n)
}

// sendBatch sends the messages of slots [from, to) of a bare sock with one
// sendmmsg call, waiting while the send buffer is full. It returns how many
// left (slots from … from+n−1), the time just before and just after the
// call, and the error of slot from+n when it failed (the caller skips it and
// calls again for the rest).
func (s *sock) sendBatch(b *mmsgBuf, from, to int) (n int, before, after time.Time, err error) {
	for {
		before = time.Now()
		r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.hdrs[from])), uintptr(to-from), 0, 0, 0)
		after = time.Now()
		runtime.KeepAlive(b)
		switch e {
		case 0:
			return int(r), before, after, nil
		case unix.EINTR:
		case unix.EAGAIN:
			// The send buffer is full (rare: the socket is not in Go's
			// poller, so wait in a blocking poll the runtime knows of).
			fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds, 10); err != nil && err != unix.EINTR {
				return 0, before, after, err
			}
		default:
			return 0, before, after, e
		}
	}
}

// recvBatch is one non-blocking recvmmsg call into b's slots: the number of
// datagrams read, or unix.EAGAIN when none is queued.
func recvBatch(fd uintptr, b *mmsgBuf) (int, error) { return recvBatchFlags(fd, b, 0) }

// packet returns slot i of a receive as a packet (its data aliases the slot).
func (b *mmsgBuf) packet(i int) packet {
	h := &b.hdrs[i]
	p := packet{data: b.bufs[i][:h.Len]}
	switch b.names[i].Family {
	case unix.AF_INET:
		p.from = netip.AddrFrom4((*unix.RawSockaddrInet4)(unsafe.Pointer(&b.names[i])).Addr)
	case unix.AF_INET6:
		p.from = netip.AddrFrom16(b.names[i].Addr)
	}
	p.at = kernelTime(b.oobs[i][:h.Hdr.Controllen])
	if p.at.IsZero() {
		p.at = time.Now()
	}
	return p
}

// putEcho writes an ICMP echo request (v6 selects ICMPv6 types) with id,
// sequence number seq and payload into dst (8 + len(payload) bytes) and
// returns its length. The kernel writes the ICMPv6 checksum.
func putEcho(dst []byte, v6 bool, id, seq uint16, payload []byte) int {
	b := dst[:8+len(payload)]
	if v6 {
		b[0] = icmp6Echo
	} else {
		b[0] = icmp4Echo
	}
	b[1], b[2], b[3] = 0, 0, 0
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], payload)
	if !v6 {
		binary.BigEndian.PutUint16(b[2:], checksum(0, b))
	}
	return len(b)
}

package probe

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Send times from the kernel (issue 35). A sweep's replies carry the
// kernel's receive stamp (SO_TIMESTAMPNS, CLOCK_REALTIME); their send times
// used to be placed evenly across the sendmmsg call that sent them, and a
// request that left early in a slow call (preempted, or with its reply
// handled inside the call on loopback) then got a send time later than its
// reply: RTTs of −0.002 to −20.8 ms. Now each request's send time is the
// kernel's software transmit stamp (SO_TIMESTAMPING, taken as the device
// takes the packet, on the same clock as the receive stamps); where the
// kernel gives none, the clock read just before the call, which is never
// later than the real send. Stamps are matched to probes by the run's
// nonce and probe number in the looped-back request, not by a counter
// (SOF_TIMESTAMPING_OPT_ID): a send that fails part-way leaves a counter
// unsure whether it consumed a number, a payload never is.

// enableTxStamps asks for a software transmit stamp of every datagram fd
// sends; false when the kernel refuses.
func enableTxStamps(fd int) bool {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING,
		unix.SOF_TIMESTAMPING_TX_SOFTWARE|unix.SOF_TIMESTAMPING_SOFTWARE) == nil
}

// txStampsOn is enableTxStamps; a test turns the stamps off.
var txStampsOn = enableTxStamps

// txOobSize fits the control data of one error-queue entry: the stamps
// (three timespecs) and the sock_extended_err with its offender address.
var txOobSize = unix.CmsgSpace(3*int(unsafe.Sizeof(unix.Timespec{}))) +
	unix.CmsgSpace(int(unsafe.Sizeof(unix.SockExtendedErr{}))+unix.SizeofSockaddrInet6)

// readTxStamps reads every transmit stamp queued on fd's error queue (into
// b's slots) without waiting and calls fn with each looped-back request and
// its stamp.
func readTxStamps(fd int, b *mmsgBuf, fn func(data []byte, at time.Time)) {
	for {
		n, err := recvBatchFlags(uintptr(fd), b, unix.MSG_ERRQUEUE)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for i := range n {
			h := &b.hdrs[i]
			if at := txTime(b.oobs[i][:h.Hdr.Controllen]); !at.IsZero() {
				fn(b.bufs[i][:min(int(h.Len), len(b.bufs[i]))], at)
			}
		}
		if n < len(b.hdrs) {
			return
		}
	}
}

// txTime is the software stamp of an error-queue entry that is a transmit
// stamp (origin SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND); zero otherwise.
func txTime(oob []byte) time.Time {
	var at time.Time
	send := false
	hdr := unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			break
		}
		data := oob[unix.CmsgLen(0):l]
		switch {
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING && len(data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
			if ts.Sec != 0 || ts.Nsec != 0 {
				at = time.Unix(ts.Unix())
			}
		case (h.Level == unix.SOL_IP && h.Type == unix.IP_RECVERR || h.Level == unix.SOL_IPV6 && h.Type == unix.IPV6_RECVERR) &&
			len(data) >= int(unsafe.Sizeof(unix.SockExtendedErr{})):
			e := (*unix.SockExtendedErr)(unsafe.Pointer(&data[0]))
			send = e.Origin == unix.SO_EE_ORIGIN_TIMESTAMPING && e.Info == unix.SCM_TSTAMP_SND
		}
		step := unix.CmsgSpace(l - unix.CmsgLen(0))
		if step > len(oob) {
			break
		}
		oob = oob[step:]
	}
	if !send {
		return time.Time{}
	}
	return at
}

// echoProbeNumber finds the probe number in a looped-back echo request of
// the run with nonce: the payload starts with the nonce and the number.
// Where the request starts in data (a link header, an IP header in front)
// depends on the socket and the device, so the nonce is searched for.
func echoProbeNumber(data []byte, nonce [8]byte) (int, bool) {
	i := bytes.Index(data, nonce[:])
	if i < 0 || i+12 > len(data) {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(data[i+8:])), true
}

// recvBatchFlags is recvBatch with recvmmsg flags.
func recvBatchFlags(fd uintptr, b *mmsgBuf, flags int) (int, error) {
	for i := range b.hdrs {
		h := &b.hdrs[i].Hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.SetControllen(len(b.oobs[i]))
		h.Flags = 0
	}
	r, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), uintptr(len(b.hdrs)), uintptr(flags), 0, 0)
	runtime.KeepAlive(b)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

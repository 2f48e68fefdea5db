package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrPrivilege is returned (wrapped, with the exact command to run) when the
// process may open neither an unprivileged ICMP socket nor a raw socket.
var ErrPrivilege = errors.New("missing privilege to open ICMP or raw sockets")

// ErrFirewall is returned (wrapped, naming the target) when this host
// refused to send a probe on a socket it had opened: sendto or connect gave
// EPERM, which Linux returns when a netfilter rule (nftables, iptables) on
// the output path drops or rejects the packet, or a security module denies
// it. It is a fact about one destination, not a missing privilege: only
// that target fails, the others are probed.
var ErrFirewall = errors.New("blocked by a local firewall")

// firewallError says that this host's firewall refused what to dst.
func firewallError(what string, dst netip.Addr, cause error) error {
	return fmt.Errorf("%s to %s: %w: an output rule of this host's firewall (nftables, iptables) or a security policy refused the packet (%w); other targets are probed", what, dst, ErrFirewall, cause)
}

// isFirewall tells a send refused by this host's firewall (EPERM on a
// socket that is already open) from a missing privilege or a broadcast
// (EACCES).
func isFirewall(err error) bool { return errors.Is(err, unix.EPERM) }

// privilegeError wraps ErrPrivilege with the commands that fix it. dgramToo
// says whether unprivileged ICMP sockets would also do (ping, not trace).
func privilegeError(what string, cause error, dgramToo bool) error {
	exe, err := os.Executable()
	if err != nil {
		exe = "linecheck"
	}
	msg := fmt.Sprintf("%s: %v: %v\nfix: run as root, or give the binary the capability:\n  sudo setcap cap_net_raw+ep %s",
		what, ErrPrivilege, cause, exe)
	if dgramToo {
		msg += "\nor allow unprivileged ICMP (datagram) sockets for all groups:\n  sudo sysctl -w net.ipv4.ping_group_range=\"0 2147483647\""
	}
	return &privError{msg: msg, cause: cause}
}

type privError struct {
	msg   string
	cause error
}

func (e *privError) Error() string { return e.msg }
func (e *privError) Is(t error) bool {
	return t == ErrPrivilege
}
func (e *privError) Unwrap() error { return e.cause }

func isPermission(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)
}

// SocketFunc opens a socket (unix.Socket's signature). PingConfig and
// TraceConfig take one so that tests can simulate a missing privilege; nil
// is unix.Socket.
type SocketFunc func(domain, typ, proto int) (int, error)

// defaultSocket is the opener of configs without one (nil: unix.Socket).
var defaultSocket atomic.Pointer[SocketFunc]

// SetDefaultSocketFunc makes f open the sockets of every ping, sweep and
// trace whose config has no OpenSocket; nil restores unix.Socket. A command
// whose raw sockets come from a privileged helper process (it holds no
// capability itself) sets it once, before it probes.
func SetDefaultSocketFunc(f SocketFunc) {
	if f == nil {
		defaultSocket.Store(nil)
		return
	}
	defaultSocket.Store(&f)
}

// socketFunc is open, or else the default opener.
func socketFunc(open SocketFunc) SocketFunc {
	if open != nil {
		return open
	}
	if f := defaultSocket.Load(); f != nil {
		return *f
	}
	return unix.Socket
}

// sock is a non-blocking socket registered with Go's poller, so reads block a
// goroutine (not a thread) and Close wakes them.
//
// A bare sock (openBareSock, the ping sweep's) is not registered itself: an
// epoll instance of its own that watches only its input is (ep). Go's
// poller registers a socket for output too, edge-triggered, so every batch
// of sends would wake it again as the send buffer drains; through ep it
// wakes for replies only. The sweep reads and writes fd directly.
type sock struct {
	f      *os.File
	rc     syscall.RawConn
	v6     bool
	dgram  bool
	stamps bool // SO_TIMESTAMPNS is on
	// txStamps: SO_TIMESTAMPING gives transmit stamps (echo sockets of a
	// sweep, txstamp.go).
	txStamps bool
	ttl      int // the TTL setTTL set last (0: the kernel's default)

	bare bool
	fd   int             // bare: the socket
	ep   *os.File        // bare: the epoll instance watching fd's input
	eprc syscall.RawConn // bare: ep's
}

// openSock opens a socket of the given type and protocol for the address family
// of v6, with kernel receive timestamps and a large receive buffer.
func openSock(open SocketFunc, v6 bool, typ, proto int) (*sock, error) {
	s, fd, err := openFD(open, v6, typ, proto)
	if err != nil {
		return nil, err
	}
	s.f = os.NewFile(uintptr(fd), "probe-socket")
	rc, err := s.f.SyscallConn()
	if err != nil {
		s.f.Close()
		return nil, err
	}
	s.rc = rc
	return s, nil
}

// openBareSock is openSock for a bare sock (see sock).
func openBareSock(open SocketFunc, v6 bool, typ, proto int) (*sock, error) {
	s, fd, err := openFD(open, v6, typ, proto)
	if err != nil {
		return nil, err
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err == nil {
		err = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
		if err == nil {
			err = unix.SetNonblock(ep, true)
		}
		if err != nil {
			unix.Close(ep)
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("epoll for the probe socket: %w", err)
	}
	s.bare, s.fd = true, fd
	s.ep = os.NewFile(uintptr(ep), "probe-socket-poll")
	if s.eprc, err = s.ep.SyscallConn(); err != nil {
		s.ep.Close()
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

// openFD opens the socket of openSock and sets its options.
func openFD(open SocketFunc, v6 bool, typ, proto int) (*sock, int, error) {
	open = socketFunc(open)
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	fd, err := open(family, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, 0, err
	}
	s := &sock{v6: v6, dgram: typ == unix.SOCK_DGRAM}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil {
		s.stamps = true
	}
	// A 1,000-target sweep answers in bursts; the default 208 KiB buffer is
	// about 1,500 replies. FORCE works as root or with CAP_NET_ADMIN only.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	}
	return s, fd, nil
}

// Close closes the socket. A bare sock's readers must have returned
// (stopReaders wakes them).
func (s *sock) Close() error {
	if s.bare {
		s.stopReaders()
		return unix.Close(s.fd)
	}
	return s.f.Close()
}

// stopReaders wakes and ends the goroutines waiting for a bare sock's input
// (ep is closed); the socket itself stays open until Close.
func (s *sock) stopReaders() {
	if s.bare {
		_ = s.ep.Close()
	}
}

// control runs fn on the descriptor.
func (s *sock) control(fn func(fd int) error) error {
	if s.bare {
		return fn(s.fd)
	}
	var ferr error
	if err := s.rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// setTTL sets the unicast TTL (hop limit) of later sends. A trace sends
// every TTL of a cycle in turn, so the option is set only when it changes;
// the caller serializes setTTL with its sends, as the TTL is the socket's.
func (s *sock) setTTL(ttl int) error {
	if ttl == s.ttl {
		return nil
	}
	err := s.control(func(fd int) error {
		if s.v6 {
			return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl)
		}
		return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TTL, ttl)
	})
	if err == nil {
		s.ttl = ttl
	}
	return err
}

// filterICMP lets only the listed ICMP types through a raw ICMP socket, so the
// process is not woken for every echo request it sends on loopback or for
// other traffic (Linux ICMP_FILTER / ICMP6_FILTER: a set bit blocks a type).
func (s *sock) filterICMP(types ...int) error {
	return s.control(func(fd int) error {
		if s.v6 {
			var f unix.ICMPv6Filter
			for i := range f.Data {
				f.Data[i] = 0xffffffff
			}
			for _, t := range types {
				f.Data[t>>5] &^= 1 << (uint(t) & 31)
			}
			return unix.SetsockoptICMPv6Filter(fd, unix.IPPROTO_ICMPV6, unix.ICMPV6_FILTER, &f)
		}
		mask := uint32(0xffffffff)
		for _, t := range types {
			if t < 32 {
				mask &^= 1 << uint(t)
			}
		}
		return unix.SetsockoptInt(fd, unix.SOL_RAW, 1 /* ICMP_FILTER */, int(mask))
	})
}

// sendTo writes b to addr (port is used by datagram sockets only; raw sockets
// ignore it) and returns the time just before the system call.
func (s *sock) sendTo(b []byte, addr netip.Addr, port int) (time.Time, error) {
	var sa unsafe.Pointer
	var salen uintptr
	var sa4 unix.RawSockaddrInet4
	var sa6 unix.RawSockaddrInet6
	if s.v6 {
		sa6 = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: addr.As16()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa6.Port))[:], uint16(port))
		sa, salen = unsafe.Pointer(&sa6), unix.SizeofSockaddrInet6
	} else {
		sa4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: addr.As4()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa4.Port))[:], uint16(port))
		sa, salen = unsafe.Pointer(&sa4), unix.SizeofSockaddrInet4
	}
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	var t time.Time
	var serr error
	err := s.rc.Write(func(fd uintptr) bool {
		t = time.Now()
		// A raw system call: the socket never blocks, so the runtime need
		// not hand the P off (unix.Sendto's entersyscall lets sysmon retake
		// it during every send, which kept sysmon waking every 20 µs in a
		// sweep).
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(p), uintptr(len(b)), 0, uintptr(sa), salen)
		serr = nil
		if e != 0 {
			serr = e
		}
		return e != unix.EAGAIN
	})
	runtime.KeepAlive(b)
	if err != nil {
		return t, err
	}
	return t, serr
}

// packet is one received datagram.
type packet struct {
	data []byte
	from netip.Addr
	at   time.Time // kernel receive time (SO_TIMESTAMPNS), else when read
}

// recv reads one datagram into buf (the returned packet's data aliases buf),
// waiting for one to arrive.
func (s *sock) recv(buf, oob []byte) (packet, error) {
	var p packet
	var n, oobn int
	var rerr error
	var from netip.Addr
	err := s.rc.Read(func(fd uintptr) bool {
		n, oobn, from, rerr = recvmsg(int(fd), buf, oob)
		return rerr != unix.EAGAIN
	})
	if err != nil {
		return p, err
	}
	if rerr != nil {
		return p, rerr
	}
	p.data = buf[:n]
	p.from = from
	p.at = kernelTime(oob[:oobn])
	if p.at.IsZero() {
		p.at = time.Now()
	}
	return p, nil
}

// recvmsg is one non-blocking recvmsg(2) as a raw system call, decoding the
// source address itself: unix.Recvmsg costs a getsockopt(SO_PROTOCOL) per
// IPv4 datagram (to tell L2TP sockets apart), one more system call per reply.
func recvmsg(fd int, buf, oob []byte) (n, oobn int, from netip.Addr, err error) {
	var rsa unix.RawSockaddrAny
	var iov unix.Iovec
	iov.Base = &buf[0]
	iov.SetLen(len(buf))
	msg := unix.Msghdr{Name: (*byte)(unsafe.Pointer(&rsa)), Namelen: unix.SizeofSockaddrAny, Iov: &iov, Iovlen: 1}
	if len(oob) > 0 {
		msg.Control = &oob[0]
		msg.SetControllen(len(oob))
	}
	r, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), 0)
	runtime.KeepAlive(buf)
	runtime.KeepAlive(oob)
	if e != 0 {
		return 0, 0, netip.Addr{}, e
	}
	switch rsa.Addr.Family {
	case unix.AF_INET:
		from = netip.AddrFrom4((*unix.RawSockaddrInet4)(unsafe.Pointer(&rsa)).Addr)
	case unix.AF_INET6:
		from = netip.AddrFrom16((*unix.RawSockaddrInet6)(unsafe.Pointer(&rsa)).Addr)
	}
	return int(r), int(msg.Controllen), from, nil
}

// kernelTime extracts the SCM_TIMESTAMPNS receive time from control data
// (parsed in place: this runs once per reply of a 1,000-target sweep).
func kernelTime(oob []byte) time.Time {
	hdr := unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return time.Time{}
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l-unix.CmsgLen(0) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
			return time.Unix(ts.Unix())
		}
		step := unix.CmsgSpace(l - unix.CmsgLen(0))
		if step > len(oob) {
			break
		}
		oob = oob[step:]
	}
	return time.Time{}
}

// oobSize fits the receive stamp's control message, and the
// SCM_TIMESTAMPING one (three timespecs) that a socket with transmit stamps
// gets beside it (txstamp.go).
var oobSize = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))) + unix.CmsgSpace(3*int(unsafe.Sizeof(unix.Timespec{})))

// sourceFor asks the routing table which local address reaches dst (a UDP
// connect sends nothing).
func sourceFor(dst netip.Addr) (netip.Addr, error) {
	family := unix.AF_INET
	var sa unix.Sockaddr
	if dst.Is6() {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Addr: dst.As16(), Port: 33434}
	} else {
		sa = &unix.SockaddrInet4{Addr: dst.As4(), Port: 33434}
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return netip.Addr{}, err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		return netip.Addr{}, fmt.Errorf("no route to %s: %w", dst, err)
	}
	local, err := unix.Getsockname(fd)
	if err != nil {
		return netip.Addr{}, err
	}
	switch l := local.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(l.Addr), nil
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(l.Addr), nil
	}
	return netip.Addr{}, fmt.Errorf("no source address for %s", dst)
}

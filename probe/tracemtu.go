package probe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// MTUHop is what the path MTU search (PathMTU) learned at one TTL.
type MTUHop struct {
	TTL  int
	Addr netip.Addr // who answered the largest probe that reached this TTL; invalid when none did
	Dest bool       // Addr is the target
	// MTU is the largest packet (IP header included, bytes) that reached
	// this TTL; 0 when no probe of any size was answered here.
	MTU int
	// ReportedBy is the router that said, with an ICMP "fragmentation
	// needed" (IPv4) or "packet too big" (IPv6) naming the next-hop MTU,
	// that a larger packet does not pass on toward this TTL; invalid when
	// no router said so here.
	ReportedBy netip.Addr
	// Probed is true when the MTU here was found by trying sizes: a larger
	// probe got no answer at all (a router dropped it silently).
	Probed bool
}

// MTURun is one path MTU search.
type MTURun struct {
	Addr netip.Addr
	// Start is the MTU of the interface toward Addr, where the search began.
	Start int
	// Cached is the path MTU the kernel had learned for Addr before the run
	// (0 when it knew none below Start). The search ignores it: its probes
	// are sent with IP_PMTUDISC_PROBE, so every run starts from Start.
	Cached int
	Hops   []MTUHop
	// SourcePort is the UDP source port the probes left from (the flow).
	SourcePort int
	// PathMTU is the largest packet that reached the target (0 when it
	// was not reached).
	PathMTU int
}

// MTUConfig configures PathMTU. Zero fields take the defaults.
type MTUConfig struct {
	MaxTTL  int           // 30 by default
	Timeout time.Duration // per probe, 1 s by default
	Port    int           // UDP destination port, 33434 by default
	// SourcePort is the UDP source port of the search's flow (0: the
	// kernel picks one); with the destination port it fixes the flow an
	// ECMP router hashes, so a search per source port probes one flow each.
	SourcePort int
}

// Minimum packet sizes every IPv4 / IPv6 link must carry (RFC 791, RFC 8200).
const (
	minMTU4 = 68
	minMTU6 = 1280
)

// PathMTU finds the path MTU to dst hop by hop, as tracepath does and
// without any privilege: UDP probes from an ordinary socket with the
// don't-fragment bit (IP_PMTUDISC_PROBE: the kernel's cached path MTU is
// ignored, so every run starts from the interface MTU), one TTL after
// another, each at the largest size known to pass so far. A time exceeded
// (or the target's port unreachable) means the size reached that TTL; a
// fragmentation needed / packet too big names the next-hop MTU, and the
// probe is sent again at it. A size that gets no answer at all twice is
// tried smaller: if the minimum size answers, the largest size that does is
// found by bisection (a router dropping big packets without saying so). It
// stops at the target or at cfg.MaxTTL.
func PathMTU(ctx context.Context, dst netip.Addr, cfg MTUConfig) (*MTURun, error) {
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = DefaultMaxTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTraceTimeout
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultUDPPort
	}
	m, err := openMTUSock(dst, cfg)
	if err != nil {
		return nil, err
	}
	defer m.s.Close()
	run := &MTURun{Addr: dst, SourcePort: m.sport}
	if run.Start, err = m.deviceMTU(); err != nil {
		return nil, err
	}
	if c := m.cachedMTU(); c > 0 && c < run.Start {
		run.Cached = c
	}
	floor := minMTU4
	if m.v6 {
		floor = minMTU6
	}
	cur := run.Start
	for ttl := 1; ttl <= cfg.MaxTTL; ttl++ {
		h := MTUHop{TTL: ttl}
		for {
			r, err := m.probeTwice(ctx, ttl, cur)
			if err != nil {
				return run, err
			}
			if r.tooBig > 0 && r.tooBig < cur {
				cur, h.ReportedBy = max(r.tooBig, floor), r.from
				continue
			}
			if r.answered {
				h.Addr, h.Dest, h.MTU = r.from, r.dest, cur
				break
			}
			// No answer at this size: a silent router, or one that drops
			// big packets silently. The smallest size tells which.
			small, err := m.probeTwice(ctx, ttl, floor)
			if err != nil {
				return run, err
			}
			if !small.answered {
				break // silent at any size: the MTU here is unknown
			}
			lo, hi := floor, cur // lo answers, hi does not
			h.Addr, h.Dest = small.from, small.dest
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				r, err := m.probeTwice(ctx, ttl, mid)
				if err != nil {
					return run, err
				}
				if r.answered {
					lo, h.Addr, h.Dest = mid, r.from, r.dest
				} else {
					hi = mid
				}
			}
			cur, h.MTU, h.Probed = lo, lo, true
			break
		}
		run.Hops = append(run.Hops, h)
		if h.Dest {
			run.PathMTU = h.MTU
			break
		}
	}
	return run, nil
}

// mtuSock is the search's UDP socket.
type mtuSock struct {
	s   *sock
	v6  bool
	dst netip.Addr
	cfg MTUConfig
	seq uint32
	buf []byte
	// sport is the socket's UDP source port.
	sport int
}

func openMTUSock(dst netip.Addr, cfg MTUConfig) (*mtuSock, error) {
	v6 := dst.Is6()
	s, err := openSock(nil, v6, unix.SOCK_DGRAM, unix.IPPROTO_UDP)
	if err != nil {
		return nil, fmt.Errorf("opening a UDP socket: %w", err)
	}
	err = s.control(func(fd int) error {
		if err := setRecverr(fd, v6); err != nil {
			return err
		}
		var sa unix.Sockaddr
		if v6 {
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE); err != nil {
				return err
			}
			sa = &unix.SockaddrInet6{Addr: dst.As16(), Port: cfg.Port}
		} else {
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE); err != nil {
				return err
			}
			sa = &unix.SockaddrInet4{Addr: dst.As4(), Port: cfg.Port}
		}
		if cfg.SourcePort > 0 {
			var local unix.Sockaddr = &unix.SockaddrInet4{Port: cfg.SourcePort}
			if v6 {
				local = &unix.SockaddrInet6{Port: cfg.SourcePort}
			}
			if err := unix.Bind(fd, local); err != nil {
				return fmt.Errorf("source port %d: %w", cfg.SourcePort, err)
			}
		}
		// Connected: IP_MTU then reads the kernel's path MTU for dst.
		return unix.Connect(fd, sa)
	})
	var sport int
	if err == nil {
		err = s.control(func(fd int) error {
			sa, err := unix.Getsockname(fd)
			switch a := sa.(type) {
			case *unix.SockaddrInet4:
				sport = a.Port
			case *unix.SockaddrInet6:
				sport = a.Port
			}
			return err
		})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("UDP socket for the path MTU: %w", err)
	}
	return &mtuSock{s: s, v6: v6, dst: dst, cfg: cfg, buf: make([]byte, 65536), sport: sport}, nil
}

// headers is the IP and UDP header bytes of a probe.
func (m *mtuSock) headers() int {
	if m.v6 {
		return 40 + 8
	}
	return 20 + 8
}

// deviceMTU sends the largest UDP datagram: the kernel refuses one too
// large for the interface (EMSGSIZE) and queues a local error naming the
// MTU it would have allowed, the interface's under IP_PMTUDISC_PROBE.
func (m *mtuSock) deviceMTU() (int, error) {
	m.drain()
	largest := 65535 - 8 // the largest UDP payload
	if !m.v6 {
		largest -= 20
	}
	_, err := m.s.sendTo(make([]byte, largest), m.dst, m.cfg.Port)
	if err == nil {
		return largest + m.headers(), nil // an interface that carries any IP packet (loopback)
	}
	if !errors.Is(err, unix.EMSGSIZE) {
		return 0, fmt.Errorf("finding the interface MTU toward %s: the largest UDP datagram gave %v, not EMSGSIZE", m.dst, err)
	}
	oob := make([]byte, 512)
	var ee unix.SockExtendedErr
	for range 8 {
		var rerr error
		var oobn int
		_ = m.s.control(func(fd int) error {
			_, oobn, _, _, rerr = unix.Recvmsg(fd, m.buf, oob, unix.MSG_ERRQUEUE)
			return nil
		})
		if rerr != nil {
			break
		}
		ee, _, _ = extendedErr(m.v6, oob[:oobn])
		if ee.Origin == unix.SO_EE_ORIGIN_LOCAL && ee.Errno == uint32(unix.EMSGSIZE) && ee.Info > 0 {
			return int(ee.Info), nil
		}
	}
	return 0, fmt.Errorf("finding the interface MTU toward %s: no local error with the MTU", m.dst)
}

// cachedMTU is the kernel's path MTU for the connected destination.
func (m *mtuSock) cachedMTU() int {
	var v int
	_ = m.s.control(func(fd int) error {
		var err error
		if m.v6 {
			v, err = unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU)
		} else {
			v, err = unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU)
		}
		return err
	})
	return v
}

// drain empties the error queue (answers to earlier probes).
func (m *mtuSock) drain() {
	oob := make([]byte, 512)
	for {
		var rerr error
		_ = m.s.control(func(fd int) error {
			_, _, _, _, rerr = unix.Recvmsg(fd, m.buf, oob, unix.MSG_ERRQUEUE)
			return nil
		})
		if rerr != nil {
			return
		}
	}
}

// mtuReply is the outcome of one probe.
type mtuReply struct {
	answered bool // time exceeded, or the target's unreachable: the size got there
	dest     bool
	from     netip.Addr
	tooBig   int // the next-hop MTU a router (or the kernel) named
}

// probeTwice sends a probe of size bytes with ttl and, when nothing
// answers, once more.
func (m *mtuSock) probeTwice(ctx context.Context, ttl, size int) (mtuReply, error) {
	var r mtuReply
	var err error
	for range 2 {
		if r, err = m.probe(ctx, ttl, size); err != nil || r.answered || r.tooBig > 0 {
			return r, err
		}
	}
	return r, nil
}

// probe sends one probe and waits up to the timeout for what it caused.
func (m *mtuSock) probe(ctx context.Context, ttl, size int) (mtuReply, error) {
	if err := m.s.setTTL(ttl); err != nil {
		return mtuReply{}, err
	}
	m.drain()
	m.seq++
	payload := make([]byte, max(size-m.headers(), 4))
	binary.BigEndian.PutUint32(payload, m.seq)
	if _, err := sendPastErrors(m.s, payload, m.dst, m.cfg.Port); err != nil && !errors.Is(err, unix.EMSGSIZE) {
		return mtuReply{}, fmt.Errorf("sending a %d-byte probe with TTL %d: %w", size, ttl, err)
	}
	deadline := time.Now().Add(m.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	oob := make([]byte, 512)
	for {
		if err := ctx.Err(); err != nil {
			return mtuReply{}, err
		}
		_ = m.s.f.SetReadDeadline(deadline)
		var n, oobn int
		var rerr error
		err := m.s.rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), m.buf, oob, unix.MSG_ERRQUEUE)
			if rerr == nil {
				return true
			}
			// The pending error an ICMP error also sets (a plain read
			// returns and clears it), or nothing yet.
			var b [1]byte
			_, _, _, _, _ = unix.Recvmsg(int(fd), b[:], nil, unix.MSG_DONTWAIT)
			return false
		})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return mtuReply{}, nil
		}
		if err != nil {
			return mtuReply{}, err
		}
		ee, from, ok := extendedErr(m.v6, oob[:oobn])
		if ee.Origin == unix.SO_EE_ORIGIN_LOCAL && ee.Errno == uint32(unix.EMSGSIZE) {
			return mtuReply{tooBig: int(ee.Info)}, nil
		}
		if !ok || n < 4 || binary.BigEndian.Uint32(m.buf[:4]) != m.seq {
			continue // an answer to an earlier probe, or to no probe
		}
		from = from.Unmap()
		var exceeded, unreach, tooBigType, tooBigCode uint8 = icmp4TimeExceeded, icmp4Unreachable, icmp4Unreachable, 4
		if m.v6 {
			exceeded, unreach, tooBigType, tooBigCode = icmp6TimeExceeded, icmp6Unreachable, 2, 0
		}
		switch {
		case ee.Type == tooBigType && ee.Code == tooBigCode:
			mtu := int(ee.Info)
			if mtu <= 0 || mtu >= size {
				// A router that names no usable MTU (RFC 1191's old ones
				// send 0): try the next smaller size by bisection's way.
				mtu = size - (size-minMTU4)/2
			}
			return mtuReply{tooBig: mtu, from: from}, nil
		case ee.Type == exceeded:
			return mtuReply{answered: true, from: from}, nil
		case ee.Type == unreach && from == m.dst:
			return mtuReply{answered: true, dest: true, from: from}, nil
		}
	}
}

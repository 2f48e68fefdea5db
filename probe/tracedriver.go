package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// rawDriver is the socket Driver: probes leave through raw sockets so that
// every header field a router may hash is ours to fix (Paris), and replies come
// in through a raw ICMP socket (time exceeded, unreachable, echo reply) and,
// for TCP, the raw TCP socket (SYN-ACK, RST). The driver owns the sockets and
// their readers; the protocol (traceProto, trace_<name>.go) builds the
// probes and matches the replies.
type rawDriver struct {
	cfg       TraceConfig
	v6        bool
	dst, src  netip.Addr
	id        uint16 // ICMP id, and the high half of TCP sequence numbers
	sportBase int    // UDP/TCP source port of flow 0; flow f uses sportBase+f
	// flowDst: udp flows differ in the destination port (Port+f) from
	// one source port (sportBase), TraceConfig.FlowDstPort.
	flowDst bool
	// nat: udp over IPv4 with NAT IDs. Probes are written with their IPv4
	// header (IP_HDRINCL) so that the IP ID carries the UDP checksum (the
	// probe key); replies are matched by the quoted IP ID, which a
	// stateless address rewrite leaves alone, not by the quoted checksum,
	// which it changes.
	nat bool

	icmp *sock // receives ICMP; sends the ICMP probes
	l4   *sock // udp: send only; tcp: send and receive
	mu   sync.Mutex

	in   chan rxPacket
	stop chan struct{}
	wg   sync.WaitGroup
}

type rxPacket struct {
	packet
	l4 bool // from the protocol's socket (tcp's), not the ICMP one
}

// randIntn picks the run's ICMP id and source ports: they only need to
// differ between runs, and math/rand/v2's generator (seeded by the runtime)
// costs nothing to start, where crypto/rand's first use costs a one-shot
// trace a tenth of a millisecond.
func randIntn(n int) int { return rand.IntN(n) }

// rxQueue is how many replies a raw driver's readers hold for Receive, and
// rxBufSize the most of one reply they read (an ICMP error quotes at most
// 1,280 bytes, RFC 4884 extensions included; a bigger packet is no reply to
// a probe of ours). A backtrace opens one driver per target, thousands at
// once: with 4,096 slots and 64 KiB per reader, 3,000 drivers held about
// 1.4 GB and an interrupted run stalled in the garbage collector for
// seconds (issue 35). A full queue holds the reader back, not the replies:
// they wait in the socket's buffer with their kernel stamps.
const (
	rxQueue   = 256
	rxBufSize = 4096
)

func openRawDriver(cfg TraceConfig, dst netip.Addr) (Driver, error) {
	tp := traceProtoOf(cfg.Proto)
	d := &rawDriver{cfg: cfg, v6: dst.Is6(), dst: dst, in: make(chan rxPacket, rxQueue), stop: make(chan struct{})}
	d.id = uint16(1 + randIntn(0xfffe))
	d.flowDst = tp.flowField(cfg) == FlowUDPDstPort
	src, err := sourceFor(dst)
	if err != nil {
		return nil, err
	}
	d.src = src
	icmpProto := unix.IPPROTO_ICMP
	if d.v6 {
		icmpProto = unix.IPPROTO_ICMPV6
	}
	open := func(proto int) (*sock, error) {
		s, err := openSock(cfg.OpenSocket, d.v6, unix.SOCK_RAW, proto)
		if err != nil && isPermission(err) {
			return nil, privilegeError("trace needs raw sockets", err, false)
		}
		return s, err
	}
	if d.icmp, err = open(icmpProto); err != nil {
		return nil, err
	}
	if d.v6 {
		err = d.icmp.filterICMP(icmp6EchoReply, icmp6TimeExceeded, icmp6Unreachable)
	} else {
		err = d.icmp.filterICMP(icmp4EchoReply, icmp4TimeExceeded, icmp4Unreachable)
	}
	if err != nil {
		d.icmp.Close()
		return nil, fmt.Errorf("ICMP filter: %w", err)
	}
	l4, err := tp.rawOpen(d, open)
	if err != nil {
		d.icmp.Close()
		return nil, err
	}
	d.read(d.icmp, false)
	if l4 {
		d.read(d.l4, true)
	}
	return d, nil
}

// proto is the protocol's part (trace_<name>.go).
func (d *rawDriver) proto() traceProto { return traceProtoOf(d.cfg.Proto) }

// attachFilter attaches the classic BPF program prog to socket fd.
func attachFilter(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]})
}

func (d *rawDriver) read(s *sock, l4 bool) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		buf := make([]byte, rxBufSize)
		oob := make([]byte, oobSize)
		for {
			p, err := s.recv(buf, oob)
			if err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			p.data = append([]byte(nil), p.data...)
			select {
			case d.in <- rxPacket{packet: p, l4: l4}:
			case <-d.stop:
				return
			}
		}
	}()
}

// Mode is ModeRaw.
func (d *rawDriver) Mode() TraceMode { return ModeRaw }

// Close closes the sockets and waits for the readers.
func (d *rawDriver) Close() error {
	close(d.stop)
	d.icmp.Close()
	if d.l4 != nil {
		d.l4.Close()
	}
	d.wg.Wait()
	return nil
}

// Send builds and sends one flow-stable probe.
func (d *rawDriver) Send(p TraceProbe) (time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, b, withTTL := d.proto().rawProbe(d, p)
	if !withTTL {
		if err := s.setTTL(p.TTL); err != nil {
			return time.Time{}, err
		}
	}
	return d.sendNow(s, b)
}

// FlowIdent is flow's ports (udp, tcp) or ICMP checksum.
func (d *rawDriver) FlowIdent(flow int) FlowIdent { return d.proto().rawFlow(d, flow) }

// portFlow is flow's ports: sportBase+flow to Port or, with flowDst,
// sportBase to Port+flow.
func (d *rawDriver) portFlow(flow int) FlowIdent {
	if d.flowDst {
		return FlowIdent{ID: d.cfg.Port + flow, SrcPort: d.sportBase, DstPort: d.cfg.Port + flow}
	}
	return FlowIdent{ID: d.sportBase + flow, SrcPort: d.sportBase + flow, DstPort: d.cfg.Port}
}

// sendNow sends b on s and words the errors.
func (d *rawDriver) sendNow(s *sock, b []byte) (time.Time, error) {
	at, err := s.sendTo(b, d.dst, 0)
	if err != nil && isFirewall(err) {
		return at, firewallError("sending a trace probe", d.dst, err)
	}
	if err != nil && isPermission(err) {
		if berr := broadcastSendError("sending a trace probe", d.dst, err); berr != err {
			return at, berr
		}
		return at, privilegeError("sending a trace probe", err, false)
	}
	return at, err
}

// Receive returns the next reply that belongs to this run.
func (d *rawDriver) Receive(ctx context.Context) (TraceReply, error) {
	for {
		var p rxPacket
		select {
		case p = <-d.in:
		default:
			select {
			case <-ctx.Done():
				return TraceReply{}, ctx.Err()
			case p = <-d.in:
			}
		}
		r, ok, err := d.decode(p)
		if err != nil {
			return TraceReply{}, err
		}
		if ok {
			return r, nil
		}
	}
}

// decode matches one packet: ok=false for unrelated traffic, a *ForeignError
// for another run's replies. The protocol matches what is no ICMP error
// (an echo reply, a TCP answer) and the probe an ICMP error quotes.
func (d *rawDriver) decode(p rxPacket) (TraceReply, bool, error) {
	b := p.data
	if !d.v6 {
		var ok bool
		if b, ok = ipv4Payload(b); !ok {
			return TraceReply{}, false, nil
		}
	}
	r := TraceReply{From: p.from, At: p.at}
	tp := d.proto()
	if p.l4 {
		return tp.rawReply(d, r, b, true)
	}
	ie, ok := parseICMPError(d.v6, b)
	if !ok {
		return tp.rawReply(d, r, b, false)
	}
	q, ok := parseQuoted(d.v6, ie.data)
	if !ok || q.dst != d.dst {
		return r, false, nil
	}
	r, ok, err := tp.rawQuoted(d, r, q)
	if !ok || err != nil {
		return r, false, err
	}
	// An unreachable from the target itself (port unreachable for UDP,
	// protocol or admin unreachable otherwise) is the destination answering.
	r.Dest = ie.unreach && p.from == d.dst
	r.MPLS = mplsLabels(ie.exts)
	return r, true, nil
}

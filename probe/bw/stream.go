package bw

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stream is one data stream of a test, on either side. A sender writes
// blocks as fast as the socket takes them (or paced at rate); a receiver
// counts what arrives. Counters are atomics so the interval ticker can read
// them while the stream runs.
type stream struct {
	id     int
	sender bool
	udp    bool
	tcp    *net.TCPConn
	uconn  *net.UDPConn // UDP: connected socket (client) or the shared server socket
	peer   *net.UDPAddr // UDP on the server: the client's address
	blk    int
	rate   float64 // bits per second, 0 = unlimited
	c64    bool    // UDP sequence numbers are 64-bit
	bytes  atomic.Int64
	pkts   atomic.Int64 // UDP sender: datagrams sent
	err    atomic.Value // first error that ended the stream early (error)
	closed atomic.Bool
	budget *byteBudget // a byte-limited test's bytes left, shared by its senders; nil when timed

	mu sync.Mutex // UDP receiver statistics, updated per datagram
	rx udpRx

	// Counters at the end of the omitted warm-up, subtracted from the totals.
	omitBytes, omitPkts int64
	omitRx              udpRx
	omitRetrans         int64
	omitAcked           int64
}

// udpRx is the receiver's view of a UDP stream, computed as iperf3 does
// (package doc: UDP loss, jitter and out-of-order).
type udpRx struct {
	highest     int64 // highest sequence number seen
	lost        int64 // sequence gaps, less the late arrivals that filled them
	outOfOrder  int64
	jitter      float64 // seconds
	prevTransit float64
	started     bool
}

// account updates the receiver statistics for one datagram with sequence
// seq sent at sent and received at now.
func (r *udpRx) account(seq int64, sent, now time.Time) {
	if seq >= r.highest+1 {
		if seq > r.highest+1 {
			r.lost += seq - 1 - r.highest
		}
		r.highest = seq
	} else {
		r.outOfOrder++
		if r.lost > 0 {
			r.lost--
		}
	}
	// RFC 1889 §6.3.1 interarrival jitter over one-way transit times; the
	// clocks need not agree because only differences count.
	transit := now.Sub(sent).Seconds()
	if !r.started {
		r.prevTransit, r.started = transit, true
	}
	d := transit - r.prevTransit
	if d < 0 {
		d = -d
	}
	r.prevTransit = transit
	r.jitter += (d - r.jitter) / 16
}

func (s *stream) fail(err error) {
	if err != nil && !s.closed.Load() {
		s.err.CompareAndSwap(nil, err)
	}
}

// stop ends the stream's loop: deadlines in the past wake blocked calls.
func (s *stream) stop() {
	s.closed.Store(true)
	past := time.Unix(1, 0)
	if s.tcp != nil {
		_ = s.tcp.SetDeadline(past)
	}
	if s.uconn != nil && s.peer == nil {
		_ = s.uconn.SetDeadline(past)
	}
}

func (s *stream) close() {
	if s.tcp != nil {
		_ = s.tcp.Close()
	}
	if s.uconn != nil && s.peer == nil {
		_ = s.uconn.Close()
	}
}

// run sends or receives until stop. UDP receivers on the server do not run
// a loop of their own: the shared socket's reader feeds them.
func (s *stream) run(start time.Time) {
	if s.sender {
		s.send(start)
		return
	}
	if s.udp {
		if s.peer == nil {
			s.recvUDP()
		}
		return
	}
	buf := make([]byte, max(s.blk, 128<<10))
	for !s.closed.Load() {
		n, err := s.tcp.Read(buf)
		s.bytes.Add(int64(n))
		if err != nil {
			s.fail(err)
			return
		}
	}
}

// send writes blocks; with a rate it waits whenever it is ahead of
// rate·elapsed, so the average holds over the test and bursts stay one
// block long (iperf3 paces the same way, per stream).
func (s *stream) send(start time.Time) {
	buf := make([]byte, s.blk)
	fill(buf)
	var sent int64
	if s.budget != nil {
		defer s.budget.senderDone()
	}
	for !s.closed.Load() {
		if s.rate > 0 {
			due := start.Add(time.Duration(float64(sent*8) / s.rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(min(d, 100*time.Millisecond))
				continue
			}
		}
		blk := buf
		if s.budget != nil {
			k := s.budget.take(len(buf))
			if k == 0 {
				return
			}
			if !s.udp { // a datagram goes whole: it carries its sequence number
				blk = buf[:k]
			}
		}
		var n int
		var err error
		if s.udp {
			n, err = s.sendDatagram(blk)
		} else {
			n, err = s.tcp.Write(blk)
		}
		sent += int64(n)
		s.bytes.Add(int64(n))
		if err != nil {
			if s.udp && (errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ECONNREFUSED)) {
				// A full device queue or an ICMP error drops a datagram;
				// the test goes on, as in iperf3.
				continue
			}
			s.fail(err)
			return
		}
	}
}

func (s *stream) sendDatagram(buf []byte) (int, error) {
	seq := s.pkts.Add(1)
	now := time.Now()
	binary.BigEndian.PutUint32(buf[0:], uint32(now.Unix()))
	binary.BigEndian.PutUint32(buf[4:], uint32(now.Nanosecond()/1000))
	if s.c64 {
		binary.BigEndian.PutUint64(buf[8:], uint64(seq))
	} else {
		binary.BigEndian.PutUint32(buf[8:], uint32(seq))
	}
	if s.peer != nil {
		return s.uconn.WriteToUDP(buf, s.peer)
	}
	return s.uconn.Write(buf)
}

func (s *stream) recvUDP() {
	buf := make([]byte, 65536)
	for !s.closed.Load() {
		n, err := s.uconn.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue
			}
			s.fail(err)
			return
		}
		s.datagram(buf[:n], time.Now())
	}
}

// datagram accounts one received UDP datagram.
func (s *stream) datagram(b []byte, now time.Time) {
	s.bytes.Add(int64(len(b)))
	if len(b) < 12 || s.c64 && len(b) < 16 {
		return
	}
	sent := time.Unix(int64(binary.BigEndian.Uint32(b[0:])), int64(binary.BigEndian.Uint32(b[4:]))*1000)
	var seq int64
	if s.c64 {
		seq = int64(binary.BigEndian.Uint64(b[8:]) & (1<<63 - 1))
	} else {
		seq = int64(binary.BigEndian.Uint32(b[8:]))
	}
	s.mu.Lock()
	s.rx.account(seq, sent, now)
	s.mu.Unlock()
}

func (s *stream) rxSnapshot() udpRx {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rx
}

// fill gives the payload bytes that do not compress, so that a link that
// compresses (some VPNs, modems) does not report more than it carries.
func fill(b []byte) {
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
}

// tcpInfo is what a stream's TCP_INFO says: total retransmitted segments,
// bytes the receiver acknowledged, and the smoothed RTT.
type tcpInfo struct {
	ok      bool
	retrans int64
	acked   int64
	rtt     time.Duration // sender: srtt; receiver: the receive-side estimate
}

func (s *stream) info() tcpInfo {
	if s.tcp == nil {
		return tcpInfo{}
	}
	rc, err := s.tcp.SyscallConn()
	if err != nil {
		return tcpInfo{}
	}
	var ti *unix.TCPInfo
	var gerr error
	if err := rc.Control(func(fd uintptr) { ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || gerr != nil {
		return tcpInfo{}
	}
	out := tcpInfo{ok: true, retrans: int64(ti.Total_retrans), acked: int64(ti.Bytes_acked), rtt: time.Duration(ti.Rtt) * time.Microsecond}
	if !s.sender {
		out.rtt = time.Duration(ti.Rcv_rtt) * time.Microsecond
	}
	return out
}

// byteBudget is what a byte-limited test (iperf3 -n) has left to send, over
// all its sending streams; done closes when the last sender stopped.
type byteBudget struct {
	left    atomic.Int64
	senders atomic.Int32
	done    chan struct{}
}

func newByteBudget(n int64, senders int) *byteBudget {
	b := &byteBudget{done: make(chan struct{})}
	b.left.Store(n)
	b.senders.Store(int32(senders))
	return b
}

// take reserves up to want bytes and returns how many it got: want, the
// last few, or 0 when the budget is spent.
func (b *byteBudget) take(want int) int {
	left := b.left.Add(-int64(want))
	switch {
	case left >= 0:
		return want
	case left > -int64(want):
		return int(left + int64(want))
	}
	return 0
}

// senderDone is called once by each sender as it stops.
func (b *byteBudget) senderDone() {
	if b.senders.Add(-1) == 0 {
		close(b.done)
	}
}

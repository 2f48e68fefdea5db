package probe

import (
	"context"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkSweep1000 is the ping workload in-process (1,000 loopback
// targets × 10 probes at 1,000 packets/s), for profiling; bench/ compares the
// binary with fping.
func BenchmarkSweep1000(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root (raw sockets)")
	}
	benchSweep(b, "raw")
}

// BenchmarkSweep1000Dgram is the same on ICMP datagram sockets; it needs
// net.ipv4.ping_group_range to admit the process's group (run it in a
// network namespace of its own, as bench/probe/run.sh does).
func BenchmarkSweep1000Dgram(b *testing.B) {
	s, err := openSock(nil, false, unix.SOCK_DGRAM, unix.IPPROTO_ICMP)
	if err != nil {
		b.Skipf("no ICMP datagram socket (net.ipv4.ping_group_range): %v", err)
	}
	s.Close()
	benchSweep(b, "dgram")
}

func benchSweep(b *testing.B, socket string) {
	var ts []Target
	for i := 0; i < 1000; i++ {
		a := netip.AddrFrom4([4]byte{127, 0, byte(i / 250), byte(1 + i%250)})
		ts = append(ts, Target{Name: a.String(), Addr: a})
	}
	cfg := PingConfig{Count: 10, Interval: time.Second, Timeout: time.Second, Rate: 1000, Socket: socket}
	for b.Loop() {
		res, err := PingTargets(context.Background(), ts, cfg, func(Record) {})
		if err != nil {
			b.Fatal(err)
		}
		lost := 0
		for _, r := range res {
			lost += r.Sent - r.Recv
		}
		if lost > 0 {
			b.Fatalf("%d probes lost on loopback", lost)
		}
	}
}

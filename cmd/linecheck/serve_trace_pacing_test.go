package main

import (
	"context"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/probe"
)

// serve's traces leave at --rate: a trace of 127.0.0.1 (a one-hop
// destination, so the first round sends all 30 TTLs) at --rate 100 spreads
// its 30 probes over at least 29/100 s. They left in one burst, all 30
// within 0.3 ms, while docs/scaleout.md said they were sent at --rate. The
// probes are captured on the loopback of a network namespace of the test's
// own (a packet socket), so no other process's traffic is counted.
func TestServeTracePacketsLeaveAtTheRate(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("needs root (a network namespace, raw sockets, a packet socket); CI runs as root")
	}
	type outcome struct {
		at  map[int]time.Time // first capture of each TTL
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		// This thread enters a fresh namespace and is never unlocked, so it
		// dies with the goroutine instead of going back to the pool.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- outcome{err: err}
			return
		}
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err != nil {
			ch <- outcome{err: err}
			return
		}
		// ETH_P_IP in network order; SOCK_DGRAM hands the IP packet.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_IP)))
		if err != nil {
			ch <- outcome{err: err}
			return
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: lo.Attrs().Index}); err != nil {
			ch <- outcome{err: err}
			return
		}
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
		// The capture reads on its own goroutine (its socket is already
		// in the namespace); the trace runs here, on the locked thread, so
		// that its sockets open in the namespace too.
		at := map[int]time.Time{}
		captured := make(chan struct{})
		stop := make(chan struct{})
		go func() {
			defer close(captured)
			buf := make([]byte, 2048)
			for len(at) < 30 {
				select {
				case <-stop:
					return
				default:
				}
				n, _, err := unix.Recvfrom(fd, buf, 0)
				if err != nil {
					continue
				}
				now := time.Now()
				// IPv4, ICMP, echo request (type 8) with a TTL below 31: a trace probe.
				if n < 28 || buf[0]>>4 != 4 || buf[9] != 1 {
					continue
				}
				ihl := int(buf[0]&0xf) * 4
				if n < ihl+8 || buf[ihl] != 8 || buf[8] < 1 || buf[8] > 30 {
					continue
				}
				if _, seen := at[int(buf[8])]; !seen {
					at[int(buf[8])] = now
				}
			}
		}()
		// serve's cycles trace as engine.CycleConfig.Trace does.
		cfg := engine.CycleConfig{Count: 1, Interval: time.Second, Timeout: time.Second, Rate: 100, TraceProbes: 30}
		_, err = cfg.Trace(context.Background(), engine.CycleTarget{Addr: "127.0.0.1", Protocol: probe.ICMP}, netip.MustParseAddr("127.0.0.1"))
		select {
		case <-captured:
		case <-time.After(2 * time.Second):
		}
		close(stop)
		<-captured
		ch <- outcome{at: at, err: err}
	}()
	o := <-ch
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.at) != 30 {
		t.Fatalf("captured the probes of %d TTLs, want 30", len(o.at))
	}
	first, last := o.at[1], o.at[1]
	for _, at := range o.at {
		if at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	// At 100 packets/s, 30 probes take at least 29 × 10 ms (less a little
	// for the capture's own read delays).
	if span := last.Sub(first); span < 250*time.Millisecond {
		t.Errorf("30 trace probes left within %v at --rate 100, want at least 290 ms", span)
	}
}

package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// These tests use real sockets against 127.0.0.1 and ::1 only.

func needRaw(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
}

func has6(t *testing.T) {
	t.Helper()
	c, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	c.Close()
}

func TestPingLoopbackCountsAndStats(t *testing.T) {
	needRaw(t)
	has6(t)
	cfg := PingConfig{Count: 5, Interval: 20 * time.Millisecond, Timeout: time.Second, Rate: 1000, Socket: "raw"}
	var mu sync.Mutex
	var recs []Record
	res, err := Ping(context.Background(), []string{"127.0.0.1", "::1"}, cfg, func(r Record) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Sent != 5 || r.Recv != 5 || r.Late != 0 || r.Dup != 0 || len(r.RTTs) != 5 {
			t.Errorf("%s: %+v, want 5 sent and received", r.Target, r)
		}
		for _, v := range r.RTTs {
			if v <= 0 || v >= 1000 {
				t.Errorf("%s: implausible RTT %v ms in %v", r.Target, v, r.RTTs)
			}
		}
	}
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	for _, r := range recs {
		if r.Status != StatusOK || r.RTTms == nil || r.Protocol != "icmp" || r.Seq < 0 || r.Seq > 4 {
			t.Errorf("record %+v", r)
		}
	}
}

// A reply that is queued between the driver's last read and its next wait
// (a loaded machine preempts the sweep right there) is read by that wait,
// not left in the socket until the next reply or the wait's deadline: the
// last probe of a sweep was declared lost so, 1 in ~20 runs with both cores
// busy. Here the reply is queued for sure before the wait begins.
func TestEchoWaitReadsAReplyQueuedBeforeIt(t *testing.T) {
	needRaw(t)
	for _, target := range []string{"127.0.0.1", "::1"} {
		t.Run(target, func(t *testing.T) {
			if target == "::1" {
				has6(t)
			}
			ts := []Target{{Name: target, Addr: netip.MustParseAddr(target)}}
			r := newSweep(ts, PingConfig{Count: 1, Timeout: time.Minute, Socket: "raw"}.withDefaults(), nil)
			pd, err := openICMPDriver(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			d := pd.(*icmpDriver)
			defer d.close()
			if err := d.readQueued(); err != nil {
				t.Fatal(err)
			}
			r.probes[0], r.sent = probeState{sent: time.Now(), state: stPending}, 1
			if _, err := d.send([]int{0}); err != nil {
				t.Fatal(err)
			}
			// Queued: poll(2) reports it without taking it, and without
			// touching Go's poller.
			fds := []unix.PollFd{{Fd: int32(d.prim.fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(fds, 10000); n != 1 || err != nil {
				t.Fatalf("no echo reply queued after 10 s: %d %v", n, err)
			}
			// An idle moment, in which Go's poller takes note of the reply
			// (as it does whenever the sweep is preempted there).
			time.Sleep(20 * time.Millisecond)
			if err := d.wait(context.Background(), time.Now().Add(3*time.Second)); err != nil {
				t.Fatal(err)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.probes[0].state != stOK {
				t.Errorf("probe state %d after the wait, want %d (answered): the queued reply was not read", r.probes[0].state, stOK)
			}
		})
	}
}

func TestPingTCPConnectTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := PingConfig{Count: 4, Interval: 10 * time.Millisecond, Timeout: time.Second, Rate: 1000, TCPPort: port}
	res, err := Ping(context.Background(), []string{"127.0.0.1"}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Sent != 4 || r.Recv != 4 || r.Refused != 0 {
		t.Errorf("open port: %+v, want 4 sent and received", r)
	}
	ln.Close()
	res, err = Ping(context.Background(), []string{"127.0.0.1"}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Sent != 4 || r.Recv != 0 || r.Refused != 4 {
		t.Errorf("closed port: %+v, want 4 sent, 0 received, 4 refused", r)
	}
}

func TestTraceLoopbackReachesTheDestinationAtTTL1(t *testing.T) {
	needRaw(t)
	has6(t)
	// A listener: tcp to it ends in a SYN-ACK, tcp to port 9 in a RST.
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	open := ln.Addr().(*net.TCPAddr).Port
	for _, target := range []string{"127.0.0.1", "::1"} {
		for _, c := range []struct {
			proto Protocol
			port  int
			mode  TraceMode
		}{{ICMP, 0, ""}, {UDP, 0, ""}, {TCP, 9, ""}, {UDP, 0, ModeRecverr}, {TCP, 9, ModeRecverr}, {TCP, open, ModeRecverr}, {TCP, open, ModeRaw}} {
			proto := c.proto
			if c.port == open && target == "::1" {
				continue // the listener is on one family only
			}
			t.Run(fmt.Sprintf("%s/%s/%d/%s", target, proto, c.port, c.mode), func(t *testing.T) {
				cfg := TraceConfig{Proto: proto, Port: c.port, Mode: c.mode, Cycles: 3, Interval: 20 * time.Millisecond, Timeout: time.Second}
				cycles := 0
				run, err := Trace(context.Background(), target, cfg, func(*TraceRun) { cycles++ })
				if err != nil {
					t.Fatal(err)
				}
				// The target answers the TTL 1 probe of every cycle in time;
				// later cycles stop at TTL 1 (probes past it are dropped).
				atTTL1 := 0
				for _, r := range run.Results {
					if r.TTL != 1 {
						continue
					}
					atTTL1++
					if r.Addr != target || !r.Dest || r.Late || r.RTTms <= 0 {
						t.Errorf("TTL 1 result %+v, want a timely reply from the target", r)
					}
				}
				if cycles != 3 || atTTL1 != 3 || run.Addr.String() != target || run.Protocol != proto {
					t.Fatalf("cycles %d, %d results at TTL 1: %+v", cycles, atTTL1, run)
				}
				if run.Counts.Late != 0 {
					t.Errorf("counts %+v", run.Counts)
				}
				if want := c.mode; run.Mode != want && (want != "" || run.Mode != ModeRaw) {
					t.Errorf("mode %q, want %q", run.Mode, want)
				}
			})
		}
	}
}

// Two runs at once on raw sockets: each socket gets both runs' echo replies;
// each run must count exactly its own and the other's as foreign.
func TestPingConcurrentRawRunsRejectEachOthersReplies(t *testing.T) {
	needRaw(t)
	cfg := PingConfig{Count: 50, Interval: 10 * time.Millisecond, Timeout: time.Second, Rate: 1000, Socket: "raw"}
	var wg sync.WaitGroup
	results := make([][]PingResult, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = Ping(context.Background(), []string{"127.0.0.1"}, cfg, nil)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		r := results[i][0]
		if r.Sent != 50 || r.Recv != 50 || r.Dup != 0 || r.Late != 0 {
			t.Errorf("run %d: %+v, want exactly its own 50 replies", i, r)
		}
		if r.Foreign == 0 {
			t.Errorf("run %d saw none of the other run's replies (foreign 0); the runs did not overlap or matching is wrong", i)
		}
	}
}

func TestMissingPrivilegeSaysWhatToRun(t *testing.T) {
	refuse := func(int, int, int) (int, error) { return -1, unix.EPERM }

	_, err := Ping(context.Background(), []string{"127.0.0.1"}, PingConfig{Count: 1, OpenSocket: refuse}, nil)
	if !errors.Is(err, ErrPrivilege) {
		t.Fatalf("ping: %v, want ErrPrivilege", err)
	}
	for _, want := range []string{"setcap cap_net_raw+ep ", `sysctl -w net.ipv4.ping_group_range="0 2147483647"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ping error does not say %q:\n%v", want, err)
		}
	}
	_, err = Trace(context.Background(), "127.0.0.1", TraceConfig{OpenSocket: refuse}, nil)
	if !errors.Is(err, ErrPrivilege) || !strings.Contains(err.Error(), "setcap cap_net_raw+ep ") {
		t.Errorf("trace: %v, want ErrPrivilege naming setcap", err)
	}
}

// The same, for real: the test binary re-runs itself as nobody (no
// CAP_NET_RAW; ping_group_range here is "1 0", so ping sockets fail too).
func TestMissingPrivilegeAsNobody(t *testing.T) {
	if os.Getenv("LINECHECK_PROBE_AS_NOBODY") == "1" {
		_, err := Ping(context.Background(), []string{"127.0.0.1"}, PingConfig{Count: 1}, nil)
		_, terr := Trace(context.Background(), "127.0.0.1", TraceConfig{}, nil)
		for _, e := range []error{err, terr} {
			if errors.Is(e, ErrPrivilege) {
				os.Stdout.WriteString("PRIVILEGE-ERROR: " + strconv.Quote(e.Error()) + "\n")
			} else {
				os.Stdout.WriteString("OTHER: " + strconv.Quote(errString(e)) + "\n")
			}
		}
		return
	}
	needRaw(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatal("setpriv (util-linux) is missing")
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), "1\t0") {
		t.Skipf("ping_group_range is %q here: nobody may use ICMP sockets, nothing to test", strings.TrimSpace(string(b)))
	}
	dir, err := os.MkdirTemp("", "probe-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, "probe.test")
	if err := copyFile(os.Args[0], exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all",
		exe, "-test.run=^TestMissingPrivilegeAsNobody$")
	cmd.Env = append(os.Environ(), "LINECHECK_PROBE_AS_NOBODY=1")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	// Both ping and trace fail with the fix in the message.
	if strings.Count(string(out), "PRIVILEGE-ERROR: ") != 2 || strings.Count(string(out), "setcap cap_net_raw+ep") != 2 ||
		strings.Count(string(out), "ping_group_range") != 2 {
		t.Errorf("as nobody:\n%s", out)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// The unprivileged path: ICMP datagram sockets (the kernel owns the echo id)
// in a private network namespace whose ping_group_range admits everyone.
func TestPingDatagramSocketsInPrivateNamespace(t *testing.T) {
	needRaw(t)
	has6(t)
	type out struct {
		res []PingResult
		err error
	}
	ch := make(chan out, 1)
	go func() {
		// This thread enters a fresh namespace and is never unlocked, so it
		// dies with the goroutine instead of going back to the pool.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- out{err: err}
			return
		}
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err == nil {
			// /proc/sys/net belongs to the namespace of the thread that opens it.
			err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0)
		}
		if err != nil {
			ch <- out{err: err}
			return
		}
		cfg := PingConfig{Count: 5, Interval: 10 * time.Millisecond, Timeout: time.Second, Rate: 1000, Socket: "dgram"}
		res, err := Ping(context.Background(), []string{"127.0.0.1", "::1"}, cfg, nil)
		ch <- out{res, err}
	}()
	o := <-ch
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, r := range o.res {
		if r.Sent != 5 || r.Recv != 5 || r.Foreign != 0 || r.Dup != 0 {
			t.Errorf("%s over a datagram socket: %+v, want 5 sent and received", r.Target, r)
		}
	}
}

// The gate vets the address a target resolves to before any socket opens:
// a documentation address, written as an address or as an IPv4-mapped one,
// ends the trace with ErrDocumentation and nothing is opened or sent.
func TestTraceRefusesDocumentationAddressesBeforeAnySocket(t *testing.T) {
	opened := 0
	count := func(int, int, int) (int, error) { opened++; return -1, unix.EPERM }
	for _, target := range []string{"192.0.2.9", "::ffff:198.51.100.3", "2001:db8::1"} {
		_, err := Trace(context.Background(), target, TraceConfig{OpenSocket: count}, nil)
		if !errors.Is(err, ErrDocumentation) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), target+" ") {
			t.Errorf("trace %s: %v, want a refusal naming it", target, err)
		}
	}
	if opened != 0 {
		t.Errorf("%d sockets opened before the gate refused the address, want 0", opened)
	}
}

// Issue 35: a sendmmsg call that returns late (the thread preempted after
// the system call, here a 20 ms sleep) spread its probes' send times over
// the call, and a loopback reply, stamped by the kernel inside the call,
// came out up to 20 ms before its probe: negative RTTs. The send time is
// now the kernel's transmit stamp, or without it the clock read before
// the call: no RTT of 64 targets at once is below zero, and none is a clock
// fault, both ways. (No upper bound: a loaded kernel may handle a loopback
// reply after the call, and its stamp says so.)
func TestPingSlowBatchCallGivesNoNegativeRTT(t *testing.T) {
	needRaw(t)
	for _, stamps := range []bool{true, false} {
		t.Run(fmt.Sprintf("stamps=%v", stamps), func(t *testing.T) {
			sendMmsg = func(s *sock, b *mmsgBuf, from, to int) (int, time.Time, time.Time, error) {
				n, before, _, err := s.sendBatch(b, from, to)
				time.Sleep(20 * time.Millisecond)
				return n, before, time.Now(), err
			}
			defer func() { sendMmsg = (*sock).sendBatch }()
			if !stamps {
				txStampsOn = func(int) bool { return false }
				defer func() { txStampsOn = enableTxStamps }()
			}
			var targets []string
			for i := range 64 {
				targets = append(targets, fmt.Sprintf("127.0.0.%d", i+1))
			}
			var neg []float64
			var mu sync.Mutex
			cfg := PingConfig{Count: 3, Interval: 100 * time.Millisecond, Timeout: time.Second, Rate: 1e5, Socket: "raw"}
			res, err := Ping(context.Background(), targets, cfg, func(r Record) {
				mu.Lock()
				defer mu.Unlock()
				if r.RTTms != nil && *r.RTTms < 0 {
					neg = append(neg, *r.RTTms)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(neg) > 0 {
				t.Errorf("%d negative RTTs, e.g. %v ms", len(neg), neg[0])
			}
			for _, r := range res {
				if r.Recv != 3 || r.ClockFaults != 0 || len(r.RTTs) != 3 {
					t.Errorf("%s: %d received, %d clock faults, RTTs %v: want 3, 0, 3", r.Target, r.Recv, r.ClockFaults, r.RTTs)
					continue
				}
				for _, v := range r.RTTs {
					if v < 0 {
						t.Errorf("%s: RTT %v ms", r.Target, v)
					}
				}
			}
		})
	}
}

// 2,000 loopback probes at 5,000 a second (100 targets, 20 rounds): no
// RTT below zero, no clock fault, with the kernel's send and receive
// stamps.
func TestPingLoopbackHighRateNeverBelowZero(t *testing.T) {
	needRaw(t)
	var targets []string
	for i := range 100 {
		targets = append(targets, fmt.Sprintf("127.0.1.%d", i+1))
	}
	var mu sync.Mutex
	var neg, n int
	cfg := PingConfig{Count: 20, Interval: 20 * time.Millisecond, Timeout: time.Second, Rate: 5000, Socket: "raw"}
	res, err := Ping(context.Background(), targets, cfg, func(r Record) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if r.RTTms != nil && *r.RTTms < 0 {
			neg++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	faults, recv := 0, 0
	for _, r := range res {
		faults += r.ClockFaults
		recv += r.Recv
	}
	if neg > 0 || faults > 0 || recv < 1900 {
		t.Errorf("%d records: %d negative RTTs, %d clock faults, %d of 2000 received", n, neg, faults, recv)
	}
}

package privsep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linecheck/linecheck/probe"
	"golang.org/x/sys/unix"
)

// The tests below run this test binary in other roles, as uid 65534, from
// a copy given cap_net_raw+ep: the socket helper (as cmd/linecheck's main
// starts it), a command that separates its privileges (parent), an outsider
// that starts the helper with a socket pair of its own, and a thief that
// tries to take descriptors from the parent.
const roleEnv = "LINECHECK_PRIVSEP_TEST_ROLE"

func TestMain(m *testing.M) {
	if IsHelper() {
		os.Exit(RunHelper())
	}
	switch os.Getenv(roleEnv) {
	case "outsider":
		os.Exit(outsider())
	case "parent":
		os.Exit(parent())
	case "thief":
		os.Exit(thief())
	}
	os.Exit(m.Run())
}

// nobody is the unprivileged user the roles run as.
var nobody = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}

// capCopies copies this test binary into a directory uid 65534 can read:
// plain, and a copy given cap_net_raw+ep, as an administrator installs
// linecheck.
func capCopies(t *testing.T) (plain, withCap string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (setcap, running as uid 65534); CI runs as root")
	}
	setcap, err := exec.LookPath("setcap")
	if err != nil {
		t.Skip("setcap not installed (libcap2-bin)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "lc-privsep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plain, withCap = filepath.Join(dir, "plain"), filepath.Join(dir, "linecheck")
	for _, p := range []string{plain, withCap} {
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(setcap, "cap_net_raw+ep", withCap).CombinedOutput(); err != nil {
		t.Skipf("setcap cap_net_raw+ep on %s: %v: %s (a file system without extended attributes?)", withCap, err, out)
	}
	return plain, withCap
}

// The helper serves the command that started it: a separated command,
// running as uid 65534 from a cap_net_raw+ep copy, holds no capability, is
// not dumpable, and gets from the helper raw sockets whose locked filters
// keep to a probe's answers (an ICMP echo reply but not the request, a SYN
// probe's SYN-ACK and RST but no byte of a connection's data, no UDP at
// all); a TCP trace through those sockets reaches its loopback target.
// Another process of the same user cannot copy the command's descriptors.
func TestHelperServesItsCommandOnlyWhatProbesRead(t *testing.T) {
	plain, withCap := capCopies(t)
	cmd := exec.Command(withCap)
	cmd.Env = append(os.Environ(), roleEnv+"=parent")
	cmd.SysProcAttr = nobody
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("parent: %v; stderr: %s", err, stderr.String())
		}
	}()
	var lines []string
	var pid string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if f := strings.Fields(line); len(f) == 2 && f[0] == "READY" {
			pid = f[1]
			break
		}
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{"OK caps", "OK threads", "OK dumpable", "OK icmp", "OK icmpv6", "OK tcp", "OK tcp over IPv6", "OK udp", "OK refusals", "OK hdrincl", "OK trace"} {
		if !slices.Contains(lines, want) {
			t.Errorf("parent did not report %q", want)
		}
	}
	t.Logf("parent, uid 65534:\n%s", out)
	if strings.Contains(out, "FAIL") || pid == "" {
		t.Errorf("parent:\n%s\nstderr: %s", out, stderr.String())
	}
	if pid == "" {
		return
	}
	th := exec.Command(plain)
	th.Env = append(os.Environ(), roleEnv+"=thief", "LC_TEST_PID="+pid)
	th.SysProcAttr = nobody
	got, err := th.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "DENIED") {
		t.Errorf("uid 65534 copying the descriptors of the separated command (pid %s): %s (%v), want DENIED", pid, got, err)
	}
}

// An outsider, uid 65534, starts the cap_net_raw+ep binary in helper mode
// exactly as Separate does (the environment variable, descriptor 3, a
// socket pair of its own, itself the parent), with no_new_privs off and
// on. It gets no socket of any kind, and the echo request it would send to
// 127.0.0.2 never leaves; the helper exits 2 naming why.
func TestHelperServesNoOutsider(t *testing.T) {
	plain, withCap := capCopies(t)
	// Watch loopback for the outsider's probe (its payload carries marker).
	watch, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(watch)
	if err := unix.SetsockoptTimeval(watch, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000}); err != nil {
		t.Fatal(err)
	}
	seen := make(chan bool, 1)
	stop := make(chan struct{})
	go func() {
		buf := make([]byte, 2048)
		found := false
		for {
			select {
			case <-stop:
				seen <- found
				return
			default:
			}
			n, _, err := unix.Recvfrom(watch, buf, 0)
			if err == nil && bytes.Contains(buf[:n], []byte(outsiderMarker)) {
				found = true
			}
		}
	}()
	for _, nnp := range []string{"0", "1"} {
		cmd := exec.Command(plain)
		cmd.Env = []string{roleEnv + "=outsider", "LC_TEST_CAPBIN=" + withCap, "LC_TEST_NNP=" + nnp}
		cmd.SysProcAttr = nobody
		got, err := cmd.CombinedOutput()
		out := string(got)
		if err != nil {
			t.Fatalf("outsider (no_new_privs %s): %v\n%s", nnp, err, out)
		}
		t.Logf("outsider, no_new_privs %s:\n%s", nnp, out)
		if strings.Contains(out, "GOT") || strings.Contains(out, "SELF-RAW") {
			t.Errorf("outsider with no_new_privs %s got a socket, or could open one itself:\n%s", nnp, out)
		}
		why := "no_new_privs"
		if nnp == "1" {
			why = "want CAP_NET_RAW alone" // the file capability is not granted
		}
		if !strings.Contains(out, "HELPER exit=2") || !strings.Contains(out, why) {
			t.Errorf("outsider with no_new_privs %s: the helper did not exit 2 naming %q:\n%s", nnp, why, out)
		}
	}
	time.Sleep(200 * time.Millisecond) // a probe sent last is on loopback by now
	close(stop)
	if <-seen {
		t.Error("an echo request from the outsider reached 127.0.0.2")
	}
}

const outsiderMarker = "lc-outsider-probe"

// request is one socket an outsider or parent asks the helper for.
type request struct {
	name               string
	domain, typ, proto int
}

var everyKind = []request{
	{"icmp", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
	{"icmpv6", unix.AF_INET6, unix.SOCK_RAW, unix.IPPROTO_ICMPV6},
	{"tcp", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_TCP},
	{"udp", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_UDP},
	{"ipproto-raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW},
	{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0x0300}, // htons(ETH_P_ALL)
}

// outsider is the outsider role (see TestHelperServesNoOutsider).
func outsider() int {
	if os.Getenv("LC_TEST_NNP") == "1" {
		// no_new_privs is per thread: the helper is started from this one.
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Println("no_new_privs:", err)
			return 1
		}
	}
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP); err == nil {
		fmt.Println("SELF-RAW: the outsider may open raw sockets itself")
		unix.Close(fd)
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("socketpair:", err)
		return 1
	}
	end := os.NewFile(uintptr(sp[1]), "socket-helper")
	cmd := exec.Command(os.Getenv("LC_TEST_CAPBIN"))
	cmd.Args = []string{"linecheck-socket-helper"}
	cmd.Env = []string{helperEnv + "=3"}
	cmd.ExtraFiles = []*os.File{end}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		fmt.Println("starting the helper:", err)
		return 1
	}
	end.Close()
	c := &client{fd: sp[0]}
	for _, r := range everyKind {
		fd, err := c.socket(r.domain, r.typ, r.proto)
		if err != nil {
			fmt.Printf("refused %s: %v\n", r.name, err)
			continue
		}
		fmt.Printf("GOT %s (descriptor %d)\n", r.name, fd)
		if r.proto == unix.IPPROTO_ICMP {
			err := unix.Sendto(fd, echoRequest(0x4c43, 1, outsiderMarker), 0, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 2}})
			fmt.Printf("GOT an echo request to 127.0.0.2 out: %v\n", err)
		}
		unix.Close(fd)
	}
	unix.Close(sp[0])
	err = cmd.Wait()
	fmt.Printf("HELPER exit=%d (%v) stderr: %s\n", cmd.ProcessState.ExitCode(), err, stderr.String())
	return 0
}

// echoRequest is an ICMP echo request with its checksum.
func echoRequest(id, seq uint16, payload string) []byte {
	b := make([]byte, 8+len(payload))
	b[0] = 8
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], payload)
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(b[2:], ^uint16(sum))
	return b
}

// parent is the parent role (see TestHelperServesItsCommandOnlyWhatProbesRead):
// it reports each check as an OK or FAIL line, then READY and its pid, and
// waits for its standard input to close. Built with cgo (go test's default
// here) Separate re-executes it; without (CGO_ENABLED=0 go test) it drops
// its capabilities in place.
func parent() int {
	open, err := Separate()
	if err != nil || open == nil {
		fmt.Printf("FAIL Separate: %v (opener %v)\n", err, open != nil)
		return 1
	}
	report := func(name string, err error) {
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", name, err)
		} else {
			fmt.Printf("OK %s\n", name)
		}
	}
	caps, err := Current()
	if err == nil && caps != (Caps{}) {
		err = fmt.Errorf("holding %+v", caps)
	}
	report("caps", err)
	report("threads", checkThreads())
	if everyThread() {
		fmt.Println("MODE in place")
	} else {
		fmt.Println("MODE re-executed")
	}
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err == nil && d != 0 {
		err = fmt.Errorf("dumpable %d", d)
	}
	report("dumpable", err)
	report("icmp", checkICMP(open, false))
	report("icmpv6", checkICMP(open, true))
	report("tcp", checkTCP(open, false))
	report("tcp over IPv6", checkTCP(open, true))
	report("udp", checkUDP(open))
	report("refusals", checkRefusals(open))
	report("hdrincl", checkHeaderInclude(open))
	report("trace", checkTrace(open))
	fmt.Printf("READY %d\n", os.Getpid())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// checkThreads: no thread of the process holds a capability (every one
// started with the file capability).
func checkThreads() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, set := range []string{"CapInh:", "CapPrm:", "CapEff:", "CapAmb:"} {
				if strings.HasPrefix(line, set) && strings.TrimSpace(line[len(set):]) != "0000000000000000" {
					return fmt.Errorf("thread %s: %s", task.Name(), line)
				}
			}
		}
	}
	if len(tasks) < 2 {
		return fmt.Errorf("%d threads: nothing to compare", len(tasks))
	}
	return nil
}

// lockedRaw opens a raw socket through open and checks that its filter is
// locked: the holder can neither detach it nor attach another.
func lockedRaw(open SocketFunc, domain, proto int) (int, error) {
	fd, err := open(domain, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, err
	}
	if l, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_LOCK_FILTER); err != nil || l != 1 {
		unix.Close(fd)
		return -1, fmt.Errorf("SO_LOCK_FILTER %d (%v), want 1", l, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0); !errors.Is(err, unix.EPERM) {
		unix.Close(fd)
		return -1, fmt.Errorf("detaching the filter: %v, want EPERM", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 300000}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// readAll reads datagrams from fd until none comes for its receive timeout.
func readAll(fd int) [][]byte {
	var got [][]byte
	buf := make([]byte, 65536)
	for len(got) < 1000 {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			break
		}
		got = append(got, append([]byte(nil), buf[:n]...))
	}
	return got
}

// checkICMP: an echo request to the loopback address crosses loopback,
// where every raw ICMP socket without a filter sees it as well as its
// reply; this one must see the reply alone.
func checkICMP(open SocketFunc, v6 bool) error {
	domain, proto, to, request, reply := unix.AF_INET, unix.IPPROTO_ICMP, unix.Sockaddr(&unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}), byte(8), byte(0)
	if v6 {
		domain, proto, to, request, reply = unix.AF_INET6, unix.IPPROTO_ICMPV6, &unix.SockaddrInet6{Addr: [16]byte{15: 1}}, 128, 129
	}
	fd, err := lockedRaw(open, domain, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	id := uint16(os.Getpid())
	b := echoRequest(id, 7, "lc-parent-probe")
	b[0] = request // the kernel sums ICMPv6 itself
	if err := unix.Sendto(fd, b, 0, to); err != nil {
		return fmt.Errorf("sending: %w", err)
	}
	types := map[byte]int{}
	for _, p := range readAll(fd) {
		if !v6 {
			p = p[int(p[0]&0xf)*4:]
		}
		if len(p) >= 8 && binary.BigEndian.Uint16(p[4:]) == id {
			types[p[0]]++
		}
	}
	if types[reply] != 1 || types[request] != 0 {
		return fmt.Errorf("read %d echo replies and %d echo requests of id %d, want 1 and 0", types[reply], types[request], id)
	}
	return nil
}

// checkTCP: two loopback HTTP exchanges with an Authorization header, each
// ended by the server with a RST, one from a client port where raw TCP
// probes send from (probe.RawTCPPortLow..High), one from an ephemeral port
// as any connection's. The raw TCP socket must see the first's SYN-ACK and
// RST and none of its data, and nothing at all of the second.
func checkTCP(open SocketFunc, v6 bool) error {
	domain, ip := unix.AF_INET, net.IPv4(127, 0, 0, 1)
	if v6 {
		domain, ip = unix.AF_INET6, net.IPv6loopback
	}
	fd, err := lockedRaw(open, domain, unix.IPPROTO_TCP)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip})
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			n, _ := c.Read(buf)
			_, _ = c.Write(append([]byte("HTTP/1.1 200 OK\r\n\r\necho "), buf[:n]...))
			_ = c.SetLinger(0) // close with a RST
			c.Close()
		}
	}()
	exchange := func(local *net.TCPAddr) (int, error) {
		c, err := net.DialTCP("tcp", local, ln.Addr().(*net.TCPAddr))
		if err != nil {
			return 0, err
		}
		defer c.Close()
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nAuthorization: Bearer lc-secret\r\n\r\n")); err != nil {
			return 0, err
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 512)); err != nil {
			return 0, fmt.Errorf("the exchange: %w", err)
		}
		_, _ = c.Read(make([]byte, 512)) // until the RST
		return c.LocalAddr().(*net.TCPAddr).Port, nil
	}
	var probePort int
	for i := range 20 {
		p := probe.RawTCPPortLow + (os.Getpid()*7+i*101)%(probe.RawTCPPortHigh-probe.RawTCPPortLow)
		if probePort, err = exchange(&net.TCPAddr{IP: ip, Port: p}); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("from a probe's port: %w", err)
	}
	ephemeral, err := exchange(nil)
	if err != nil {
		return err
	}
	if ephemeral >= probe.RawTCPPortLow && ephemeral < probe.RawTCPPortHigh {
		return fmt.Errorf("the kernel gave the ephemeral port %d, among the probes' (see ip_local_port_range)", ephemeral)
	}
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	var synAck, rst, data, other int
	for _, p := range readAll(fd) {
		tcp := p
		if !v6 {
			tcp = p[int(p[0]&0xf)*4:]
		}
		if len(tcp) < 20 {
			continue
		}
		sp, dp := binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
		switch {
		case sp == uint16(ephemeral) || dp == uint16(ephemeral):
			other++
		case sp != port && dp != port:
			continue // someone else's
		case len(tcp) > int(tcp[12]>>4)*4 || bytes.Contains(p, []byte("lc-secret")):
			data++
		case tcp[13]&0x12 == 0x12 && sp == port && dp == uint16(probePort):
			synAck++
		case tcp[13]&0x04 != 0 && dp == uint16(probePort):
			rst++
		}
	}
	if synAck != 1 || rst != 1 || data != 0 || other != 0 {
		return fmt.Errorf("read %d SYN-ACKs, %d RSTs and %d segments with data of the connection from port %d, and %d segments of the one from port %d; want 1, 1, 0 and 0",
			synAck, rst, data, probePort, other, ephemeral)
	}
	return nil
}

// checkUDP: a datagram between two loopback sockets; the raw UDP socket
// must read nothing.
func checkUDP(open SocketFunc) error {
	fd, err := lockedRaw(open, unix.AF_INET, unix.IPPROTO_UDP)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	rx, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer rx.Close()
	tx, err := net.Dial("udp", rx.LocalAddr().String())
	if err != nil {
		return err
	}
	defer tx.Close()
	if _, err := tx.Write([]byte("lc-udp-secret")); err != nil {
		return err
	}
	_ = rx.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, _, err := rx.ReadFrom(make([]byte, 64)); err != nil {
		return fmt.Errorf("the datagram did not arrive: %w", err)
	}
	if got := readAll(fd); len(got) != 0 {
		return fmt.Errorf("read %d datagrams, want none", len(got))
	}
	return nil
}

// checkRefusals: the kinds no probe uses are refused.
func checkRefusals(open SocketFunc) error {
	for _, r := range everyKind[4:] {
		fd, err := open(r.domain, r.typ, r.proto)
		if err == nil {
			unix.Close(fd)
			return fmt.Errorf("%s: a socket", r.name)
		}
		if !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("%s: %v, want EINVAL", r.name, err)
		}
	}
	return nil
}

// checkHeaderInclude: the command may not write the IP header (and with it
// the source address) of what its raw sockets send; other options it sets.
func checkHeaderInclude(open SocketFunc) error {
	for _, c := range []struct {
		domain, proto, level, opt int
	}{
		{unix.AF_INET, unix.IPPROTO_UDP, unix.IPPROTO_IP, unix.IP_HDRINCL},
		{unix.AF_INET, unix.IPPROTO_ICMP, unix.IPPROTO_IP, unix.IP_HDRINCL},
		{unix.AF_INET6, unix.IPPROTO_ICMPV6, unix.IPPROTO_IPV6, unix.IPV6_HDRINCL},
	} {
		fd, err := open(c.domain, unix.SOCK_RAW|unix.SOCK_CLOEXEC, c.proto)
		if err != nil {
			return err
		}
		err = unix.SetsockoptInt(fd, c.level, c.opt, 1)
		ttl := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TTL, 5)
		if c.domain == unix.AF_INET6 {
			ttl = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, 5)
		}
		unix.Close(fd)
		if !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("setsockopt(%d, %d) on a raw socket of protocol %d: %v, want EPERM", c.level, c.opt, c.proto, err)
		}
		if ttl != nil {
			return fmt.Errorf("setting the TTL on a raw socket of protocol %d: %v", c.proto, ttl)
		}
	}
	return nil
}

// checkTrace: a raw-mode TCP trace to a loopback listener through the
// helper's sockets reaches it (its SYN-ACK passes the locked filter).
func checkTrace(open SocketFunc) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := probe.Trace(ctx, "127.0.0.1", probe.TraceConfig{Proto: probe.TCP, Port: port, Mode: probe.ModeRaw,
		MaxTTL: 3, Timeout: time.Second, OpenSocket: probe.SocketFunc(open)}, nil)
	if err != nil {
		return err
	}
	for _, r := range run.Results {
		if r.Dest && r.Addr == "127.0.0.1" {
			return nil
		}
	}
	return fmt.Errorf("tcp trace to 127.0.0.1:%d: no answer from it in %+v", port, run.Results)
}

// thief is the thief role: it tries to copy any of the first 64
// descriptors of process LC_TEST_PID, of the same user (its standard input,
// its end of the socket pair, its raw sockets).
func thief() int {
	pid, _ := strconv.Atoi(os.Getenv("LC_TEST_PID"))
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Println("pidfd_open:", err)
		return 1
	}
	var first error
	for fd := range 64 {
		got, err := unix.PidfdGetfd(pfd, fd, 0)
		if err == nil {
			fmt.Printf("STOLE descriptor %d as %d\n", fd, got)
			return 0
		}
		if first == nil {
			first = err
		}
	}
	fmt.Println("DENIED:", first)
	return 0
}

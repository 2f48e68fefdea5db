// Package privsep keeps a long-running command's privileges where sockets
// open and nowhere else, as mtr keeps CAP_NET_RAW in its small mtr-packet
// helper while the user interface holds none.
//
// Separate, called at the start of serve, backtrace and tui, does nothing
// for a process without capabilities. A process with some (root, or a
// binary given cap_net_raw+ep) starts a socket helper, a child that holds
// CAP_NET_RAW alone and does one thing: open a raw IPv4 or IPv6 socket
// (ICMP, ICMPv6, UDP or TCP) on request and hand its descriptor back over a
// Unix socket (SCM_RIGHTS). Then the process re-executes itself with no
// capability at all, so its HTTP server, reloader and every probe run with
// CapEff 0; the SocketFunc Separate returns there opens raw sockets through
// the helper and every other socket itself.
//
// Capabilities are per thread on Linux, and a Go process has many threads.
// Both drops therefore happen on one locked thread that then starts a new
// program image (execve keeps only the calling thread and its credentials),
// with no_new_privs set so that neither root's implicit capabilities nor
// the binary's file capabilities come back on execve: the helper starts
// with CAP_NET_RAW alone on every thread, the command with nothing.
package privsep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Environment variables between the stages (unset once read).
const (
	helperEnv = "LINECHECK_SOCKET_HELPER" // the helper's end of the socket pair
	clientEnv = "LINECHECK_PRIVSEP_FD"    // the command's end, after the re-exec
	pidEnv    = "LINECHECK_PRIVSEP_PID"   // the helper's pid, to reap it
)

// NetRaw is CAP_NET_RAW as a bit of a capability set.
const NetRaw = uint64(1) << unix.CAP_NET_RAW

// Caps is a thread's capability sets.
type Caps struct{ Effective, Permitted, Inheritable uint64 }

// Current returns the calling thread's capabilities.
func Current() (Caps, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var d [2]unix.CapUserData
	if err := unix.Capget(&hdr, &d[0]); err != nil {
		return Caps{}, fmt.Errorf("capget: %w", err)
	}
	join := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
	return Caps{join(d[0].Effective, d[1].Effective), join(d[0].Permitted, d[1].Permitted),
		join(d[0].Inheritable, d[1].Inheritable)}, nil
}

// set sets the calling thread's capabilities (only ever lowering them).
func set(c Caps) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	d := [2]unix.CapUserData{
		{Effective: uint32(c.Effective), Permitted: uint32(c.Permitted), Inheritable: uint32(c.Inheritable)},
		{Effective: uint32(c.Effective >> 32), Permitted: uint32(c.Permitted >> 32), Inheritable: uint32(c.Inheritable >> 32)},
	}
	if err := unix.Capset(&hdr, &d[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// SocketFunc opens a socket (unix.Socket's signature, probe.SocketFunc's).
type SocketFunc func(domain, typ, proto int) (int, error)

// Separate separates the privileges (see the package doc). In a process
// with capabilities it does not return on success: the process goes on as
// a new image of itself without them, where Separate returns the socket
// opener of the helper (nil when the process never held CAP_NET_RAW, or
// held no capability at all).
func Separate() (SocketFunc, error) {
	if v, ok := os.LookupEnv(clientEnv); ok {
		return afterExec(v)
	}
	runtime.LockOSThread()
	caps, err := Current()
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	if caps.Effective == 0 && caps.Permitted == 0 {
		runtime.UnlockOSThread()
		return nil, nil
	}
	// From here this thread's credentials differ from the others': it is
	// never unlocked, so it ends with the goroutine if anything fails.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("privilege separation: no_new_privs: %w", err)
	}
	keep := caps.Permitted & NetRaw
	// With CAP_SETPCAP (root) the bounding set goes too, so that nothing
	// started from here can ever gain another capability; the helper's is
	// CAP_NET_RAW, the command's empty. CAP_SETPCAP itself is kept until
	// the helper runs: it is outside the bounding set, so the helper
	// cannot inherit it.
	setpcap := caps.Permitted & (uint64(1) << unix.CAP_SETPCAP)
	dropBounding(keep)
	// A capability held as an ambient one (systemd's AmbientCapabilities
	// for an unprivileged user, setpriv --ambient-caps) passes execve only
	// while it is ambient, and ambient only while it is inheritable: the
	// helper's start keeps it so, and nothing else.
	ambient := caps.Inheritable & keep
	if ambient != 0 {
		if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_NET_RAW, 0, 0); err != nil || r != 1 {
			ambient = 0
		}
	}
	if err := set(Caps{Effective: keep | setpcap, Permitted: keep | setpcap, Inheritable: ambient}); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	clientFD, pid := -1, 0
	if keep != 0 {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("privilege separation: socketpair: %w", err)
		}
		end := os.NewFile(uintptr(sp[1]), "socket-helper")
		// Started from this thread (fork runs on the calling thread): the
		// helper inherits CAP_NET_RAW alone and no_new_privs.
		cmd := exec.Command(exe)
		cmd.Args = []string{"linecheck-socket-helper"}
		cmd.Env = append(os.Environ(), helperEnv+"=3")
		cmd.ExtraFiles = []*os.File{end}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("privilege separation: starting the socket helper: %w", err)
		}
		end.Close()
		clientFD, pid = sp[0], cmd.Process.Pid
		// The command's end must survive the execve below.
		if _, err := unix.FcntlInt(uintptr(clientFD), unix.F_SETFD, 0); err != nil {
			return nil, fmt.Errorf("privilege separation: %w", err)
		}
	}
	dropBounding(0)
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && ambient != 0 {
		return nil, fmt.Errorf("privilege separation: clearing ambient capabilities: %w", err)
	}
	if err := set(Caps{}); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	env := append(os.Environ(), clientEnv+"="+strconv.Itoa(clientFD), pidEnv+"="+strconv.Itoa(pid))
	err = syscall.Exec(exe, os.Args, env)
	return nil, fmt.Errorf("privilege separation: re-executing %s without capabilities: %w", exe, err)
}

// dropBounding drops every capability but keep from the calling thread's
// bounding set where it may (CAP_SETPCAP); without that it changes nothing,
// and no_new_privs alone keeps execve from granting any.
func dropBounding(keep uint64) {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n < 64 {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if keep&(uint64(1)<<c) == 0 {
			_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		}
	}
}

// afterExec is Separate in the image re-executed without capabilities.
func afterExec(v string) (SocketFunc, error) {
	os.Unsetenv(clientEnv)
	pidText := os.Getenv(pidEnv)
	os.Unsetenv(pidEnv)
	caps, err := Current()
	if err != nil {
		return nil, err
	}
	if caps != (Caps{}) {
		return nil, fmt.Errorf("privilege separation: still holding capabilities %+v after dropping them", caps)
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return nil, nil
	}
	unix.CloseOnExec(fd)
	if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 {
		if p, err := os.FindProcess(pid); err == nil {
			go func() { _, _ = p.Wait() }() // reap the helper if it ends first
		}
	}
	c := &client{fd: fd}
	return c.socket, nil
}

// client asks the helper for raw sockets, one request at a time.
type client struct {
	mu sync.Mutex
	fd int
}

// socket opens a raw socket through the helper and any other kind itself.
func (c *client) socket(domain, typ, proto int) (int, error) {
	if typ&0xf != unix.SOCK_RAW {
		return unix.Socket(domain, typ, proto)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var req [12]byte
	binary.LittleEndian.PutUint32(req[0:], uint32(domain))
	binary.LittleEndian.PutUint32(req[4:], uint32(typ))
	binary.LittleEndian.PutUint32(req[8:], uint32(proto))
	if _, err := unix.Write(c.fd, req[:]); err != nil {
		return -1, fmt.Errorf("socket helper: %w", err)
	}
	var resp [4]byte
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(c.fd, resp[:], oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("socket helper: %w", err)
		}
		if n != 4 {
			return -1, errors.New("socket helper: it has exited")
		}
		if e := binary.LittleEndian.Uint32(resp[:]); e != 0 {
			return -1, syscall.Errno(e)
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return -1, errors.New("socket helper: no descriptor in its answer")
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			return -1, errors.New("socket helper: no descriptor in its answer")
		}
		return fds[0], nil
	}
}

// IsHelper tells whether this process was started as the socket helper.
func IsHelper() bool {
	_, ok := os.LookupEnv(helperEnv)
	return ok
}

// allowed says whether the helper opens a socket: raw IPv4/IPv6 sockets of
// the protocols the probes use, nothing else.
func allowed(domain, typ, proto int) bool {
	if domain != unix.AF_INET && domain != unix.AF_INET6 || typ&0xf != unix.SOCK_RAW {
		return false
	}
	if typ&^(0xf|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0 {
		return false
	}
	switch proto {
	case unix.IPPROTO_ICMP, unix.IPPROTO_ICMPV6, unix.IPPROTO_UDP, unix.IPPROTO_TCP:
		return true
	}
	return false
}

// helperName is the helper's comm (what ps and pidof show), NUL-terminated.
var helperName = []byte("lc-sockhelper\x00")

// RunHelper is the socket helper's main: it answers requests until the
// command closes its end, and returns the exit status.
func RunHelper() int {
	fd, err := strconv.Atoi(os.Getenv(helperEnv))
	os.Unsetenv(helperEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "linecheck socket helper: no socket to serve")
		return 2
	}
	// The command's own SIGHUP (serve reloads on it; pidof finds both
	// processes) and the terminal's SIGINT are not the helper's: it ends
	// when the command closes its end of the socket pair.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&helperName[0])), 0, 0, 0)
	caps, err := Current()
	if err != nil || caps.Effective&^NetRaw != 0 || caps.Permitted&^NetRaw != 0 {
		fmt.Fprintf(os.Stderr, "linecheck socket helper: started with capabilities %+v, want CAP_NET_RAW alone\n", caps)
		return 2
	}
	return serveRequests(fd)
}

// serveRequests answers the requests on fd until its other end closes.
func serveRequests(fd int) int {
	var req [12]byte
	for {
		n, err := unix.Read(fd, req[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return 0 // the command ended
		}
		var resp [4]byte
		var rights []byte
		domain := int(binary.LittleEndian.Uint32(req[0:]))
		typ := int(binary.LittleEndian.Uint32(req[4:]))
		proto := int(binary.LittleEndian.Uint32(req[8:]))
		s := -1
		switch {
		case n != len(req) || !allowed(domain, typ, proto):
			binary.LittleEndian.PutUint32(resp[:], uint32(unix.EINVAL))
		default:
			s, err = unix.Socket(domain, typ, proto)
			if err != nil {
				var e syscall.Errno
				if !errors.As(err, &e) {
					e = unix.EIO
				}
				binary.LittleEndian.PutUint32(resp[:], uint32(e))
			} else {
				rights = unix.UnixRights(s)
			}
		}
		err = unix.Sendmsg(fd, resp[:], rights, nil, 0)
		if s >= 0 {
			unix.Close(s)
		}
		if err != nil {
			return 0
		}
	}
}

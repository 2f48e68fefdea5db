// Package privsep keeps a long-running command's privileges where sockets
// open and nowhere else, as mtr keeps CAP_NET_RAW in its small mtr-packet
// helper while the user interface holds none.
//
// Separate, called at the start of serve, backtrace and tui, does nothing
// for a process without capabilities. A process with some (root, or a
// binary given cap_net_raw+ep) starts a socket helper, a child that holds
// CAP_NET_RAW alone and does one thing: open a raw IPv4 or IPv6 socket
// (ICMP, ICMPv6, UDP or TCP) on request and hand its descriptor back over a
// Unix socket (SCM_RIGHTS). Then the process gives up every capability,
// so its HTTP server, reloader and every probe run with CapEff 0; the
// SocketFunc Separate returns opens raw sockets through the helper and
// every other socket itself.
//
// Anyone may start the binary in helper mode with a socket of their own,
// so the helper serves only a parent that held CAP_NET_RAW itself
// (checkOrigin), and every socket it hands out carries a locked filter
// that lets through only what probes read: ICMP answers, SYN-ACKs and
// RSTs without data to the probes' ports, no UDP (filter.go). The separated command may not set
// IP_HDRINCL on them (seccomp.go). docs/probe.md states the threat model
// and what remains.
//
// Capabilities are per thread on Linux, and a Go process has many threads.
// Without cgo, the runtime changes them on every thread at once
// (syscall.AllThreadsSyscall) and the process, not dumpable since it
// started with the file capability, drops them in place. With cgo it
// cannot: both drops happen on one locked thread that then starts a new
// program image (execve keeps only the calling thread and its
// credentials), which makes itself not dumpable again as early as it can.
// Either way no_new_privs is set so that neither root's implicit
// capabilities nor the binary's file capabilities come back on execve: the
// helper starts with CAP_NET_RAW alone on every thread, the command ends
// with nothing.
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

// set sets the capabilities of every thread, or of the calling one (only
// ever lowering them).
func set(every bool, c Caps) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	d := [2]unix.CapUserData{
		{Effective: uint32(c.Effective), Permitted: uint32(c.Permitted), Inheritable: uint32(c.Inheritable)},
		{Effective: uint32(c.Effective >> 32), Permitted: uint32(c.Permitted >> 32), Inheritable: uint32(c.Inheritable >> 32)},
	}
	if every {
		_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&d[0])), 0)
		if e != 0 {
			return fmt.Errorf("capset: %w", e)
		}
		return nil
	}
	if err := unix.Capset(&hdr, &d[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// SocketFunc opens a socket (unix.Socket's signature, probe.SocketFunc's).
type SocketFunc func(domain, typ, proto int) (int, error)

// Separate separates the privileges (see the package doc) and returns the
// socket opener of the helper (nil when the process never held
// CAP_NET_RAW, or held no capability at all). In a process with
// capabilities built with cgo it does not return on success: the process
// goes on as a new image of itself without them, where Separate returns
// the opener.
func Separate() (SocketFunc, error) {
	if v, ok := os.LookupEnv(clientEnv); ok {
		return afterExec(v)
	}
	// Without cgo the runtime can change every thread's credentials at
	// once, and the process drops its capabilities in place; with cgo it
	// cannot, and the drops happen on one locked thread that then starts
	// a new image of the program.
	every := everyThread()
	if !every {
		runtime.LockOSThread()
	}
	caps, err := Current()
	if err != nil {
		if !every {
			runtime.UnlockOSThread()
		}
		return nil, err
	}
	if caps.Effective == 0 && caps.Permitted == 0 {
		if !every {
			runtime.UnlockOSThread()
		}
		return nil, nil
	}
	// From here a locked thread's credentials differ from the others': it
	// is never unlocked, so it ends with the goroutine if anything fails.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	if err := prctl(every, unix.PR_SET_NO_NEW_PRIVS, 1); err != nil {
		return nil, fmt.Errorf("privilege separation: no_new_privs: %w", err)
	}
	keep := caps.Permitted & NetRaw
	// With CAP_SETPCAP (root) the bounding set goes too, so that nothing
	// started from here can ever gain another capability; the helper's is
	// CAP_NET_RAW, the command's empty. CAP_SETPCAP itself is kept until
	// the helper runs: it is outside the bounding set, so the helper
	// cannot inherit it.
	setpcap := caps.Permitted & (uint64(1) << unix.CAP_SETPCAP)
	dropBounding(every, keep)
	// A capability held as an ambient one (systemd's AmbientCapabilities
	// for an unprivileged user, setpriv --ambient-caps) passes execve only
	// while it stays ambient, and ambient only while it is inheritable:
	// the helper's start keeps it so. It proves the same as the file
	// capability does (checkOrigin): only a process that holds CAP_NET_RAW
	// can have it ambient.
	ambient := caps.Inheritable & keep
	if ambient != 0 {
		if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_NET_RAW, 0, 0); err != nil || r != 1 {
			ambient = 0
		}
	}
	if err := set(every, Caps{Effective: keep | setpcap, Permitted: keep | setpcap, Inheritable: ambient}); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	clientFD, pid := -1, 0
	var helper *exec.Cmd
	if keep != 0 {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("privilege separation: socketpair: %w", err)
		}
		end := os.NewFile(uintptr(sp[1]), "socket-helper")
		// Started from this thread (fork runs on the calling thread): the
		// helper inherits CAP_NET_RAW alone and no_new_privs.
		helper = exec.Command(exe)
		helper.Args = []string{"linecheck-socket-helper"}
		helper.Env = append(os.Environ(), helperEnv+"=3")
		helper.ExtraFiles = []*os.File{end}
		helper.Stderr = os.Stderr
		if err := helper.Start(); err != nil {
			return nil, fmt.Errorf("privilege separation: starting the socket helper: %w", err)
		}
		end.Close()
		clientFD, pid = sp[0], helper.Process.Pid
	}
	dropBounding(every, 0)
	if ambient != 0 {
		if err := prctl(every, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL); err != nil {
			return nil, fmt.Errorf("privilege separation: clearing ambient capabilities: %w", err)
		}
	}
	if err := set(every, Caps{}); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	if every {
		return inPlace(clientFD, helper)
	}
	// The command's end must survive the execve below.
	if clientFD >= 0 {
		if _, err := unix.FcntlInt(uintptr(clientFD), unix.F_SETFD, 0); err != nil {
			return nil, fmt.Errorf("privilege separation: %w", err)
		}
	}
	env := append(os.Environ(), clientEnv+"="+strconv.Itoa(clientFD), pidEnv+"="+strconv.Itoa(pid))
	err = syscall.Exec(exe, os.Args, env)
	return nil, fmt.Errorf("privilege separation: re-executing %s without capabilities: %w", exe, err)
}

// everyThread tells whether the runtime can make a system call on every
// thread (syscall.AllThreadsSyscall: not in a binary that uses cgo).
func everyThread() bool {
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_GETPID, 0, 0, 0) // the same on every thread
	return e != syscall.ENOTSUP
}

// prctl is prctl(option, arg) on every thread, or on the calling one.
func prctl(every bool, option int, arg uintptr) error {
	if every {
		if _, _, e := syscall.AllThreadsSyscall(unix.SYS_PRCTL, uintptr(option), arg, 0); e != 0 {
			return e
		}
		return nil
	}
	return unix.Prctl(option, arg, 0, 0, 0)
}

// dropBounding drops every capability but keep from the bounding set
// (every thread's, or the calling thread's) where it may (CAP_SETPCAP);
// without that it changes nothing, and no_new_privs alone keeps execve from
// granting any.
func dropBounding(every bool, keep uint64) {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n < 64 {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if keep&(uint64(1)<<c) == 0 {
			_ = prctl(every, unix.PR_CAPBSET_DROP, uintptr(c))
		}
	}
}

// inPlace finishes Separate in a process whose every thread has dropped
// its capabilities: it was not dumpable since it started with the file
// capability (root's may be, and only root may attach to it), and never
// becomes so, as a re-executed image would.
func inPlace(fd int, helper *exec.Cmd) (SocketFunc, error) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("privilege separation: not dumpable: %w", err)
	}
	if err := refuseHeaderInclude(); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
	}
	if fd < 0 {
		return nil, nil
	}
	go func() { _ = helper.Wait() }() // reap the helper if it ends first
	c := &client{fd: fd}
	return c.socket, nil
}

// init makes the image re-executed without capabilities not dumpable, as
// early as a Go package can: execve made it dumpable again (it gained
// nothing), so a process of the same user could attach to it with ptrace,
// or copy its descriptors with pidfd_getfd, and take the helper's end of
// the socket pair or the raw sockets. Not dumpable, it is as closed to them
// as the image with the capability was. What runs before this (the
// runtime's start and the initialization of the packages this one imports)
// is the window docs/probe.md describes.
func init() {
	if _, ok := os.LookupEnv(clientEnv); ok {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
}

// afterExec is Separate in the image re-executed without capabilities.
func afterExec(v string) (SocketFunc, error) {
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		return nil, fmt.Errorf("privilege separation: the command is still dumpable (%d, %v)", d, err)
	}
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
	if err := refuseHeaderInclude(); err != nil {
		return nil, fmt.Errorf("privilege separation: %w", err)
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
	if err != nil || caps.Effective != NetRaw || caps.Permitted&^NetRaw != 0 {
		fmt.Fprintf(os.Stderr, "linecheck socket helper: started with capabilities %+v, want CAP_NET_RAW alone\n", caps)
		return 2
	}
	if err := checkOrigin(fd); err != nil {
		if peerGone(fd) {
			return 0 // the command ended (a bad flag) before the helper ran; it is init's child now
		}
		fmt.Fprintf(os.Stderr, "linecheck socket helper: %v; it serves only the command that started it (serve, backtrace, tui)\n", err)
		return 2
	}
	return serveRequests(fd)
}

// peerGone tells whether the other end of socket fd is closed.
func peerGone(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(p, 0)
	return err == nil && n == 1 && p[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) != 0
}

// checkOrigin refuses to serve anyone but the process that Separate
// started the helper from. Anyone may execute the binary in helper mode,
// with its file capability, an environment and a socket of their own, and
// be its parent; what they cannot arrange is no_new_privs together with
// CAP_NET_RAW. Separate sets no_new_privs before it starts the helper; with
// it set, execve grants the file capability only within the permitted set
// the caller already had, so a helper that holds CAP_NET_RAW and has
// no_new_privs was started by a process that held CAP_NET_RAW itself
// (root, or this binary started with its capability). A caller without
// it gets either no_new_privs off (refused here) or a helper without
// CAP_NET_RAW (refused by RunHelper). The socket must then be the one that
// process made: its peer, the creator of the socket pair, is the parent.
func checkOrigin(fd int) error {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil || nnp != 1 {
		return errors.New("started without no_new_privs, so not by linecheck's privilege separation")
	}
	domain, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err1 != nil || err2 != nil || domain != unix.AF_UNIX || typ != unix.SOCK_SEQPACKET {
		return fmt.Errorf("descriptor %d is not a Unix sequenced-packet socket", fd)
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("peer of descriptor %d: %w", fd, err)
	}
	if int(cred.Pid) != os.Getppid() || int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("descriptor %d belongs to pid %d uid %d, not to the parent (pid %d, uid %d)",
			fd, cred.Pid, cred.Uid, os.Getppid(), os.Geteuid())
	}
	return nil
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
			if err == nil {
				if err = restrict(s, filterFor(domain, proto)); err != nil {
					unix.Close(s)
					s = -1
				}
			}
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

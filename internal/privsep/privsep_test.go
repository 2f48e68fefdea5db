package privsep

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestHelperOpensOnlyRawProbeSockets(t *testing.T) {
	for _, c := range []struct {
		domain, typ, proto int
		want               bool
	}{
		{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, true},
		{unix.AF_INET6, unix.SOCK_RAW | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6, true},
		{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_UDP, true},
		{unix.AF_INET6, unix.SOCK_RAW, unix.IPPROTO_TCP, true},
		{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW, false}, // IP_HDRINCL: any header at all
		{unix.AF_PACKET, unix.SOCK_RAW, 0x0300, false},
		{unix.AF_NETLINK, unix.SOCK_RAW, 0, false},
		{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP, false},
		{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP, false},
		{unix.AF_INET, unix.SOCK_RAW | 0x100000, unix.IPPROTO_ICMP, false}, // unknown flag
	} {
		if got := allowed(c.domain, c.typ, c.proto); got != c.want {
			t.Errorf("allowed(%d, %#x, %d) = %v, want %v", c.domain, c.typ, c.proto, got, c.want)
		}
	}
}

// The client gets a working raw socket from the helper loop over a socket
// pair, the refusal of anything else as EINVAL, opens non-raw sockets
// itself, and an error once the helper is gone.
func TestClientAndHelperOverASocketPair(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (raw sockets); CI runs as root")
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- serveRequests(sp[1]) }()
	c := &client{fd: sp[0]}
	fd, err := c.socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	if err != nil {
		t.Fatal(err)
	}
	if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_RAW {
		t.Errorf("socket from the helper: type %d (%v), want SOCK_RAW", typ, err)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("socket from the helper: fd flags %#x (%v), want close-on-exec", flags, err)
	}
	unix.Close(fd)
	if _, err := c.socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW); err != unix.EINVAL {
		t.Errorf("IPPROTO_RAW: %v, want EINVAL from the helper", err)
	}
	fd, err = c.socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	// The helper's end shut down: its loop reads the end, the client sees it.
	if err := unix.Shutdown(sp[1], unix.SHUT_RDWR); err != nil {
		t.Fatal(err)
	}
	<-done
	unix.Close(sp[1])
	if _, err := c.socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP); err == nil {
		t.Error("a socket from a helper that is gone")
	}
	unix.Close(sp[0])
}

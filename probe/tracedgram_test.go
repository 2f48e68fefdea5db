package probe

import (
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// recvErrCmsg builds the IP_RECVERR control message the kernel attaches to
// an error-queue read: the extended error, then the offender's sockaddr_in.
func recvErrCmsg(typ, code uint8, offender netip.Addr) []byte {
	ee := unix.SockExtendedErr{Errno: uint32(unix.EHOSTUNREACH), Origin: unix.SO_EE_ORIGIN_ICMP, Type: typ, Code: code}
	data := make([]byte, int(unsafe.Sizeof(ee))+unix.SizeofSockaddrInet4)
	*(*unix.SockExtendedErr)(unsafe.Pointer(&data[0])) = ee
	sa := data[unsafe.Sizeof(ee):]
	binary.LittleEndian.PutUint16(sa, unix.AF_INET)
	copy(sa[4:8], offender.AsSlice())
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.IPPROTO_IP, unix.IP_RECVERR
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

func TestDecodeDgramErrorQueue(t *testing.T) {
	router := netip.MustParseAddr("10.77.1.2")
	quoted := []byte{8, 0, 0x12, 0x34, 0x00, 0x07, 0x01, 0x02} // our echo, id 7 (the kernel's), seq 0x0102
	r, ok := decodeDgram(false, dst4, quoted, recvErrCmsg(icmp4TimeExceeded, 0, router), nil, true)
	if !ok || r.Key != 0x0102 || r.From != router || r.Dest {
		t.Errorf("time exceeded: %+v ok %v, want key 0x0102 from %s", r, ok, router)
	}
	r, ok = decodeDgram(false, dst4, quoted, recvErrCmsg(icmp4Unreachable, 1, dst4), nil, true)
	if !ok || !r.Dest || r.From != dst4 {
		t.Errorf("unreachable from the target: %+v ok %v, want the destination", r, ok)
	}
	if _, ok = decodeDgram(false, dst4, quoted, recvErrCmsg(5 /* redirect */, 0, router), nil, true); ok {
		t.Error("a redirect was taken for a reply")
	}
	reply := []byte{icmp4EchoReply, 0, 0, 0, 0, 7, 0, 9}
	r, ok = decodeDgram(false, dst4, reply, nil, &unix.SockaddrInet4{Addr: dst4.As4()}, false)
	if !ok || r.Key != 9 || !r.Dest {
		t.Errorf("echo reply: %+v ok %v", r, ok)
	}
}

// Without CAP_NET_RAW an ICMP trace falls back to ping sockets: here raw
// sockets are refused by the injected socket opener, inside a private namespace whose
// ping_group_range admits everyone.
func TestTraceFallsBackToDatagramSockets(t *testing.T) {
	needRaw(t)
	has6(t)
	noRaw := func(domain, typ, proto int) (int, error) {
		if typ&0xf == unix.SOCK_RAW {
			return -1, unix.EPERM
		}
		return unix.Socket(domain, typ, proto)
	}
	type out struct {
		hops, sent int
		reached    bool
		err        error
	}
	ch := make(chan out, 2)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- out{err: err}
			return
		}
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err == nil {
			err = os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0)
		}
		if err != nil {
			ch <- out{err: err}
			return
		}
		for _, target := range []string{"127.0.0.1", "::1"} {
			tr, err := Trace(context.Background(), target, TraceConfig{Cycles: 3, Interval: 20 * time.Millisecond, OpenSocket: noRaw}, nil)
			if err != nil {
				ch <- out{err: err}
				continue
			}
			// One hop: the target itself answers the TTL 1 probe of every
			// cycle (hops is the lowest TTL it answered at).
			var o out
			for _, r := range tr.Results {
				if r.Dest && r.Addr != "" && (o.hops == 0 || r.TTL < o.hops) {
					o.hops = r.TTL
				}
				if r.TTL == 1 {
					o.sent++
					o.reached = o.reached || (r.Dest && r.Addr == target)
				}
			}
			ch <- o
		}
	}()
	for range 2 {
		o := <-ch
		if o.err != nil {
			t.Fatal(o.err)
		}
		if o.hops != 1 || o.sent != 3 || !o.reached {
			t.Errorf("trace over ping sockets: %+v, want 1 hop, 3 sent, reached", o)
		}
	}
}

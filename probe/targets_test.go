package probe

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestResolveTargetsGuards(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		opt     ExpandOptions
		n       int    // targets expected
		first   string // first target
		wantErr string
	}{
		{"addresses as given", []string{"127.0.0.1", "::1"}, ExpandOptions{}, 2, "127.0.0.1", ""},
		{"a /24 skips network and broadcast", []string{"10.77.1.0/24"}, ExpandOptions{}, 254, "10.77.1.1", ""},
		{"a /31 has two hosts", []string{"10.77.1.0/31"}, ExpandOptions{}, 2, "10.77.1.0", ""},
		{"a /23 needs --allow-large", []string{"10.77.0.0/23"}, ExpandOptions{}, 0, "", "--allow-large"},
		{"a /23 with --allow-large", []string{"10.77.0.0/23"}, ExpandOptions{AllowLarge: true}, 510, "10.77.0.1", ""},
		{"loopback /22 is exempt", []string{"127.0.0.0/22"}, ExpandOptions{}, 1022, "127.0.0.1", ""},
		{"loopback /8 is still too big to hold", []string{"127.0.0.0/8"}, ExpandOptions{}, 0, "", "more than the 65536"},
		{"IPv6 /120 is 256 addresses", []string{"fd77::/120"}, ExpandOptions{}, 256, "fd77::", ""},
		{"IPv6 /64 is refused", []string{"fd77::/64"}, ExpandOptions{AllowLarge: true}, 0, "", "more than the"},
		{"multicast needs a flag", []string{"224.0.0.1"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"limited broadcast needs a flag", []string{"255.255.255.255"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"the 127/8 broadcast needs a flag", []string{"127.255.255.255"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"the 127/8 broadcast as a /32 needs a flag", []string{"127.255.255.255/32"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"the 127/8 broadcast with the flag", []string{"127.255.255.255"}, ExpandOptions{AllowBroadcast: true}, 1, "127.255.255.255", ""},
		{"an interface's broadcast needs a flag", []string{"10.77.9.255"},
			ExpandOptions{bcast: map[netip.Addr]string{netip.MustParseAddr("10.77.9.255"): "lab0"}}, 0, "", "broadcast address of interface lab0"},
		{"the last address of a loopback /24 is unicast", []string{"127.0.0.255"}, ExpandOptions{}, 1, "127.0.0.255", ""},
		{"IPv6 multicast needs a flag", []string{"ff02::1"}, ExpandOptions{}, 0, "", "--allow-broadcast"},
		{"multicast with the flag", []string{"224.0.0.1"}, ExpandOptions{AllowBroadcast: true}, 1, "224.0.0.1", ""},
		{"-4 refuses an IPv6 address", []string{"::1"}, ExpandOptions{Network: "ip4"}, 0, "", "not an IPv4"},
		{"bad CIDR", []string{"10.77.0.0/33"}, ExpandOptions{}, 0, "", "not a CIDR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := ResolveTargets(context.Background(), tc.args, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != tc.n || ts[0].Addr.String() != tc.first {
				t.Errorf("%d targets starting %s, want %d starting %s", len(ts), ts[0].Addr, tc.n, tc.first)
			}
		})
	}
}

func TestScheduleStretchesWhenTheRateCapCannotKeepTheInterval(t *testing.T) {
	tests := []struct {
		n         int
		interval  time.Duration
		rate      float64
		want      time.Duration
		stretched bool
	}{
		{10, time.Second, 100, time.Second, false},              // 10 pps needed
		{100, time.Second, 100, time.Second, false},             // exactly the cap
		{1000, 100 * time.Millisecond, 1000, time.Second, true}, // 10,000 pps needed
		{500, time.Second, 100, 5 * time.Second, true},
	}
	for _, tc := range tests {
		got, st := Schedule(tc.n, PingConfig{Interval: tc.interval, Rate: tc.rate})
		if got != tc.want || st != tc.stretched {
			t.Errorf("%d targets every %s at %g pps: %s %v, want %s %v", tc.n, tc.interval, tc.rate, got, st, tc.want, tc.stretched)
		}
	}
}

func TestLastAddrIsTheBroadcastOfAPrefix(t *testing.T) {
	tests := []struct{ prefix, want string }{
		{"127.0.0.1/8", "127.255.255.255"},
		{"192.0.2.2/24", "192.0.2.255"},
		{"10.77.0.5/30", "10.77.0.7"},
		{"10.77.0.0/16", "10.77.255.255"},
	}
	for _, tc := range tests {
		got, ok := lastAddr(netip.MustParsePrefix(tc.prefix))
		if !ok || got.String() != tc.want {
			t.Errorf("lastAddr(%s) = %s %v, want %s", tc.prefix, got, ok, tc.want)
		}
	}
	if _, ok := lastAddr(netip.MustParsePrefix("fd77::/64")); ok {
		t.Error("lastAddr of an IPv6 prefix: ok, want not ok")
	}
}

// lo carries 127.0.0.1/8 on Linux: its broadcast is 127.255.255.255.
func TestLocalBroadcastsHoldTheLoopbackBroadcast(t *testing.T) {
	m := localBroadcasts()
	if ifc, ok := m[netip.MustParseAddr("127.255.255.255")]; !ok {
		t.Skipf("no interface with 127.0.0.0/8 here (%v)", m)
	} else if ifc == "" {
		t.Error("no interface name")
	}
}

// EACCES from sendto towards a broadcast address is the kernel refusing a
// broadcast without SO_BROADCAST, not a missing privilege: the message says so
// and does not wrap ErrPrivilege. Other errors pass through unchanged.
func TestBroadcastSendErrorIsNotAPrivilegeError(t *testing.T) {
	bc := netip.MustParseAddr("127.255.255.255")
	err := broadcastSendError("sending ICMP echo", bc, unix.EACCES)
	if err == unix.EACCES || !strings.Contains(err.Error(), "broadcast address") ||
		!strings.Contains(err.Error(), "not a privilege problem") || strings.Contains(err.Error(), "run as root") {
		t.Errorf("EACCES to %s: %v", bc, err)
	}
	if errors.Is(err, ErrPrivilege) || !errors.Is(err, unix.EACCES) {
		t.Errorf("EACCES to %s: Is(ErrPrivilege) %v, Is(EACCES) %v; want false, true", bc, errors.Is(err, ErrPrivilege), errors.Is(err, unix.EACCES))
	}
	for _, tc := range []struct {
		dst string
		err error
	}{{"127.255.255.255", unix.EPERM}, {"::1", unix.EACCES}, {"127.0.0.1", unix.ENETUNREACH}} {
		if got := broadcastSendError("x", netip.MustParseAddr(tc.dst), tc.err); got != tc.err {
			t.Errorf("%v to %s: %v, want it unchanged", tc.err, tc.dst, got)
		}
	}
}

package probe

import (
	"net/netip"
	"strings"
	"testing"
)

// Every address localBroadcasts can return passes mayBeBroadcast, so
// skipping the interface dump for the others never lets a broadcast target
// through.
func TestMayBeBroadcastCoversEveryBroadcastAddress(t *testing.T) {
	for _, base := range []string{"10.77.8.2", "192.168.1.77", "172.16.0.0", "100.64.3.9", "203.0.113.200", "127.0.0.1"} {
		a := netip.MustParseAddr(base)
		for bits := 0; bits <= 30; bits++ {
			b, ok := lastAddr(netip.PrefixFrom(a, bits))
			if !ok || !mayBeBroadcast(b) {
				t.Errorf("%s/%d: broadcast %s not covered", base, bits, b)
			}
		}
	}
	for _, s := range []string{"10.77.8.2", "10.77.8.1", "10.77.8.0", "10.77.8.254", "::1", "fe80::3", "::ffff:10.0.0.3"} {
		if mayBeBroadcast(netip.MustParseAddr(s)) {
			t.Errorf("%s: cannot be a broadcast address of a /30 or shorter prefix, and IPv6 has none", s)
		}
	}
}

// CheckTarget reads the interfaces only for addresses that could be a
// broadcast address; every broadcast address of this host's interfaces is
// still refused, naming the interface.
func TestCheckTargetStillRefusesEveryLocalBroadcast(t *testing.T) {
	bc := localBroadcasts()
	if len(bc) == 0 {
		t.Skip("no IPv4 interface address with a prefix of /30 or shorter on this host")
	}
	for a, ifc := range bc {
		err := CheckTarget(a.String(), a, "h")
		// 127.255.255.255 is refused first as the loopback broadcast, and
		// an interface in a documentation range (some test hosts) as a
		// documentation address.
		_, doc := documentationPrefix(a)
		if err == nil || (a != loopbackBroadcast && !doc && !strings.Contains(err.Error(), ifc)) {
			t.Errorf("CheckTarget(%v) = %v, want a refusal naming %s", a, err, ifc)
		}
		if err := CheckTarget("m", netip.AddrFrom16(a.As16()), "h"); err == nil {
			t.Errorf("CheckTarget(%v as IPv4-mapped IPv6) accepted it", a)
		}
	}
	if err := CheckTarget("lo", netip.MustParseAddr("127.0.0.1"), "h"); err != nil {
		t.Errorf("CheckTarget(127.0.0.1) = %v, want nil", err)
	}
}

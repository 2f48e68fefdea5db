package probe

import (
	"net/netip"
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

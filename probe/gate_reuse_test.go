package probe

import (
	"net/netip"
	"testing"
)

// A Gate used for many targets refuses and passes exactly what CheckTarget
// does for each alone, the broadcast ones included (it reads the
// interfaces once instead of per target).
func TestGateAgreesWithCheckTarget(t *testing.T) {
	var g Gate
	for _, s := range []string{"127.0.0.1", "127.0.0.3", "127.255.255.255", "255.255.255.255", "192.0.2.1", "2001:db8::1",
		"10.77.0.3", "224.0.0.1", "0.0.0.0", "::1", "10.0.0.7", "127.0.0.2"} {
		a := netip.MustParseAddr(s)
		want := CheckTarget(s, a, "hint")
		got := g.Check(s, a, "hint")
		if (want == nil) != (got == nil) || want != nil && want.Error() != got.Error() {
			t.Errorf("%s: Gate %v, CheckTarget %v", s, got, want)
		}
	}
	if !g.read {
		t.Error("the broadcast candidates did not read the interfaces")
	}
}

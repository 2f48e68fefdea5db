package candidates

import (
	"strings"
	"testing"
)

// RouteTargets is one target per address family, the first of each, in
// the order the families first appear; a host name stands for the first
// target's family.
func TestRouteTargetsOnePerFamily(t *testing.T) {
	c := &Candidate{Targets: []Target{
		{Addr: "127.0.0.1", Protocol: "icmp"}, {Addr: "127.0.0.1", Protocol: "tcp", Port: 443},
		{Addr: "::1", Protocol: "tcp", Port: 443}, {Addr: "::1", Protocol: "icmp"}, {Addr: "::ffff:127.0.0.2", Protocol: "icmp"},
	}}
	got := c.RouteTargets()
	if len(got) != 2 || got[0] != c.Targets[0] || got[1] != c.Targets[2] {
		t.Fatalf("route targets %v, want 127.0.0.1 icmp and ::1 tcp/443", got)
	}
	if fams := c.Families(); strings.Join(fams, ",") != "ipv4,ipv6" {
		t.Errorf("families %v", fams)
	}
	if rt, ok := c.RouteTarget(); !ok || rt != c.Targets[0] {
		t.Errorf("route target %v", rt)
	}
	one := &Candidate{Targets: []Target{{Addr: "example.net", Protocol: "icmp"}, {Addr: "127.0.0.1", Protocol: "icmp"}}}
	if got := one.RouteTargets(); len(got) != 2 {
		t.Errorf("a host name then an address: %v", got)
	}
}

// sla.families takes ipv4 and ipv6, each once; anything else is an error
// naming the file and line.
func TestSLAFamiliesKey(t *testing.T) {
	base := "candidates:\n  - name: a\n    targets: [{addr: 127.0.0.1}]\nsla:\n  loss: 0.01\n  families: VALUE\n"
	f, err := ParseWith([]byte(strings.Replace(base, "VALUE", "[ipv6, ipv4]", 1)), "c.yaml", LoadOptions{TargetsOnly: true})
	if err != nil || strings.Join(f.SLA.Families, ",") != "ipv6,ipv4" {
		t.Fatalf("[ipv6, ipv4]: %v %+v", err, f)
	}
	for value, want := range map[string]string{
		"[ipv5]":       `c.yaml:6: sla.families: "ipv5": not an address family (ipv4, ipv6)`,
		"[ipv4, ipv4]": "c.yaml:6: sla.families: ipv4 listed twice",
		"[]":           "c.yaml:6: sla.families: empty",
	} {
		_, err := ParseWith([]byte(strings.Replace(base, "VALUE", value, 1)), "c.yaml", LoadOptions{TargetsOnly: true})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("families: %s: %v, want %q", value, err, want)
		}
	}
}

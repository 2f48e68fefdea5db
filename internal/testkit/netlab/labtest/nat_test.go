package labtest

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// natRewrite is the address router 1 writes as the client's source, and
// natID the NAT ID that rewrite must show, computed from the two addresses
// by hand (RFC 1624): the UDP checksum covers the source address in its
// pseudo-header, so replacing its 16-bit words old by new adds
// Σnew − Σold to the one's-complement sum and takes as much off the
// checksum; the NAT ID (quoted − sent) is that, as a 16-bit value.
func natID(t *testing.T, from, to string) int {
	t.Helper()
	a, b := netip.MustParseAddr(from).As4(), netip.MustParseAddr(to).As4()
	delta := (int(b[0])<<8 | int(b[1])) + (int(b[2])<<8 | int(b[3])) - (int(a[0])<<8 | int(a[1])) - (int(a[2])<<8 | int(a[3]))
	return -delta & 0xffff
}

// A stateless source rewrite on router 1 (nftables `ip saddr set` toward
// router 2, `ip daddr set` back) changes the UDP checksum of every probe
// it forwards: `trace -U --nat` reads NAT ID 0 at router 1 (which quotes
// the probe before its postrouting rewrite) and 64768 (0xFD00, computed by
// hand from 10.77.0.1 → 10.77.3.1) at router 2 and the server, flags TTL 2
// and names it in the document's nat; dublin-traceroute --broken-nat
// reports the same NAT ID per TTL on the same lab. Unprivileged (recverr)
// the NAT ID is not measured and says so. A conntrack masquerade on the
// same router is invisible to the method: every hop reads 0.
func TestTraceNATIDMatchesDublinTracerouteBehindAStatelessRewrite(t *testing.T) {
	t.Parallel()
	tool(t, "dublin-traceroute")
	tool(t, "nft")
	tool(t, "setpriv")
	const rewritten, behind = "10.77.3.1", 2
	l, bin := lab(t, netlab.Config{Prefix: "lclnt", Hops: 2})
	client, dst := l.ClientAddr(false), l.ServerAddr(false)
	want := natID(t, client, rewritten)
	if want != 0xfd00 {
		t.Fatalf("hand NAT ID %#04x, want 0xfd00 for %s → %s", want, client, rewritten)
	}
	nft := func(t *testing.T, script string) {
		t.Helper()
		cmd := l.Exec(l.Router(1), "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nft: %v: %s", err, out)
		}
	}
	// Router 2 routes the rewritten address back to router 1 (the server's
	// lab-wide route already does).
	mustRun(t, l, l.Router(2), "ip", "route", "add", rewritten+"/32", "via", "10.77.1.1")
	nft(t, `table ip lclnat {
	chain post { type filter hook postrouting priority 100; policy accept; oifname "n1a" ip saddr `+client+` ip saddr set `+rewritten+`; }
	chain pre { type filter hook prerouting priority -300; policy accept; iifname "n1a" ip daddr `+rewritten+` ip daddr set `+client+`; }
}`)

	tr := traceJSON(t, l, bin, "-U", "--nat", "-c", "3", "-i", "20ms", "--timeout", "300ms", dst)
	if got, want := hopAddrs(tr), l.RouterAddrs(false); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("hops %q, want %q", got, want)
	}
	if tr.NAT == nil || !tr.NAT.Measured || tr.Mode != "raw" {
		t.Fatalf("mode %q nat %+v, want raw, measured", tr.Mode, tr.NAT)
	}
	if len(tr.NAT.Changes) != 1 || !reflect.DeepEqual(tr.NAT.Changes[0], route.NATChange{TTL: behind, NATID: want, Addr: l.RouterAddrs(false)[behind-1]}) {
		t.Errorf("nat changes %+v, want one at TTL %d to %d from %s", tr.NAT.Changes, behind, want, l.RouterAddrs(false)[behind-1])
	}
	for _, h := range tr.Hops {
		w := 0
		if h.TTL >= behind {
			w = want
		}
		if h.NATID == nil || *h.NATID != w || hasFlag(h, route.FlagNAT) != (h.TTL == behind) {
			t.Errorf("hop %d: nat_id %v flags %v, want %d, flagged only at TTL %d", h.TTL, h.NATID, h.Flags, w, behind)
		}
	}

	// dublin-traceroute in the client namespace (netlab.RunDublin: a
	// resolv.conf naming 127.0.0.1 so no name query leaves the lab, and a
	// default route toward router 1 for libtins, for this run only).
	dt, err := l.RunDublin(4, 4, "--broken-nat")
	if err != nil || len(dt.Flows) != 4 {
		t.Fatalf("dublin-traceroute (%v): %d flows, want 4", err, len(dt.Flows))
	}
	seen := map[int]bool{}
	for _, f := range dt.Flows {
		for _, dh := range f.Hops {
			ttl := dh.TTL
			if dh.Addr == "" || ttl > len(tr.Hops) {
				continue
			}
			seen[ttl] = true
			h := tr.Hops[ttl-1]
			if dh.Addr != h.Responders[0].Addr || dh.NATID != *h.NATID {
				t.Errorf("TTL %d: dublin-traceroute %s nat_id %d, linecheck %s nat_id %d", ttl, dh.Addr, dh.NATID, h.Responders[0].Addr, *h.NATID)
			}
			// Time exceeded below the server, port unreachable (3, 3)
			// from it (ParseDublin swaps dublin's type and code back).
			wantType, wantCode := 11, 0
			if ttl == len(tr.Hops) {
				wantType, wantCode = 3, 3
			}
			if dh.ICMPType != wantType || dh.ICMPCode != wantCode {
				t.Errorf("TTL %d: dublin icmp type %d code %d, want %d %d", ttl, dh.ICMPType, dh.ICMPCode, wantType, wantCode)
			}
		}
	}
	// dublin sends one probe per TTL and flow: now and then one goes
	// unanswered, so each TTL must be answered in one of its 4 flows.
	if len(seen) != len(tr.Hops) {
		t.Errorf("dublin-traceroute answered TTLs %v of 1..%d: %+v", seen, len(tr.Hops), dt.Flows)
	}

	// Without privileges (recverr) the trace runs and the NAT ID is absent.
	ubin := worldBinary(t, bin)
	args := append(append([]string{}, nobody[1:]...), ubin, "trace", "-U", "--nat", "--timeout", "300ms", "--format", "json", dst)
	un := parseTrace(t, mustRun(t, l, l.Client(), nobody[0], args...))
	if un.Mode != "recverr" || un.NAT == nil || un.NAT.Measured || !strings.Contains(un.NAT.Note, "not measured") {
		t.Errorf("unprivileged: mode %q nat %+v, want recverr, not measured", un.Mode, un.NAT)
	}
	for _, h := range un.Hops {
		if h.NATID != nil {
			t.Errorf("unprivileged hop %d: nat_id %d, want absent", h.TTL, *h.NATID)
		}
	}

	// A conntrack masquerade restores the quoted header: NAT ID 0 everywhere.
	nft(t, `delete table ip lclnat
table ip lclnat {
	chain post { type nat hook postrouting priority 100; policy accept; oifname "n1a" masquerade; }
}`)
	tr = traceJSON(t, l, bin, "-U", "--nat", "-c", "3", "-i", "20ms", "--timeout", "300ms", dst)
	if got, want := hopAddrs(tr), l.RouterAddrs(false); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("masquerade: hops %q, want %q", got, want)
	}
	for _, h := range tr.Hops {
		if h.NATID == nil || *h.NATID != 0 {
			t.Errorf("masquerade hop %d: nat_id %v, want 0 (conntrack restores the quoted header)", h.TTL, h.NATID)
		}
	}
	if tr.NAT == nil || len(tr.NAT.Changes) != 0 || !strings.Contains(tr.NAT.Note, "invisible") {
		t.Errorf("masquerade: nat %+v, want no change and the note that conntrack NAT is invisible", tr.NAT)
	}
}

// On the multipath lab, with the stateless rewrite on one branch only (r2b
// writes the client's source as 10.77.0.99 toward r3; r1 writes it back on
// the replies, which return through r2), `trace -U --nat --flows 16` sees
// the NAT ID change at TTL 3 to 65438 (−0x62, by hand from the addresses)
// in exactly the flows that crossed r2b, those that hop 2 shows answered by
// r2b, and no change in the flows over r2.
func TestTraceNATIDPerFlowOnOneECMPBranch(t *testing.T) {
	t.Parallel()
	tool(t, "nft")
	const rewritten = "10.77.0.99"
	l, bin := lab(t, netlab.Config{Prefix: "lclnm", Hops: 4, Multipath: true})
	client, dst := l.ClientAddr(false), l.ServerAddr(false)
	want := natID(t, client, rewritten)
	if want != 0xff9e {
		t.Fatalf("hand NAT ID %#04x, want 0xff9e", want)
	}
	branches := l.HopAddrs(false)[1] // r2, r2b
	nft := func(t *testing.T, ns, script string) {
		t.Helper()
		cmd := l.Exec(ns, "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nft in %s: %v: %s", ns, err, out)
		}
	}
	r2b := l.Namespaces()[len(l.Namespaces())-1]
	if !strings.HasSuffix(r2b, "r2b") {
		t.Fatalf("namespaces %v: r2b not last", l.Namespaces())
	}
	nft(t, r2b, "table ip lclnat {\n chain post {\n  type filter hook postrouting priority 100; policy accept;\n  oifname \"m1a\" ip saddr "+client+" ip saddr set "+rewritten+"\n }\n}\n")
	nft(t, l.Router(1), "table ip lclnat {\n chain pre {\n  type filter hook prerouting priority -300; policy accept;\n  iifname \"n1a\" ip daddr "+rewritten+" ip daddr set "+client+"\n }\n}\n")

	tr := traceJSON(t, l, bin, "-U", "--nat", "--flows", "16", "-c", "2", "-i", "20ms", "--timeout", "300ms", dst)
	if len(tr.Hops) != 5 || tr.NAT == nil || !tr.NAT.Measured {
		t.Fatalf("hops %q nat %+v, want 5 hops, measured", hopAddrs(tr), tr.NAT)
	}
	var viaB []int
	for _, r := range tr.Hops[1].Responders {
		if r.Addr == branches[1] {
			viaB = r.Flows
		}
	}
	if len(viaB) == 0 || len(viaB) == 16 {
		t.Fatalf("hop 2 responders %+v: want flows over both branches", tr.Hops[1].Responders)
	}
	if len(tr.NAT.Changes) != 1 {
		t.Fatalf("nat changes %+v, want one", tr.NAT.Changes)
	}
	c := tr.NAT.Changes[0]
	if c.TTL != 3 || c.NATID != want || !reflect.DeepEqual(c.Flows, viaB) {
		t.Errorf("nat change %+v, want TTL 3 NAT ID %d in flows %v (those hop 2 saw via %s)", c, want, viaB, branches[1])
	}
	if !hasFlag(tr.Hops[2], route.FlagNAT) || hasFlag(tr.Hops[1], route.FlagNAT) {
		t.Errorf("flags hop 2 %v hop 3 %v, want nat on hop 3 only", tr.Hops[1].Flags, tr.Hops[2].Flags)
	}
	t.Logf("flows via %s: %v; change %+v", branches[1], viaB, c)
}

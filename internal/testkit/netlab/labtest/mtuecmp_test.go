package labtest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// With the MTU drop on one branch of the ECMP pair (r2 → r3 or r2b → r3 at
// 1400), the flow that crosses that branch sees 1400 from TTL 3, named by
// that branch's router, and a flow over the other branch sees 1500 all the
// way; tracepath on the same flow agrees. r1 hashes on addresses only here
// (fib_multipath_hash_policy 0, the kernel's default): tracepath changes
// its destination port with every probe and its source port cannot be
// chosen, so under the lab's layer-4 hashing its probes would spread over
// both branches; on addresses, every probe of both tools from the client
// to the server is one flow, on the branch `ip route get` names. Both
// branches are tried with the drop, so one run covers the flow on the
// dropping branch and the flow beside it. Then, with the lab's own hashing
// (ports too), `--mtu --flows 8` gives each flow the MTU of the branch
// `ip route get` names for its source port.
func TestTraceMTUOnOneECMPBranchFollowsTheFlowsBranch(t *testing.T) {
	t.Parallel()
	tool(t, "tracepath")
	l, bin := lab(t, netlab.Config{Prefix: "lclme", Hops: 4, Multipath: true})
	client, dst := l.ClientAddr(false), l.ServerAddr(false)
	policy := strings.TrimSpace(string(mustRun(t, l, l.Router(1), "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy").stdout))
	mustRun(t, l, l.Router(1), "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=0")
	got := string(mustRun(t, l, l.Router(1), "ip", "route", "get", dst, "from", client, "iif", "n0b").stdout)
	branches := l.HopAddrs(false)[1] // r2, r2b (their addresses toward r1)
	// Where each branch meets r3: link 2 from r2, link 101 from r2b; r1
	// reaches r2 at 10.77.1.2 and r2b at 10.77.100.2.
	links := []int{2, 101}
	taken := -1
	for i, via := range branches {
		if strings.Contains(got, "via "+via+" ") {
			taken = i
		}
	}
	if taken < 0 {
		t.Fatalf("ip route get names neither branch %v: %s", branches, got)
	}
	tracepathRE := regexp.MustCompile(`(?m)^\s*(\d+)\??:.*pmtu (\d+)`)
	for b := range branches {
		if err := l.MTU(links[b], 1400); err != nil {
			t.Fatal(err)
		}
		tr := traceJSON(t, l, bin, "-U", "--mtu", "--timeout", "300ms", dst)
		m := tr.MTU
		if m == nil {
			t.Fatalf("drop on branch %s: no mtu in the trace", branches[b])
		}
		if err := l.FlushPMTU(); err != nil {
			t.Fatal(err)
		}
		out := string(mustRun(t, l, l.Client(), "tracepath", "-n", dst).stdout)
		pttl, pmtu := linePMTU(out, tracepathRE, 1500)
		if b == taken {
			if m.PathMTU != 1400 || len(m.Drops) != 1 || m.Drops[0].TTL != 3 || m.Drops[0].ReportedBy != branches[b] {
				t.Errorf("drop on the flow's branch %s: mtu %+v, want 1400 from TTL 3 named by %s", branches[b], m, branches[b])
			}
			if pttl != 3 || pmtu != 1400 {
				t.Errorf("drop on the flow's branch %s: tracepath pmtu %d at TTL %d, want 1400 at 3:\n%s", branches[b], pmtu, pttl, out)
			}
			if len(tr.Hops) < 2 || len(tr.Hops[1].Responders) == 0 || tr.Hops[1].Responders[0].Addr != branches[b] {
				t.Errorf("the trace's hop 2 is not the flow's branch %s: %v", branches[b], hopAddrs(tr))
			}
		} else {
			if m.PathMTU != 1500 || len(m.Drops) != 0 {
				t.Errorf("drop on the other branch %s: mtu %+v, want 1500 and no drop", branches[b], m)
			}
			if pttl != 0 {
				t.Errorf("drop on the other branch %s: tracepath pmtu %d at TTL %d, want none below 1500:\n%s", branches[b], pmtu, pttl, out)
			}
		}
		t.Logf("drop on %s (flow via %s): linecheck path MTU %d drops %+v; tracepath pmtu %d at TTL %d", branches[b], branches[taken], m.PathMTU, m.Drops, pmtu, pttl)
		if err := l.MTU(links[b], 1500); err != nil {
			t.Fatal(err)
		}
	}

	// Hashing on the lab's header fields again (its policy: addresses
	// and ports), --mtu --flows 8 searches 8 flows (source
	// ports P..P+7): with r2b → r3 at 1400, each flow's path MTU is 1400
	// from TTL 3 named by r2b when `ip route get` with its ports names r2b,
	// else 1500.
	mustRun(t, l, l.Router(1), "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy="+policy)
	if err := l.MTU(links[1], 1400); err != nil {
		t.Fatal(err)
	}
	tr := traceJSON(t, l, bin, "-U", "--mtu", "--flows", "8", "--timeout", "300ms", dst)
	if tr.MTU == nil || len(tr.MTU.Flows) != 8 {
		t.Fatalf("--flows 8: mtu %+v, want 8 flows", tr.MTU)
	}
	seen := map[string]int{}
	for _, f := range tr.MTU.Flows {
		got := string(mustRun(t, l, l.Router(1), "ip", "route", "get", dst, "from", client, "iif", "n0b",
			"ipproto", "udp", "sport", strconv.Itoa(f.SourcePort), "dport", "33434").stdout)
		small := strings.Contains(got, "via "+branches[1]+" ")
		if !small && !strings.Contains(got, "via "+branches[0]+" ") {
			t.Fatalf("flow %d: ip route get names neither branch: %s", f.Flow, got)
		}
		if small {
			seen[branches[1]]++
			if f.PathMTU != 1400 || len(f.Drops) != 1 || f.Drops[0].TTL != 3 || f.Drops[0].ReportedBy != branches[1] {
				t.Errorf("flow %d (port %d) via %s: %+v, want 1400 from TTL 3 named by it", f.Flow, f.SourcePort, branches[1], f)
			}
		} else {
			seen[branches[0]]++
			if f.PathMTU != 1500 || len(f.Drops) != 0 {
				t.Errorf("flow %d (port %d) via %s: %+v, want 1500 and no drop", f.Flow, f.SourcePort, branches[0], f)
			}
		}
	}
	t.Logf("--flows 8 with %s → r3 at 1400: flows per branch %v", branches[1], seen)
}

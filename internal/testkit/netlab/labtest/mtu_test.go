package labtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// linePMTU finds, in the output of a per-hop tool, the first hop line whose
// MTU field (re's second group) is below start, and returns its TTL and MTU.
func linePMTU(out string, re *regexp.Regexp, start int) (ttl, mtu int) {
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		t, _ := strconv.Atoi(m[1])
		v, _ := strconv.Atoi(m[2])
		if v < start {
			return t, v
		}
	}
	return 0, 0
}

// With link 2 (router 2 → router 3) at MTU 1400, `trace --mtu` (run as uid
// 65534, no capability) finds 1500 up to TTL 2 and 1400 from TTL 3 on, the
// drop named by router 2 (10.77.1.2), as tracepath ("3: … pmtu 1400"),
// traceroute --mtu ("3 … F=1400") and scamper ("3 … [mtu: 1400]", IPv4:
// scamper printed no IPv6 hop on this lab) report it, IPv4 and IPv6. With
// router 2 silent about it (nftables drops its fragmentation-needed and
// packet-too-big messages) the same 1400 is found by trying sizes.
func TestTraceMTUMatchesTracepathTracerouteAndScamper(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"tracepath", "traceroute", "scamper", "setpriv"} {
		tool(t, name)
	}
	const link, mtu, dropTTL = 2, 1400, 3
	l, bin := lab(t, netlab.Config{Prefix: "lcltm", Hops: 4, IPv6: true})
	ubin := worldBinary(t, bin)
	if err := l.MTU(link, mtu); err != nil {
		t.Fatal(err)
	}
	trace := func(t *testing.T, dst string) route.Trace {
		t.Helper()
		if err := l.FlushPMTU(); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, nobody[1:]...), ubin, "trace", "-U", "--mtu", "--timeout", "300ms", "--format", "json", dst)
		return parseTrace(t, mustRun(t, l, l.Client(), nobody[0], args...))
	}
	check := func(t *testing.T, tr route.Trace, v6, probed bool) {
		t.Helper()
		m := tr.MTU
		if m == nil || m.Start != 1500 || m.PathMTU != mtu || len(m.Drops) != 1 {
			t.Fatalf("mtu %+v, want start 1500, path MTU %d, one drop", m, mtu)
		}
		d := m.Drops[0]
		wantBy := l.RouterAddrs(v6)[link-1]
		if probed {
			wantBy = ""
		}
		if d.TTL != dropTTL || d.MTU != mtu || d.ReportedBy != wantBy || d.Probed != probed {
			t.Errorf("drop %+v, want TTL %d to %d reported by %q, probed %v", d, dropTTL, mtu, wantBy, probed)
		}
		for _, h := range tr.Hops {
			want := 1500
			if h.TTL >= dropTTL {
				want = mtu
			}
			if h.MTU != want {
				t.Errorf("hop %d: mtu_bytes %d, want %d", h.TTL, h.MTU, want)
			}
		}
	}
	tracepathRE := regexp.MustCompile(`(?m)^\s*(\d+)\??:.*pmtu (\d+)`)
	tracerouteRE := regexp.MustCompile(`(?m)^\s*(\d+)\s.*F=(\d+)`)
	scamperRE := regexp.MustCompile(`(?m)^\s*(\d+)\s.*\[mtu: (\d+)\]`)
	for _, v6 := range []bool{false, true} {
		dst := l.ServerAddr(v6)
		t.Run(fmt.Sprintf("v6=%v", v6), func(t *testing.T) {
			check(t, trace(t, dst), v6, false)
			peers := []struct {
				argv []string
				re   *regexp.Regexp
			}{
				{[]string{"tracepath", "-n", dst}, tracepathRE},
				{[]string{"traceroute", "-n", "--mtu", dst}, tracerouteRE},
			}
			if !v6 {
				peers = append(peers, struct {
					argv []string
					re   *regexp.Regexp
				}{[]string{"scamper", "-O", "text", "-I", "trace -M -P udp-paris " + dst}, scamperRE})
			}
			for _, p := range peers {
				if err := l.FlushPMTU(); err != nil {
					t.Fatal(err)
				}
				out := mustRun(t, l, l.Client(), p.argv[0], p.argv[1:]...)
				if ttl, got := linePMTU(string(out.stdout), p.re, 1500); ttl != dropTTL || got != mtu {
					t.Errorf("%s: MTU %d at TTL %d, linecheck %d at TTL %d:\n%s", strings.Join(p.argv, " "), got, ttl, mtu, dropTTL, out.stdout)
				}
			}
		})
	}
	t.Run("silent router", func(t *testing.T) {
		nft := l.Exec(l.Router(link), "nft", "-f", "-")
		nft.Stdin = strings.NewReader("table inet lcmtu {\n chain out {\n  type filter hook output priority 0; policy accept;\n" +
			"  icmp type destination-unreachable icmp code frag-needed drop\n  icmpv6 type packet-too-big drop\n }\n}\n")
		if out, err := nft.CombinedOutput(); err != nil {
			t.Fatalf("nft: %v %s", err, out)
		}
		for _, v6 := range []bool{false, true} {
			check(t, trace(t, l.ServerAddr(v6)), v6, true)
		}
	})
}

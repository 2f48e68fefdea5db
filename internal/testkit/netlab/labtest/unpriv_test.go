package labtest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// nobody runs a command as uid/gid 65534 with no supplementary group and no
// capability at all (none inheritable, and setpriv's uid change clears the
// rest), as the issue spells it.
var nobody = []string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all"}

// worldBinary copies the linecheck binary to a directory that uid 65534 may
// enter (the test binary's own directory is private to root).
func worldBinary(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lc-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(dir, "linecheck")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// listen starts python3's HTTP server on addr:port in the lab's server
// namespace until the test ends.
func listen(t *testing.T, l *netlab.Lab, addr, port string) {
	t.Helper()
	srv := l.Exec(l.Server(), "/usr/bin/python3", "-m", "http.server", "--bind", addr, port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for range 100 {
		out, _ := l.Exec(l.Server(), "ss", "-ltnH", "sport = :"+port).Output()
		if strings.Contains(string(out), port) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("python3 http.server did not listen on %s in the server namespace", port)
}

// setPingGroupRange writes net.ipv4.ping_group_range in the lab's client
// namespace only (the sysctl is per network namespace; the host's is never
// touched).
func setPingGroupRange(t *testing.T, l *netlab.Lab, value string) {
	t.Helper()
	mustRun(t, l, l.Client(), "sysctl", "-qw", "net.ipv4.ping_group_range="+value)
	r := mustRun(t, l, l.Client(), "sysctl", "-n", "net.ipv4.ping_group_range")
	if got := strings.Join(strings.Fields(string(r.stdout)), " "); got != value {
		t.Fatalf("ping_group_range in %s reads %q after writing %q", l.Client(), got, value)
	}
}

// Each unprivileged mode gives what raw sockets give on the same lab path,
// run as uid 65534 with no capability: the same hops, the same sent and
// received counts under nftables' every-10th loss at router 3 (exactly what
// nftables counted as dropped), for ICMP (datagram sockets, where
// ping_group_range allows), UDP and TCP (recverr, whatever it says), IPv4
// and IPv6. Where ping_group_range forbids, ICMP is refused with the sysctl
// and the setcap command while UDP and TCP still run; `ping` without
// privileges uses ICMP datagram sockets where allowed and --tcp always.
func TestUnprivilegedTraceModesEqualRaw(t *testing.T) {
	t.Parallel()
	tool(t, "setpriv")
	const router, cycles = 3, 30
	l, bin := lab(t, netlab.Config{Prefix: "lcltu", Hops: 4, IPv6: true})
	ubin := worldBinary(t, bin)
	listen(t, l, l.ServerAddr(false), "8080")
	run := func(t *testing.T, asNobody bool, v6 bool, proto string) route.Trace {
		t.Helper()
		if err := l.Loss(router, 10, 0); err != nil { // fresh rules: counters and numgen from 0
			t.Fatal(err)
		}
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		args := []string{"-f", "10"}
		if asNobody {
			args = append(args, nobody...)
		}
		args = append(args, ubin, "trace", "--format", "json", fam, "--proto", proto, "--port", "80",
			"--cycles", fmt.Sprint(cycles), "--interval", "10ms", "--timeout", "300ms", l.ServerAddr(v6))
		tr := parseTrace(t, mustRun(t, l, l.Client(), "chrt", args...))
		if got, want := hopAddrs(tr), l.RouterAddrs(v6); !reflect.DeepEqual(got, want) {
			t.Fatalf("nobody=%v %s%s: hops %q, want the lab's %q", asNobody, proto, fam, got, want)
		}
		dropped, err := l.Dropped(router, v6)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tr.Hops {
			want := 0
			if h.TTL >= router {
				want = dropped[h.TTL-router+1]
			}
			if h.Sent != cycles || recv(h) != cycles-want || want != cycles/10 && h.TTL >= router {
				t.Errorf("nobody=%v %s%s hop %d: sent %d recv %d; nftables dropped %d of its probes: want %d sent, %d received (every 10th of %d dropped from router %d on)",
					asNobody, proto, fam, h.TTL, h.Sent, recv(h), want, cycles, cycles-want, cycles, router)
			}
		}
		if !tr.Reached || string(tr.Protocol) != proto {
			t.Errorf("nobody=%v %s%s: reached %v protocol %q", asNobody, proto, fam, tr.Reached, tr.Protocol)
		}
		return tr
	}
	// same compares what a test can compare between two runs: hops,
	// responders, sent, received, loss, late and flags (RTTs differ).
	same := func(t *testing.T, raw, un route.Trace) {
		t.Helper()
		type hop struct {
			TTL, Sent, Recv, Late int
			Loss                  float64
			Addrs                 string
			Flags                 string
		}
		view := func(tr route.Trace) []hop {
			var hs []hop
			for i, h := range tr.Hops {
				hs = append(hs, hop{h.TTL, h.Sent, recv(h), h.Late, h.Loss, hopAddrs(tr)[i], strings.Join(h.Flags, ",")})
			}
			return hs
		}
		if a, b := view(raw), view(un); !reflect.DeepEqual(a, b) {
			t.Errorf("raw mode %+v\nunprivileged mode %s %+v", a, un.Mode, b)
		}
	}
	for _, pgr := range []struct {
		name, value string
		icmpMode    string // "" when refused
	}{{"forbidding", "1 0", ""}, {"allowing", "0 2147483647", "datagram"}} {
		t.Run("ping_group_range="+pgr.name, func(t *testing.T) {
			setPingGroupRange(t, l, pgr.value)
			for _, v6 := range []bool{false, true} {
				for _, p := range []struct{ proto, mode string }{{"icmp", pgr.icmpMode}, {"udp", "recverr"}, {"tcp", "recverr"}} {
					fam := "4"
					if v6 {
						fam = "6"
					}
					t.Run(p.proto+fam, func(t *testing.T) {
						if p.mode == "" {
							r := runExit(t, 2, l, l.Client(), nobody[0], append(nobody[1:], ubin, "trace", "-"+fam, "--proto", "icmp", l.ServerAddr(v6))...)
							msg := string(r.stderr)
							for _, want := range []string{"net.ipv4.ping_group_range=", "setcap cap_net_raw+ep " + ubin, "--proto udp"} {
								if !strings.Contains(msg, want) {
									t.Errorf("icmp trace as nobody with ping_group_range %q: stderr %q lacks %q", pgr.value, msg, want)
								}
							}
							return
						}
						raw := run(t, false, v6, p.proto)
						un := run(t, true, v6, p.proto)
						if raw.Mode != "raw" || string(un.Mode) != p.mode {
							t.Errorf("modes: root %q, nobody %q; want raw and %s", raw.Mode, un.Mode, p.mode)
						}
						same(t, raw, un)
					})
				}
			}
			t.Run("ping", func(t *testing.T) {
				// ICMP echo as nobody works exactly where ping sockets are
				// allowed; connect() with --tcp needs nothing.
				args := append(append([]string{}, nobody[1:]...), ubin, "ping", "--format", "json", "-c", "3", "-i", "0.05", l.ServerAddr(false))
				if pgr.icmpMode == "" {
					r := runExit(t, 2, l, l.Client(), nobody[0], args...)
					if !strings.Contains(string(r.stderr), "ping_group_range") {
						t.Errorf("ping as nobody, ping sockets forbidden: stderr %q, want the sysctl to run", r.stderr)
					}
				} else if d := parsePing(t, mustRun(t, l, l.Client(), nobody[0], args...)); len(d.Results) != 1 || d.Results[0].Recv != 3 {
					t.Errorf("ping as nobody with ping sockets allowed: %+v, want 3 of 3 received", d.Results)
				}
				args = append(append([]string{}, nobody[1:]...), ubin, "ping", "--format", "json", "--tcp", "8080", "-c", "3", "-i", "0.05", l.ServerAddr(false))
				if d := parsePing(t, mustRun(t, l, l.Client(), nobody[0], args...)); len(d.Results) != 1 || d.Results[0].Recv != 3 {
					t.Errorf("ping --tcp 8080 as nobody: %+v, want 3 of 3 received", d.Results)
				}
			})
		})
	}
}

// As uid 65534 with no capability, a flow keeps its one path through the
// ECMP pair at hop 2 in every cycle (its source port is bound once for the
// run), and 32 flows find both paths, for UDP and TCP over IPv4 and IPv6;
// a trace that runs out of TTLs says "max TTL reached", and -m 0 is refused.
func TestUnprivilegedFlowsStayOnOnePath(t *testing.T) {
	t.Parallel()
	tool(t, "setpriv")
	l, bin := lab(t, netlab.Config{Prefix: "lcltv", Hops: 4, IPv6: true, Multipath: true})
	ubin := worldBinary(t, bin)
	asNobody := func(args ...string) []string {
		return append(append(append([]string{}, nobody[1:]...), ubin), args...)
	}
	trace := func(t *testing.T, args ...string) route.Trace {
		t.Helper()
		return parseTrace(t, mustRun(t, l, l.Client(), nobody[0], asNobody(append([]string{"trace", "--format", "json"}, args...)...)...))
	}
	for _, v6 := range []bool{false, true} {
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		alts := l.HopAddrs(v6)[1]
		for _, proto := range []string{"udp", "tcp"} {
			t.Run(proto+fam, func(t *testing.T) {
				tr := trace(t, fam, "--proto", proto, "--cycles", "20", "--interval", "20ms", "--timeout", "500ms", l.ServerAddr(v6))
				if tr.Mode != "recverr" || len(tr.Hops) != 5 {
					t.Fatalf("mode %q, %d hops %q; want recverr and 5 hops", tr.Mode, len(tr.Hops), hopAddrs(tr))
				}
				h2 := tr.Hops[1]
				if len(h2.Responders) != 1 || recv(h2) != 20 {
					t.Errorf("one flow, 20 cycles: hop 2 responders %q with %d replies, want one of %v answering all 20", hopAddrs(tr)[1], recv(h2), alts)
				}
				tr = trace(t, fam, "--proto", proto, "--flows", "32", "--cycles", "2", "--interval", "20ms", "--timeout", "500ms", l.ServerAddr(v6))
				if len(tr.Hops) < 2 {
					t.Fatalf("--flows 32: hops %q", hopAddrs(tr))
				}
				var got []string
				for _, r := range tr.Hops[1].Responders {
					got = append(got, r.Addr)
					// Every flow that saw this responder saw it in both cycles.
					if r.Recv != 2*len(r.Flows) {
						t.Errorf("--flows 32: hop 2 responder %s: %d replies from flows %v, want 2 per flow (a flow never switched paths)", r.Addr, r.Recv, r.Flows)
					}
				}
				want := append([]string(nil), alts...)
				sort.Strings(got)
				sort.Strings(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("--flows 32: hop 2 responders %v, want both alternates %v", got, want)
				}
			})
		}
	}
	t.Run("max-ttl", func(t *testing.T) {
		r := mustRun(t, l, l.Client(), nobody[0], asNobody("trace", "-U", "-m", "3", "--timeout", "300ms", l.ServerAddr(false))...)
		if msg := string(r.stderr); !strings.Contains(msg, "max TTL 3 reached") || strings.Contains(msg, "did not answer") {
			t.Errorf("trace -m 3 on a 5-hop path: stderr %q, want \"max TTL 3 reached\" and no \"did not answer\"", msg)
		}
		if r := runExit(t, 2, l, l.Client(), nobody[0], asNobody("trace", "-m", "0", l.ServerAddr(false))...); !strings.Contains(string(r.stderr), "--max-ttl 0") {
			t.Errorf("trace -m 0: stderr %q, want it refused", r.stderr)
		}
	})
}

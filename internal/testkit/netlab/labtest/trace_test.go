package labtest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

// The hop list of `linecheck trace` is the lab's router list, for ICMP, UDP
// and TCP over IPv4 and IPv6, and it is what traceroute and mtr report on
// the same path.
func TestTraceHopsAreTheLabRoutersAndMatchTracerouteAndMTR(t *testing.T) {
	t.Parallel()
	tool(t, "traceroute")
	tool(t, "mtr")
	l, bin := lab(t, netlab.Config{Prefix: "lclta", Hops: 5, IPv6: true})
	for _, v6 := range []bool{false, true} {
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		want := l.RouterAddrs(v6)
		dst := l.ServerAddr(v6)
		for _, p := range []struct {
			proto      string
			lc         []string
			traceroute []string
			mtr        []string
		}{
			{"icmp", []string{"--proto", "icmp"}, []string{"-I"}, nil},
			{"udp", []string{"--proto", "udp"}, nil, []string{"-u"}},
			{"tcp", []string{"--proto", "tcp", "--port", "80"}, []string{"-T", "-p", "80"}, []string{"-T", "-P", "80"}},
		} {
			t.Run(fmt.Sprintf("%s%s", p.proto, fam), func(t *testing.T) {
				tr := traceJSON(t, l, bin, append(append([]string{fam, "--cycles", "3", "--interval", "50ms", "--timeout", "500ms"}, p.lc...), dst)...)
				got := hopAddrs(tr)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("linecheck trace --proto %s: hops %q, want the lab's %q", p.proto, got, want)
				}
				if !tr.Reached || string(tr.Protocol) != p.proto {
					t.Errorf("reached=%v protocol=%q, want true and %q", tr.Reached, tr.Protocol, p.proto)
				}
				if n := len(tr.Hops); n > 0 && !hasFlag(tr.Hops[n-1], "destination") {
					t.Errorf("last hop flags %v, want destination", tr.Hops[n-1].Flags)
				}
				for _, h := range tr.Hops {
					if h.Sent != 3 || h.Loss != 0 || recv(h) != 3 {
						t.Errorf("hop %d: sent %d recv %d loss %v, want 3, 3, 0", h.TTL, h.Sent, recv(h), h.Loss)
					}
				}

				out := mustRun(t, l, l.Client(), "traceroute", append(append([]string{fam, "-n", "-q", "1", "-w", "2"}, p.traceroute...), dst)...)
				hops, err := netlab.TracerouteHops(string(out.stdout))
				if err != nil {
					t.Fatal(err)
				}
				var tro []string
				for _, h := range hops {
					tro = append(tro, strings.Join(h, "|"))
				}
				if !reflect.DeepEqual(got, tro) {
					t.Errorf("linecheck trace %q, traceroute -n %v %q", got, p.traceroute, tro)
				}

				out = mustRun(t, l, l.Client(), "mtr", append(append([]string{fam, "-n", "-r", "-c", "2", "-i", "0.1", "--json"}, p.mtr...), dst)...)
				hubs, err := netlab.MTRReport(out.stdout)
				if err != nil {
					t.Fatal(err)
				}
				var mtr []string
				for _, h := range hubs {
					mtr = append(mtr, h.Host)
				}
				if !reflect.DeepEqual(got, mtr) {
					t.Errorf("linecheck trace %q, mtr -r %v %q", got, p.mtr, mtr)
				}
			})
		}
	}
}

// With two equal-cost paths at hop 2 (r2 and r2b, L4 hash), one flow keeps
// one path in every cycle and 32 flows find both. The flows' source ports
// start at a random base, so which path a flow takes changes from run to
// run: 8 flows all hashed onto one path about once in 128 runs (1 in 32 runs
// of the four cases), 32 flows do so about once in two billion.
func TestTraceFlowStaysOnOnePathAndFlowsFindBoth(t *testing.T) {
	t.Parallel()
	l, bin := lab(t, netlab.Config{Prefix: "lcltb", Hops: 4, IPv6: true, Multipath: true})
	for _, v6 := range []bool{false, true} {
		fam := "-4"
		if v6 {
			fam = "-6"
		}
		alts := l.HopAddrs(v6)[1]
		for _, proto := range []string{"udp", "tcp"} {
			t.Run(proto+fam, func(t *testing.T) {
				tr := traceJSON(t, l, bin, fam, "--proto", proto, "--cycles", "20", "--interval", "20ms", "--timeout", "500ms", l.ServerAddr(v6))
				if len(tr.Hops) != 5 {
					t.Fatalf("%d hops, want 5: %q", len(tr.Hops), hopAddrs(tr))
				}
				h2 := tr.Hops[1]
				if len(h2.Responders) != 1 || recv(h2) != 20 {
					t.Errorf("one flow, 20 cycles: hop 2 responders %q with %d replies, want one of %v answering all 20", hopAddrs(tr)[1], recv(h2), alts)
				} else if a := h2.Responders[0].Addr; a != alts[0] && a != alts[1] {
					t.Errorf("hop 2 answered from %s, want one of %v", a, alts)
				}

				tr = traceJSON(t, l, bin, fam, "--proto", proto, "--flows", "32", "--cycles", "3", "--interval", "20ms", "--timeout", "500ms", l.ServerAddr(v6))
				var got []string
				for _, r := range tr.Hops[1].Responders {
					got = append(got, r.Addr)
				}
				sort.Strings(got)
				want := append([]string(nil), alts...)
				sort.Strings(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("--flows 32: hop 2 responders %v, want both alternates %v", got, want)
				}
				for i, h := range tr.Hops {
					if i != 1 && len(h.Responders) != 1 {
						t.Errorf("--flows 32: hop %d responders %q, want exactly %s", h.TTL, hopAddrs(tr)[i], l.RouterAddrs(v6)[i])
					}
				}
			})
		}
	}
}

// Every 10th packet entering router 3 from the client side is dropped,
// counted per TTL, so over 30 cycles hops 3, 4 and the destination lose
// exactly 3 probes each (loss 0.1) and hops 1 and 2 none; nftables' own
// per-TTL drop counters are the exact expectation. Random 10 % loss over
// 2,000 cycles lands within ±3 points and again equals the kernel's count.
func TestTraceMeasuresNftablesLossExactlyFromItsHop(t *testing.T) {
	t.Parallel()
	const router = 3
	l, bin := lab(t, netlab.Config{Prefix: "lcltc", Hops: 4, IPv6: true})
	check := func(t *testing.T, v6 bool, args []string, cycles int) (lossAt []float64) {
		t.Helper()
		// Real-time priority: with short timeouts a reply must not turn late
		// because this shared machine kept linecheck off the CPU.
		tr := parseTrace(t, mustRun(t, l, l.Client(), "chrt", append([]string{"-f", "10", bin, "trace", "--format", "json"},
			append(args, l.ServerAddr(v6))...)...))
		if got, want := hopAddrs(tr), l.RouterAddrs(v6); !reflect.DeepEqual(got, want) {
			t.Fatalf("hops %q, want %q", got, want)
		}
		dropped, err := l.Dropped(router, v6)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tr.Hops {
			// A probe with TTL h reaches router 3 with TTL h-2.
			want := 0
			if h.TTL >= router {
				want = dropped[h.TTL-router+1]
			}
			if h.Sent != cycles || recv(h) != cycles-want {
				t.Errorf("hop %d: sent %d recv %d, want %d sent and %d received (nftables dropped %d at router %d)",
					h.TTL, h.Sent, recv(h), cycles, cycles-want, want, router)
			}
			if wantLoss := float64(want) / float64(cycles); math.Abs(h.Loss-wantLoss) > 1e-9 {
				t.Errorf("hop %d: loss %v, want %v", h.TTL, h.Loss, wantLoss)
			}
			lossAt = append(lossAt, h.Loss)
		}
		return lossAt
	}
	for _, c := range []struct {
		name  string
		v6    bool
		proto string
	}{{"icmp-4", false, "icmp"}, {"udp-6", true, "udp"}} {
		t.Run("every10th/"+c.name, func(t *testing.T) {
			if err := l.Loss(router, 10, 0); err != nil { // fresh rules: counters and numgen from 0
				t.Fatal(err)
			}
			fam := "-4"
			if c.v6 {
				fam = "-6"
			}
			loss := check(t, c.v6, []string{fam, "--proto", c.proto, "--cycles", "30", "--interval", "10ms", "--timeout", "300ms"}, 30)
			want := []float64{0, 0, 0.1, 0.1, 0.1}
			for i := range want {
				// 1 − 27/30 is 0.0999…98 in floating point.
				if i >= len(loss) || math.Abs(loss[i]-want[i]) > 1e-9 {
					t.Errorf("loss per hop %v, want exactly %v", loss, want)
					break
				}
			}
		})
	}
	t.Run("random10pct", func(t *testing.T) {
		if err := l.Loss(router, 0, 10); err != nil {
			t.Fatal(err)
		}
		loss := check(t, false, []string{"--proto", "icmp", "--cycles", "2000", "--interval", "2ms", "--timeout", "100ms"}, 2000)
		for i, x := range loss {
			if i+1 >= router && math.Abs(x-0.10) > 0.03 {
				t.Errorf("hop %d: random loss %.4f over 2000 probes, want 0.10 ± 0.03", i+1, x)
			}
		}
	})
}

// A router with the kernel's ICMP rate limiting back on answers only part of
// the probes that expire there; the trace flags that hop icmp-rate-limited,
// and neither later hops nor the destination show loss. mtr on the same lab
// sees the same false loss at that hop (the misreading the flag prevents),
// and `trace --replay` of mtr's JSON reproduces mtr's figures and flags the
// same hop.
func TestTraceFlagsTheRateLimitedHop(t *testing.T) {
	t.Parallel()
	tool(t, "mtr")
	const router = 2
	l, bin := lab(t, netlab.Config{Prefix: "lcltd", Hops: 4})
	if err := l.ICMPRateLimit(router, true); err != nil {
		t.Fatal(err)
	}
	tr := traceJSON(t, l, bin, "--cycles", "40", "--interval", "25ms", "--timeout", "300ms", l.ServerAddr(false))
	if got, want := hopAddrs(tr), l.RouterAddrs(false); !reflect.DeepEqual(got, want) {
		t.Fatalf("hops %q, want %q", got, want)
	}
	for _, h := range tr.Hops {
		limited := hasFlag(h, "icmp-rate-limited")
		if h.TTL == router {
			if !limited || h.Loss < 0.5 {
				t.Errorf("rate-limited hop %d: loss %v flags %v, want loss ≥ 0.5 and icmp-rate-limited", h.TTL, h.Loss, h.Flags)
			}
			continue
		}
		if limited || h.Loss != 0 {
			t.Errorf("hop %d: loss %v flags %v, want no loss and no icmp-rate-limited flag", h.TTL, h.Loss, h.Flags)
		}
	}
	out := mustRun(t, l, l.Client(), "mtr", "-n", "-r", "-c", "40", "-i", "0.025", "--json", l.ServerAddr(false))
	hubs, err := netlab.MTRReport(out.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if len(hubs) != 5 || hubs[router-1].Loss < 50 || hubs[4].Loss != 0 {
		t.Errorf("mtr on the same lab: %+v, want ≥ 50%% loss at hop %d only", hubs, router)
	}

	// trace --replay reads that mtr --json report: the same hops, sent
	// counts and loss, and the same verdict on the rate-limited hop.
	file := filepath.Join(t.TempDir(), "mtr.json")
	if err := os.WriteFile(file, out.stdout, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := parseTrace(t, start(l, l.Client(), bin, "trace", "--replay", file, "--format", "json")())
	if len(rep.Hops) != len(hubs) {
		t.Fatalf("replay of mtr --json: %d hops, mtr has %d", len(rep.Hops), len(hubs))
	}
	for i, h := range rep.Hops {
		m := hubs[i]
		if hopAddrs(rep)[i] != m.Host || h.Sent != m.Sent || math.Abs(h.Loss-m.Loss/100) > 0.0005 {
			t.Errorf("replay hop %d: %s sent %d loss %v; mtr: %s sent %d loss %v%%", h.TTL, hopAddrs(rep)[i], h.Sent, h.Loss, m.Host, m.Sent, m.Loss)
		}
		if limited := hasFlag(h, "icmp-rate-limited"); limited != (h.TTL == router) {
			t.Errorf("replay hop %d: flags %v, want icmp-rate-limited only at hop %d", h.TTL, h.Flags, router)
		}
	}
}

// --interval is the time between the starts of two cycles (mtr style): a
// probe that is lost must not hold the next cycle back for its --timeout.
// 200 cycles 5 ms apart with 1 s timeouts take about 1 s + 1 s; waiting out
// the timeout of every cycle with a lost probe (27 % of them at 10 % loss
// on three hops) would take about a minute.
func TestTraceKeepsTheCycleIntervalUnderLoss(t *testing.T) {
	t.Parallel()
	l, bin := lab(t, netlab.Config{Prefix: "lclti", Hops: 4})
	if err := l.Loss(3, 0, 10); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	tr := traceJSON(t, l, bin, "--cycles", "200", "--interval", "5ms", "--timeout", "1s", l.ServerAddr(false))
	took := time.Since(begin)
	if n := len(tr.Hops); n != 5 || tr.Hops[n-1].Sent != 200 {
		t.Fatalf("hops %q, want 5 with 200 probes each", hopAddrs(tr))
	}
	// 5× the expected 2 s: a loaded machine cannot explain a miss.
	if took > 10*time.Second {
		t.Errorf("200 cycles at 5 ms with 10%% loss took %v, want about 2 s: lost probes delay the next cycle by --timeout", took.Round(time.Millisecond))
	}
}

// A router that drops its own time-exceeded messages: at 100 % the hop has
// "responders":[] and loss 1 while later hops answer every probe; at 30 %
// the hop receives exactly what nftables let through, is flagged
// icmp-rate-limited (its loss does not carry on), and the destination loses
// nothing.
func TestTraceHopOnlyLoss(t *testing.T) {
	t.Parallel()
	const router = 2
	l, bin := lab(t, netlab.Config{Prefix: "lcltj", Hops: 4, IPv6: true})
	t.Run("silent", func(t *testing.T) {
		if err := l.ICMPLoss(router, 100); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, l, l.Client(), bin, "trace", "--format", "json", "--cycles", "5", "--interval", "20ms", "--timeout", "300ms", l.ServerAddr(false))
		var raw struct {
			Hops []struct {
				Responders json.RawMessage `json:"responders"`
			} `json:"hops"`
		}
		if err := json.Unmarshal(r.stdout, &raw); err != nil || len(raw.Hops) < router {
			t.Fatalf("trace JSON: %v\n%s", err, r)
		}
		if got := string(raw.Hops[router-1].Responders); got != "[]" {
			t.Errorf("silent hop %d: \"responders\":%s, want []", router, got)
		}
		tr := parseTrace(t, r)
		want := l.RouterAddrs(false)
		want[router-1] = ""
		if got := hopAddrs(tr); !reflect.DeepEqual(got, want) {
			t.Fatalf("hops %q, want %q", got, want)
		}
		for _, h := range tr.Hops {
			wantLoss := 0.0
			if h.TTL == router {
				wantLoss = 1
			}
			if h.Sent != 5 || h.Loss != wantLoss {
				t.Errorf("hop %d: sent %d loss %v, want 5 and %v", h.TTL, h.Sent, h.Loss, wantLoss)
			}
		}
		if !tr.Reached {
			t.Error("reached false behind a silent hop")
		}
	})
	t.Run("30pct", func(t *testing.T) {
		if err := l.ICMPLoss(router, 30); err != nil {
			t.Fatal(err)
		}
		for _, v6 := range []bool{false, true} {
			before, err := l.ICMPDropped(router)
			if err != nil {
				t.Fatal(err)
			}
			fam := "-4"
			if v6 {
				fam = "-6"
			}
			tr := traceJSON(t, l, bin, fam, "--cycles", "100", "--interval", "10ms", "--timeout", "300ms", l.ServerAddr(v6))
			after, err := l.ICMPDropped(router)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := hopAddrs(tr), l.RouterAddrs(v6); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: hops %q, want %q", fam, got, want)
			}
			for _, h := range tr.Hops {
				limited := hasFlag(h, "icmp-rate-limited")
				if h.TTL == router {
					if d := after - before; recv(h) != 100-d || d == 0 || !limited {
						t.Errorf("%s hop %d: recv %d of 100, flags %v; nftables dropped %d of its time-exceeded: want recv %d and icmp-rate-limited",
							fam, h.TTL, recv(h), h.Flags, d, 100-d)
					}
					continue
				}
				if recv(h) != 100 || limited {
					t.Errorf("%s hop %d: recv %d of 100, flags %v, want 100 and no icmp-rate-limited", fam, h.TTL, recv(h), h.Flags)
				}
			}
		}
	})
}

// On a lossless path whose round trip is well under a millisecond, every
// reply is on time whatever --timeout is, as long as it is longer than the
// round trip: 100 cycles 10 ms apart with --timeout 50ms receive 100 of 100
// at every hop.
func TestTraceRepliesOnAFastPathAreNeverLate(t *testing.T) {
	t.Parallel()
	l, bin := lab(t, netlab.Config{Prefix: "lcltl", Hops: 4})
	for _, timeout := range []string{"50ms", "300ms"} {
		tr := traceJSON(t, l, bin, "--cycles", "100", "--interval", "10ms", "--timeout", timeout, l.ServerAddr(false))
		if got, want := hopAddrs(tr), l.RouterAddrs(false); !reflect.DeepEqual(got, want) {
			t.Errorf("--timeout %s: hops %q, want %q", timeout, got, want)
			continue
		}
		for _, h := range tr.Hops {
			if h.Sent != 100 || recv(h) != 100 || h.Loss != 0 {
				t.Errorf("--timeout %s: hop %d sent %d recv %d loss %v, want 100, 100, 0 (path RTT < 1 ms)", timeout, h.TTL, h.Sent, recv(h), h.Loss)
			}
		}
	}
}

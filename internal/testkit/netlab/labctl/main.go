// Command labctl holds a netlab lab up until it is interrupted, for running
// the lab by hand and for the benchmark scripts in bench/probe.
//
//	go build -o /tmp/labctl ./internal/testkit/netlab/labctl
//	sudo /tmp/labctl -prefix lab -hops 6 -ipv6 -tun 3 -delay 50ms -jitter 5ms
//	# in another shell:
//	sudo ip netns exec labc traceroute -n 10.77.6.2
//
// It prints the namespaces and addresses, then a line "ready", and removes
// the lab on SIGINT or SIGTERM. -loss-router K -loss-every N (or -loss-pct P)
// adds nftables loss at router K; -icmp-limit K turns the kernel's ICMP rate
// limiting back on at router K. -topology diamond2|diamond3|nested builds
// equal-cost paths (printed as "path N: ..."), -hash l4 switches the
// routers to the layer-4 hash policy 1, and -wire r2b:40ms:0.05 puts a
// userspace wire with 40 ms delay and 5 % loss into branch r2b.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linecheck/linecheck/internal/testkit/netlab"
)

func main() {
	var c netlab.Config
	flag.StringVar(&c.Prefix, "prefix", "lab", "namespace name prefix")
	flag.IntVar(&c.Hops, "hops", 4, "routers between client and server (1..50)")
	flag.BoolVar(&c.IPv6, "ipv6", false, "add IPv6 (fd77::/16) next to IPv4")
	flag.IntVar(&c.TUNLink, "tun", 0, "link index (1..hops) that becomes the userspace delay link; 0 = none")
	flag.DurationVar(&c.Delay, "delay", 0, "client→server delay on the TUN link")
	flag.DurationVar(&c.Jitter, "jitter", 0, "uniform ± jitter on the TUN link")
	flag.Float64Var(&c.Loss, "loss", 0, "fraction of client→server packets the TUN link drops")
	flag.Float64Var(&c.Dup, "dup", 0, "fraction of client→server packets the TUN link duplicates")
	flag.Float64Var(&c.Reorder, "reorder", 0, "fraction of client→server packets the TUN link sends undelayed")
	flag.Int64Var(&c.Seed, "seed", 1, "random seed of the TUN link")
	flag.BoolVar(&c.Multipath, "multipath", false, "add r2b, an equal-cost alternative to r2")
	topo := flag.String("topology", "", "ECMP shape: diamond2 (as -multipath), diamond3 or nested")
	hash := flag.String("hash", "", "routers' multipath hash: l4 (fib_multipath_hash_policy=1), l3 (policy 0); default custom fields (policy 3)")
	flag.Func("wire", "ROUTER:DELAY[:LOSS]: a userspace wire into branch router ROUTER (r2, r2b, ...) with that delay and loss fraction; repeatable", func(v string) error {
		f := strings.Split(v, ":")
		if len(f) < 2 || len(f) > 3 {
			return fmt.Errorf("want ROUTER:DELAY[:LOSS], e.g. r2b:40ms:0.05")
		}
		w := netlab.Wire{Into: f[0]}
		var err error
		if w.Delay, err = time.ParseDuration(f[1]); err != nil {
			return err
		}
		if len(f) == 3 {
			if w.Loss, err = strconv.ParseFloat(f[2], 64); err != nil {
				return err
			}
		}
		w.Seed = int64(len(c.Wires) + 1)
		c.Wires = append(c.Wires, w)
		return nil
	})
	lossRouter := flag.Int("loss-router", 0, "router whose incoming client-side packets nftables drops")
	lossEvery := flag.Int("loss-every", 0, "with -loss-router: drop every Nth packet")
	lossPct := flag.Float64("loss-pct", 0, "with -loss-router: drop this percentage at random")
	icmpLimit := flag.Int("icmp-limit", 0, "router with the kernel's ICMP rate limiting switched back on")
	flag.Parse()
	c.Topology, c.Hash = netlab.Topology(*topo), netlab.HashPolicy(*hash)
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "labctl: must run as root (network namespaces)")
		os.Exit(2)
	}
	l, err := netlab.Up(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "labctl:", err)
		os.Exit(1)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "labctl:", err)
		_ = l.Down()
		os.Exit(1)
	}
	if *lossRouter != 0 {
		if err := l.Loss(*lossRouter, *lossEvery, *lossPct); err != nil {
			fail(err)
		}
	}
	if *icmpLimit != 0 {
		if err := l.ICMPRateLimit(*icmpLimit, true); err != nil {
			fail(err)
		}
	}
	fmt.Printf("namespaces: %s\n", strings.Join(l.Namespaces(), " "))
	fmt.Printf("client %s: %s", l.Client(), l.ClientAddr(false))
	if c.IPv6 {
		fmt.Printf(" %s", l.ClientAddr(true))
	}
	fmt.Printf("\nserver %s: %s", l.Server(), l.ServerAddr(false))
	if c.IPv6 {
		fmt.Printf(" %s", l.ServerAddr(true))
	}
	fmt.Printf("\nhops: %s\n", hops(l.HopAddrs(false)))
	if c.IPv6 {
		fmt.Printf("hops6: %s\n", hops(l.HopAddrs(true)))
	}
	if c.Topology != "" || c.Multipath {
		for i, p := range l.Paths(false) {
			fmt.Printf("path %d: %s\n", i+1, strings.Join(p, " "))
		}
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	if err := l.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "labctl:", err)
		os.Exit(1)
	}
	fmt.Fprint(os.Stderr, l.TUNStats())
}

func hops(h [][]string) string {
	var parts []string
	for _, alts := range h {
		parts = append(parts, strings.Join(alts, "|"))
	}
	return strings.Join(parts, " ")
}

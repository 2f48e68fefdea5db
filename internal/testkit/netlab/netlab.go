// Package netlab builds a multi-hop test network out of Linux network
// namespaces, for tests that must see real routers, real ICMP and real tools
// (ping, traceroute, mtr) on a path they control.
//
// Topology (N = Config.Hops routers, namespaces named after Config.Prefix):
//
//	<p>c --link0-- <p>r1 --link1-- <p>r2 ... <p>rN --linkN-- <p>s
//	client                                                  server
//
// Link i is 10.77.i.0/24 and fd77:0:0:i::/64; its left end (client side) is
// .1 / ::1, its right end .2 / ::2. Router k answers a traceroute from its
// client-facing address 10.77.(k-1).2, so hop k of a trace is router k and
// the server 10.77.N.2 is hop N+1. Routers forward, and nobody has a default
// route: the client and server route only 10.77.0.0/16 and fd77::/16, so a
// probe sent anywhere else fails locally with "network is unreachable".
//
// Every namespace gets the settings a test of a prober needs (and which the
// kernel defaults get wrong for that purpose): ICMP error rate limiting off
// (icmp_ratelimit=0, icmp_ratemask=0, a huge icmp_msgs_per_sec and burst,
// net.ipv6.icmp.ratelimit=0), ping_group_range "0 2147483647" (unprivileged
// ICMP datagram sockets allowed), no duplicate address detection, rp_filter
// off, and an L4 multipath hash over the header fields (policy 3, see
// optionalSysctls) with a fixed hash seed so that ECMP choices repeat from
// run to run.
//
// Impairments:
//   - Config.TUNLink replaces one veth link with a userspace wire (the tunlink
//     program in ./tunlink, built without -race) that delays, jitters, drops,
//     duplicates and reorders client→server packets. This kernel has no netem.
//   - Lab.Loss drops packets entering a router from the client side with
//     nftables, either every Nth (numgen inc) or at random.
//   - Lab.ICMPRateLimit turns the kernel's ICMP rate limiting back on at one
//     router, the classic cause of false "loss" at a hop in mtr.
//
// Config.Topology adds equal-cost paths beside the chain (see Topology):
// Diamond2 (also Config.Multipath) a second router r2b parallel to r2
// (links 10.77.100.0/24 from r1 and 10.77.101.0/24 to r3), Diamond3 a third
// (r2c), Nested a branch r2b that splits again over r3b and r3c. A
// splitting router spreads the flows over its equal-cost next hops with a
// multipath route hashed on addresses and ports (Config.Hash chooses the
// kernel's hash policy). Replies always return by the chain, so each router
// answers from one address. Paths lists the paths; FlowPaths asks the
// routers' kernels (`ip route get`) where given flows go, the oracle of a
// multipath trace. Config.Wires puts a userspace wire with its own delay
// and loss into a branch.
//
// Everything needs root. Up first removes what a crashed run with the same
// prefix left behind; Down deletes the namespaces and stops, by PID, the
// processes the lab started. Use a distinct prefix per test package so that
// packages can run in parallel.
//
//	lab, err := netlab.Up(netlab.Config{Prefix: "lcxx", Hops: 4})
//	if err != nil { ... }
//	defer lab.Down()
//	out, err := lab.Exec(lab.Client(), "traceroute", "-n", lab.ServerAddr(false)).CombinedOutput()
package netlab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Config describes a lab.
type Config struct {
	// Prefix names the namespaces (<Prefix>c, <Prefix>r1…, <Prefix>s):
	// a lowercase letter and up to 7 more of [a-z0-9].
	Prefix string
	// Hops is the number of routers between client and server (1..50).
	Hops int
	// IPv6 adds the fd77::/16 addresses and routes next to the IPv4 ones.
	IPv6 bool
	// TUNLink, when not 0, is the index of the link (1..Hops) that becomes a
	// userspace link with the impairments below; 0 means none. Link i joins
	// router i and router i+1 (link Hops joins the last router and the server).
	TUNLink int
	// Delay and Jitter (uniform ±Jitter) are added to client→server packets
	// on the TUN link, so round-trip times grow by Delay.
	Delay, Jitter time.Duration
	// Loss, Dup and Reorder are fractions 0..1 of client→server packets on the
	// TUN link that are dropped, sent twice, or sent without delay (so that
	// they overtake delayed ones).
	Loss, Dup, Reorder float64
	// Seed seeds the TUN link's random draws (0 means 1).
	Seed int64
	// Change, when set, changes the TUN link's delay, jitter and loss at a
	// scheduled time (needs TUNLink).
	Change *Change
	// Multipath adds the parallel router r2b (needs Hops >= 3); the same as
	// Topology Diamond2.
	Multipath bool
	// Topology is the lab's shape: Chain (the default), Diamond2, Diamond3
	// or Nested.
	Topology Topology
	// Hash is the routers' multipath hash policy (default HashFields).
	Hash HashPolicy
	// Wires are userspace links into the branches of an ECMP topology, each
	// with its own delay and loss (Wire.Into names the branch's router).
	Wires []Wire
}

// Lab is a running lab. Its methods are safe for concurrent use.
type Lab struct {
	cfg   Config
	nodes []*node // client, r1..rN, server, then r2b with Multipath
	links []*link

	mu      sync.Mutex
	tuns    []*tunProc // one per TUN link
	execs   []*exec.Cmd
	downErr error
	down    bool
}

var prefixRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,7}$`)

// Up builds the lab described by cfg. It first removes whatever a previous
// run with the same prefix left behind; if building fails halfway it removes
// what it made.
func Up(cfg Config) (*Lab, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if err := shareNetnsDir(); err != nil {
		return nil, fmt.Errorf("netlab %s: %w", cfg.Prefix, err)
	}
	if err := removeLeftovers(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("netlab %s: removing leftovers: %w", cfg.Prefix, err)
	}
	l := &Lab{cfg: cfg}
	l.plan()
	if err := l.build(); err != nil {
		_ = l.Down()
		return nil, fmt.Errorf("netlab %s: %w", cfg.Prefix, err)
	}
	return l, nil
}

// UpForTest is Up for tests: it skips t when not root (RequireRoot), fails t
// when the lab cannot be built, and tears the lab down in t.Cleanup.
func UpForTest(t testing.TB, cfg Config) *Lab {
	t.Helper()
	RequireRoot(t)
	l, err := Up(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Errorf("lab down: %v", err)
		}
	})
	return l
}

// RequireRoot skips t with the reason under -short (go test -short builds no
// lab: a lab test takes seconds, and two runs of one test binary would tear
// down each other's namespaces of the same prefix) and when the process is
// not root: the lab creates network namespaces, veth pairs, TUN devices and
// nftables rules.
func RequireRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("netlab: -short skips the lab tests (they build network namespaces); run without -short, as root, to include them")
	}
	if os.Geteuid() != 0 {
		t.Skip("netlab: needs root to create network namespaces, veth/TUN links and nftables rules; run the tests as root (CI does)")
	}
}

func (c Config) check() error {
	if !prefixRE.MatchString(c.Prefix) {
		return fmt.Errorf("netlab: prefix %q: want a lowercase letter and up to 7 more of [a-z0-9]", c.Prefix)
	}
	if c.Hops < 1 || c.Hops > 50 {
		return fmt.Errorf("netlab %s: hops %d: want 1..50", c.Prefix, c.Hops)
	}
	if c.TUNLink < 0 || c.TUNLink > c.Hops {
		return fmt.Errorf("netlab %s: TUN link %d: want 0 (none) or 1..%d", c.Prefix, c.TUNLink, c.Hops)
	}
	if err := c.checkECMP(); err != nil {
		return err
	}
	for name, p := range map[string]float64{"loss": c.Loss, "dup": c.Dup, "reorder": c.Reorder} {
		if p < 0 || p > 1 {
			return fmt.Errorf("netlab %s: %s %v: want a fraction 0..1", c.Prefix, name, p)
		}
	}
	if c.Jitter > c.Delay {
		return fmt.Errorf("netlab %s: jitter %v larger than delay %v", c.Prefix, c.Jitter, c.Delay)
	}
	if ch := c.Change; ch != nil {
		if ch.At.IsZero() {
			return fmt.Errorf("netlab %s: change: no time (Change.At)", c.Prefix)
		}
		if ch.Loss < 0 || ch.Loss > 1 {
			return fmt.Errorf("netlab %s: change: loss %v: want a fraction 0..1", c.Prefix, ch.Loss)
		}
		if ch.Jitter > ch.Delay {
			return fmt.Errorf("netlab %s: change: jitter %v larger than delay %v", c.Prefix, ch.Jitter, ch.Delay)
		}
	}
	if c.TUNLink == 0 && (c.Delay != 0 || c.Loss != 0 || c.Dup != 0 || c.Reorder != 0 || c.Change != nil) {
		return fmt.Errorf("netlab %s: delay, loss, dup and reorder need a TUN link (Config.TUNLink)", c.Prefix)
	}
	return nil
}

// Config returns the configuration the lab was built with.
func (l *Lab) Config() Config { return l.cfg }

// Client returns the client's namespace name.
func (l *Lab) Client() string { return l.nodes[0].name }

// Server returns the server's namespace name.
func (l *Lab) Server() string { return l.nodes[l.cfg.Hops+1].name }

// Router returns router k's namespace name (1..Hops).
func (l *Lab) Router(k int) string {
	if k < 1 || k > l.cfg.Hops {
		panic(fmt.Sprintf("netlab: router %d out of 1..%d", k, l.cfg.Hops))
	}
	return l.nodes[k].name
}

// Namespaces returns every namespace of the lab.
func (l *Lab) Namespaces() []string {
	out := make([]string, len(l.nodes))
	for i, n := range l.nodes {
		out[i] = n.name
	}
	return out
}

// ClientAddr returns the client's address (10.77.0.1 or fd77::1).
func (l *Lab) ClientAddr(v6 bool) string { return addr(v6, 0, 1) }

// ServerAddr returns the server's address (10.77.N.2 or fd77:0:0:N::2).
func (l *Lab) ServerAddr(v6 bool) string { return addr(v6, l.cfg.Hops, 2) }

// RouterAddrs returns, per hop, the address a trace from the client sees
// along the chain: element k-1 is router k's client-facing address, the
// last element is the server. In an ECMP topology these are the first
// path's (see HopAddrs and Paths for the others).
func (l *Lab) RouterAddrs(v6 bool) []string {
	out := make([]string, 0, l.cfg.Hops+1)
	for k := 1; k <= l.cfg.Hops; k++ {
		out = append(out, addr(v6, k-1, 2))
	}
	return append(out, l.ServerAddr(v6))
}

// HopAddrs returns, per hop, every address that can answer at that hop, in
// the order of Paths (the chain's first): one each on a chain; with
// Diamond2, hop 2 is r2 and r2b, in that order.
func (l *Lab) HopAddrs(v6 bool) [][]string {
	if l.cfg.topology() == Chain {
		var out [][]string
		for _, a := range l.RouterAddrs(v6) {
			out = append(out, []string{a})
		}
		return out
	}
	var out [][]string
	for _, p := range l.Paths(v6) {
		for i, a := range p {
			if i == len(out) {
				out = append(out, nil)
			}
			if !slices.Contains(out[i], a) {
				out[i] = append(out[i], a)
			}
		}
	}
	return out
}

// Exec returns a command that runs name with args inside namespace ns (via
// `ip netns exec`). Down kills it by PID if it is still running then.
func (l *Lab) Exec(ns string, name string, args ...string) *exec.Cmd {
	cmd := nsCommand(ns, name, args...)
	l.mu.Lock()
	l.execs = append(l.execs, cmd)
	l.mu.Unlock()
	return cmd
}

// TUNStats returns what the TUN link programs have written to stderr so far
// (their packet counters appear there when they stop, that is after Down).
func (l *Lab) TUNStats() string {
	var b strings.Builder
	for _, t := range l.tuns {
		b.WriteString(t.stderr.String())
	}
	return b.String()
}

// Down stops the processes the lab started (by PID) and deletes its
// namespaces. Calling it again returns the first result.
func (l *Lab) Down() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return l.downErr
	}
	l.down = true
	var errs []error
	for _, c := range l.execs {
		if c.Process != nil && c.ProcessState == nil {
			// Kill, do not Wait: the caller owns the Cmd and may be waiting.
			_ = c.Process.Kill()
		}
	}
	for _, t := range l.tuns {
		if err := stopProcess(t.cmd, 3*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stopping TUN link %d: %w", t.link.idx, err))
		}
	}
	for i := len(l.nodes) - 1; i >= 0; i-- {
		nd := l.nodes[i]
		if nd.nl != nil {
			nd.nl.Close()
		}
		if nd.handle.IsOpen() {
			_ = nd.handle.Close()
		}
		if err := deleteNS(nd.name); err != nil {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(pidFile(l.cfg.Prefix))
	l.downErr = errors.Join(errs...)
	return l.downErr
}

// stopProcess sends SIGTERM, waits up to grace, then SIGKILL.
func stopProcess(c *exec.Cmd, grace time.Duration) error {
	if c.Process == nil {
		return nil
	}
	_ = c.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(grace):
		if err := c.Process.Kill(); err != nil {
			return fmt.Errorf("kill pid %d: %w", c.Process.Pid, err)
		}
		<-done
		return nil
	}
}

// addr returns the address of end (1 left, 2 right) of link i.
func addr(v6 bool, link, end int) string {
	if v6 {
		// The link index is written with decimal digits into a hex group so
		// that link 12 reads fd77:0:0:12::1; ParseIP/String gives the
		// canonical form tools print (fd77::1 for link 0).
		return net.ParseIP("fd77:0:0:" + strconv.Itoa(link) + "::" + strconv.Itoa(end)).String()
	}
	return "10.77." + strconv.Itoa(link) + "." + strconv.Itoa(end)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}

func nsCommand(ns string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

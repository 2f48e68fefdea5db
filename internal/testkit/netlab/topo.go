package netlab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// hashSeed fixes the ECMP hash so that a flow takes the same path in every
// run. Each router hashes with its own seed (hashSeed + 7919 per node after
// r1, see hashSysctls): with one seed for all, a second split behind the
// first (Nested: r2b) sees only flows whose hash already sent them its way
// at r1, and the same hash then sends all of them to the same next hop
// (ECMP polarisation: r3b was never used).
const hashSeed = 20771

type node struct {
	name   string
	short  string // the name without the prefix: c, r1, r2b, s
	router bool
	depth  int   // hops from the client
	up     *link // the link replies to the client leave by (nil: client)
	handle netns.NsHandle
	nl     *netlink.Handle
	routes []route
}

type link struct {
	idx         int // subnet index: 10.77.idx.0/24
	left, right *node
	ifL, ifR    string
	tun         bool
	wire        *Wire // the impairments of a TUN link
	// deprecateR marks the right end's IPv6 address deprecated: the right
	// node has another, preferred link toward the client (see configIf).
	deprecateR bool
}

// route sends subnet (a link index, or -1 for the whole lab) through the
// gateways, each given as (link index, end).
type route struct {
	subnet int
	gws    [][2]int
}

// plan lays out nodes, links and routes; build makes them.
func (l *Lab) plan() {
	n := l.cfg.Hops
	p := l.cfg.Prefix
	for k := 0; k <= n+1; k++ {
		nd := &node{router: k >= 1 && k <= n, handle: -1, depth: k}
		switch {
		case k == 0:
			nd.short = "c"
		case k == n+1:
			nd.short = "s"
		default:
			nd.short = "r" + strconv.Itoa(k)
		}
		nd.name = p + nd.short
		l.nodes = append(l.nodes, nd)
	}
	for i := 0; i <= n; i++ {
		lk := &link{idx: i, left: l.nodes[i], right: l.nodes[i+1]}
		lk.ifL, lk.ifR = "n"+strconv.Itoa(i)+"a", "n"+strconv.Itoa(i)+"b"
		l.nodes[i+1].up = lk
		l.links = append(l.links, lk)
	}
	if c := l.cfg; c.TUNLink != 0 {
		l.links[c.TUNLink].setWire(&Wire{Delay: c.Delay, Jitter: c.Jitter, Loss: c.Loss, Dup: c.Dup, Reorder: c.Reorder, Seed: c.Seed, Change: c.Change})
	}
	// Client and server: one route for the whole lab, no default route.
	l.nodes[0].routes = []route{{-1, [][2]int{{0, 2}}}}
	l.nodes[n+1].routes = []route{{-1, [][2]int{{n, 1}}}}
	for k := 1; k <= n; k++ {
		var rs []route
		for j := 0; j <= n; j++ {
			switch {
			case j < k-1:
				rs = append(rs, route{j, [][2]int{{k - 1, 1}}})
			case j > k:
				rs = append(rs, route{j, [][2]int{{k, 2}}})
			}
		}
		l.nodes[k].routes = rs
	}
	if l.cfg.topology() != Chain {
		l.planECMP()
	}
}

func (l *Lab) build() error {
	for _, nd := range l.nodes {
		if err := l.makeNS(nd); err != nil {
			return err
		}
	}
	for _, lk := range l.links {
		if lk.tun {
			if err := l.startTUN(lk); err != nil {
				return err
			}
		}
	}
	for _, lk := range l.links {
		if lk.tun {
			continue // the TUN program created both ends
		}
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: lk.ifL, Namespace: netlink.NsFd(int(lk.left.handle))},
			PeerName:      lk.ifR,
			PeerNamespace: netlink.NsFd(int(lk.right.handle)),
		}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("veth %s/%s–%s/%s: %w", lk.left.name, lk.ifL, lk.right.name, lk.ifR, err)
		}
	}
	for _, lk := range l.links {
		for end, nd := range map[int]*node{1: lk.left, 2: lk.right} {
			ifname := lk.ifL
			if end == 2 {
				ifname = lk.ifR
			}
			if err := l.configIf(nd, ifname, lk, end); err != nil {
				return err
			}
		}
	}
	if err := l.waitOperUp(); err != nil {
		return err
	}
	for _, nd := range l.nodes {
		for _, r := range nd.routes {
			if err := l.addRoute(nd, r, false); err != nil {
				return err
			}
			if l.cfg.IPv6 {
				if err := l.addRoute(nd, r, true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// waitOperUp waits until every veth is operationally up. The kernel's
// linkwatch applies a new carrier up to a second late and drops packets
// until then; IPv6 neighbour discovery then stalls for its 1 s retransmit
// timer, so the first probes right after Up would see a 1 s "RTT".
func (l *Lab) waitOperUp() error {
	deadline := time.Now().Add(5 * time.Second)
	for _, lk := range l.links {
		if lk.tun {
			continue
		}
		for _, e := range []struct {
			nd     *node
			ifname string
		}{{lk.left, lk.ifL}, {lk.right, lk.ifR}} {
			for {
				lnk, err := e.nd.nl.LinkByName(e.ifname)
				if err != nil {
					return fmt.Errorf("%s: link %s: %w", e.nd.name, e.ifname, err)
				}
				if lnk.Attrs().OperState == netlink.OperUp {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("%s: link %s still %s after 5 s", e.nd.name, e.ifname, lnk.Attrs().OperState)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	return nil
}

func (l *Lab) configIf(nd *node, ifname string, lk *link, end int) error {
	idx := lk.idx
	lnk, err := nd.nl.LinkByName(ifname)
	if err != nil {
		return fmt.Errorf("%s: link %s: %w", nd.name, ifname, err)
	}
	a4, _ := netlink.ParseAddr(addr(false, idx, end) + "/24")
	if err := nd.nl.AddrAdd(lnk, a4); err != nil {
		return fmt.Errorf("%s: %s: address %s: %w", nd.name, ifname, a4, err)
	}
	if l.cfg.IPv6 {
		a6, _ := netlink.ParseAddr(addr(true, idx, end) + "/64")
		a6.Flags = unix.IFA_F_NODAD
		if lk.deprecateR && end == 2 {
			// A merge router's ICMPv6 errors would otherwise take their
			// source from the link a probe came in on, so its hop would show
			// two addresses; source selection avoids deprecated addresses
			// (RFC 6724 rule 3).
			a6.PreferedLft, a6.ValidLft = 0, 0xffffffff // valid forever
		}
		if err := nd.nl.AddrAdd(lnk, a6); err != nil {
			return fmt.Errorf("%s: %s: address %s: %w", nd.name, ifname, a6.IPNet, err)
		}
	}
	if err := nd.nl.LinkSetUp(lnk); err != nil {
		return fmt.Errorf("%s: %s up: %w", nd.name, ifname, err)
	}
	return nil
}

func (l *Lab) addRoute(nd *node, r route, v6 bool) error {
	var dst *net.IPNet
	switch {
	case r.subnet < 0 && v6:
		_, dst, _ = net.ParseCIDR("fd77::/16")
	case r.subnet < 0:
		_, dst, _ = net.ParseCIDR("10.77.0.0/16")
	case v6:
		_, dst, _ = net.ParseCIDR(addr(true, r.subnet, 0) + "/64")
	default:
		_, dst, _ = net.ParseCIDR(addr(false, r.subnet, 0) + "/24")
	}
	rt := &netlink.Route{Dst: dst}
	if len(r.gws) == 1 {
		rt.Gw = net.ParseIP(addr(v6, r.gws[0][0], r.gws[0][1]))
	} else {
		for _, g := range r.gws {
			rt.MultiPath = append(rt.MultiPath, &netlink.NexthopInfo{Gw: net.ParseIP(addr(v6, g[0], g[1]))})
		}
	}
	if err := nd.nl.RouteAdd(rt); err != nil {
		return fmt.Errorf("%s: route %s via %v: %w", nd.name, dst, r.gws, err)
	}
	return nil
}

// nodeSysctls are the settings of every namespace (see the package doc).
func (l *Lab) nodeSysctls(nd *node) [][2]string {
	kv := [][2]string{
		{"net/ipv4/ping_group_range", "0 2147483647"},
		{"net/ipv4/icmp_ratelimit", "0"},
		{"net/ipv4/icmp_ratemask", "0"},
		{"net/ipv4/icmp_msgs_per_sec", "1000000"},
		{"net/ipv4/icmp_msgs_burst", "1000000"},
		{"net/ipv4/conf/all/rp_filter", "0"},
		{"net/ipv4/conf/default/rp_filter", "0"},
		{"net/ipv4/fib_multipath_hash_policy", l.basePolicy()},
		{"net/ipv6/icmp/ratelimit", "0"},
		{"net/ipv6/conf/default/accept_dad", "0"},
		{"net/ipv6/conf/all/accept_dad", "0"},
		{"net/ipv6/conf/default/accept_ra", "0"},
		{"net/ipv6/fib_multipath_hash_policy", l.basePolicy()},
	}
	// An IPv4-only lab has no IPv6 at all, so that no router solicitation
	// or MLD report crosses a link and the TUN link's counters are exact.
	v6off := "1"
	if l.cfg.IPv6 {
		v6off = "0"
	}
	kv = append(kv,
		[2]string{"net/ipv6/conf/all/disable_ipv6", v6off},
		[2]string{"net/ipv6/conf/default/disable_ipv6", v6off},
		[2]string{"net/ipv6/conf/default/router_solicitations", "0"},
	)
	if nd.router {
		kv = append(kv,
			[2]string{"net/ipv4/ip_forward", "1"},
			[2]string{"net/ipv6/conf/all/forwarding", "1"},
		)
	}
	return kv
}

// basePolicy is the hash policy every kernel has: 0 for HashL3, else 1
// (HashFields replaces it with 3 where the kernel has that).
func (l *Lab) basePolicy() string {
	if l.cfg.Hash == HashL3 {
		return "0"
	}
	return "1"
}

// optionalSysctls may be missing on older kernels.
//
// The custom multipath hash (policy 3) over addresses, protocol and ports
// replaces policy 1 where the kernel has it. Policy 1 takes a packet's
// precomputed L4 hash when it has one, and a veth hands a forwarded packet
// over with the hash its sender's socket gave it: for TCP that is the
// socket's random sk_txhash, new for every connect(), so every TCP
// connection attempt would pick its own path whatever its ports, which no
// router on a wire does (it hashes the header fields, as policy 3 does).
var optionalSysctls = [][2]string{
	{"net/ipv4/fib_multipath_hash_seed", ""}, // per router: hashSysctls
	{"net/ipv6/fib_multipath_hash_seed", ""},
	{"net/ipv4/fib_multipath_hash_fields", multipathFields},
	{"net/ipv6/fib_multipath_hash_fields", multipathFields},
	{"net/ipv4/fib_multipath_hash_policy", "3"},
	{"net/ipv6/fib_multipath_hash_policy", "3"},
}

// hashSysctls are the optional sysctls of cfg.Hash for node nd: its seed
// always, the
// custom policy and its fields for HashFields, policy 0 for HashL3 (HashL4
// and HashL3 are nodeSysctls' policy 1 and 0).
func (l *Lab) hashSysctls(nd *node) [][2]string {
	kv := slices.Clone(optionalSysctls)
	if l.cfg.Hash != HashFields {
		kv = kv[:2]
	}
	seed := strconv.Itoa(hashSeed + 7919*max(0, l.nodeIndex(nd)-1))
	kv[0][1], kv[1][1] = seed, seed
	return kv
}

// multipathFields are the fields of the custom multipath hash: source and
// destination address, IP protocol, source and destination port.
const multipathFields = "0x0037"

// makeNS creates the named namespace, writes its sysctls and brings lo up.
// netns.NewNamed switches the calling thread into the new namespace, and
// /proc/sys/net belongs to the writing thread's namespace, so all of it runs
// on one locked thread that is switched back afterwards.
func (l *Lab) makeNS(nd *node) error {
	orig, err := lockThread()
	if err != nil {
		return err
	}
	defer orig.Close()
	h, err := netns.NewNamed(nd.name)
	if err != nil {
		if e := netns.Set(orig); e != nil {
			return fmt.Errorf("namespace %s: %w (and switching back: %v)", nd.name, err, e)
		}
		runtime.UnlockOSThread()
		return fmt.Errorf("namespace %s: %w", nd.name, err)
	}
	nd.handle = h
	var serr error
	for _, kv := range l.nodeSysctls(nd) {
		if err := os.WriteFile("/proc/sys/"+kv[0], []byte(kv[1]), 0o644); err != nil {
			serr = fmt.Errorf("namespace %s: sysctl %s: %w", nd.name, strings.ReplaceAll(kv[0], "/", "."), err)
			break
		}
	}
	for _, kv := range l.hashSysctls(nd) {
		_ = os.WriteFile("/proc/sys/"+kv[0], []byte(kv[1]), 0o644)
	}
	if e := netns.Set(orig); e != nil {
		// Leave the thread locked: it is in the wrong namespace and dies with
		// this goroutine instead of running other goroutines.
		return fmt.Errorf("switching back from namespace %s: %w", nd.name, e)
	}
	runtime.UnlockOSThread()
	if serr != nil {
		return serr
	}
	nd.nl, err = netlink.NewHandleAt(h)
	if err != nil {
		return fmt.Errorf("namespace %s: netlink: %w", nd.name, err)
	}
	lo, err := nd.nl.LinkByName("lo")
	if err == nil {
		err = nd.nl.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("namespace %s: lo up: %w", nd.name, err)
	}
	return nil
}

// setSysctls writes sysctls (paths under /proc/sys) inside namespace ns.
func setSysctls(ns string, kv [][2]string) error {
	return inNS(ns, func() error {
		for _, p := range kv {
			if err := os.WriteFile("/proc/sys/"+p[0], []byte(p[1]), 0o644); err != nil {
				return fmt.Errorf("namespace %s: sysctl %s=%s: %w", ns, strings.ReplaceAll(p[0], "/", "."), p[1], err)
			}
		}
		return nil
	})
}

// lockThread locks the calling goroutine to its OS thread and returns the
// thread's current namespace, to switch back to; when that cannot be read
// the thread is unlocked again.
func lockThread() (netns.NsHandle, error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return orig, fmt.Errorf("current namespace: %w", err)
	}
	return orig, nil
}

// inNS runs fn on a locked thread switched into the named namespace.
func inNS(ns string, fn func() error) error {
	orig, err := lockThread()
	if err != nil {
		return err
	}
	defer orig.Close()
	h, err := netns.GetFromName(ns)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer h.Close()
	if err := netns.Set(h); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering namespace %s: %w", ns, err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		return fmt.Errorf("leaving namespace %s: %w", ns, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// netnsDir is where named namespaces are mounted (iproute2's and the
// netns package's).
const netnsDir = "/run/netns"

// shareNetnsDir makes netnsDir a shared mount point of its own before any
// namespace is mounted in it, as `ip netns add` does the first time it
// runs: otherwise the first `ip netns add` on the machine (a test's, a
// user's) bind-mounts the directory over itself and hides the namespaces
// mounted before, which then can be neither entered by name nor removed
// ("deleting namespace …: invalid argument"). The check and the mount are
// made under a lock shared by every process of this package (tests of
// several packages run at once).
func shareNetnsDir() error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", netnsDir, err)
	}
	lk, err := os.OpenFile(filepath.Join(os.TempDir(), "linecheck-netlab-netns.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("netns lock: %w", err)
	}
	defer lk.Close()
	if err := unix.Flock(int(lk.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("netns lock: %w", err)
	}
	// Shared already when it is a mount point; EINVAL says it is not one.
	err = unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("making %s shared: %w", netnsDir, err)
	}
	if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mounting %s on itself: %w", netnsDir, err)
	}
	if err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s shared: %w", netnsDir, err)
	}
	return nil
}

func deleteNS(name string) error {
	err := netns.DeleteNamed(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	return nil
}

// removeLeftovers deletes the namespaces of a previous lab with this prefix
// and stops the TUN program it had started (its PID is in the pid file, and
// it is only killed when that PID still runs tunlink with this prefix).
func removeLeftovers(prefix string) error {
	if b, err := os.ReadFile(pidFile(prefix)); err == nil {
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid <= 1 {
				continue
			}
			if isOurTUN(pid, prefix) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, 5*time.Second)
			}
		}
		_ = os.Remove(pidFile(prefix))
	}
	ents, err := os.ReadDir(netnsDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	re := regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + `(c|s|r[0-9]+[a-z]?)$`)
	var errs []error
	for _, e := range ents {
		if re.MatchString(e.Name()) {
			errs = append(errs, deleteNS(e.Name()))
		}
	}
	return errors.Join(errs...)
}

func isOurTUN(pid int, prefix string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	args := strings.Split(string(b), "\x00")
	if len(args) == 0 || filepath.Base(args[0]) != "tunlink" {
		return false
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-tag" && args[i+1] == prefix {
			return true
		}
	}
	return false
}

func pidFile(prefix string) string {
	return filepath.Join(os.TempDir(), "linecheck-netlab", prefix+".pid")
}

// waitGone waits until pid has exited (a zombie counts as exited): a killed
// tunlink sits in state D for a while as its TUN devices are torn down.
func waitGone(pid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		// The state follows the command name in parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/sys/unix"
)

// Target is one resolved probe destination.
type Target struct {
	Name string     // as the user wrote it (an address, a name, or an address from a CIDR)
	Addr netip.Addr // the address probed
}

// Expansion limits (docs/definitions.md, Sweeps): a sweep never floods a network by accident.
const (
	// MaxSweep is the most addresses a CIDR may expand to without AllowLarge: a /24.
	MaxSweep = 256
	// MaxLoopbackSweep bounds 127.0.0.0/8 expansions, which are exempt from MaxSweep
	// but still have to fit in memory.
	MaxLoopbackSweep = 1 << 16
)

// ExpandOptions are the safety switches of ResolveTargets.
type ExpandOptions struct {
	Network        string // "ip4", "ip6" or "" (either; names resolve to the first address)
	AllowLarge     bool   // allow a CIDR of more than MaxSweep addresses
	AllowBroadcast bool   // allow broadcast and multicast addresses

	// bcast maps the broadcast addresses of this host's IPv4 interfaces to
	// the interface name; filled once per ResolveTargets.
	bcast map[netip.Addr]string
	// hint replaces the advice to add --allow-broadcast (trace has no such flag).
	hint string
}

// WithInterfaces returns o with this host's interface broadcast addresses
// read now, for a caller that resolves many arguments one by one with the
// same options: each ResolveTargets call otherwise reads the interfaces
// again (three netlink dumps, a fifth of the CPU time of a 1,000-target
// ping). With AllowBroadcast set there is nothing to read.
func (o ExpandOptions) WithInterfaces() ExpandOptions {
	if !o.AllowBroadcast && o.bcast == nil {
		o.bcast = localBroadcasts()
	}
	return o
}

// ResolveTargets turns addresses, host names and CIDR prefixes into targets.
// A CIDR of more than a /24 (256 addresses) needs AllowLarge, except inside
// 127.0.0.0/8; the network and broadcast addresses of an IPv4 prefix shorter
// than /31 are skipped; broadcast and multicast addresses need AllowBroadcast.
func ResolveTargets(ctx context.Context, args []string, o ExpandOptions) ([]Target, error) {
	var out []Target
	if !o.AllowBroadcast && o.bcast == nil {
		o.bcast = localBroadcasts()
	}
	for _, a := range args {
		switch {
		case strings.Contains(a, "/"):
			ts, err := expandCIDR(a, o)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		default:
			addr, err := resolveOne(ctx, a, o.Network)
			if err != nil {
				return nil, err
			}
			if err := checkCast(a, addr, o); err != nil {
				return nil, err
			}
			out = append(out, Target{Name: a, Addr: addr})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no targets")
	}
	return out, nil
}

func resolveOne(ctx context.Context, s, network string) (netip.Addr, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		addr = addr.Unmap()
		if addr.Zone() != "" {
			return netip.Addr{}, fmt.Errorf("target %q: zoned addresses are not supported", s)
		}
		if err := checkFamily(s, addr, network); err != nil {
			return netip.Addr{}, err
		}
		return addr, nil
	}
	nw := network
	if nw == "" {
		nw = "ip"
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, nw, s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("target %q: %w", s, err)
	}
	// Prefer IPv4 when either family will do, as ping does.
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("target %q: no address", s)
	}
	return addrs[0].Unmap(), nil
}

func checkFamily(s string, a netip.Addr, network string) error {
	switch {
	case network == "ip4" && !a.Is4():
		return fmt.Errorf("target %q is not an IPv4 address (-4 was given)", s)
	case network == "ip6" && !a.Is6():
		return fmt.Errorf("target %q is not an IPv6 address (-6 was given)", s)
	}
	return nil
}

func checkCast(s string, a netip.Addr, o ExpandOptions) error {
	if o.AllowBroadcast {
		return nil
	}
	hint := o.hint
	if hint == "" {
		hint = "add --allow-broadcast if you really mean it"
	}
	if a.IsMulticast() || a == limitedBroadcast || a == loopbackBroadcast {
		return fmt.Errorf("target %q is a broadcast or multicast address: %s", s, hint)
	}
	if ifc, ok := o.bcast[a]; ok {
		return fmt.Errorf("target %q is the broadcast address of interface %s: %s", s, ifc, hint)
	}
	if !a.IsValid() || a.IsUnspecified() {
		return fmt.Errorf("target %q is not a unicast address", s)
	}
	return nil
}

var (
	loopback8 = netip.MustParsePrefix("127.0.0.0/8")
	// limitedBroadcast is 255.255.255.255; loopbackBroadcast the broadcast
	// address of 127.0.0.0/8, which the kernel treats as broadcast even where
	// lo carries only 127.0.0.1/32 or no address is configured.
	limitedBroadcast  = netip.AddrFrom4([4]byte{255, 255, 255, 255})
	loopbackBroadcast = netip.AddrFrom4([4]byte{127, 255, 255, 255})
)

// localBroadcasts returns the broadcast address (the last address of each
// IPv4 prefix shorter than /31) of every interface address of this host,
// mapped to the interface name; empty when the interfaces cannot be read.
func localBroadcasts() map[netip.Addr]string {
	m := map[netip.Addr]string{}
	ifs, err := net.Interfaces()
	if err != nil {
		return m
	}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP.To4())
			ones, bits := ipn.Mask.Size()
			if !ok || bits != 32 || ones > 30 {
				continue
			}
			if b, ok := lastAddr(netip.PrefixFrom(ip, ones)); ok {
				m[b] = ifc.Name
			}
		}
	}
	return m
}

// mayBeBroadcast tells whether a can be what localBroadcasts returns: the
// last address of an IPv4 prefix of at most /30, so its two lowest bits
// are set. Any other address needs no look at the interfaces.
func mayBeBroadcast(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	return a.As4()[3]&3 == 3
}

// lastAddr is the highest address of an IPv4 prefix.
func lastAddr(p netip.Prefix) (netip.Addr, bool) {
	if !p.Addr().Is4() {
		return netip.Addr{}, false
	}
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// broadcastSendError explains an EACCES from sendto towards an IPv4
// address: Linux returns it when the destination is a broadcast address and
// the socket lacks SO_BROADCAST, whatever the privileges, so "run as root"
// would mislead. Other errors are returned as they are.
func broadcastSendError(what string, dst netip.Addr, err error) error {
	if !dst.Is4() || !errors.Is(err, unix.EACCES) {
		return err
	}
	why := "the kernel treats it as a broadcast address"
	if ifc, ok := localBroadcasts()[dst]; ok {
		why = "it is the broadcast address of interface " + ifc
	} else if dst == limitedBroadcast || dst == loopbackBroadcast {
		why = "it is a broadcast address"
	}
	return fmt.Errorf("%s to %s: %w: %s, and linecheck does not send broadcasts (SO_BROADCAST); "+
		"this is not a privilege problem: probe a unicast address", what, dst, err, why)
}

func expandCIDR(s string, o ExpandOptions) ([]Target, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return nil, fmt.Errorf("target %q: not a CIDR prefix: %w", s, err)
	}
	p = p.Masked()
	if err := checkFamily(s, p.Addr(), o.Network); err != nil {
		return nil, err
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	loop := loopback8.Contains(p.Addr()) && p.Bits() >= 8
	limit := MaxSweep
	switch {
	case loop:
		limit = MaxLoopbackSweep
	case o.AllowLarge:
		limit = MaxLoopbackSweep
	}
	if hostBits > 30 || 1<<hostBits > limit {
		if !loop && !o.AllowLarge && hostBits <= 30 && 1<<hostBits <= MaxLoopbackSweep {
			return nil, fmt.Errorf("target %q: %d addresses is more than a /24: add --allow-large to sweep it", s, 1<<hostBits)
		}
		return nil, fmt.Errorf("target %q: %s addresses is more than the %d a sweep may hold", s, sizeText(hostBits), MaxLoopbackSweep)
	}
	var out []Target
	a := p.Addr()
	n := 1 << hostBits
	for i := 0; i < n; i++ {
		skipEnds := p.Addr().Is4() && hostBits >= 2 && (i == 0 || i == n-1)
		if !skipEnds {
			if err := checkCast(s, a, o); err != nil {
				return nil, err
			}
			out = append(out, Target{Name: a.String(), Addr: a})
		}
		a = a.Next()
	}
	return out, nil
}

func sizeText(bits int) string {
	if bits >= 63 {
		return fmt.Sprintf("2^%d", bits)
	}
	return fmt.Sprint(uint64(1) << bits)
}

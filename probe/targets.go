package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
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

// loopback8 is exempt from MaxSweep.
var loopback8 = netip.MustParsePrefix("127.0.0.0/8")

// ExpandOptions are the safety switches of ResolveTargets.
type ExpandOptions struct {
	Network        string // "ip4", "ip6" or "" (either; names resolve to the first address)
	AllowLarge     bool   // allow a CIDR of more than MaxSweep addresses
	AllowBroadcast bool   // allow broadcast and multicast addresses
	// Lookup resolves a host name (net.DefaultResolver.LookupNetIP when
	// nil); tests and callers with their own resolver inject it.
	Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)

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
// than /31 are skipped; every address passes the safety gate (CheckTarget):
// broadcast and multicast addresses need AllowBroadcast, documentation
// addresses are refused. A name that does not resolve gives a *ResolveError.
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
			addr, err := resolveWith(ctx, a, o.Network, o.Lookup)
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

// ResolveTraceTarget resolves a trace's target (an address or a name) in
// network ("ip4", "ip6" or "") and passes it through the safety gate, as
// Trace does before its sockets open: a caller that creates something
// before its first trace (a journal) refuses a target with it first.
func ResolveTraceTarget(ctx context.Context, target, network string) (netip.Addr, error) {
	addr, err := resolveOne(ctx, target, network)
	if err != nil {
		return netip.Addr{}, err
	}
	if err := CheckTarget(target, addr, "trace follows unicast addresses only"); err != nil {
		return netip.Addr{}, err
	}
	return addr, nil
}

// ResolveError is a host name that did not resolve: Err is the resolver's
// error (a *net.DNSError) or that it gave no address.
type ResolveError struct {
	Name string
	Err  error
}

func (e *ResolveError) Error() string { return fmt.Sprintf("target %q: %v", e.Name, e.Err) }

// Unwrap returns the resolver's error.
func (e *ResolveError) Unwrap() error { return e.Err }

// errNoAddress is a name the resolver answered with no address.
var errNoAddress = errors.New("no address")

func resolveOne(ctx context.Context, s, network string) (netip.Addr, error) {
	return resolveWith(ctx, s, network, nil)
}

func resolveWith(ctx context.Context, s, network string, lookup func(context.Context, string, string) ([]netip.Addr, error)) (netip.Addr, error) {
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
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	addrs, err := lookup(ctx, nw, s)
	if err != nil {
		return netip.Addr{}, &ResolveError{Name: s, Err: err}
	}
	// Prefer IPv4 when either family will do, as ping does.
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, &ResolveError{Name: s, Err: errNoAddress}
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

package probe

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// The safety gate: every destination a socket of this package sends to
// passes CheckTarget first (ResolveTargets, PingTargets, Sweep, Trace and the
// bw client's dialer call it), so the rule lives here once and callers do not
// repeat it. A refusal is a *RefusedError.
var (
	// ErrRefused is what every refusal of the gate wraps.
	ErrRefused = errors.New("refused destination")
	// ErrDocumentation is wrapped by the refusal of a documentation address
	// (RFC 5737, RFC 3849): such addresses stand in examples and are replayed,
	// never probed. No flag lifts it.
	ErrDocumentation = errors.New("documentation address")
)

// documentationPrefixes are the ranges RFC 5737 (IPv4) and RFC 3849 (IPv6)
// reserve for documentation.
var documentationPrefixes = [...]netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// documentationPrefix reports the documentation range that holds a, if any.
func documentationPrefix(a netip.Addr) (netip.Prefix, bool) {
	a = a.Unmap()
	for _, p := range documentationPrefixes {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// RefusedError is a refusal of the gate. It wraps ErrRefused, and
// ErrDocumentation when Prefix is set.
type RefusedError struct {
	// Name is the target as written; Addr the address refused.
	Name string
	Addr netip.Addr
	// Prefix is the documentation range that holds Addr, when that is why.
	Prefix netip.Prefix
	// Advice ends the sentence of a documentation refusal ("give a real
	// target" when empty); a caller whose user gives something else (the
	// bw client's server) sets its own.
	Advice string
	reason string // the sentence of the other refusals
}

func (e *RefusedError) Error() string {
	if !e.Prefix.IsValid() {
		return e.reason
	}
	what := e.Name
	if u := e.Addr.Unmap().String(); u != e.Name {
		what = e.Name + " (" + u + ")"
	}
	advice := e.Advice
	if advice == "" {
		advice = "give a real target"
	}
	return fmt.Sprintf("%s is a documentation address (%s), illustrative only: linecheck never probes it; %s", what, e.Prefix, advice)
}

// Is reports ErrRefused, and ErrDocumentation for a documentation refusal.
func (e *RefusedError) Is(target error) bool {
	return target == ErrRefused || (target == ErrDocumentation && e.Prefix.IsValid())
}

// CheckTarget is the safety gate: it refuses what no probe is ever sent to.
// A documentation address is always refused; without an explicit override
// (ExpandOptions.AllowBroadcast, PingConfig.AllowBroadcast) so are a
// broadcast address (255.255.255.255, 127.255.255.255, the broadcast
// address of an interface of this host), a multicast or an unspecified
// address. name is the target as written, for the message; hint is the
// advice given on a broadcast or multicast refusal (how the caller's user
// overrides it, or that it cannot be).
//
// The interfaces (three netlink dumps, a third of a millisecond of a
// one-shot trace) are read only for an address that could be an interface's
// broadcast address (mayBeBroadcast): traces and the live loops check every
// target, at every resolution, and most addresses cannot be one.
func CheckTarget(name string, a netip.Addr, hint string) error {
	a = a.Unmap()
	var bcast map[netip.Addr]string
	if mayBeBroadcast(a) {
		bcast = localBroadcasts()
	}
	return checkCast(name, a, ExpandOptions{bcast: bcast, hint: hint})
}

// Gate is CheckTarget for many targets (a configuration file's): the
// interfaces are read once, when the first target that may be a broadcast
// address comes, instead of once per such target (a quarter of all IPv4
// addresses: 25,000 interface dumps for a 100,000-target serve). The zero
// Gate is ready to use.
type Gate struct {
	bcast map[netip.Addr]string
	read  bool
}

// Check is CheckTarget(name, a, hint) with the interfaces read at most once.
func (g *Gate) Check(name string, a netip.Addr, hint string) error {
	a = a.Unmap()
	if !g.read && mayBeBroadcast(a) {
		g.bcast, g.read = localBroadcasts(), true
	}
	return checkCast(name, a, ExpandOptions{bcast: g.bcast, hint: hint})
}

// gate checks many targets with the interfaces read once, and only when
// one of them may be a broadcast address.
type gate struct {
	o    ExpandOptions
	read bool
}

func newGate(allowBroadcast bool, hint string) *gate {
	return &gate{o: ExpandOptions{AllowBroadcast: allowBroadcast, hint: hint}}
}

func (g *gate) check(name string, a netip.Addr) error {
	a = a.Unmap()
	if !g.read && !g.o.AllowBroadcast && mayBeBroadcast(a) {
		g.o.bcast, g.read = localBroadcasts(), true
	}
	return checkCast(name, a, g.o)
}

// checkCast is CheckTarget with the interfaces' broadcast addresses and the
// override in o.
func checkCast(s string, a netip.Addr, o ExpandOptions) error {
	if p, ok := documentationPrefix(a); ok {
		return &RefusedError{Name: s, Addr: a, Prefix: p}
	}
	what := fmt.Sprintf("%q", s)
	if u := a.Unmap(); u.IsValid() && u.String() != s {
		what += " (" + u.String() + ")"
	}
	refuse := func(format string, args ...any) error {
		return &RefusedError{Name: s, Addr: a, reason: fmt.Sprintf(format, args...)}
	}
	if o.AllowBroadcast {
		return nil
	}
	hint := o.hint
	if hint == "" {
		hint = "add --allow-broadcast if you really mean it"
	}
	if a.IsMulticast() || a == limitedBroadcast || a == loopbackBroadcast {
		return refuse("target %s is a broadcast or multicast address: %s", what, hint)
	}
	if ifc, ok := o.bcast[a]; ok {
		return refuse("target %s is the broadcast address of interface %s: %s", what, ifc, hint)
	}
	if !a.IsValid() || a.IsUnspecified() {
		return refuse("target %s is not a unicast address", what)
	}
	return nil
}

var (
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

package verdict

import (
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/probe"
)

// Address families of a WindowKey.
const (
	IPv4 = candidates.IPv4
	IPv6 = candidates.IPv6
)

// WindowKey names a window: the target as the candidates file names it
// (candidates.Target.String: address or host name, protocol, port) and the
// address family probed. A host name with an IPv4 and an IPv6 address is
// two windows; the time is the third axis, inside the window
// (Window.ResultBetween).
type WindowKey struct {
	Target string
	// Family is IPv4 or IPv6; "" while the address is not known (a name
	// not resolved yet).
	Family string
}

// Family is the address family of addr: IPv4 for an IPv4 address (an
// IPv4-mapped IPv6 one too, as the kernel sends it), IPv6 for an IPv6
// address, "" for anything else (a host name).
func Family(addr string) string { return candidates.AddrFamily(addr) }

// KeyOf is the window key of target t probed at addr (the address t
// resolved to; t.Addr itself when it is an address).
func KeyOf(t candidates.Target, addr string) WindowKey {
	if addr == "" {
		addr = t.Addr
	}
	return WindowKey{Target: t.String(), Family: Family(addr)}
}

// RecordKey is the window key of a probe record: its target as named
// (Record.Target, else its address) and the family of the address probed.
func RecordKey(r probe.Record) WindowKey {
	name := r.Target
	if name == "" {
		name = r.Addr
	}
	return KeyOf(candidates.Target{Addr: name, Protocol: r.Protocol, Port: r.Port}, r.Addr)
}

// Windows is a set of windows of one size, keyed by WindowKey.
type Windows struct {
	size int
	m    map[WindowKey]*Window
}

// NewWindows returns an empty set of windows of at most size probes each
// (NewWindow).
func NewWindows(size int) *Windows {
	return &Windows{size: size, m: map[WindowKey]*Window{}}
}

// Add folds a record into its key's window (RecordKey), opened on first use.
func (ws *Windows) Add(r probe.Record) {
	k := RecordKey(r)
	w := ws.m[k]
	if w == nil {
		w = NewWindow(ws.size)
		ws.m[k] = w
	}
	w.Add(r)
}

// Get returns the window of k, nil when nothing was added under it.
func (ws *Windows) Get(k WindowKey) *Window { return ws.m[k] }

// Len is the number of windows.
func (ws *Windows) Len() int { return len(ws.m) }

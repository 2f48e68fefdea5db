// Package rdns looks up the reverse DNS names of hop addresses for the live
// views (trace tables on a terminal, the TUI's route screen) without ever
// making a view wait: Name answers from a cache at once and starts a lookup
// in the background for an address it has not seen; Wait lets a one-shot
// table collect what arrives within a deadline.
//
// Names are looked up only where a person watches a live route. A recording
// (--replay, the demo), JSON and CSV output, compare and the tests never
// send a lookup: the caller decides, and tests inject their Resolver.
package rdns

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"
)

// Resolver looks up the names of an address (net.Resolver.LookupAddr).
type Resolver func(ctx context.Context, addr string) ([]string, error)

// System is the machine's resolver.
func System() Resolver { return net.DefaultResolver.LookupAddr }

// Timeout bounds one lookup.
const Timeout = 2 * time.Second

// Cache holds the names looked up so far, one per address, failures too (as
// ""), so that no address is asked twice.
type Cache struct {
	resolve Resolver
	sem     chan struct{}
	// OnName, when set, is called (from a lookup goroutine) each time a
	// lookup ends; the TUI uses it to redraw.
	OnName func(addr, name string)

	mu      sync.Mutex
	names   map[string]string
	pending map[string]chan struct{}
}

// New returns a cache that asks resolve, at most 8 lookups at a time.
func New(resolve Resolver) *Cache {
	return &Cache{resolve: resolve, sem: make(chan struct{}, 8), names: map[string]string{}, pending: map[string]chan struct{}{}}
}

// Cached returns the name of addr if a lookup of it has ended ("" when it
// failed) and whether one has; it never starts a lookup, so a view can
// call it (the TUI starts its lookups with Wait, in a command).
func (c *Cache) Cached(addr string) (string, bool) {
	if addr == "" || addr == "*" {
		return "", true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.names[addr]
	return n, ok
}

// Name returns the name of addr if it is known ("" when the lookup failed
// or has not ended yet) and whether the lookup has ended; it never blocks,
// and starts the lookup the first time it sees addr.
func (c *Cache) Name(addr string) (string, bool) {
	if addr == "" || addr == "*" {
		return "", true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.names[addr]; ok {
		return n, true
	}
	if _, ok := c.pending[addr]; !ok {
		done := make(chan struct{})
		c.pending[addr] = done
		go c.lookup(addr, done)
	}
	return "", false
}

func (c *Cache) lookup(addr string, done chan struct{}) {
	c.sem <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	names, err := c.resolve(ctx, addr)
	cancel()
	<-c.sem
	name := ""
	if err == nil && len(names) > 0 {
		name = strings.TrimSuffix(names[0], ".")
	}
	if name == addr {
		name = ""
	}
	c.mu.Lock()
	c.names[addr] = name
	delete(c.pending, addr)
	on := c.OnName
	c.mu.Unlock()
	close(done)
	if on != nil {
		on(addr, name)
	}
}

// Wait starts the lookups of addrs and waits until they have ended or ctx
// is done; it returns the names known by then (addresses without one are
// left out).
func (c *Cache) Wait(ctx context.Context, addrs []string) map[string]string {
	for _, a := range addrs {
		c.Name(a)
	}
	for _, a := range addrs {
		c.mu.Lock()
		done := c.pending[a]
		c.mu.Unlock()
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	out := map[string]string{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range addrs {
		if n := c.names[a]; n != "" {
			out[a] = n
		}
	}
	return out
}

package pacing

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// Lookup looks a host name up and says how long the answer holds (its DNS
// TTL). serve and the live loops use SystemLookup; tests inject a fake that
// counts queries.
type Lookup interface {
	LookupTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error)
}

// Resolver defaults.
const (
	// DefaultResolveRate is the most name lookups per second a Resolver makes.
	DefaultResolveRate = 2.0
	// minTTL and maxTTL bound how long an answer is cached: a TTL of 0 would
	// query for every cycle, a day-long one would never see a change.
	minTTL = 5 * time.Second
	maxTTL = time.Hour
	// NegativeTTL is how long a failed lookup is remembered (resolvers
	// cache NXDOMAIN for the zone's SOA minimum, which a lookup does not
	// report; the target's backoff spaces its retries further).
	NegativeTTL = 30 * time.Second
)

// Resolver turns a target's address (an IP or a host name) into the address
// probed. Names are looked up at most rate times a second and each answer,
// good or bad, is cached (good ones for their TTL), so a name that does not
// resolve costs one query per NegativeTTL, not one per cycle.
type Resolver struct {
	lookup Lookup
	clock  probe.Clock
	gap    time.Duration // between two lookups
	hint   string        // the advice when an address is refused

	mu        sync.Mutex
	cache     map[string]cached
	nextQuery time.Time
}

type cached struct {
	addr    netip.Addr
	err     error
	expires time.Time
}

// NewResolver returns a resolver over l (SystemLookup when nil) that makes
// at most rate lookups a second (DefaultResolveRate when 0), timed by clk
// (the real clock when nil).
func NewResolver(l Lookup, clk probe.Clock, rate float64) *Resolver {
	if l == nil {
		l = SystemLookup{}
	}
	if clk == nil {
		clk = RealClock{}
	}
	if rate <= 0 {
		rate = DefaultResolveRate
	}
	return &Resolver{lookup: l, clock: clk, gap: time.Duration(float64(time.Second) / rate), cache: map[string]cached{},
		hint: "linecheck never probes one: list a unicast address"}
}

// WithHint sets the advice given when an address is refused (serve says
// that serve never probes one) and returns r.
func (r *Resolver) WithHint(hint string) *Resolver {
	r.hint = hint
	return r
}

// Resolve returns the address to probe for host. An IP address is used as
// it is; a name is looked up (IPv4 preferred, as ping does). Either way the
// address must be one linecheck may probe: not a broadcast, multicast or
// unspecified address, nor a documentation address.
func (r *Resolver) Resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return checkProbeable(host, a, r.hint)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if c, ok := r.cache[host]; ok && now.Before(c.expires) {
		return c.addr, c.err
	}
	if wait := r.nextQuery.Sub(now); wait > 0 {
		select {
		case <-ctx.Done():
			return netip.Addr{}, ctx.Err()
		case <-r.clock.After(wait):
		}
		now = r.clock.Now()
	}
	r.nextQuery = now.Add(r.gap)
	addrs, ttl, err := r.lookup.LookupTTL(ctx, host)
	if ctx.Err() != nil {
		return netip.Addr{}, ctx.Err()
	}
	c := cached{expires: now.Add(NegativeTTL)}
	switch {
	case err != nil:
		c.err = fmt.Errorf("resolving %s: %w", host, err)
	case len(addrs) == 0:
		c.err = fmt.Errorf("resolving %s: no address", host)
	default:
		c.addr = addrs[0].Unmap()
		for _, a := range addrs {
			if a.Unmap().Is4() {
				c.addr = a.Unmap()
				break
			}
		}
		c.addr, c.err = checkProbeable(host, c.addr, r.hint)
		c.expires = now.Add(min(max(ttl, minTTL), maxTTL))
	}
	r.cache[host] = c
	return c.addr, c.err
}

// checkProbeable refuses what linecheck never probes live, by probe's
// safety gate (broadcast, multicast, unspecified and documentation
// addresses), so that a refused name is cached with its refusal.
func checkProbeable(host string, a netip.Addr, hint string) (netip.Addr, error) {
	a = a.Unmap()
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("target %q: zoned addresses are not supported", host)
	}
	if err := probe.CheckTarget(host, a, hint); err != nil {
		return netip.Addr{}, err
	}
	return a, nil
}

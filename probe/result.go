package probe

import (
	"net/netip"
	"time"
)

// MPLS is one label stack entry from an RFC 4950 ICMP extension, as a
// router quoted it in a time-exceeded or unreachable message. Its JSON form
// is the "mpls" entry of a linecheck.trace/v1 responder.
type MPLS struct {
	Label int  `json:"label"`
	TC    int  `json:"tc"`
	S     bool `json:"s"`
	TTL   int  `json:"ttl"`
}

// ProbeResult is the outcome of one trace probe whose wait has ended: a reply
// within the timeout (Addr set) or none (Addr empty). A reply after the
// timeout leaves Addr empty and sets Late; further replies are counted in
// Dups. Neither is received.
type ProbeResult struct {
	TTL  int
	Flow int
	// Order is the probe's send order across the whole run; samples are kept in it.
	Order int
	Addr  string  // responder, "" when no reply in time
	RTTms float64 // when Addr is set
	// Dest is true when the reply came from the target itself (echo reply,
	// port unreachable, TCP SYN-ACK or RST), also when it came late.
	Dest bool
	MPLS []MPLS
	// Late is true when the (first) reply came after the timeout.
	Late bool
	// Dups counts further replies to this probe.
	Dups int
	// NATID is the reply's NAT ID (TraceNATID) when HasNATID.
	NATID    uint16
	HasNATID bool
}

// TraceRun is one traceroute as measured: what was traced, how, and every
// probe whose wait has ended. It holds no statistics; internal/route turns it
// into hops (route.BuildTrace gives the linecheck.trace/v1 document). A run
// handed to an onCycle callback is a snapshot the tracer never touches again.
type TraceRun struct {
	Target   string     // as the caller named it
	Addr     netip.Addr // the address traced
	Protocol Protocol
	Port     int // 0 for icmp
	// Flows is how many Paris flows each TTL was probed with.
	Flows int
	// Mode is the sockets the probes used (raw, datagram, recverr).
	Mode TraceMode
	// NAT is true when NAT IDs were asked for (TraceConfig.NAT); only a
	// raw-mode run measures them (ProbeResult.HasNATID).
	NAT bool
	// MaxTTL is the highest TTL the run would probe.
	MaxTTL int
	// Start is when the first cycle began (the trace's clock).
	Start  time.Time
	Counts TraceCounts
	// Results are the decided probes in the order their outcome was known.
	Results []ProbeResult
}

// Clock is the time the traceroute algorithm runs on: the real clock unless
// TraceConfig.Clock is set (tests drive the algorithm with a fake one).
// After's channel fires once d has passed on this clock.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

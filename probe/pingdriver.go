package probe

import (
	"context"
	"sort"
	"time"
)

// pingDriver is one protocol's side of a ping sweep: it sends the probes the
// sweep's loop hands it and hands the replies back to the sweep
// (sweep.replyLocked, foreignLocked and failLocked, under sweep.mu). The
// sweep itself — the schedule, the rate cap, timeouts, loss, late,
// duplicate and foreign accounting — is written once, over this interface
// (sweep.loop), and is tested with a fake driver on a fake clock.
//
// A new protocol is one file with its driver and its protocolSpec, plus
// its line in protocols (protocol.go).
type pingDriver interface {
	// send sends the probes numbered idx, already marked pending (probe i
	// goes to target i % T); it may place each probe's send time more
	// exactly than the loop's clock reading. A send that fails marks its
	// probe lost (failLocked) and is returned as sendErr; a failure that
	// ends the sweep (a missing privilege) as fatal.
	send(idx []int) (sendErr, fatal error)
	// readQueued hands every reply queued now to the sweep without
	// waiting. Its error says the driver is closed or failed: the sweep
	// stops.
	readQueued() error
	// wait waits until a reply is queued (and hands over what came), until
	// t on the sweep's clock (zero: no limit) or until ctx ends; an error
	// when ctx ended or the driver failed: the sweep stops.
	wait(ctx context.Context, t time.Time) error
	// close stops the driver's receivers, hands over the outcomes still
	// queued and releases its sockets; the sweep reads its results only
	// after it returned.
	close()
}

// pingProtocol is a protocol a ping sweep probes with: how its driver opens
// for sweep r (ctx is the sweep's) and whether its targets name a port.
type pingProtocol struct {
	open func(ctx context.Context, r *sweep) (pingDriver, error)
	port bool
}

// pingProtocolOf is p's ping driver, when protocols gives it one: the
// protocols of Ping, PingTargets and Sweep (PingConfig.protocol,
// SweepTarget.Protocol).
func pingProtocolOf(p Protocol) (pingProtocol, bool) {
	if s, ok := protocolOf(p); ok && s.ping != nil {
		return *s.ping, true
	}
	return pingProtocol{}, false
}

// pingProtocolNames lists the ping protocols for a message ("icmp or
// tcp"), in alphabetical order.
func pingProtocolNames() string {
	ps := PingProtocols()
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ProtocolNames(ps)
}

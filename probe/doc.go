// Package probe is the only package that opens sockets: ICMP echo sweeps and
// TCP connect times (Ping), and a flow-stable traceroute (Trace).
//
// Ping sends to every target from one socket per address family (an
// unprivileged ICMP datagram socket when net.ipv4.ping_group_range allows,
// else a raw socket), on one schedule under a global packets-per-second cap,
// and matches replies by a per-run nonce and a 32-bit probe number in the
// payload. Send and receive times are the kernel's (SO_TIMESTAMPING transmit
// stamps, SO_TIMESTAMPNS; txstamp.go); an RTT below zero is never reported
// (PingResult.ClockFaults). Loss counts only
// probes whose wait has ended; late, duplicate and foreign replies are
// counted apart (docs/definitions.md). The sweep algorithm is written once,
// on an injected clock (PingConfig.Clock), over a small per-protocol driver
// (ICMP echo in ping_icmp.go, TCP connect in ping_tcp.go; a new protocol is
// one file plus its line in protocols, protocol.go). Sweep takes targets of
// mixed protocols (ICMP echo, TCP connect to per-target ports) and runs one
// such sweep per protocol and port, side by side, sharing one rate cap;
// compare, tui and serve probe through it.
//
// Trace runs the traceroute algorithm (TraceWithDriver) over a Driver, on an
// injected Clock (TraceConfig.Clock; the real clock by default): every TTL
// of a cycle is in flight at once, replies are matched by the probe quoted
// inside ICMP errors, and the per-probe results are returned as measured
// (TraceRun of ProbeResult, with MPLS label stacks). probe owns these raw
// results and depends on no other package of this module: internal/route
// turns a TraceRun into the linecheck.trace/v1 document (route.BuildTrace)
// and its statistics. The socket Driver
// sends Paris-style probes from raw sockets: ICMP with a constant checksum,
// UDP with the probe key in the checksum, TCP SYN with the key in the
// sequence number.
//
// Protocol (icmp, tcp, udp) and Status (ok, lost, late, dup) are the typed
// vocabularies of targets and probe outcomes that compare, the TUI and serve
// use too; their strings are the ones every JSON document carries.
//
// Every destination passes one safety gate (CheckTarget) before a socket
// sends to it: documentation addresses are refused, and broadcast,
// multicast and unspecified ones unless the caller lifts that guard.
//
// Missing privileges give an error that wraps ErrPrivilege and names the
// exact command to run.
package probe

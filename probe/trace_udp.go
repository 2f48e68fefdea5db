package probe

// udpSpec is UDP: trace only (port DefaultUDPPort and up, as
// traceroute); ping has no UDP driver, since a UDP probe has no reply to
// time unless the port is closed.
var udpSpec = protocolSpec{name: UDP, trace: true, port: true, tracePort: DefaultUDPPort}

package probe

import (
	"strings"
	"testing"
)

// The lists and checks callers use come from the protocol table; the
// messages are the ones users have seen.
func TestProtocolRegistry(t *testing.T) {
	if got := ProtocolNames(PingProtocols()); got != "icmp or tcp" {
		t.Errorf("ping protocols %q", got)
	}
	if got := ProtocolNames(TraceProtocols()); got != "icmp, udp or tcp" {
		t.Errorf("trace protocols %q", got)
	}
	for _, tc := range []struct {
		p                   Protocol
		pings, traces, port bool
	}{{ICMP, true, true, false}, {TCP, true, true, true}, {UDP, false, true, true}, {"sctp", false, false, false}} {
		if tc.p.Pings() != tc.pings || tc.p.Traces() != tc.traces || tc.p.HasPort() != tc.port {
			t.Errorf("%s: pings %v traces %v port %v", tc.p, tc.p.Pings(), tc.p.Traces(), tc.p.HasPort())
		}
	}
	for _, tc := range []struct {
		parse     func(string) (Protocol, error)
		in, want  string
		wantProto Protocol
	}{
		{ParseProtocol, "", "", ICMP},
		{ParseProtocol, "udp", "", UDP},
		{ParseProtocol, "sctp", `protocol "sctp": use icmp, tcp or udp`, ""},
		{ParsePingProtocol, "", "", ICMP},
		{ParsePingProtocol, "tcp", "", TCP},
		{ParsePingProtocol, "udp", `protocol "udp": use icmp or tcp`, ""},
		{ParseTraceProtocol, "udp", "", UDP},
		{ParseTraceProtocol, "sctp", `protocol "sctp": use icmp, udp or tcp`, ""},
	} {
		p, err := tc.parse(tc.in)
		if tc.want == "" && (err != nil || p != tc.wantProto) || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("parse %q: %q, %v; want %q %q", tc.in, p, err, tc.wantProto, tc.want)
		}
	}
}

// A protocol added to the table is offered by ping and trace, with its
// default port (TestANewProtocolIsOneDriverAndItsLine sweeps with one).
func TestAddedProtocolIsOffered(t *testing.T) {
	saved := protocols
	t.Cleanup(func() { protocols = saved })
	protocols = append(append([]protocolSpec(nil), protocols...),
		protocolSpec{name: "sctp", ping: &pingProtocol{open: openTCPDriver, port: true}, trace: tcpTrace{}, port: true, tracePort: 9})
	if !Protocol("sctp").Pings() || !strings.HasSuffix(ProtocolNames(PingProtocols()), "or sctp") {
		t.Errorf("ping protocols %v", PingProtocols())
	}
	c, err := TraceConfig{Proto: "sctp"}.withDefaults()
	if err != nil || c.Port != 9 {
		t.Errorf("trace config: port %d, %v", c.Port, err)
	}
	if _, err := (TraceConfig{Proto: "dccp"}).withDefaults(); err == nil || err.Error() != `protocol "dccp": use icmp, udp, tcp or sctp` {
		t.Errorf("unknown trace protocol: %v", err)
	}
}

package candidates

import (
	"net/netip"
	"strings"

	"github.com/linecheck/linecheck/probe/bw"
)

// BandwidthTest is a candidate's iperf3 server (YAML `bandwidth_test:
// {addr, port}`): a stock `iperf3 -s` on the candidate that `compare` tests
// against in live mode.
type BandwidthTest struct {
	Addr string `json:"addr"`
	Port int    `json:"port"`
}

// bandwidthTest validates `bandwidth_test: {addr, port}` (port 5201 when
// not given). In live mode a documentation address is refused, as for
// targets: it is never tested.
func (v *validator) bandwidthTest(rt *rawBWTest, field string) *BandwidthTest {
	if rt == nil {
		return nil
	}
	bf := field + ".bandwidth_test"
	t := &BandwidthTest{Addr: strings.TrimSpace(rt.Addr), Port: rt.Port}
	if t.Port == 0 {
		t.Port = bw.DefaultPort
	}
	_, perr := netip.ParseAddr(t.Addr)
	switch {
	case t.Addr == "":
		v.errf(rt.line, "%s.addr: required (the address of the candidate's iperf3 -s)", bf)
	case perr != nil && !hostName(t.Addr):
		v.errf(rt.line, "%s.addr: %q is neither an IP address nor a host name", bf, t.Addr)
	default:
		if err := v.gate(t.Addr, "it is never tested"); err != nil {
			v.errf(rt.line, "%s.addr: %v", bf, err)
		}
	}
	if t.Port < 1 || t.Port > 65535 {
		v.errf(rt.line, "%s.port: %d: 1..65535 (iperf3's default is 5201)", bf, rt.Port)
	}
	return t
}

package billing

import (
	"fmt"
	"time"
)

// Carry verdicts (Carry.Status).
const (
	// CarryOK: no slot exceeds the port in either direction.
	CarryOK = "ok"
	// CarryPeakAbove: the 95th fits the port but some slots exceed it — the
	// offer carries the traffic, with bursts shaped or dropped at the port.
	CarryPeakAbove = "peak-above-port"
	// CarryCannot: the 95th exceeds the port: more than 5 % of the month would
	// not fit, so the offer cannot carry the traffic. It is never cheapest.
	CarryCannot = "cannot-carry"
)

// Carry is the judgement whether an offer's port (port_mbps) can carry the
// period's traffic. A port carries its speed in each direction (full duplex),
// so each direction is held against it on its own; in+out is counted too, for
// a reader whose provider meters the port's total (as vnstat reports it).
type Carry struct {
	Status   string  `json:"status"` // ok, peak-above-port or cannot-carry
	CanCarry bool    `json:"can_carry"`
	PortMbps float64 `json:"port_mbps"`
	// P95Mbps is the larger of the 95th in and the 95th out (the offer's method).
	P95Mbps float64 `json:"p95_mbps"`
	// PeakMbps is the highest 5-minute rate in either direction.
	PeakMbps   float64    `json:"peak_mbps"`
	SlotsAbove SlotsAbove `json:"slots_above_port"`
	// Reason says why the offer cannot carry the traffic, or what its peak
	// does; "" when every slot fits.
	Reason string `json:"reason"`
}

// SlotsAbove counts 5-minute slots whose rate exceeds the port speed: inbound,
// outbound, and in+out (the rx, tx and total columns of vnstat).
type SlotsAbove struct {
	In    int    `json:"in"`
	Out   int    `json:"out"`
	Sum   int    `json:"sum"`
	First string `json:"first,omitempty"` // the first slot above in either direction (RFC 3339)
}

// CanCarry reports whether the offer can carry the traffic: true when its
// port is not exceeded by the 95th, or when the offer states no port.
func (b Bill) CanCarry() bool { return b.Carry == nil || b.Carry.CanCarry }

// JudgeCarry holds traffic against a port of portMbps: p95Bps is the larger of
// the per-direction 95ths, peakBps the highest slot in either direction, and
// above the slots over the port. Compare, the TUI and the HTML report judge a
// what-if port with this, so the rule is written once.
func JudgeCarry(portMbps, p95Bps, peakBps float64, above SlotsAbove) Carry {
	c := Carry{Status: CarryOK, CanCarry: true, PortMbps: portMbps, P95Mbps: p95Bps / 1e6, PeakMbps: peakBps / 1e6, SlotsAbove: above}
	port := portMbps * 1e6
	switch {
	case p95Bps > port:
		c.Status, c.CanCarry = CarryCannot, false
		c.Reason = fmt.Sprintf("cannot carry the traffic: its 95th (%s Mbps) exceeds the %s Mbps port", sig(c.P95Mbps), sig(portMbps))
	case above.In > 0 || above.Out > 0:
		c.Status = CarryPeakAbove
		c.Reason = fmt.Sprintf("peak %s Mbps exceeds the %s Mbps port in %s in, %d out (%d in+out)",
			sig(c.PeakMbps), sig(portMbps), Count(above.In, "slot", ""), above.Out, above.Sum)
	}
	return c
}

// carry judges the offer's port on the view (nil when the offer states no port).
func (v *view) carry(portMbps float64, method Method) *Carry {
	if portMbps <= 0 {
		return nil
	}
	above := v.slotsAbove(portMbps * 1e6)
	c := JudgeCarry(portMbps, v.p95(method, DirGreater, false).bps, v.peak(1, DirGreater, false).bps, above)
	return &c
}

// slotsAbove counts the slots whose rate exceeds bps per direction and in+out.
func (v *view) slotsAbove(bps float64) SlotsAbove {
	var a SlotsAbove
	first := int64(-1)
	for _, s := range v.slots {
		in, out := v.rate(s.In) > bps, v.rate(s.Out) > bps
		if in {
			a.In++
		}
		if out {
			a.Out++
		}
		if v.rate(s.In+s.Out) > bps {
			a.Sum++
		}
		if (in || out) && first < 0 {
			first = s.Start
		}
	}
	if first >= 0 {
		a.First = time.Unix(first, 0).In(v.p.location()).Format(time.RFC3339)
	}
	return a
}

// sig renders a rate in Mbps with up to 4 significant digits, for messages.
func sig(x float64) string {
	if x >= 1000 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.4g", x)
}

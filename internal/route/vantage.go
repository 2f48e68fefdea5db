package route

import (
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Vantage is the place a recorded trace was run from: a measurement
// network's probe (RIPE Atlas, Globalping) or a colleague's NextTrace run.
// A figure the file does not give is absent.
type Vantage struct {
	// Platform is the network or tool that ran the trace: "ripe-atlas",
	// "globalping", "nexttrace".
	Platform string `json:"platform"`
	// Measurement is the platform's measurement id (Atlas msm_id,
	// Globalping id), when the file gives it.
	Measurement string `json:"measurement,omitempty"`
	// ID names the vantage within its file: the Atlas probe id (prb_id);
	// for Globalping, whose results carry no probe id, the result's
	// 1-based position in the measurement.
	ID string `json:"id,omitempty"`
	// Addr is the source address the probe traced from (Atlas src_addr).
	Addr string `json:"addr,omitempty"`
	// PublicAddr is the address the platform saw the probe come from
	// (Atlas "from"), when it differs from Addr (a probe behind NAT).
	PublicAddr string `json:"public_addr,omitempty"`
	// ASN, ASName and Carrier are the vantage's network: the format's own
	// AS number (Globalping) or else the IP-to-AS data route annotation
	// uses, looked up from PublicAddr or Addr by Annotate. ASSource says
	// which ("format", or the lookup's source).
	ASN      int    `json:"asn,omitempty"`
	ASName   string `json:"as_name,omitempty"`
	ASSource string `json:"as_source,omitempty"`
	Carrier  string `json:"carrier,omitempty"`
	// UserCarrier is which of the users' carriers (telecom, unicom, mobile,
	// other: User.Carrier) the vantage's network belongs to, from its AS;
	// absent when the AS is not known.
	UserCarrier string `json:"user_carrier,omitempty"`
	// Network is the platform's name for the probe's network (Globalping
	// probe.network).
	Network string `json:"network,omitempty"`
	City    string `json:"city,omitempty"`
	Country string `json:"country,omitempty"`
	// Time is the RFC 3339 time the platform gives for the run.
	Time string `json:"time,omitempty"`
	// Error is the platform's message when the run failed ("name
	// resolution failed"); the trace then holds the hops before it, if any.
	Error string `json:"error,omitempty"`
}

// VantageSourceFormat is Vantage.ASSource when the file itself gave the AS.
const VantageSourceFormat = "format"

// AtlasVantage is the vantage of one RIPE Atlas result (a traceroute or a
// ping run): probe prbID of measurement msmID (none when ≤ 0), its source
// address src and, when it differs, the public address from (both already
// parsed), the run's start from timestamp in Unix seconds (none when ≤ 0).
// The AS comes later, from AnnotateVantage.
func AtlasVantage(prbID, msmID int64, src, from string, timestamp int64) *Vantage {
	v := &Vantage{Platform: "ripe-atlas", ID: strconv.FormatInt(prbID, 10), Addr: src}
	if msmID > 0 {
		v.Measurement = strconv.FormatInt(msmID, 10)
	}
	if from != src {
		v.PublicAddr = from
	}
	if timestamp > 0 {
		v.Time = time.Unix(timestamp, 0).UTC().Format(time.RFC3339)
	}
	return v
}

// GlobalpingProbe is a Globalping result's "probe": where the measurement
// ran, with the network's own AS number.
type GlobalpingProbe struct {
	ASN     int    `json:"asn"`
	City    string `json:"city"`
	Country string `json:"country"`
	Network string `json:"network"`
}

// GlobalpingVantage is the vantage of result i (from 0) of the Globalping
// measurement id created at createdAt, run by probe p: its AS from the
// file (ASSource VantageSourceFormat), and, for a result whose status is
// "failed", the first line of its raw output as Error.
func GlobalpingVantage(id, createdAt string, i int, p GlobalpingProbe, status, rawOutput string) *Vantage {
	v := &Vantage{Platform: "globalping", Measurement: id, ID: strconv.Itoa(i + 1),
		ASN: p.ASN, Network: p.Network, City: p.City, Country: p.Country, Time: createdAt}
	if v.ASN > 0 {
		v.ASSource = VantageSourceFormat
	}
	if status == "failed" {
		first, _, _ := strings.Cut(strings.TrimSpace(rawOutput), "\n")
		v.Error = "failed: " + first
	}
	return v
}

// Label is a one-line name for the vantage: "ripe-atlas probe 10834
// 185.60.176.3 AS12345 Carrier, City, CC".
func (v *Vantage) Label() string {
	if v == nil {
		return ""
	}
	parts := []string{v.Platform}
	switch {
	case v.ID == "":
	case v.Platform == "globalping":
		// Globalping's results carry no probe id: ID is the position.
		parts = append(parts, "result "+v.ID)
	default:
		parts = append(parts, "probe "+v.ID)
	}
	if v.Addr != "" {
		parts = append(parts, v.Addr)
	}
	if v.ASN > 0 {
		parts = append(parts, "AS"+strconv.Itoa(v.ASN))
	}
	if v.Carrier != "" {
		parts = append(parts, v.Carrier)
	} else if v.Network != "" {
		parts = append(parts, v.Network)
	}
	place := strings.Trim(v.City+", "+v.Country, ", ")
	s := strings.Join(parts, " ")
	if place != "" {
		s += " (" + place + ")"
	}
	return s
}

// VantageIDs lists the traces' vantage ids for messages: "10834, 22880";
// a trace without one reads "-".
func VantageIDs(ts []*Trace) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = "-"
		if t.Vantage != nil && t.Vantage.ID != "" {
			ids[i] = t.Vantage.ID
		}
	}
	return strings.Join(ids, ", ")
}

// SelectVantages keeps the traces whose vantage matches sel: its id, its
// AS ("AS4134" or "4134"), its carrier ("ChinaNet Shanghai"), its users'
// carrier (telecom, unicom, mobile), its network name, or its city (names
// compared without case). Annotate first, so that the carrier is known.
func SelectVantages(ts []*Trace, sel string) []*Trace {
	var out []*Trace
	for _, t := range ts {
		if t.Vantage.matches(sel) {
			out = append(out, t)
		}
	}
	return out
}

func (v *Vantage) matches(sel string) bool {
	if v == nil || sel == "" {
		return false
	}
	if v.ID == sel {
		return true
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(sel), "AS")); err == nil && n > 0 && n == v.ASN {
		return true
	}
	for _, name := range []string{v.Carrier, v.UserCarrier, v.Network, v.City} {
		if name != "" && strings.EqualFold(name, sel) {
			return true
		}
	}
	return false
}

// AnnotateVantage names the vantage's network from the IP-to-AS data
// (db, as Annotate names hops) when the file did not give its AS, and its
// carrier from the AS either way.
func AnnotateVantage(v *Vantage, db ASNDB) {
	if v == nil {
		return
	}
	if v.ASN > 0 {
		if c, ok := CarrierForASN(v.ASN, v.Network); ok {
			if v.Carrier == "" {
				v.Carrier = c.Name
			}
			v.UserCarrier = userCarrierOf(c)
		}
		return
	}
	for _, a := range []string{v.PublicAddr, v.Addr} {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			continue
		}
		c, ok := LookupCarrier(ip, db)
		if !ok || c.ASN <= 0 {
			continue
		}
		v.ASN, v.ASName, v.Carrier, v.ASSource = c.ASN, c.ASName, c.Name, c.Source
		v.UserCarrier = userCarrierOf(c)
		return
	}
}

// userCarrierOf is the users' carrier (CarrierTelecom …) a network belongs
// to, by its class: China Telecom's ChinaNet, CN2 and CTGNet; China
// Unicom's 4837, 9929 and CUG; China Mobile's CMNET, CMI and CMIN2; other.
func userCarrierOf(c Carrier) string {
	switch c.Class {
	case ClassChinaNet, ClassCN2, ClassCTGNet:
		return CarrierTelecom
	case ClassCU4837, ClassCU9929, ClassCUG:
		return CarrierUnicom
	case ClassCMNET, ClassCMI, ClassCMIN2:
		return CarrierMobile
	}
	return CarrierOther
}

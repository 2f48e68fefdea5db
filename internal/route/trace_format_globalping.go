package route

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/linecheck/linecheck/probe"
)

// Globalping measurements (Source "globalping"): the answer of GET
// /v1/measurements/{id} for a traceroute or mtr measurement. Each of
// results[] becomes a trace with its Vantage: the probe's asn (the format's
// own, ASSource "format"), network, city and country; the results carry no
// probe id, so the vantage's ID is the result's 1-based position.
//
// result.hops[] are the TTLs in order (the position is the TTL: Globalping
// writes no TTL field); a hop with a null resolvedAddress (or a null hop)
// answered nothing. Each timings[].rtt is one received reply. Sent is mtr's
// stats.total; a traceroute hop does not say, so it is the largest number of
// timings any hop of that result has (the queries per hop: 2 as Globalping
// runs traceroute), and a result where nothing answered has no loss figure.
func init() {
	RegisterTraceFormat(TraceFormat{
		Rank:      3,
		Name:      "globalping",
		Title:     "Globalping traceroute or mtr measurements",
		Want:      "a Globalping measurement (no \"type\" and \"results\")",
		Source:    "globalping",
		Recognise: recogniseGlobalping,
		DecodeAll: readGlobalping,
		Note:      "from Globalping: a traceroute's probes per hop inferred from the hops that answered",
	})
}

func recogniseGlobalping(doc TraceDoc) bool {
	_, r := doc.Member("results")
	_, t := doc.Member("type")
	return r && t
}

type gpMeasurement struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Target    string `json:"target"`
	CreatedAt string `json:"createdAt"`
	Options   struct {
		Protocol string `json:"protocol"`
		Port     int    `json:"port"`
	} `json:"measurementOptions"`
	Results []struct {
		Probe  GlobalpingProbe `json:"probe"`
		Result *struct {
			Status          string   `json:"status"`
			RawOutput       string   `json:"rawOutput"`
			ResolvedAddress string   `json:"resolvedAddress"`
			Hops            []*gpHop `json:"hops"`
		} `json:"result"`
	} `json:"results"`
}

type gpHop struct {
	ResolvedAddress *string `json:"resolvedAddress"`
	ASN             []int   `json:"asn"`
	Timings         []struct {
		RTT *float64 `json:"rtt"`
	} `json:"timings"`
	Stats *struct {
		Total *int `json:"total"`
	} `json:"stats"`
}

func readGlobalping(data []byte, name string) ([]*Trace, error) {
	var m gpMeasurement
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: Globalping measurement: %w", name, jsonErr(data, err))
	}
	if m.Type != "traceroute" && m.Type != "mtr" {
		return nil, fmt.Errorf("%s: Globalping measurement: type: %q is neither traceroute nor mtr (linecheck reads routes)", name, m.Type)
	}
	proto := probe.ICMP
	switch strings.ToUpper(m.Options.Protocol) {
	case "", "ICMP":
	case "UDP":
		proto = probe.UDP
	case "TCP":
		proto = probe.TCP
	default:
		return nil, fmt.Errorf("%s: Globalping measurement: measurementOptions.protocol: %q is none of ICMP, UDP, TCP", name, m.Options.Protocol)
	}
	var out []*Trace
	for i, res := range m.Results {
		where := fmt.Sprintf("%s: Globalping results[%d]", name, i)
		if res.Result == nil {
			return nil, fmt.Errorf("%s.result: missing", where)
		}
		v := GlobalpingVantage(m.ID, m.CreatedAt, i, res.Probe, res.Result.Status, res.Result.RawOutput)
		t := &Trace{Schema: TraceSchema, Target: m.Target, Protocol: proto, Source: "globalping",
			Start: m.CreatedAt, Vantage: v, Hops: []Hop{}}
		if proto != probe.ICMP {
			t.Port = m.Options.Port
		}
		if a := res.Result.ResolvedAddress; a != "" {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				return nil, fmt.Errorf("%s.result.resolvedAddress: %q is not an IP address", where, a)
			}
			t.Addr = ip.String()
		}
		queries := 0
		for _, h := range res.Result.Hops {
			if h != nil {
				queries = max(queries, len(h.Timings))
			}
		}
		for j, h := range res.Result.Hops {
			at := fmt.Sprintf("%s.result.hops[%d]", where, j)
			b := newHopBuilder(j + 1)
			b.hop.Sent = queries
			if h == nil {
				t.Hops = append(t.Hops, b.done())
				continue
			}
			if m.Type == "mtr" {
				if h.Stats == nil || h.Stats.Total == nil || *h.Stats.Total < 0 {
					return nil, fmt.Errorf("%s.stats.total: missing (an mtr hop counts its probes there)", at)
				}
				b.hop.Sent = *h.Stats.Total
				if len(h.Timings) > b.hop.Sent {
					return nil, fmt.Errorf("%s.timings: %d replies to %d probes (stats.total)", at, len(h.Timings), b.hop.Sent)
				}
			}
			if h.ResolvedAddress == nil || *h.ResolvedAddress == "" {
				if len(h.Timings) > 0 {
					return nil, fmt.Errorf("%s.resolvedAddress: missing beside %d timings", at, len(h.Timings))
				}
				t.Hops = append(t.Hops, b.done())
				continue
			}
			ip, err := netip.ParseAddr(*h.ResolvedAddress)
			if err != nil {
				return nil, fmt.Errorf("%s.resolvedAddress: %q is not an IP address", at, *h.ResolvedAddress)
			}
			addr := ip.String()
			b.responder(addr)
			for k, tm := range h.Timings {
				if tm.RTT == nil {
					continue
				}
				if *tm.RTT < 0 || math.IsNaN(*tm.RTT) {
					return nil, fmt.Errorf("%s.timings[%d].rtt: %g is not a time in ms", at, k, *tm.RTT)
				}
				b.reply(addr, *tm.RTT)
			}
			hop := b.done()
			if len(h.ASN) > 0 && h.ASN[0] > 0 {
				hop.Responders[0].ASN = h.ASN[0]
			}
			t.Hops = append(t.Hops, hop)
		}
		finishTrace(t)
		out = append(out, t)
	}
	return out, nil
}

package route

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/probe"
)

// NextTrace's --json output (Source "nexttrace"): {"Hops": [[attempt, …],
// …]}, one group per TTL, one attempt per probe. An attempt with Success
// and an Address {IP, Zone} is a reply after RTT nanoseconds (Go's
// time.Duration); any other attempt is a probe that got none. The TTL is
// the attempts' TTL field, not the group's position. Geo.asnumber names the
// responder's AS. The file names neither the destination nor the source:
// the last TTL's responder is taken as the destination (NextTrace stops
// there), and the vantage is the tool alone, unless the sender says more.
func init() {
	RegisterTraceFormat(TraceFormat{
		Rank:      4,
		Name:      "nexttrace",
		Title:     "NextTrace --json output",
		Want:      "NextTrace --json output (no \"Hops\")",
		Source:    "nexttrace",
		Recognise: func(doc TraceDoc) bool { _, ok := doc.members["Hops"]; return ok },
		Decode:    readNextTrace,
		Note:      "from NextTrace --json: the destination is the last hop's responder; the file names no source",
	})
}

type ntAttempt struct {
	Success bool `json:"Success"`
	Address *struct {
		IP string `json:"IP"`
	} `json:"Address"`
	TTL *int    `json:"TTL"`
	RTT float64 `json:"RTT"`
	Geo *struct {
		ASNumber string `json:"asnumber"`
	} `json:"Geo"`
}

func readNextTrace(data []byte, name string) (*Trace, error) {
	var d struct {
		Hops [][]ntAttempt `json:"Hops"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: NextTrace --json: %w", name, jsonErr(data, err))
	}
	t := &Trace{Schema: TraceSchema, Protocol: probe.ICMP, Source: "nexttrace", Vantage: &Vantage{Platform: "nexttrace"}, Hops: []Hop{}}
	prev := 0
	for i, group := range d.Hops {
		if len(group) == 0 {
			continue
		}
		ttl := 0
		for j, a := range group {
			at := fmt.Sprintf("%s: NextTrace --json: Hops[%d][%d]", name, i, j)
			if a.TTL == nil {
				return nil, fmt.Errorf("%s.TTL: missing", at)
			}
			if j == 0 {
				ttl = *a.TTL
				if ttl <= prev || ttl > 255 {
					return nil, fmt.Errorf("%s.TTL: %d is not a TTL above %d (1..255)", at, ttl, prev)
				}
			} else if *a.TTL != ttl {
				return nil, fmt.Errorf("%s.TTL: %d in the group of TTL %d", at, *a.TTL, ttl)
			}
		}
		prev = ttl
		b := newHopBuilder(ttl)
		b.hop.Sent = len(group)
		var asn int
		for j, a := range group {
			if !a.Success || a.Address == nil || a.Address.IP == "" {
				continue
			}
			at := fmt.Sprintf("%s: NextTrace --json: Hops[%d][%d]", name, i, j)
			ip, err := netip.ParseAddr(a.Address.IP)
			if err != nil {
				return nil, fmt.Errorf("%s.Address.IP: %q is not an IP address", at, a.Address.IP)
			}
			if a.RTT < 0 {
				return nil, fmt.Errorf("%s.RTT: %g ns is negative", at, a.RTT)
			}
			b.reply(ip.String(), a.RTT/1e6)
			if a.Geo != nil && asn == 0 {
				asn, _ = strconv.Atoi(strings.TrimPrefix(strings.ToUpper(a.Geo.ASNumber), "AS"))
			}
		}
		h := b.done()
		if len(h.Responders) == 1 && asn > 0 {
			h.Responders[0].ASN = asn
		}
		t.Hops = append(t.Hops, h)
	}
	if n := len(t.Hops); n > 0 && len(t.Hops[n-1].Responders) > 0 {
		t.Addr = t.Hops[n-1].Responders[0].Addr
		t.Target = t.Addr
	}
	finishTrace(t)
	return t, nil
}

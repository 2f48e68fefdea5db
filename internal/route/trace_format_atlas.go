package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strings"

	"github.com/linecheck/linecheck/probe"
)

// RIPE Atlas traceroute results (Source "ripe-atlas"): the API's result
// list (GET /api/v2/measurements/ID/results/, one object per probe run), or
// one such object. Each becomes a trace with its Vantage (prb_id, src_addr,
// "from" when it differs, msm_id, timestamp); the AS comes from Annotate.
//
// Per hop (`hop`, kept as the TTL even where Atlas jumps to 255), the
// replies of `result[]` are read as Atlas documents them:
//   - `x: "*"`: a probe sent, no reply before the timeout;
//   - `late: N`: a reply that came after the timeout to a probe N packets
//     earlier: Hop.Late, not received, not a probe of its own;
//   - `dup: true`: a further reply to an answered probe: Hop.Duplicates;
//   - `edst`: a reply quoting another destination (the probe's other
//     traffic): Trace.Foreign, never received, never a responder;
//   - `from` with `rtt` (an `err` reply, ICMP unreachable, included): a
//     probe sent and answered; `from` without `rtt`: answered, no time.
//
// Sent is the entries that are neither late nor duplicates. An entry with
// `error` (the run failed: "name resolution failed", "bind failed") ends
// the hops; its message is Vantage.Error.
func init() {
	RegisterTraceFormat(TraceFormat{
		Rank:      2,
		Name:      "atlas",
		Title:     "RIPE Atlas traceroute results",
		Want:      "RIPE Atlas traceroute results (no \"prb_id\" and \"type\")",
		Source:    "ripe-atlas",
		Recognise: recogniseAtlas,
		DecodeAll: readAtlas,
		Note:      "from RIPE Atlas: hop numbers as the probe gives them",
	})
}

// recogniseAtlas claims a list whose first element, or an object that,
// has "prb_id" and "type".
func recogniseAtlas(doc TraceDoc) bool {
	if doc.members != nil {
		_, p := doc.Member("prb_id")
		_, t := doc.Member("type")
		return p && t
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(doc.Data, &list) != nil || len(list) == 0 {
		return false
	}
	_, p := list[0]["prb_id"]
	_, t := list[0]["type"]
	return p && t
}

type atlasResult struct {
	Type      string     `json:"type"`
	MsmID     int64      `json:"msm_id"`
	PrbID     int64      `json:"prb_id"`
	SrcAddr   string     `json:"src_addr"`
	From      string     `json:"from"`
	DstAddr   string     `json:"dst_addr"`
	DstName   string     `json:"dst_name"`
	AF        int        `json:"af"`
	Proto     string     `json:"proto"`
	Timestamp int64      `json:"timestamp"`
	Result    []atlasHop `json:"result"`
}

type atlasHop struct {
	Hop    *int         `json:"hop"`
	Error  string       `json:"error"`
	Result []atlasReply `json:"result"`
}

type atlasReply struct {
	X    string   `json:"x"`
	From string   `json:"from"`
	RTT  *float64 `json:"rtt"`
	Late *int     `json:"late"`
	Dup  bool     `json:"dup"`
	Edst string   `json:"edst"`
	Err  any      `json:"err"`
}

func readAtlas(data []byte, name string) ([]*Trace, error) {
	var results []atlasResult
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		if err := json.Unmarshal(data, &results); err != nil {
			return nil, fmt.Errorf("%s: RIPE Atlas results: %w", name, jsonErr(data, err))
		}
	} else {
		var one atlasResult
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, fmt.Errorf("%s: RIPE Atlas result: %w", name, jsonErr(data, err))
		}
		results = []atlasResult{one}
	}
	var out []*Trace
	for i, res := range results {
		where := fmt.Sprintf("%s: RIPE Atlas result %d (probe %d)", name, i, res.PrbID)
		t, err := atlasTrace(res, where)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func atlasTrace(res atlasResult, where string) (*Trace, error) {
	if res.Type != "traceroute" {
		if res.Type == "ping" {
			return nil, fmt.Errorf("%s: type: \"ping\" is not a traceroute: give ping results as a candidate's recorded.probes (compare reads them there); trace --replay reads traceroute results", where)
		}
		return nil, fmt.Errorf("%s: type: %q is not a traceroute (linecheck reads traceroute results)", where, res.Type)
	}
	if res.PrbID <= 0 {
		return nil, fmt.Errorf("%s: prb_id: missing", where)
	}
	if res.Result == nil {
		return nil, fmt.Errorf("%s: result: missing (a traceroute result lists its hops there)", where)
	}
	proto, ok := atlasProtocols[strings.ToUpper(res.Proto)]
	if !ok {
		return nil, fmt.Errorf("%s: proto: %q is none of ICMP, UDP, TCP", where, res.Proto)
	}
	for field, a := range map[string]*string{"src_addr": &res.SrcAddr, "from": &res.From, "dst_addr": &res.DstAddr} {
		if *a == "" {
			continue
		}
		ip, err := netip.ParseAddr(*a)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %q is not an IP address", where, field, *a)
		}
		*a = ip.String()
	}
	v := AtlasVantage(res.PrbID, res.MsmID, res.SrcAddr, res.From, res.Timestamp)
	t := &Trace{Schema: TraceSchema, Target: res.DstName, Addr: res.DstAddr, Protocol: proto,
		Source: "ripe-atlas", Start: v.Time, Vantage: v, Hops: []Hop{}}
	if t.Target == "" {
		t.Target = res.DstAddr
	}
	prev := 0
	for j, h := range res.Result {
		if h.Error != "" {
			v.Error = h.Error
			break
		}
		if h.Hop == nil {
			return nil, fmt.Errorf("%s: result[%d].hop: missing", where, j)
		}
		if *h.Hop <= prev || *h.Hop > 255 {
			return nil, fmt.Errorf("%s: result[%d].hop: %d is not a hop number above %d (1..255)", where, j, *h.Hop, prev)
		}
		prev = *h.Hop
		b := newHopBuilder(*h.Hop)
		for k, r := range h.Result {
			at := fmt.Sprintf("%s: result[%d].result[%d]", where, j, k)
			if r.RTT != nil && (*r.RTT < 0 || math.IsNaN(*r.RTT)) {
				return nil, fmt.Errorf("%s.rtt: %g is not a time in ms", at, *r.RTT)
			}
			if r.From != "" {
				ip, err := netip.ParseAddr(r.From)
				if err != nil {
					return nil, fmt.Errorf("%s.from: %q is not an IP address", at, r.From)
				}
				r.From = ip.String()
			}
			probeEntry := r.Late == nil && !r.Dup
			if probeEntry {
				b.hop.Sent++
			}
			switch {
			case r.Edst != "":
				t.Foreign++
			case r.Late != nil:
				b.hop.Late++
				if r.From != "" {
					b.responder(r.From)
				}
			case r.Dup:
				b.hop.Duplicates++
				if r.From != "" {
					b.responder(r.From)
				}
			case r.X == "*":
			case r.From == "":
				return nil, fmt.Errorf("%s: neither \"x\" nor \"from\": not a reply Atlas writes", at)
			case r.RTT != nil:
				b.reply(r.From, *r.RTT)
			default:
				b.responder(r.From)
			}
		}
		t.Hops = append(t.Hops, b.done())
	}
	finishTrace(t)
	return t, nil
}

var atlasProtocols = map[string]probe.Protocol{"ICMP": probe.ICMP, "UDP": probe.UDP, "TCP": probe.TCP, "": probe.UDP}

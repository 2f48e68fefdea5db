package pingfile

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"time"

	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/readlimit"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// Globalping ping measurements (GET /v1/measurements/{id}, type "ping"):
// one stream per results[] element, whose probe gives the vantage (ASN,
// city, country, network; no probe id: the vantage's ID is the result's
// 1-based position). A result's stats say what was sent (total) and
// answered (rcv); timings list the answers' RTTs in order, without the
// lost probes' places. So a vantage's records are its answers first, then
// total - rcv lost probes, all at the measurement's createdAt: the loss
// and the RTT percentiles are the same whatever the order. Timings beyond
// rcv are duplicate answers (ping counts a duplicate apart from the
// received packets), the last ones taken as the duplicates. A result that
// failed (status "failed": no address, no route) has no records and keeps
// the first line of its output as the vantage's Error.
func init() {
	register(Format{
		Rank:  3,
		Name:  "globalping",
		Title: "Globalping ping measurements",
		Recognise: func(h Head) bool {
			return !h.List && h.Members["type"] == "ping" && h.Has("results") && !h.Has("prb_id")
		},
		Read: readGlobalping,
	})
}

type gpMeasurement struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"`
	Status    string     `json:"status"`
	Target    string     `json:"target"`
	CreatedAt string     `json:"createdAt"`
	Results   []gpResult `json:"results"`
}

type gpResult struct {
	Probe  route.GlobalpingProbe `json:"probe"`
	Result *struct {
		Status          string     `json:"status"`
		RawOutput       string     `json:"rawOutput"`
		ResolvedAddress string     `json:"resolvedAddress"`
		Timings         []gpTiming `json:"timings"`
		Stats           *struct {
			Total *int `json:"total"`
			Rcv   *int `json:"rcv"`
		} `json:"stats"`
	} `json:"result"`
}

type gpTiming struct {
	RTT *float64 `json:"rtt"`
}

func readGlobalping(r io.Reader, name string) ([]Stream, error) {
	data, err := readlimit.ReadAll(r, name, readlimit.Document)
	if err != nil {
		return nil, err
	}
	var m gpMeasurement
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: Globalping measurement: %w", name, jsonmsg.Describe(data, err))
	}
	if m.Status == "in-progress" {
		return nil, fmt.Errorf("%s: Globalping measurement %s: status: still in progress (fetch it again when it has finished)", name, m.ID)
	}
	when, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("%s: Globalping measurement: createdAt: %q is not an RFC 3339 time", name, m.CreatedAt)
	}
	if len(m.Results) == 0 {
		return nil, fmt.Errorf("%s: Globalping measurement: results: %w", name, errNoProbes)
	}
	out := make([]Stream, 0, len(m.Results))
	for i, res := range m.Results {
		at := where(name, "Globalping", i, "results")
		if res.Result == nil {
			return nil, fmt.Errorf("%s.result: missing", at)
		}
		rr := res.Result
		v := route.GlobalpingVantage(m.ID, m.CreatedAt, i, res.Probe, rr.Status, rr.RawOutput)
		s := Stream{Vantage: v}
		if rr.Status == "failed" {
			out = append(out, s)
			continue
		}
		ip, err := netip.ParseAddr(rr.ResolvedAddress)
		if err != nil {
			return nil, fmt.Errorf("%s.result.resolvedAddress: %q is not an IP address", at, rr.ResolvedAddress)
		}
		if rr.Stats == nil || rr.Stats.Total == nil || *rr.Stats.Total < 0 {
			return nil, fmt.Errorf("%s.result.stats.total: missing (the probes sent)", at)
		}
		if rr.Stats.Rcv == nil || *rr.Stats.Rcv < 0 || *rr.Stats.Rcv > *rr.Stats.Total {
			return nil, fmt.Errorf("%s.result.stats.rcv: missing or above stats.total (the probes answered)", at)
		}
		total, rcv := *rr.Stats.Total, *rr.Stats.Rcv
		if len(rr.Timings) < rcv {
			return nil, fmt.Errorf("%s.result.timings: %d RTTs for %d answers (stats.rcv)", at, len(rr.Timings), rcv)
		}
		target := m.Target
		if target == "" {
			target = ip.String()
		}
		for k, tm := range rr.Timings {
			if tm.RTT == nil || *tm.RTT < 0 || math.IsNaN(*tm.RTT) {
				return nil, fmt.Errorf("%s.result.timings[%d].rtt: missing or not a time in ms", at, k)
			}
			st, seq := probe.StatusOK, k
			if k >= rcv {
				st, seq = probe.StatusDup, rcv-1
			}
			s.Records = append(s.Records, probe.Record{Schema: probe.StreamSchema, Time: when, Target: target,
				Addr: ip.String(), Protocol: probe.ICMP, Seq: max(seq, 0), Status: st, RTTms: tm.RTT})
		}
		for k := rcv; k < total; k++ {
			s.Records = append(s.Records, probe.Record{Schema: probe.StreamSchema, Time: when, Target: target,
				Addr: ip.String(), Protocol: probe.ICMP, Seq: k, Status: probe.StatusLost})
		}
		out = append(out, s)
	}
	return out, nil
}

package route

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/linecheck/linecheck/internal/stats"
)

// The output of `mtr --json` (Source "mtr-json"): each hub becomes a hop
// (count = TTL, host "???" = no responder, Loss% / 100 = loss, Snt = sent,
// Rcv or else Snt·(1−loss) = received, Best/Avg/Wrst/StDev =
// min/avg/max/stdev). mtr has no percentiles, so p50, p95 and p99 stay 0.
// Its jitter columns are converted when present: mean_abs = Javg·n/(n−1)
// (mtr averages a first sample of 0 in), rfc3550 ≈ Jint/16 (mtr never
// scales its RFC 1889 recurrence back). mtr keeps one address per TTL, so
// ECMP alternates are lost. The hop flags are computed here with FlagHops;
// the last hop is the destination when its host equals mtr's dst.
func init() {
	RegisterTraceFormat(TraceFormat{
		Rank:   1,
		Name:   "mtr",
		Title:  "the output of mtr --json",
		Want:   "`mtr --json` output (no \"report\")",
		Source: "mtr-json",
		Recognise: func(doc TraceDoc) bool {
			_, ok := doc.Member("report")
			return ok
		},
		Decode: readMTR,
		Known:  mtrKnown,
		Note:   "from mtr --json: no percentiles, no jitter unless mtr wrote its jitter columns (- here, 0 in JSON), one address per hop",
	})
}

// mtrKnown: mtr's JSON has no samples, so percentiles and pdv_p95 are never
// known, and the rfc3550 and mean_abs jitter only when mtr wrote its jitter
// columns (Jint, Javg; -o with J, M, X, I), which readMTR turns into
// non-zero values.
func mtrKnown(r Responder) Known {
	return Known{RFC3550: r.Jitter.RFC3550 != 0, MeanAbs: r.Jitter.MeanAbs != 0}
}

// mtrNum accepts a JSON number or a number in a string (older mtr versions
// quote "count" and "psize").
type mtrNum struct {
	v   float64
	set bool
}

func (n *mtrNum) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s is not a finite number", b)
	}
	n.v, n.set = v, true
	return nil
}

type mtrDoc struct {
	Report struct {
		MTR struct {
			Src   string `json:"src"`
			Dst   string `json:"dst"`
			Tests mtrNum `json:"tests"`
		} `json:"mtr"`
		Hubs []struct {
			Count mtrNum `json:"count"`
			Host  string `json:"host"`
			ASN   string `json:"ASN"`
			Loss  mtrNum `json:"Loss%"`
			Snt   mtrNum `json:"Snt"`
			Rcv   mtrNum `json:"Rcv"`
			Best  mtrNum `json:"Best"`
			Avg   mtrNum `json:"Avg"`
			Wrst  mtrNum `json:"Wrst"`
			StDev mtrNum `json:"StDev"`
			Javg  mtrNum `json:"Javg"`
			Jint  mtrNum `json:"Jint"`
		} `json:"hubs"`
	} `json:"report"`
}

func readMTR(data []byte, name string) (*Trace, error) {
	var d mtrDoc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: mtr --json: %w", name, jsonErr(data, err))
	}
	m := d.Report.MTR
	if m.Dst == "" {
		return nil, fmt.Errorf("%s: mtr --json: report.mtr.dst is missing", name)
	}
	t := &Trace{Schema: TraceSchema, Target: m.Dst, Protocol: "icmp", Source: "mtr-json", Hops: []Hop{}}
	if a, err := netip.ParseAddr(m.Dst); err == nil {
		t.Addr = a.String()
	}
	prev := 0
	for i, hb := range d.Report.Hubs {
		ttl := int(hb.Count.v)
		if !hb.Count.set || float64(ttl) != hb.Count.v || ttl <= prev || ttl > 255 {
			return nil, fmt.Errorf("%s: mtr --json: hubs[%d].count: %v is not a TTL above %d", name, i, hb.Count.v, prev)
		}
		// mtr leaves out nothing in between, but a hand-edited file might.
		for gap := prev + 1; gap < ttl; gap++ {
			t.Hops = append(t.Hops, Hop{TTL: gap, Loss: 1, Flags: []string{}, Responders: []Responder{}})
		}
		prev = ttl
		loss := hb.Loss.v / 100
		if loss < 0 || loss > 1 {
			return nil, fmt.Errorf("%s: mtr --json: hubs[%d].Loss%%: %g is not a percentage", name, i, hb.Loss.v)
		}
		sent := int(hb.Snt.v)
		if sent < 0 {
			return nil, fmt.Errorf("%s: mtr --json: hubs[%d].Snt: %g is negative", name, i, hb.Snt.v)
		}
		h := Hop{TTL: ttl, Sent: sent, Loss: loss, Flags: []string{}, Responders: []Responder{}}
		if hb.Host != "" && hb.Host != "???" {
			recv := int(math.Round(float64(sent) * (1 - loss)))
			if hb.Rcv.set {
				recv = int(hb.Rcv.v)
			}
			r := Responder{Addr: hb.Host, Recv: recv,
				RTT: stats.RTTStats{Min: hb.Best.v, Avg: hb.Avg.v, Max: hb.Wrst.v, Stdev: hb.StDev.v}}
			if hb.Javg.set && recv > 1 {
				r.Jitter.MeanAbs = hb.Javg.v * float64(recv) / float64(recv-1)
			}
			if hb.Jint.set {
				r.Jitter.RFC3550 = hb.Jint.v / 16
			}
			if asn, err := strconv.Atoi(strings.TrimPrefix(hb.ASN, "AS")); err == nil && asn > 0 {
				r.ASN = asn
			}
			h.Responders = append(h.Responders, r)
		}
		t.Hops = append(t.Hops, h)
	}
	if n := len(t.Hops); n > 0 && len(t.Hops[n-1].Responders) > 0 && t.Hops[n-1].Responders[0].Addr == m.Dst {
		t.Reached = true
		t.Hops[n-1].Flags = append(t.Hops[n-1].Flags, FlagDestination)
		if t.Addr == "" {
			t.Addr = m.Dst
		}
	}
	FlagHops(t.Hops)
	return t, nil
}

package pingfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/linecheck/linecheck/internal/jsonmsg"
	"github.com/linecheck/linecheck/internal/readlimit"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/probe"
)

// RIPE Atlas ping results: the API's result list (GET
// /api/v2/measurements/ID/results/, format=json), one JSON object per line
// (format=txt), or one object. Each result is one run of one probe
// (prb_id) toward dst_addr at timestamp; a probe's runs are one stream, in
// time order. Its result[] entries are read as Atlas documents them:
//   - {"rtt": ms}: a probe answered (ok);
//   - {"x": "*"}: a probe with no answer before the timeout (lost);
//   - {"rtt": ms, "dup": 1}: a further answer to a probe already answered
//     (a duplicate: not a probe of its own);
//   - {"late": N, "rtt": ms}: the answer to the probe N entries back, after
//     its timeout: that probe becomes late (sent, not received), not a
//     probe of its own;
//   - {"error": msg}: the probe could not be sent ("sendto failed"): not a
//     probe of the line; the message is the vantage's Error.
//
// sent, rcvd and dup of the result are Atlas's own counts: they must
// agree with the entries (a file edited by hand, or cut, says so).
func init() {
	register(Format{
		Rank:  2,
		Name:  "atlas",
		Title: "RIPE Atlas ping results",
		Recognise: func(h Head) bool {
			return h.Has("prb_id") && h.Members["type"] == "ping"
		},
		Read: readAtlas,
	})
}

type atlasResult struct {
	Type      string       `json:"type"`
	MsmID     int64        `json:"msm_id"`
	PrbID     int64        `json:"prb_id"`
	SrcAddr   string       `json:"src_addr"`
	From      string       `json:"from"`
	DstAddr   string       `json:"dst_addr"`
	DstName   string       `json:"dst_name"`
	Timestamp int64        `json:"timestamp"`
	Sent      *int         `json:"sent"`
	Rcvd      *int         `json:"rcvd"`
	Dup       *int         `json:"dup"`
	Result    []atlasReply `json:"result"`
}

type atlasReply struct {
	RTT   *float64        `json:"rtt"`
	X     string          `json:"x"`
	Dup   json.RawMessage `json:"dup"`
	Late  *int            `json:"late"`
	Error *string         `json:"error"`
}

func readAtlas(r io.Reader, name string) ([]Stream, error) {
	data, err := readlimit.ReadAll(r, name, readlimit.Document)
	if err != nil {
		return nil, err
	}
	var results []atlasResult
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		if err := json.Unmarshal(data, &results); err != nil {
			return nil, fmt.Errorf("%s: RIPE Atlas ping results: %w", name, jsonmsg.Describe(data, err))
		}
	} else {
		// One object, or one per line (format=txt): results[i] is the
		// i-th of them, as in a list.
		d := json.NewDecoder(bytes.NewReader(data))
		for {
			var res atlasResult
			err := d.Decode(&res)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: RIPE Atlas ping result %d: %w", name, len(results), jsonmsg.Describe(data, err))
			}
			results = append(results, res)
		}
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: RIPE Atlas ping results: %w", name, errNoProbes)
	}
	var out []Stream
	byProbe := map[int64]int{}
	for i, res := range results {
		at := where(name, "RIPE Atlas", i, "results")
		v, recs, err := atlasRun(res, at)
		if err != nil {
			return nil, err
		}
		k, ok := byProbe[res.PrbID]
		if !ok {
			k = len(out)
			byProbe[res.PrbID] = k
			out = append(out, Stream{Vantage: v})
		}
		s := &out[k]
		if v.Error != "" && s.Vantage.Error == "" {
			s.Vantage.Error = v.Error
		}
		s.Records = append(s.Records, recs...)
	}
	for i := range out {
		renumber(out[i].Records)
	}
	return out, nil
}

// atlasRun reads one result: its vantage and its records (numbered within
// the run; readAtlas numbers a vantage's runs through).
func atlasRun(res atlasResult, at string) (*route.Vantage, []probe.Record, error) {
	if res.Type != "ping" {
		return nil, nil, fmt.Errorf("%s.type: %q is not a ping result (recorded.probes reads ping results; traceroutes go in recorded.forward)", at, res.Type)
	}
	if res.PrbID <= 0 {
		return nil, nil, fmt.Errorf("%s.prb_id: missing", at)
	}
	if res.Result == nil {
		return nil, nil, fmt.Errorf("%s.result: missing (a ping result lists its packets there)", at)
	}
	for field, a := range map[string]*string{"src_addr": &res.SrcAddr, "from": &res.From, "dst_addr": &res.DstAddr} {
		if *a == "" {
			continue
		}
		ip, err := netip.ParseAddr(*a)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.%s: %q is not an IP address", at, field, *a)
		}
		*a = ip.String()
	}
	if res.DstAddr == "" {
		return nil, nil, fmt.Errorf("%s.dst_addr: missing (the address pinged)", at)
	}
	if res.Timestamp <= 0 {
		return nil, nil, fmt.Errorf("%s.timestamp: missing (when the run started)", at)
	}
	when := time.Unix(res.Timestamp, 0).UTC()
	v := route.AtlasVantage(res.PrbID, res.MsmID, res.SrcAddr, res.From, res.Timestamp)
	target := res.DstName
	if target == "" {
		target = res.DstAddr
	}
	rec := func(st probe.Status, rtt *float64) probe.Record {
		return probe.Record{Schema: probe.StreamSchema, Time: when, Target: target, Addr: res.DstAddr,
			Protocol: probe.ICMP, Status: st, RTTms: rtt}
	}
	var recs []probe.Record
	var probes []int // index in recs of each probe sent, in order
	var rcvd, dups, late, errs int
	for k, e := range res.Result {
		ea := fmt.Sprintf("%s.result[%d]", at, k)
		if e.RTT != nil && (*e.RTT < 0 || math.IsNaN(*e.RTT)) {
			return nil, nil, fmt.Errorf("%s.rtt: %g is not a time in ms", ea, *e.RTT)
		}
		dup, err := truthy(e.Dup)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.dup: %v", ea, err)
		}
		switch {
		case e.Error != nil:
			errs++
			if v.Error == "" {
				v.Error = *e.Error
			}
		case e.Late != nil:
			n := *e.Late
			if n < 1 || n > len(probes) {
				return nil, nil, fmt.Errorf("%s.late: %d is not a probe before it (1..%d)", ea, n, len(probes))
			}
			p := &recs[probes[len(probes)-n]]
			if p.Status != probe.StatusLost {
				return nil, nil, fmt.Errorf("%s.late: the probe %d back was not lost (%s): a late answer follows a timeout", ea, n, p.Status)
			}
			p.Status, p.RTTms = probe.StatusLate, e.RTT
			late++
		case dup:
			if e.RTT == nil {
				return nil, nil, fmt.Errorf("%s.rtt: missing beside dup", ea)
			}
			if len(probes) == 0 {
				return nil, nil, fmt.Errorf("%s.dup: a duplicate before any probe", ea)
			}
			dups++
			recs = append(recs, rec(probe.StatusDup, e.RTT))
		case e.X == "*":
			probes = append(probes, len(recs))
			recs = append(recs, rec(probe.StatusLost, nil))
		case e.RTT != nil:
			rcvd++
			probes = append(probes, len(recs))
			recs = append(recs, rec(probe.StatusOK, e.RTT))
		default:
			return nil, nil, fmt.Errorf("%s: neither rtt, x: \"*\", dup, late nor error", ea)
		}
	}
	// Atlas's counts must agree with the entries. The documentation does
	// not say whether a late answer counts in rcvd, nor an entry with an
	// error in sent: either reading is taken.
	for _, c := range []struct {
		field   string
		said    *int
		got     []int
		entries string
	}{
		{"sent", res.Sent, []int{len(probes), len(probes) + errs}, "probes"},
		{"rcvd", res.Rcvd, []int{rcvd, rcvd + late}, "answers"},
		{"dup", res.Dup, []int{dups}, "duplicates"},
	} {
		if c.said != nil && !slices.Contains(c.got, *c.said) {
			return nil, nil, fmt.Errorf("%s.%s: %d, but result[] holds %d %s (a file cut or edited?)", at, c.field, *c.said, c.got[0], c.entries)
		}
	}
	return v, recs, nil
}

// truthy reads Atlas's dup flag: absent, a number (1) or a boolean.
func truthy(raw json.RawMessage) (bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("want a number or true/false, got %s", raw)
}

// renumber numbers a vantage's records from 0 in order, a duplicate with
// the number of the probe it answers.
func renumber(recs []probe.Record) {
	seq := -1
	for i := range recs {
		if recs[i].Status != probe.StatusDup {
			seq++
		}
		recs[i].Seq = max(seq, 0)
	}
}

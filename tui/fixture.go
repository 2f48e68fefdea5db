package tui

import (
	"fmt"
	"math"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/engine"
	"github.com/linecheck/linecheck/internal/route"
	"github.com/linecheck/linecheck/internal/stats"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The fixture is a small, hand-built, illustrative scenario (documentation
// addresses, invented prices) with every figure computable by hand. The
// golden tests, the benchmark and `linecheck tui --fixture` use it; its
// numbers are worked out in testdata/FIXTURE.md.

// FixtureStart is the fixed clock of the fixture: the first probe's time
// (a function, so that no caller can move it).
func FixtureStart() time.Time { return time.Date(2026, 10, 14, 9, 0, 0, 0, time.UTC) }

// fixtureRTTs are the recorded RTTs (ms) per candidate, one probe a second;
// NaN is a lost probe.
var fixtureRTTs = map[string][]float64{
	"hk-cn2-gia": {22, 23, 24, 22, 25, 23, 23, 22, 26, 24},
	"hk-bgp":     {35, 48, 41, math.NaN(), 52, 39, 44, math.NaN(), 61, 47},
	"tokyo-ntt":  {48, 47, 49, 48, 50, 48, 47, 49, 48, 48},
	"la-cu9929":  {132, 131, 135, 133, 131, 140, 132, 131, 134, 133},
}

func f64(v float64) *float64 { return &v }

// fixtureSLA are the thresholds of the example candidates file.
func fixtureSLA() candidates.SLA {
	return candidates.SLA{RTTP95ms: f64(60), Loss: f64(0.005), JitterMs: f64(5), MaxStretch: f64(2.0),
		LineClasses: []string{"cn2-gia", "cu-9929", "cmin2"}}
}

// fixtureAddr is each fixture candidate's probe target.
var fixtureAddr = map[string]string{"hk-cn2-gia": "203.0.113.10", "hk-bgp": "203.0.113.20",
	"tokyo-ntt": "203.0.113.30", "la-cu9929": "203.0.113.40"}

// FixtureRecords returns the probe records of a fixture candidate.
func FixtureRecords(name string) []engine.Record {
	var out []engine.Record
	for i, v := range fixtureRTTs[name] {
		r := engine.Record{Schema: engine.StreamSchema, Time: FixtureStart().Add(time.Duration(i) * time.Second),
			Target: fixtureAddr[name], Addr: fixtureAddr[name], Protocol: engine.ICMP, Seq: i, Status: engine.StatusOK}
		if math.IsNaN(v) {
			r.Status = engine.StatusLost
		} else {
			r.RTTms = f64(v)
		}
		out = append(out, r)
	}
	return out
}

func money(a, cur string) billing.Money { return moneyOf(a, cur) }

// fixtureTraffic is October 2026 in 5-minute slots: out 600 Mbps from 08:00
// to 24:00 UTC and 200 Mbps from 00:00 to 08:00; in a quarter of out. Two
// thirds of the slots are at the day rate, so every 95th method gives
// 600 Mbps out and 150 Mbps in.
func fixtureTraffic() *verdict.TrafficSummary {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	n := 31 * 288
	step := 5 * time.Minute
	tr := &verdict.TrafficSummary{Source: "traffic/2026-10.csv", PeriodStart: start, PeriodEnd: start.Add(time.Duration(n) * step),
		P95bps: 600e6, PeakBps: 600e6, Samples: n,
		Times: make([]time.Time, n), InBps: make([]float64, n), OutBps: make([]float64, n)}
	for i := 0; i < n; i++ {
		out := 600e6
		if (i%288)*5 < 8*60 {
			out = 200e6
		}
		tr.Times[i], tr.OutBps[i], tr.InBps[i] = start.Add(time.Duration(i)*step), out, out/4
		tr.OutBytes += int64(out * step.Seconds() / 8)
		tr.InBytes += int64(out / 4 * step.Seconds() / 8)
	}
	return tr
}

// fixtureP95 is the 95th of the fixture traffic under a direction rule, in
// Mbps, scaled: in 150, out 600, sum 750, max and greater 600.
func fixtureP95(dir billing.Direction, scale float64) float64 {
	switch dir {
	case billing.DirIn:
		return 150 * scale
	case billing.DirSum:
		return 750 * scale
	default:
		return 600 * scale
	}
}

// FixtureCosts prices the fixture offers on the fixture traffic under o
// (a stand-in for billing: commit plus overage on the 95th; per-GB on
// 156,240 GB out a month at ×1; fixed ports).
func FixtureCosts(o CostOptions) map[string]Cost {
	if o.Scale <= 0 {
		o.Scale = 1
	}
	p95 := fixtureP95(o.Direction, o.Scale)
	gbOut := 156240 * o.Scale
	commit := func(commitMbps, price, over float64) (float64, string) {
		amt := commitMbps * price
		if p95 > commitMbps {
			amt += (p95 - commitMbps) * over
		}
		return amt, fmt.Sprintf("%s Mbps, commit %.0f", mbps(p95), commitMbps)
	}
	levels := []Level{{Name: "95th in", Mbps: 150 * o.Scale}, {Name: "95th out", Mbps: 600 * o.Scale}}
	if o.Direction.PerSlot() {
		levels = []Level{{Name: "95th " + string(o.Direction), Mbps: p95}}
	}
	amt := func(f float64) string { return fmt.Sprintf("%.2f", f) }
	mk := func(offer, cur string, fxRate float64, schemes []SchemeCost, items []CostItem, commitMbps float64) Cost {
		total, itemSum := 0.0, 0.0
		for i := range items {
			items[i].Amount.Currency = cur
			itemSum += amountFloat(items[i].Amount)
		}
		for i := range schemes {
			schemes[i].Amount.Currency = cur
			schemes[i].Offer = offer
			schemes[i].Total = money(amt(amountFloat(schemes[i].Amount)+itemSum), cur)
			if !schemes[i].Offered {
				schemes[i].Offer = offer + "-" + schemes[i].Scheme
			} else {
				total = amountFloat(schemes[i].Total)
			}
		}
		c := Cost{Opts: o, Offer: offer, Total: money(amt(total), cur), TotalBase: money(amt(total*fxRate), "CNY"),
			Schemes: schemes, Items: items, Levels: levels, CommitMbps: commitMbps, FX: fxRate}
		if cur != "CNY" {
			c.Notes = []string{fmt.Sprintf("converted at fx 1 %s = %.2f CNY", cur, fxRate)}
		}
		return c
	}
	gia, giaD := commit(500, 60, 90)
	bgp, bgpD := commit(500, 30, 45)
	la, laD := commit(500, 4.5, 6)
	gbD := fmt.Sprintf("%s GB out × ", billing.GroupThousands(fmt.Sprintf("%.0f", gbOut)))
	return map[string]Cost{
		"hk-cn2-gia": mk("hk-cn2", "CNY", 1, []SchemeCost{
			{Scheme: "fixed", Detail: "1 Gbps port", Amount: money("65000.00", "")},
			{Scheme: "per-gb", Detail: gbD + "0.45", Amount: money(amt(gbOut*0.45), "")},
			{Scheme: "p95", Detail: giaD, Amount: money(amt(gia), ""), Offered: true},
		}, []CostItem{
			{Name: "GPU 8×H100", Detail: "machine-month", Amount: money("128000.00", "")},
			{Name: "block storage", Detail: "2,000 GB × 0.60", Amount: money("1200.00", "")},
			{Name: "public IPv4", Detail: "4 × 30", Amount: money("120.00", "")},
			{Name: "support", Amount: money("1500.00", "")},
		}, 500),
		"hk-bgp": mk("hk-bgp", "CNY", 1, []SchemeCost{
			{Scheme: "fixed", Detail: "1 Gbps port", Amount: money("32000.00", "")},
			{Scheme: "per-gb", Detail: gbD + "0.20", Amount: money(amt(gbOut*0.20), "")},
			{Scheme: "p95", Detail: bgpD, Amount: money(amt(bgp), ""), Offered: true},
		}, []CostItem{
			{Name: "GPU 8×H100", Detail: "machine-month", Amount: money("128000.00", "")},
			{Name: "public IPv4", Detail: "4 × 20", Amount: money("80.00", "")},
		}, 500),
		"tokyo-ntt": mk("tokyo", "CNY", 1, []SchemeCost{
			{Scheme: "fixed", Detail: "1 Gbps port", Amount: money("25000.00", "")},
			{Scheme: "per-gb", Detail: gbD + "0.12", Amount: money(amt(gbOut*0.12), ""), Offered: true},
		}, []CostItem{
			{Name: "GPU H100 card-hours", Detail: "8 × 744 h × 22", Amount: money("130944.00", "")},
			{Name: "block storage", Detail: "2,000 GB × 0.60", Amount: money("1200.00", "")},
		}, 0),
		"la-cu9929": mk("la-9929", "USD", 7.10, []SchemeCost{
			{Scheme: "fixed", Detail: "1 Gbps port", Amount: money("3200.00", ""), Offered: true},
			{Scheme: "per-gb", Detail: gbD + "0.02", Amount: money(amt(gbOut*0.02), "")},
			{Scheme: "p95", Detail: laD, Amount: money(amt(la), "")},
		}, []CostItem{
			{Name: "GPU 8×H100", Detail: "machine-month", Amount: money("17500.00", "")},
			{Name: "public IPv4", Detail: "4 × 3", Amount: money("12.00", "")},
		}, 500),
	}
}

// hop builds a fixture hop: one responder, n probes, the given RTT stats.
func hop(ttl int, addr string, asn int, carrier string, loss float64, flags []string, last, min, avg, p50, p95, max, sd float64) route.Hop {
	h := route.Hop{TTL: ttl, Sent: 10, Loss: loss, Flags: flags}
	if addr == "" {
		return h
	}
	recv := int(math.Round(10 * (1 - loss)))
	h.Responders = []route.Responder{{Addr: addr, Recv: recv, ASN: asn, Carrier: carrier,
		RTT:     stats.RTTStats{Min: min, Avg: avg, P50: p50, P95: p95, P99: max, Max: max, Stdev: sd},
		Samples: []float64{last}}}
	return h
}

// FixtureTraces are the forward traces of the fixture and the return traces
// of the candidates whose return path was validated.
func FixtureTraces() []TraceMsg {
	rl := []string{"icmp-rate-limited"}
	ev := func(rule, conf string) *route.LineEvidence { return &route.LineEvidence{Rule: rule, Confidence: conf} }
	gia := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.10", Addr: "203.0.113.10", Protocol: engine.ICMP, Reached: true,
		LineClass: "cn2-gia", LineEvidence: ev("59.43/16 end to end, no 202.97", "high"),
		Hops: []route.Hop{
			hop(1, "10.0.0.1", 0, "private", 0, nil, 0.5, 0.4, 0.5, 0.5, 0.7, 0.8, 0.1),
			hop(2, "100.64.0.1", 0, "cgnat", 0, nil, 1.3, 1.1, 1.3, 1.3, 1.6, 1.7, 0.2),
			hop(3, "61.152.24.1", 4812, "ChinaNet-SH", 0, nil, 2.2, 1.9, 2.1, 2.1, 2.5, 2.6, 0.2),
			hop(4, "59.43.130.1", 4809, "CN2", 0, nil, 3.1, 2.8, 3.0, 3.0, 3.4, 3.5, 0.2),
			hop(5, "59.43.246.1", 4809, "CN2", 0.2, rl, 18.2, 17.6, 18.0, 18.0, 18.9, 19.0, 0.4),
			hop(6, "59.43.187.22", 4809, "CN2", 0, nil, 21.4, 20.9, 21.5, 21.4, 22.3, 22.4, 0.4),
			hop(7, "203.0.113.1", 64500, "Example", 0, nil, 22.7, 22.1, 22.8, 22.7, 23.9, 24.1, 0.6),
			hop(8, "203.0.113.10", 64500, "Example", 0, nil, 24.0, 22.0, 23.4, 23.0, 26.0, 26.0, 1.3),
		}}
	giaRet := gia
	giaRet.Target, giaRet.Addr = "198.51.100.7", "198.51.100.7"
	giaRet.Hops = []route.Hop{
		hop(1, "203.0.113.1", 64500, "Example", 0, nil, 0.4, 0.3, 0.4, 0.4, 0.5, 0.5, 0.1),
		hop(2, "59.43.187.21", 4809, "CN2", 0, nil, 1.9, 1.7, 1.9, 1.9, 2.2, 2.3, 0.2),
		hop(3, "59.43.246.2", 4809, "CN2", 0, nil, 18.1, 17.5, 18.0, 18.0, 18.6, 18.8, 0.3),
		hop(4, "", 0, "", 1, nil, 0, 0, 0, 0, 0, 0, 0),
		hop(5, "198.51.100.7", 4812, "ChinaNet-SH", 0, nil, 23.1, 22.2, 23.2, 23.1, 24.4, 24.6, 0.7),
	}
	bgp := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.20", Addr: "203.0.113.20", Protocol: engine.ICMP, Reached: true,
		LineClass: "chinanet-163", LineEvidence: ev("202.97/16 backbone", "high"),
		Hops: []route.Hop{
			hop(1, "10.0.0.1", 0, "private", 0, nil, 0.5, 0.4, 0.5, 0.5, 0.7, 0.8, 0.1),
			hop(2, "61.152.24.1", 4812, "ChinaNet-SH", 0, nil, 2.0, 1.9, 2.1, 2.1, 2.5, 2.6, 0.2),
			hop(3, "202.97.94.130", 4134, "ChinaNet", 0.2, nil, 31.0, 28.7, 33.9, 33.1, 44.0, 44.9, 5.1),
			hop(4, "202.97.61.6", 4134, "ChinaNet", 0.2, nil, 36.2, 30.1, 38.4, 37.7, 55.2, 56.0, 7.4),
			hop(5, "203.0.113.20", 64501, "Example", 0.2, nil, 47.0, 35.0, 45.9, 44.0, 61.0, 61.0, 7.9),
		}}
	ntt := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.30", Addr: "203.0.113.30", Protocol: engine.ICMP, Reached: true,
		LineClass: "transit", LineEvidence: ev("no China backbone; NTT, Example", "medium"),
		Hops: []route.Hop{
			hop(1, "10.0.0.1", 0, "private", 0, nil, 0.5, 0.4, 0.5, 0.5, 0.7, 0.8, 0.1),
			hop(2, "129.250.2.1", 2914, "NTT", 0, nil, 30.2, 29.8, 30.3, 30.2, 31.0, 31.1, 0.4),
			hop(3, "129.250.3.9", 2914, "NTT", 0, nil, 46.1, 45.7, 46.2, 46.1, 47.0, 47.1, 0.4),
			hop(4, "203.0.113.30", 64502, "Example", 0, nil, 48.0, 47.0, 48.2, 48.0, 50.0, 50.0, 0.9),
		}}
	nttRet := ntt
	nttRet.Target, nttRet.Addr = "198.51.100.7", "198.51.100.7"
	la := route.Trace{Schema: route.TraceSchema, Target: "203.0.113.40", Addr: "203.0.113.40", Protocol: engine.TCP, Port: 443, Reached: true,
		LineClass: "cu-9929", LineEvidence: ev("218.105/16 (9929) long haul", "high"),
		Hops: []route.Hop{
			hop(1, "10.0.0.1", 0, "private", 0, nil, 0.5, 0.4, 0.5, 0.5, 0.7, 0.8, 0.1),
			hop(2, "218.105.2.9", 9929, "CU-9929", 0, nil, 3.0, 2.8, 3.1, 3.0, 3.6, 3.7, 0.3),
			hop(3, "218.105.131.17", 9929, "CU-9929", 0, nil, 128.8, 128.1, 128.9, 128.8, 130.2, 130.4, 0.6),
			hop(4, "203.0.113.40", 64503, "Example", 0, nil, 133.0, 131.0, 133.2, 132.0, 140.0, 140.0, 2.7),
		}}
	laRet := la
	laRet.Target, laRet.Addr = "198.51.100.7", "198.51.100.7"
	return []TraceMsg{
		{"hk-cn2-gia", "forward", gia}, {"hk-cn2-gia", "return", giaRet},
		{"hk-bgp", "forward", bgp},
		{"tokyo-ntt", "forward", ntt}, {"tokyo-ntt", "return", nttRet},
		{"la-cu9929", "forward", la}, {"la-cu9929", "return", laRet},
	}
}

// FixtureSnapshot is the fixture before any probe record or trace arrives.
func FixtureSnapshot() Snapshot {
	costs := FixtureCosts(DefaultCostOptions())
	c := func(name, region, target string, floor float64, dir string) Candidate {
		return Candidate{Name: name, Provider: "Example Networks", Region: region, Target: target,
			FloorMs: floor, Direction: dir, Cost: costs[name]}
	}
	return Snapshot{
		Title: "fixture (illustrative)", Mode: "replay ×1", SLA: fixtureSLA(), Currency: "CNY",
		Traffic: fixtureTraffic(), Cost: DefaultCostOptions(),
		Candidates: []Candidate{
			c("hk-cn2-gia", "Hong Kong", "203.0.113.10 icmp", 12.3, "both"),
			c("hk-bgp", "Hong Kong", "203.0.113.20 icmp", 12.3, "forward"),
			c("tokyo-ntt", "Tokyo", "203.0.113.30 icmp", 17.7, "both"),
			c("la-cu9929", "Los Angeles", "203.0.113.40 icmp", 104.5, "both"),
		},
	}
}

// FixtureFeed replays the fixture at speed, looping.
func FixtureFeed(speed float64) *Feed {
	streams := map[string][]engine.Record{}
	for name := range fixtureRTTs {
		streams[name] = FixtureRecords(name)
	}
	return &Feed{Snapshot: FixtureSnapshot(), Streams: streams, Traces: FixtureTraces(), Speed: speed, Loop: true,
		CostFunc: func(o CostOptions) (map[string]Cost, error) { return FixtureCosts(o), nil }}
}

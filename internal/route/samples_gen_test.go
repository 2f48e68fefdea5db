package route

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/stats"
)

// The bundled sample routes (samples/rec/<candidate>-forward.json and
// <candidate>-return.mtr.json) are ILLUSTRATIVE: hop addresses are shaped on
// the bundled carrier ranges (data/prefixes.tsv), endpoints are documentation
// addresses, RTTs are drawn around values consistent with the physical floors
// (docs/route.md). They were never probed. Regenerate with:
//
//	LINECHECK_GEN_SAMPLES=1 go test ./internal/route -run TestGenerateSampleRoutes
//
// The generator is seeded, so the files are reproducible.

// sampleHop is one TTL of a designed route: addr ("*" = silent), the base
// RTT in ms, the spread of the right-skewed noise added to it, and the
// probability that a probe to it gets no reply.
type sampleHop struct {
	addr   string
	base   float64
	spread float64
	loss   float64
}

type sampleRoute struct {
	file   string
	target string
	mtr    bool // write as `mtr --json`, else linecheck.trace/v1
	start  string
	hops   []sampleHop
}

const sampleCycles = 20

// Forward traces run from a Shanghai Telecom broadband line (home router,
// CGNAT, Shanghai metro 61.152/16 and 101.95/16) to the candidate; return
// traces run from the candidate towards 198.51.100.7, a documentation
// address standing in for a Shanghai Telecom user.
var sampleRoutes = []sampleRoute{
	{file: "hk-cn2-gia-forward.json", target: "203.0.113.10", start: "2026-10-20T12:00:00Z", hops: []sampleHop{
		{"192.168.1.1", 0.45, 0.3, 0}, {"100.64.12.1", 2.6, 0.8, 0}, {"61.152.8.45", 3.4, 0.8, 0},
		{"101.95.120.33", 4.1, 0.9, 0}, {"59.43.182.198", 5.2, 0.8, 0}, {"59.43.80.118", 6.9, 1.0, 0.05},
		{"59.43.187.21", 25.6, 0.9, 0}, {"59.43.246.146", 26.4, 1.0, 0}, {"203.0.113.1", 26.8, 0.9, 0},
		{"203.0.113.10", 27.0, 1.2, 0},
	}},
	{file: "hk-cn2-gia-return.mtr.json", target: "198.51.100.7", mtr: true, hops: []sampleHop{
		{"10.20.0.1", 0.3, 0.2, 0}, {"203.0.113.1", 0.5, 0.3, 0}, {"59.43.246.145", 1.1, 0.4, 0},
		{"59.43.187.22", 1.9, 0.5, 0}, {"59.43.130.101", 22.4, 0.8, 0}, {"59.43.80.117", 23.9, 0.9, 0.1},
		{"59.43.182.197", 24.8, 0.8, 0}, {"61.152.8.46", 26.1, 1.0, 0}, {"101.95.120.34", 26.7, 1.0, 0},
		{"198.51.100.7", 27.9, 1.3, 0},
	}},
	{file: "hk-bgp-forward.json", target: "203.0.113.20", start: "2026-10-20T12:05:00Z", hops: []sampleHop{
		{"192.168.1.1", 0.45, 0.3, 0}, {"100.64.12.1", 2.6, 0.8, 0}, {"61.152.8.45", 3.4, 0.8, 0},
		{"101.95.88.161", 4.3, 0.9, 0}, {"202.97.34.17", 6.1, 1.2, 0}, {"202.97.94.238", 8.4, 1.5, 0.15},
		{"202.97.12.41", 29.8, 2.5, 0}, {"202.97.61.110", 32.6, 3.0, 0}, {"63.218.44.21", 44.1, 4.5, 0},
		{"63.218.171.54", 44.6, 4.0, 0}, {"203.0.113.17", 44.9, 3.5, 0}, {"203.0.113.20", 45.0, 3.5, 0},
	}},
	{file: "hk-bgp-return.mtr.json", target: "198.51.100.7", mtr: true, hops: []sampleHop{
		{"10.30.0.1", 0.3, 0.2, 0}, {"203.0.113.17", 0.6, 0.3, 0}, {"63.218.171.53", 1.2, 0.5, 0},
		{"63.218.44.22", 1.8, 0.8, 0}, {"202.97.61.109", 14.2, 3.5, 0.1}, {"202.97.12.42", 38.3, 3.0, 0},
		{"202.97.94.237", 42.1, 3.5, 0}, {"202.97.34.18", 43.9, 3.5, 0}, {"61.152.8.46", 45.2, 3.5, 0},
		{"*", 0, 0, 1}, {"198.51.100.7", 46.3, 4.0, 0},
	}},
	{file: "tokyo-forward.json", target: "198.51.100.30", start: "2026-10-20T12:10:00Z", hops: []sampleHop{
		{"192.168.1.1", 0.45, 0.3, 0}, {"100.64.12.1", 2.6, 0.8, 0}, {"61.152.8.45", 3.4, 0.8, 0},
		{"101.95.88.161", 4.3, 0.9, 0}, {"202.97.34.17", 6.1, 1.2, 0}, {"202.97.33.5", 7.9, 1.5, 0.1},
		{"202.97.90.30", 9.2, 2.0, 0}, {"129.250.6.12", 41.3, 3.5, 0}, {"129.250.3.189", 41.7, 3.5, 0},
		{"198.51.100.1", 41.9, 3.0, 0}, {"198.51.100.30", 42.0, 3.0, 0},
	}},
	{file: "tokyo-return.mtr.json", target: "198.51.100.7", mtr: true, hops: []sampleHop{
		{"10.40.0.1", 0.3, 0.2, 0}, {"198.51.100.1", 0.7, 0.3, 0}, {"58.138.100.5", 1.2, 0.5, 0},
		{"58.138.82.9", 1.9, 0.6, 0}, {"202.97.90.29", 33.5, 3.5, 0}, {"*", 0, 0, 1}, {"*", 0, 0, 1},
		{"61.152.8.46", 41.2, 3.5, 0}, {"198.51.100.7", 42.4, 3.5, 0},
	}},
	{file: "la-forward.json", target: "192.0.2.40", start: "2026-10-20T12:15:00Z", hops: []sampleHop{
		{"192.168.1.1", 0.45, 0.3, 0}, {"100.64.12.1", 2.6, 0.8, 0}, {"61.152.8.45", 3.4, 0.8, 0},
		{"101.95.88.161", 4.3, 0.9, 0}, {"202.97.34.17", 6.1, 1.2, 0}, {"202.97.33.5", 7.9, 1.5, 0},
		{"202.97.52.162", 129.4, 4.0, 0.2}, {"202.97.49.198", 130.2, 4.0, 0}, {"184.105.81.58", 130.7, 4.5, 0},
		{"184.105.222.14", 131.0, 4.5, 0}, {"192.0.2.1", 131.1, 4.0, 0}, {"192.0.2.40", 131.0, 4.0, 0},
	}},
	{file: "la-return.mtr.json", target: "198.51.100.7", mtr: true, hops: []sampleHop{
		{"10.50.0.1", 0.3, 0.2, 0}, {"192.0.2.1", 0.6, 0.3, 0}, {"154.54.44.137", 1.1, 0.5, 0},
		{"154.54.3.70", 1.8, 0.6, 0}, {"202.97.50.25", 2.6, 0.9, 0}, {"*", 0, 0, 1},
		{"202.97.58.117", 128.1, 4.5, 0.1}, {"202.97.94.237", 130.6, 4.5, 0}, {"61.152.8.46", 132.4, 4.5, 0},
		{"198.51.100.7", 133.2, 4.5, 0},
	}},
}

// drawSamples gives per-cycle RTTs (NaN = no reply), rounded to µs like mtr.
func drawSamples(rng *rand.Rand, h sampleHop) []float64 {
	out := make([]float64, sampleCycles)
	for i := range out {
		if h.addr == "*" || rng.Float64() < h.loss {
			out[i] = math.NaN()
			continue
		}
		v := h.base + h.spread*rng.ExpFloat64()*0.5
		out[i] = math.Round(v*1000) / 1000
	}
	return out
}

func received(s []float64) []float64 {
	var out []float64
	for _, v := range s {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func buildOwnTrace(rng *rand.Rand, r sampleRoute) *Trace {
	t := &Trace{Schema: TraceSchema, Target: r.target, Addr: r.target, Protocol: "icmp", Reached: true, Start: r.start}
	for i, h := range r.hops {
		got := received(drawSamples(rng, h))
		hop := Hop{TTL: i + 1, Sent: sampleCycles, Loss: float64(sampleCycles-len(got)) / sampleCycles,
			Flags: []string{}, Responders: []Responder{}}
		if len(got) > 0 {
			st, j := stats.Summarize(got)
			hop.Responders = append(hop.Responders, Responder{Addr: h.addr, Recv: len(got), RTT: st, Jitter: j, Samples: got})
		}
		if i == len(r.hops)-1 {
			hop.Flags = append(hop.Flags, FlagDestination)
		}
		t.Hops = append(t.Hops, hop)
	}
	FlagHops(t.Hops)
	Annotate(t, nil)
	return t
}

// buildMTR writes the layout mtr 0.95 prints for `mtr --json` (checked
// against `mtr --json -c 3 127.0.0.1` on this machine): 4-space indent,
// report.mtr first, then hubs; reals always with a decimal point (jansson),
// silent hops as host "???" with 100 % loss and zero times.
func buildMTR(rng *rand.Rand, r sampleRoute) []byte {
	real := func(v float64) string {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\n    \"report\": {\n        \"mtr\": {\n            \"src\": \"sample-server\",\n")
	fmt.Fprintf(&b, "            \"dst\": %q,\n            \"tos\": 0,\n            \"tests\": %d,\n", r.target, sampleCycles)
	fmt.Fprintf(&b, "            \"psize\": \"64\",\n            \"bitpattern\": \"0x00\"\n        },\n        \"hubs\": [")
	r3 := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	for i, h := range r.hops {
		got := received(drawSamples(rng, h))
		host, loss := "???", 100.0
		var last, avg, best, wrst, sd float64
		if len(got) > 0 {
			host = h.addr
			loss = r3(100 * float64(sampleCycles-len(got)) / sampleCycles)
			st, _ := stats.Summarize(got)
			last, avg, best, wrst, sd = got[len(got)-1], r3(st.Avg), st.Min, st.Max, r3(st.Stdev)
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n            {\n                \"count\": %d,\n                \"host\": %q,\n", i+1, host)
		fmt.Fprintf(&b, "                \"Loss%%\": %s,\n                \"Snt\": %d,\n", real(loss), sampleCycles)
		fmt.Fprintf(&b, "                \"Last\": %s,\n                \"Avg\": %s,\n                \"Best\": %s,\n",
			real(last), real(avg), real(best))
		fmt.Fprintf(&b, "                \"Wrst\": %s,\n                \"StDev\": %s\n            }", real(wrst), real(sd))
	}
	b.WriteString("\n        ]\n    }\n}\n")
	return []byte(b.String())
}

func TestGenerateSampleRoutes(t *testing.T) {
	if os.Getenv("LINECHECK_GEN_SAMPLES") == "" {
		t.Skip("set LINECHECK_GEN_SAMPLES=1 to rewrite samples/rec/*-forward.json and *-return.mtr.json")
	}
	dir := filepath.Join("..", "..", "samples", "rec")
	for i, r := range sampleRoutes {
		rng := rand.New(rand.NewPCG(2026, uint64(i)))
		var b []byte
		if r.mtr {
			b = buildMTR(rng, r)
		} else {
			var err error
			if b, err = json.MarshalIndent(buildOwnTrace(rng, r), "", "  "); err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, r.file), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote", filepath.Join(dir, r.file))
	}
}

// sampleBacktraces are the illustrative backtrace documents of two sample
// servers (samples/rec/<candidate>-backtrace.json): one traced route per user
// carrier, targets in documentation space standing in for a Shanghai Telecom,
// a Beijing Unicom and a Guangzhou Mobile user.
var sampleBacktraces = []struct {
	file, vantage string
	routes        []struct {
		target BacktraceTarget
		route  sampleRoute
	}
}{
	{file: "hk-cn2-gia-backtrace.json", vantage: "hk-cn2-gia", routes: []struct {
		target BacktraceTarget
		route  sampleRoute
	}{
		{BacktraceTarget{Name: "sh-telecom", Carrier: CarrierTelecom, City: "Shanghai", Addr: "198.51.100.7"},
			sampleRoute{target: "198.51.100.7", start: "2026-10-20T13:00:00Z", hops: sampleRoutes[1].hops}},
		{BacktraceTarget{Name: "bj-unicom", Carrier: CarrierUnicom, City: "Beijing", Addr: "198.51.100.20"},
			sampleRoute{target: "198.51.100.20", start: "2026-10-20T13:00:00Z", hops: []sampleHop{
				{"10.20.0.1", 0.3, 0.2, 0}, {"203.0.113.1", 0.5, 0.3, 0}, {"59.43.246.145", 1.1, 0.4, 0},
				{"59.43.187.22", 1.9, 0.5, 0}, {"202.97.42.13", 30.2, 1.0, 0}, {"202.97.12.9", 31.0, 1.2, 0},
				{"219.158.3.177", 33.9, 1.5, 0}, {"219.158.19.81", 34.6, 1.5, 0}, {"198.51.100.20", 36.1, 1.8, 0}}}},
		{BacktraceTarget{Name: "gz-mobile", Carrier: CarrierMobile, City: "Guangzhou", Addr: "198.51.100.30"},
			sampleRoute{target: "198.51.100.30", start: "2026-10-20T13:00:00Z", hops: []sampleHop{
				{"10.20.0.1", 0.3, 0.2, 0}, {"203.0.113.1", 0.5, 0.3, 0}, {"223.120.2.5", 1.4, 0.6, 0},
				{"223.120.10.70", 4.9, 1.5, 0.05}, {"221.183.55.22", 6.2, 1.5, 0}, {"221.183.39.1", 7.0, 1.5, 0},
				{"198.51.100.30", 8.1, 1.8, 0}}}},
	}},
	{file: "hk-bgp-backtrace.json", vantage: "hk-bgp", routes: []struct {
		target BacktraceTarget
		route  sampleRoute
	}{
		{BacktraceTarget{Name: "sh-telecom", Carrier: CarrierTelecom, City: "Shanghai", Addr: "198.51.100.7"},
			sampleRoute{target: "198.51.100.7", start: "2026-10-20T13:05:00Z", hops: sampleRoutes[3].hops}},
		{BacktraceTarget{Name: "bj-unicom", Carrier: CarrierUnicom, City: "Beijing", Addr: "198.51.100.20"},
			sampleRoute{target: "198.51.100.20", start: "2026-10-20T13:05:00Z", hops: []sampleHop{
				{"10.30.0.1", 0.3, 0.2, 0}, {"203.0.113.17", 0.6, 0.3, 0}, {"63.218.171.53", 1.2, 0.5, 0},
				{"219.158.96.29", 38.4, 4.0, 0.1}, {"219.158.3.177", 40.2, 4.0, 0}, {"219.158.19.81", 41.0, 4.0, 0},
				{"198.51.100.20", 42.8, 4.5, 0}}}},
		{BacktraceTarget{Name: "gz-mobile", Carrier: CarrierMobile, City: "Guangzhou", Addr: "198.51.100.30"},
			sampleRoute{target: "198.51.100.30", start: "2026-10-20T13:05:00Z", hops: []sampleHop{
				{"10.30.0.1", 0.3, 0.2, 0}, {"203.0.113.17", 0.6, 0.3, 0}, {"63.218.171.53", 1.2, 0.5, 0},
				{"223.120.2.5", 3.1, 1.0, 0}, {"223.120.10.70", 9.8, 3.0, 0.1}, {"221.183.55.22", 11.2, 3.0, 0},
				{"198.51.100.30", 12.6, 3.5, 0}}}},
	}},
}

func TestGenerateSampleBacktraces(t *testing.T) {
	if os.Getenv("LINECHECK_GEN_SAMPLES") == "" {
		t.Skip("set LINECHECK_GEN_SAMPLES=1 to rewrite samples/rec/*-backtrace.json")
	}
	dir := filepath.Join("..", "..", "samples", "rec")
	for i, s := range sampleBacktraces {
		doc := &BacktraceDoc{Schema: BacktraceSchema, Vantage: s.vantage}
		for j, r := range s.routes {
			rng := rand.New(rand.NewPCG(2027, uint64(i*10+j)))
			tr := buildOwnTrace(rng, r.route)
			for h := range tr.Hops {
				for k := range tr.Hops[h].Responders {
					tr.Hops[h].Responders[k].Samples = nil
				}
			}
			tr.Source = "live"
			doc.Results = append(doc.Results, NewBacktraceResult(r.target, tr, ""))
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote", filepath.Join(dir, s.file))
	}
}

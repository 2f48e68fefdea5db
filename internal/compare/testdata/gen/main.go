// Command gen writes the bundled scenario's recorded probe streams,
// samples/rec/<candidate>-ping.ndjson (linecheck.probe/v1, the `ping
// --stream` format). The data are ILLUSTRATIVE: synthetic RTTs shaped on the
// physical floors from Shanghai (docs/route.md, Physical floor and stretch)
// and documentation addresses (RFC 5737) that are never probed.
//
//	go run ./internal/compare/testdata/gen -out samples/rec
//
// Every figure is deterministic (fixed seeds), so a re-run reproduces the
// committed files byte for byte.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/linecheck/linecheck/probe"
)

// profile is one candidate's line: RTT = base + Exp(mean) (+ evening
// congestion), loss as a probability, per period of the day.
type profile struct {
	name    string
	addr    string
	seed    uint64
	baseMs  float64 // the fastest a reply can be on this path (≥ physical floor)
	meanMs  float64 // mean of the exponential queueing delay
	loss    float64
	evening evening // China evening peak, 20:00–24:00 Beijing time
}

type evening struct {
	extraMs, extraMeanMs, loss float64
}

var profiles = []profile{
	// Shanghai–Hong Kong: floor 12.3 ms; a direct CN2 GIA path ~27 ms min, barely any peak effect.
	{name: "hk-cn2-gia", addr: "203.0.113.10", seed: 1, baseMs: 27.0, meanMs: 2.5, loss: 0,
		evening: evening{extraMs: 0.5, extraMeanMs: 0.5, loss: 0.004}},
	// Same city over ordinary BGP (163 in China): 45 ms off-peak, congested and lossy in the evening.
	{name: "hk-bgp", addr: "203.0.113.20", seed: 2, baseMs: 45.0, meanMs: 4, loss: 0.002,
		evening: evening{extraMs: 22, extraMeanMs: 9, loss: 0.06}},
	// Shanghai–Tokyo: floor 17.6 ms; a premium path ~42 ms min.
	{name: "tokyo", addr: "198.51.100.30", seed: 3, baseMs: 42.0, meanMs: 2.5, loss: 0,
		evening: evening{extraMs: 1, extraMeanMs: 0.5, loss: 0}},
	// Shanghai–Los Angeles: floor 104 ms; 131 ms min, ~170 ms at the peak.
	{name: "la", addr: "192.0.2.40", seed: 4, baseMs: 131.0, meanMs: 6, loss: 0.001,
		evening: evening{extraMs: 12, extraMeanMs: 8, loss: 0.004}},
}

func main() {
	out := flag.String("out", "samples/rec", "directory to write <candidate>-ping.ndjson into")
	n := flag.Int("n", 288, "probes per target (one every 5 minutes: a day)")
	flag.Parse()
	start := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	for _, p := range profiles {
		if err := write(filepath.Join(*out, p.name+"-ping.ndjson"), p, start, *n); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func write(path string, p profile, start time.Time, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(p.seed, 0x6c696e65))
	targets := []struct {
		proto string
		port  int
		// TCP connect time includes the accept path on the server: a little more.
		extraMs float64
		offset  time.Duration
	}{{"icmp", 0, 0, 0}, {"tcp", 443, 0.2, 2 * time.Second}}
	for i := range n {
		at := start.Add(time.Duration(i) * 5 * time.Minute)
		beijing := at.In(time.FixedZone("CST", 8*3600)).Hour()
		peak := beijing >= 20
		for _, t := range targets {
			rec := probe.Record{Time: at.Add(t.offset), Target: p.addr, Addr: p.addr, Protocol: t.proto, Port: t.port, Seq: i}
			loss := p.loss
			rtt := p.baseMs + t.extraMs + rng.ExpFloat64()*p.meanMs
			if peak {
				loss = p.evening.loss
				rtt += p.evening.extraMs + rng.ExpFloat64()*p.evening.extraMeanMs
			}
			if rng.Float64() < loss {
				rec.Status = probe.StatusLost
			} else {
				rec.Status = probe.StatusOK
				v := math.Round(rtt*1000) / 1000
				rec.RTTms = &v
			}
			if err := probe.WriteRecord(w, rec); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

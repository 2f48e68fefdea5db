// Command gen writes the evening benchmark's recordings (issue 30): for
// each of four candidates, -days days of `linecheck ping --stream` records
// (linecheck.probe/v1) at one probe a second toward one ICMP target, one
// file a day (DIR/NAME-day-DD.ndjson), and the candidates file DIR/c.yaml
// that reads them by glob. Two candidates degrade every evening from 20:00
// to 23:00 Shanghai time (more delay, some loss), two are steady. As
// `ping --stream` does, a lost probe's record is written when its wait
// ends, after the next probe's answer, so the files are not in time order.
// The data are synthetic and deterministic (seeded), and the targets are
// loopback addresses that nothing ever probes (the file is recorded_only).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

type candidate struct {
	name, addr, offer string
	base              float64 // RTT floor, ms
	eveningLoss       float64 // loss fraction from 20:00 to 23:00 Shanghai
	eveningDelay      float64 // ms added then
}

var cands = []candidate{
	{"hk-cn2-gia", "127.0.0.11", "hk-cn2", 32, 0, 0},
	{"hk-bgp", "127.0.0.12", "hk-bgp", 38, 0.04, 45},
	{"tokyo", "127.0.0.13", "tokyo", 55, 0, 0},
	{"la", "127.0.0.14", "la", 150, 0.02, 30},
}

func main() {
	dir := flag.String("dir", "", "output folder (created)")
	days := flag.Int("days", 30, "days of probes per candidate")
	from := flag.String("from", "2026-11-01", "first day, 00:00 Shanghai time")
	offers := flag.String("offers", "", "offers file for c.yaml (absolute path)")
	flag.Parse()
	if *dir == "" || *offers == "" {
		fmt.Fprintln(os.Stderr, "gen: -dir and -offers are required")
		os.Exit(2)
	}
	sh := time.FixedZone("CST", 8*3600)
	day0, err := time.ParseInLocation("2006-01-02", *from, sh)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: -from:", err)
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for ci, c := range cands {
		rng := rand.New(rand.NewPCG(uint64(ci)+1, 30))
		seq := 0
		for d := range *days {
			if err := writeDay(filepath.Join(*dir, fmt.Sprintf("%s-day-%02d.ndjson", c.name, d+1)), c, rng, day0.AddDate(0, 0, d), sh, &seq); err != nil {
				fmt.Fprintln(os.Stderr, "gen:", err)
				os.Exit(1)
			}
		}
	}
	if err := writeCandidates(filepath.Join(*dir, "c.yaml"), *offers); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func writeDay(path string, c candidate, rng *rand.Rand, day time.Time, sh *time.Location, seq *int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var pending []byte // a lost probe's record, written after the next line
	var b []byte
	for s := range 86400 {
		t := day.Add(time.Duration(s) * time.Second)
		h := t.In(sh).Hour()
		evening := h >= 20 && h < 23
		loss, extra := 0.001, 0.0
		if evening {
			loss += c.eveningLoss
			extra = c.eveningDelay
		}
		b = b[:0]
		b = append(b, `{"schema":"linecheck.probe/v1","time":"`...)
		b = t.UTC().AppendFormat(b, time.RFC3339)
		b = append(b, `","target":"`...)
		b = append(b, c.addr...)
		b = append(b, `","addr":"`...)
		b = append(b, c.addr...)
		b = append(b, `","protocol":"icmp","seq":`...)
		b = strconv.AppendInt(b, int64(*seq), 10)
		*seq++
		lost := rng.Float64() < loss
		if lost {
			b = append(b, `,"status":"lost","rtt_ms":null}`+"\n"...)
		} else {
			rtt := c.base + extra + rng.ExpFloat64()*2 + rng.Float64()
			b = append(b, `,"status":"ok","rtt_ms":`...)
			b = strconv.AppendFloat(b, float64(int64(rtt*1000))/1000, 'f', -1, 64)
			b = append(b, "}\n"...)
		}
		if lost {
			if pending != nil {
				w.Write(pending)
			}
			pending = append([]byte(nil), b...)
			continue
		}
		w.Write(b)
		if pending != nil {
			w.Write(pending)
			pending = nil
		}
	}
	if pending != nil {
		w.Write(pending)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeCandidates(path, offers string) error {
	doc := "recorded_only: true\nvantage: {city: Shanghai}\nusers: [{city: Shanghai}]\ncandidates:\n"
	for _, c := range cands {
		doc += fmt.Sprintf("  - name: %s\n    region: {city: Hong Kong}\n    targets: [{addr: %s, protocol: icmp}]\n    recorded: {probes: \"%s-day-*.ndjson\"}\n    offer: %s\n",
			c.name, c.addr, c.name, c.offer)
	}
	doc += "offers: " + offers + "\ntraffic: {monthly_gb: 20000, peak_mbps: 200, shape: diurnal, period: 2026-10}\nfx: {base: CNY, USD: 7.10}\n" +
		"sla: {rtt_p95_ms: 80, loss: 0.01}\n"
	return os.WriteFile(path, []byte(doc), 0o644)
}

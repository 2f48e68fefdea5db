// Command gen writes the bill benchmark's input: 5-minute traffic for many
// interfaces in one CSV (timestamp,interface,in_bytes,out_bytes), rows
// ordered by time then interface, as an export from a poller would be, or
// one file per interface (-split DIR). Timestamps are unix seconds (-epoch,
// what most pollers write) or RFC 3339. The traffic is synthetic and
// deterministic: a diurnal curve per interface, pseudo-random noise and
// occasional bursts.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

func main() {
	year := flag.Int("year", 2026, "calendar year to cover (UTC), unless -from and -days")
	from := flag.String("from", "", "first day (YYYY-MM-DD, UTC) instead of a whole -year")
	days := flag.Int("days", 0, "days from -from")
	ifaces := flag.Int("ifaces", 100, "number of interfaces")
	epoch := flag.Bool("epoch", false, "unix-seconds timestamps instead of RFC 3339")
	split := flag.String("split", "", "write one file per interface into this directory (DIR/ethNNN.csv, no interface column)")
	flag.Parse()
	start := time.Date(*year, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, 0)
	if *from != "" {
		t, err := time.Parse("2006-01-02", *from)
		if err != nil || *days <= 0 {
			fmt.Fprintln(os.Stderr, "gen: -from YYYY-MM-DD needs -days N > 0")
			os.Exit(2)
		}
		start, end = t, t.AddDate(0, 0, *days)
	}
	width := 3
	if *ifaces > 1000 {
		width = 4
	}
	names := make([][]byte, *ifaces)
	for i := range names {
		names[i] = []byte(fmt.Sprintf("eth%0*d", width, i))
	}
	var outs []*bufio.Writer
	if *split != "" {
		for _, n := range names {
			f, err := os.Create(*split + "/" + string(n) + ".csv")
			if err != nil {
				fmt.Fprintln(os.Stderr, "gen:", err)
				os.Exit(1)
			}
			defer f.Close()
			w := bufio.NewWriterSize(f, 64<<10)
			defer w.Flush()
			w.WriteString("timestamp,in_bytes,out_bytes\n")
			outs = append(outs, w)
		}
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	if outs == nil {
		w.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	}
	// Per-slot diurnal factor, shared by all interfaces (one day = 288 slots).
	var day [288]float64
	for k := range day {
		day[k] = 0.55 + 0.45*math.Sin(2*math.Pi*(float64(k)/288-0.3))
	}
	var x uint64 = 0x9E3779B97F4A7C15
	next := func() uint64 { // xorshift64*
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		return x * 2685821657736338717
	}
	line := make([]byte, 0, 128)
	for t := start; t.Before(end); t = t.Add(5 * time.Minute) {
		var ts []byte
		if *epoch {
			ts = strconv.AppendInt(nil, t.Unix(), 10)
		} else {
			ts = t.AppendFormat(nil, time.RFC3339)
		}
		k := (t.Unix() / 300) % 288
		for i, name := range names {
			base := float64(20+i%37) * 1e6 * 37.5 // 20..56 Mbit/s mean → bytes per 300 s
			r := next()
			noise := 0.8 + 0.4*float64(r>>40)/float64(1<<24)
			in := base * day[k] * noise
			if r%211 == 0 {
				in *= 6 // a burst
			}
			out := in * (0.3 + float64(r&0xff)/1024)
			line = append(line[:0], ts...)
			line = append(line, ',')
			if outs == nil {
				line = append(line, name...)
				line = append(line, ',')
			}
			line = strconv.AppendInt(line, int64(in), 10)
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(out), 10)
			line = append(line, '\n')
			if outs != nil {
				outs[i].Write(line)
			} else {
				w.Write(line)
			}
		}
	}
}

package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

// Every reader is fuzzed: whatever the input, Read must not panic, an error
// must be a *ReadError naming the file and a line ("name:line: …"), and a
// result must be a well-formed series (ascending slots on the grid, finite
// non-negative bytes).

// maxSeed bounds a seed taken from a real tool's output: the fuzzer
// minimizes every new input it finds, in time that grows with its length,
// and one grown from a 57 KB MRTG log held a target for its whole minute
// (issue 20); the head of the file keeps its format and fields.
const maxSeed = 512

func fuzzSeeds(f *testing.F, pattern string, extra ...string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "readers", pattern))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > maxSeed {
			cut := bytes.LastIndexByte(data[:maxSeed], '\n')
			data = data[:cut+1]
		}
		f.Add(data)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

func checkRead(t *testing.T, data []byte, opts ReadOptions) {
	const name = "fuzz.in"
	ss, err := Read(bytes.NewReader(data), name, opts)
	if err != nil {
		var re *ReadError
		if !errors.As(err, &re) {
			t.Fatalf("error %q is %T, not a *ReadError", err, err)
		}
		if re.File != name || re.Line < 1 || !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", name, re.Line)) {
			t.Fatalf("error %q does not start with file:line", err)
		}
		if n := bytes.Count(data, []byte{'\n'}) + 1; re.Line > n {
			t.Fatalf("error %q names line %d of a %d-line input", err, re.Line, n)
		}
		return
	}
	for _, s := range ss {
		if s.Step <= 0 {
			t.Fatalf("%s: step %d", s.Name, s.Step)
		}
		for i, sl := range s.Slots {
			if sl.Start%billing.SlotSeconds != 0 || i > 0 && sl.Start <= s.Slots[i-1].Start {
				t.Fatalf("%s: slot %d start %d not ascending on the grid", s.Name, i, sl.Start)
			}
			for _, v := range []float64{sl.In, sl.Out} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: slot %+v", s.Name, sl)
				}
			}
			if opts.To > opts.From && (sl.Start < opts.From || sl.Start >= opts.To) {
				t.Fatalf("%s: slot %d outside [%d,%d)", s.Name, sl.Start, opts.From, opts.To)
			}
		}
		for _, w := range s.Warnings {
			if !strings.HasPrefix(w, name+":") {
				t.Fatalf("warning %q does not name the file", w)
			}
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	fuzzSeeds(f, "*.csv",
		"timestamp,interface,in_bytes,out_bytes\n2026-06-01T00:00:00Z,eth0,100,200\n2026-06-01T00:05:00Z,eth0,300,400\n",
		"timestamp,in_bps,out_bps\n600,8,16\n900,80,0.8\n",
		"end,in_bytes,out_bytes\n600,1,2\n660,1,2\n",
		"timestamp,in_octets,out_octets\n0,4294967000,10\n300,200,20\n450,NaN,1\n",
		"\"timestamp\",\"in_bytes\",\"out_bytes\"\n\"600\",\"1\",\"2\"\n",
		"time,rx,tx\n2026-06-01 08:00:00,1,1\n2026-06-01T08:05:00+08:00,1e3,\n",
		// issue 10: rising SNMP counters under counter and byte names, 1e308 bytes
		counterCSV("timestamp,ifHCInOctets,ifHCOutOctets", 6, 5_000_000_000_000, 37_500_000, 64),
		counterCSV("timestamp,ifInOctets,ifOutOctets", 6, 4_000_000_000, 37_500_000, 32),
		counterCSV("timestamp,in_bytes,out_bytes", 6, 5_000_000_000_000, 37_500_000, 64),
		"timestamp,in_bytes,out_bytes\n0,1e308,1e308\n300,1e308,0\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "csv"})
		checkRead(t, data, ReadOptions{Format: "csv", Units: "bps"})
		checkRead(t, data, ReadOptions{Format: "csv", Units: "counter", Stamp: "end", From: 0, To: 86400 * 40})
	})
}

func FuzzReadMRTG(f *testing.F) {
	fuzzSeeds(f, "*.log", "1 2 3\n600 1 1 1 1\n300 1 1 1 1\n",
		// issue 10: a poller outage, rateup repeating the last rate (100 % coverage, 8 slots filled in)
		"3000 23265000 13095000\n3000 1222 566 1222 566\n2700 1222 566 1222 566\n2400 1222 566 1222 566\n2100 1222 566 1222 566\n1800 1222 566 1222 566\n1500 1222 566 1222 566\n1200 1222 566 1222 566\n900 1222 566 1222 566\n600 1222 566 1222 566\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "mrtg"})
		checkRead(t, data, ReadOptions{Format: "mrtg", From: 1767304800, To: 1767306600})
	})
}

func FuzzReadVnstat(f *testing.F) {
	fuzzSeeds(f, "vnstat*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "vnstat"})
	})
}

func FuzzReadRRDXML(f *testing.F) {
	fuzzSeeds(f, "rrdtool*.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "rrdtool-xml"})
	})
}

func FuzzReadRRDJSON(f *testing.F) {
	fuzzSeeds(f, "rrdtool*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "rrdtool-json"})
	})
}

func FuzzReadPrometheus(f *testing.F) {
	fuzzSeeds(f, "prometheus*.json",
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"xe-0","direction":"out"},"values":[[900,"800"],[1200,"1600"]]},{"metric":{"ifName":"xe-0","direction":"in"},"values":[[900,"80"]]}]}}`,
		// issue 10: values beyond any link, non-finite, NaN gaps, escapes, a cut body
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"ifName":"x"},"values":[[300,"1e308"],[600,"+Inf"],[900,"NaN"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"if\u004eame":"x\"y"},"values":[[300.5,"1"],[600,"-Inf"]]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[300,"8"],[600,"8"],[900,`)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{Format: "prometheus"})
	})
}

// FuzzDetect feeds every seed to content detection.
func FuzzDetect(f *testing.F) {
	fuzzSeeds(f, "*")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, ReadOptions{})
	})
}

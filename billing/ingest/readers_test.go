package ingest

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/billing"
)

// withReader adds r to the readers for the rest of the test only.
func withReader(t *testing.T, r trafficReader) {
	t.Helper()
	savedR, savedF := readers, Formats
	t.Cleanup(func() { readers, Formats = savedR, savedF })
	readers = append(append([]trafficReader(nil), readers...), r)
	Formats = append(append([]string(nil), Formats...), r.name)
}

// slotsLog is a made-up format, "slots v1" then "START IN OUT" lines, that
// stands for a new reader: one trafficReader and its line in the table.
var slotsLog = trafficReader{name: "slots", rank: 45,
	detect: func(s []byte) bool { return strings.HasPrefix(string(s), "slots v1\n") },
	read: func(in readInput) ([]*billing.Series, error) {
		s := &billing.Series{Name: "slots", Step: billing.SlotSeconds}
		sc := bufio.NewScanner(in.br)
		line := 0
		for sc.Scan() {
			line++
			f := strings.Fields(sc.Text())
			if line == 1 || len(f) == 0 {
				continue
			}
			var v [3]float64
			for i := range v {
				x, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					return nil, &ReadError{File: in.name, Line: line, Msg: err.Error()}
				}
				v[i] = x
			}
			s.Slots = append(s.Slots, billing.Slot{Start: int64(v[0]), In: v[1], Out: v[2]})
		}
		return []*billing.Series{s}, sc.Err()
	},
}

// A reader added to the table is detected by content, read through
// ReadFile, forced by its name and listed in Formats and the unknown-format
// message; the readers already there still detect their logs.
func TestAddedReaderIsDetectedAndRead(t *testing.T) {
	withReader(t, slotsLog)
	path := filepath.Join(t.TempDir(), "port1.log")
	if err := os.WriteFile(path, []byte("slots v1\n1790812800 1000 2000\n1790813100 3000 4000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ss, err := ReadFile(path, ReadOptions{From: 1790812800, To: 1790813400})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].Format != "slots" || len(ss[0].Slots) != 2 || ss[0].Slots[1].Out != 4000 {
		t.Fatalf("read %+v", ss[0])
	}
	if _, err := ReadFile(path, ReadOptions{Format: "slots", From: 1790812800, To: 1790813400}); err != nil {
		t.Errorf("forced: %v", err)
	}
	_, err = Read(strings.NewReader("hello world\n"), "f", ReadOptions{})
	want := "f:1: not a recognised traffic log (known formats: csv, mrtg, vnstat, rrdtool-xml, rrdtool-json, prometheus, slots; force one with --input)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown: %v, want %s", err, want)
	}
	mrtg, err := ReadFile("testdata/readers/mrtg_head.log", ReadOptions{})
	if err != nil || mrtg[0].Format != "mrtg" {
		t.Errorf("mrtg beside it: %v", err)
	}
}

// Detection runs by rank, not by the order Formats lists: a JSON document
// with vnstat's and Prometheus's keys is vnstat's, as it always was.
func TestReaderDetectionOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"vnstatversion":"2.9","status":"x"}`, "vnstat"},
		{`{"status":"success","meta":{"legend":["in"]}}`, "prometheus"},
		{`{"meta":{"legend":["in","out"]}}`, "rrdtool-json"},
		{"<?xml version=\"1.0\"?>\n<xport>", "rrdtool-xml"},
		{"1790812800 1 2\n1790812800 1 2 3 4\n", "mrtg"},
		{"time,in,out\n", "csv"},
	} {
		got, err := detect([]byte(tc.in), "f")
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

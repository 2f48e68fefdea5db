package billing

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadSampleCSV parses the bundled sample (timestamp,in_bytes,out_bytes, RFC
// 3339 interval starts) without the package's readers, so that the engine
// tests do not depend on them.
func loadSampleCSV(t testing.TB, path string) *Series {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &Series{Name: "sample", Source: path, Format: "csv", Step: 300}
	sc := bufio.NewScanner(f)
	header := true
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if header {
			header = false
			continue
		}
		f := strings.Split(line, ",")
		ts, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, ln, err)
		}
		in, err1 := strconv.ParseFloat(f[1], 64)
		out, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s:%d: bad numbers", path, ln)
		}
		s.Slots = append(s.Slots, Slot{Start: ts.Unix(), In: in, Out: out})
	}
	return s
}

// mbpsSeries builds a series from per-slot rates in Mbps starting at start.
func mbpsSeries(start time.Time, in, out []float64) *Series {
	s := &Series{Name: "test", Step: 300}
	for i := range in {
		s.Slots = append(s.Slots, Slot{Start: start.Unix() + int64(i)*300, In: in[i] * 1e6 * 300 / 8, Out: out[i] * 1e6 * 300 / 8})
	}
	return s
}

// constSeries fills every slot of p with the same rates (Mbps), skipping the slots in gaps.
func constSeries(p Period, inMbps, outMbps float64, gaps map[int]bool) *Series {
	s := &Series{Name: "const", Step: 300}
	n := p.ExpectedSlots(300)
	first := p.firstSlot(300)
	for i := 0; i < n; i++ {
		if gaps[i] {
			continue
		}
		s.Slots = append(s.Slots, Slot{Start: first + int64(i)*300, In: inMbps * 1e6 * 300 / 8, Out: outMbps * 1e6 * 300 / 8})
	}
	return s
}

func mustOffers(t testing.TB, yml string) []*Offer {
	t.Helper()
	f, err := ParseOffers([]byte(yml), "offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return f.Offers
}

package interconnect

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nvb(t *testing.T, name string) *NVBandwidth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := ParseNVBandwidth(b, name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// cellSum adds a test's cells; nvbandwidth's SUM adds the unrounded
// figures, so the two agree within half a hundredth a cell.
func cellSum(tc NVTest) (sum float64, cells int) {
	for _, row := range tc.Matrix {
		for _, v := range row {
			if v != nil {
				sum += *v
				cells++
			}
		}
	}
	return sum, cells
}

func TestParseNVBandwidth(t *testing.T) {
	// nvbandwidth#50: six A6000 over PCIe, the thread shows no Running line:
	// the testcase is named by its SUM line. Slowest pair 0→5 at 21.80
	// (read off the matrix by hand), SUM 715.53, cells 715.56.
	a := nvb(t, "nvbandwidth-a6000-6x-pcie.txt")
	if len(a.Tests) != 1 || a.Tests[0].Name != "device_to_device_memcpy_read_ce" || a.Tests[0].Unit != "GB/s" || len(a.Devices) != 0 {
		t.Fatalf("%+v", a)
	}
	tc := a.Tests[0]
	if len(tc.Rows) != 6 || len(tc.Cols) != 6 || tc.Matrix[2][2] != nil || *tc.Matrix[3][4] != 26.34 || *tc.Sum != 715.53 {
		t.Errorf("%+v", tc)
	}
	if s, n := cellSum(tc); n != 30 || math.Abs(s-*tc.Sum) > 0.005*float64(n) {
		t.Errorf("cells %d sum %v vs SUM %v", n, s, *tc.Sum)
	}
	if p, ok := a.SlowestPeerPair(); !ok || p != (Pair{Test: "device_to_device_memcpy_read_ce", Row: 0, Col: 5, GBps: 21.80}) {
		t.Errorf("slowest %+v %v", p, ok)
	}

	// nvbandwidth#15: host↔device only, one row each; no peer pair.
	r := nvb(t, "nvbandwidth-rtx4090-8x-host.txt")
	if len(r.Devices) != 8 || r.Devices[7] != "NVIDIA GeForce RTX 4090" || len(r.Tests) != 2 ||
		r.Tests[0].Name != "host_to_device_memcpy_ce" || r.Tests[1].Name != "device_to_host_memcpy_ce" ||
		*r.Tests[1].Sum != 214.28 || *r.Tests[0].Matrix[0][7] != 26.31 {
		t.Errorf("%+v", r)
	}
	for _, tc := range r.Tests {
		if s, n := cellSum(tc); n != 8 || math.Abs(s-*tc.Sum) > 0.005*float64(n) {
			t.Errorf("%s: cells %d sum %v vs SUM %v", tc.Name, n, s, *tc.Sum)
		}
	}
	if _, ok := r.SlowestPeerPair(); ok {
		t.Error("host tests counted as peer pairs")
	}

	// The early layout of nvbandwidth's own README: "Running benchmark
	// NAME.", "(columns)" and "(rows)", no SUM line.
	e := nvb(t, "nvbandwidth-readme-early.txt")
	if len(e.Tests) != 1 || e.Tests[0].Name != "host_to_device_bidirectional_memcpy_ce" || e.Tests[0].Sum != nil ||
		*e.Tests[0].Matrix[0][1] != 0.34 || e.Tests[0].PeerTest() {
		t.Errorf("%+v", e)
	}

	// Generated 8 × H100 (testdata/generate.py): 56 pairs, 388.25 the
	// slowest (388 + 0.25·((7r+3c) mod 10), 0 only on the diagonal); one
	// pair down to 47.30 both ways in the other file.
	h := nvb(t, "nvbandwidth-h100-8x-nvswitch.txt")
	if p, _ := h.SlowestPeerPair(); p.GBps != 388.25 || len(h.Devices) != 8 {
		t.Errorf("%+v", p)
	}
	if s, n := cellSum(h.Tests[0]); n != 56 || math.Abs(s-21798) > 1e-6 {
		t.Errorf("cells %d sum %v", n, s)
	}
	if p, _ := nvb(t, "nvbandwidth-h100-8x-one-slow-pair.txt").SlowestPeerPair(); p != (Pair{Test: "device_to_device_memcpy_read_ce", Row: 3, Col: 5, GBps: 47.30}) {
		t.Errorf("%+v", p)
	}
}

func TestParseNVBandwidthErrors(t *testing.T) {
	head := "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
	for in, want := range map[string]string{
		"hello\n":                        "x: no bandwidth matrix",
		head + "   0   x\n":              "x:3: header of \"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\": column \"x\"",
		head + "   0   1\n 0 N/A\n":      "x:4: row 0 of",
		head + "   0   1\n 0 N/A 12,5\n": "x:4: row 0 column 1 of \"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\": \"12,5\" is not a figure",
		head + "   0   1\n 0 N/A 1\n 1 1 N/A\nSUM other 2\n":                      "x:6: SUM names other, the matrix above is device_to_device_memcpy_read_ce",
		head + "   0   1\n 0 N/A 1\n\nSUM device_to_device_memcpy_read_ce many\n": "x:6: SUM device_to_device_memcpy_read_ce: \"many\" is not a number",
		head:        "x:2: \"memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\": a title with no rows under it",
		"SUM a 1\n": "x:1: SUM a before any matrix",
	} {
		if _, err := ParseNVBandwidth([]byte(in), "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

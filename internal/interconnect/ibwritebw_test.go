package interconnect

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ibwr(t *testing.T, name string) *IBWriteBW {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseIBWriteBW(b, name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestParseIBWriteBW(t *testing.T) {
	// perftest#273: Gb/sec, one row of 8-byte messages.
	p := ibwr(t, "ib_write_bw-perftest273-postlist.txt")
	if p.Test != "RDMA_Write Post List BW Test" || p.LinkType != "Ethernet" || p.Unit != "Gb/sec" ||
		len(p.Rows) != 1 || p.Rows[0] != (IBWRRow{Bytes: 8, Iterations: 224958464, PeakGbps: 0, AvgGbps: 0.48, MsgRateMpps: 7.498617}) {
		t.Errorf("%+v", p)
	}
	// perftest#65 (ib_send_bw, the same table) in MB/sec: perftest's MB is
	// 2^20 bytes, so 5544.28 MB/sec = 5544.28 × 1048576 × 8 / 1e9 =
	// 46.5088 Gb/s; the row's own MsgRate agrees: 5544.28 × 1048576 / 1024
	// bytes = 5.67734 M messages/s, as printed (5.677340).
	m := ibwr(t, "ib_send_bw-perftest65-mbsec.txt")
	r := m.Rows[0]
	if m.Unit != "MB/sec" || math.Abs(r.AvgGbps-46.5088) > 1e-4 || r.PeakGbps != 0 {
		t.Errorf("%+v", m)
	}
	if got := r.AvgGbps * 1e9 / 8 / float64(r.Bytes) / 1e6; math.Abs(got-r.MsgRateMpps) > 1e-5 {
		t.Errorf("MB/sec conversion disagrees with MsgRate: %v vs %v", got, r.MsgRateMpps)
	}
	// Generated NDR run (testdata/generate.py): 23 sizes, 2 B to 8 MiB;
	// at 8 MiB average 393.88 Gb/s, and MsgRate × size × 8 gives it back
	// within MsgRate's six decimals (0.0000005 Mpps × 8 MiB × 8 = 0.034 Gb/s).
	n := ibwr(t, "ib_write_bw-ndr-400.txt")
	big, _ := n.Largest()
	if len(n.Rows) != 23 || n.LinkType != "IB" || big.Bytes != 8388608 || big.AvgGbps != 393.88 || big.PeakGbps != 394.67 {
		t.Errorf("%d rows, largest %+v", len(n.Rows), big)
	}
	if got := big.MsgRateMpps * 1e6 * 8 * 8388608 / 1e9; math.Abs(got-big.AvgGbps) > 0.034 {
		t.Errorf("MsgRate × size = %v Gb/s", got)
	}
}

func TestParseIBWriteBWErrors(t *testing.T) {
	hdr := " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
	for in, want := range map[string]string{
		"RDMA_Write BW Test\n": "x: no result rows",
		" #bytes #iterations BW peak[GB/s] BW average[GB/s] MsgRate[Mpps]\n 8 1 1 1 1\n": "x:1: BW average in \"GB/s\": want Gb/sec or MB/sec",
		hdr + " 65536 5000 390.1\n":          "x:2: a row of 3 fields, want 5",
		hdr + " 65536 5000 390.1 fast 0.7\n": "x:2: BW average: \"fast\" is not a number",
		hdr + " 64k 5000 390.1 389.9 0.7\n":  "x:2: #bytes: \"64k\" is not a count",
		hdr + " 8 1 1 1 1\n" + strings.Replace(hdr, "Gb/sec", "MB/sec", 2) + " 8 1 1 1 1\n": "x:3: a second table in MB/sec",
	} {
		if _, err := ParseIBWriteBW([]byte(in), "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

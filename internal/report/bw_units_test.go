package report

import (
	"testing"

	"github.com/linecheck/linecheck/probe/bw"
)

// bw -f: the rates of the tables in the unit asked, iperf3's: bits in
// 1000s, bytes in 1024s. 8,192,000 bit/s = 8,192 Kbit/s = 1,000 KByte/s
// (8,192,000 / 8 / 1024) = 8.2 Mbit/s.
func TestBWTablesInTheUnitAsked(t *testing.T) {
	mean := 8192000.0
	r := &bw.Result{Protocol: "tcp", Direction: bw.Upload, Streams: 1, DurationS: 1, Bytes: 1024000, Throughput: bw.Throughput{Mean: &mean}}
	for _, c := range []struct{ unit, header, cell string }{
		{"k", "mean Kbit/s", "8192.0"}, {"m", "mean Mbit/s", "8.2"}, {"K", "mean KByte/s", "1000.0"}, {"M", "mean MByte/s", "1.0"},
	} {
		u, err := ParseBWUnit(c.unit)
		if err != nil {
			t.Fatal(err)
		}
		sum := BWTest{Result: r, Unit: u}.Tables(FormatTable)[0]
		if sum.Headers[1] != c.header || sum.Rows[0][1] != c.cell {
			t.Errorf("-f %s: %q %q, want %q %q", c.unit, sum.Headers[1], sum.Rows[0][1], c.header, c.cell)
		}
	}
	if _, err := ParseBWUnit("x"); err == nil {
		t.Error("-f x accepted")
	}
	if got := (BWTest{Result: r}).Tables(FormatCSV)[0]; got.Rows[0][1] != "8192000" {
		t.Errorf("csv keeps bit/s, got %q", got.Rows[0][1])
	}
}

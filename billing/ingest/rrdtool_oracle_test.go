package ingest

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// rrdtoolBin returns the rrdtool binary, skipping only when it is missing and
// we are not root (CI runs as root and installs it).
func rrdtoolBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("rrdtool")
	if err != nil {
		if os.Getuid() == 0 {
			t.Fatal("rrdtool is missing (scripts/test installs it)")
		}
		t.Skip("rrdtool not installed")
	}
	return p
}

// rrdtool as the oracle: an RRD fed two days of 5-minute GAUGE rates (bytes/s)
// with 12 skipped updates (heartbeat 600 s, so 13 unknown rows), exported with
// `rrdtool xport`, read back by the package's readers and billed with
// --p95-method rrdtool. rrdtool's own VDEF … PERCENTNAN must equal gaps skip,
// and PERCENT (unknown rows sort lowest, like zeros) must equal gaps zero.
func TestP95RrdtoolMethodEqualsRrdtoolVDEF(t *testing.T) {
	bin := rrdtoolBin(t)
	dir := t.TempDir()
	rrd := filepath.Join(dir, "port.rrd")
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()
	const rows = 576
	end := t0 + rows*300
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("rrdtool %s: %v\n%s", strings.Join(args[:min(len(args), 4)], " "), err, out)
		}
		return string(out)
	}
	run("create", rrd, "--start", fmt.Sprint(t0), "--step", "300",
		"DS:in:GAUGE:600:0:U", "DS:out:GAUGE:600:0:U", "RRA:AVERAGE:0.5:1:2000")
	in, out := oracleData(rows, 42)
	upd := []string{"update", rrd}
	for k := 1; k <= rows; k++ {
		if k >= 200 && k < 212 {
			continue // the poller missed an hour
		}
		// oracleData is in "bit/s"-like units; feed bytes/s with bursts and ties intact.
		upd = append(upd, fmt.Sprintf("%d:%g:%g", t0+int64(k)*300, in[k-1]+1000, out[k-1]+1000))
	}
	run(upd...)
	vdef := func(ds string) (percent, percentNaN float64) {
		o := run("graph", "/dev/null", "--start", fmt.Sprint(t0), "--end", fmt.Sprint(end), "--step", "300", "-w", "2000",
			"DEF:v="+rrd+":"+ds+":AVERAGE", "VDEF:p=v,95,PERCENT", "VDEF:pn=v,95,PERCENTNAN", "PRINT:p:%.6lf", "PRINT:pn:%.6lf")
		lines := strings.Fields(o)
		if len(lines) != 3 {
			t.Fatalf("graph output %q", o)
		}
		a, _ := strconv.ParseFloat(lines[1], 64)
		b, _ := strconv.ParseFloat(lines[2], 64)
		return a, b
	}
	// The 13 unknown rows must shift the rank, or skip vs zero would prove nothing.
	if pc, pn := vdef("in"); pc == pn {
		t.Fatalf("PERCENT = PERCENTNAN = %v: the gap does not move the rank", pc)
	}
	xport := []string{"xport", "-m", "10000", "--start", fmt.Sprint(t0), "--end", fmt.Sprint(end), "--step", "300",
		"DEF:i=" + rrd + ":in:AVERAGE", "DEF:o=" + rrd + ":out:AVERAGE", "XPORT:i:in", "XPORT:o:out"}
	p, _ := billing.RangePeriod(time.Unix(t0, 0), time.Unix(end, 0), time.UTC)
	for _, variant := range [][]string{nil, {"--json"}, {"--showtime"}} {
		name := "xport" + strings.Join(variant, "")
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(run(append(append([]string{}, xport...), variant...)...)), 0o644); err != nil {
			t.Fatal(err)
		}
		series, err := ReadFile(f, ReadOptions{From: t0, To: end})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range []struct {
			gaps string
			pick func(pc, pn float64) float64
		}{{"skip", func(_, pn float64) float64 { return pn }}, {"zero", func(pc, _ float64) float64 { return pc }}} {
			r, err := billing.BillSeries(series[0], p, nil, billing.Options{Method: "rrdtool", Gaps: c.gaps})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Samples.Expected != rows || r.Samples.Missing != 13 {
				t.Errorf("%s: samples %+v, want %d expected, 13 missing", name, r.Samples, rows)
			}
			for _, d := range []struct {
				ds  string
				got float64
			}{{"in", r.P95.InBps}, {"out", r.P95.OutBps}} {
				pc, pn := vdef(d.ds)
				want := c.pick(pc, pn) * 8 // rrdtool works in bytes/s; the report in bit/s
				if math.Abs(d.got-want) > 1e-6*want {
					t.Errorf("%s gaps %s %s: %v bit/s, rrdtool %v (PERCENT %v, PERCENTNAN %v bytes/s)", name, c.gaps, d.ds, d.got, want, pc, pn)
				}
			}
		}
		// The invoice check (issue 33) recovers rrdtool's rule from its
		// own figure: PERCENTNAN is the rrdtool method over present
		// slots, PERCENT the same with the unknown rows as zeros.
		pc, pn := vdef("in")
		for _, c := range []struct {
			bytesPerS float64
			gaps, not string
		}{{pn, "skip", "zero"}, {pc, "zero", "skip"}} {
			billed := strconv.FormatFloat(c.bytesPerS*8/1e6, 'f', 3, 64)
			rc, err := billing.Reconcile(series[0], []billing.Period{p}, billed, billing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			has := func(gaps string) bool {
				for _, m := range rc.Matches {
					if m.Method == billing.RRDtool && m.Direction == billing.DirIn && m.Gaps == gaps && m.TZ == "UTC" {
						return true
					}
				}
				return false
			}
			if !has(c.gaps) || has(c.not) {
				t.Errorf("%s: rrdtool's %s Mbit/s (gaps %s) reconciled to %+v", name, billed, c.gaps, rc.Matches)
			}
		}
	}
}

// oracleData is the pseudo-random traffic of billing's percentile oracle
// tests (ties, bursts in the top 5 %, zeros), so that rrdtool sees the same
// shapes here.
func oracleData(n int, seed uint64) (in, out []float64) {
	x := seed | 1
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	for i := 0; i < n; i++ {
		a := float64(next() % 1000)
		b := float64(next() % 700)
		if next()%20 == 0 {
			a *= 8 // bursts in the top 5 %
		}
		if next()%50 == 0 {
			b = 0
		}
		in = append(in, a*1000)
		out = append(out, b*1000)
	}
	return in, out
}

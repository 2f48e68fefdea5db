package ingest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// Issue 33: the invoice check recovers rrdtool's rule from rrdtool's own
// billed figure on a month with a gap. September 2026 in an RRD with 12
// updates skipped (13 unknown rows), exported with xport at 5 minutes;
// rrdtool graph's VDEF PERCENTNAN is the rrdtool method over present slots
// (gaps skip), PERCENT the same with the unknown rows sorted lowest (gaps
// zero). Each figure, written at 5 decimals as an invoice's Mbps, gives back
// its own gap policy under rrdtool/in and not the other.
func TestInvoiceCheckRecoversRrdtoolOnAMonthWithAGap(t *testing.T) {
	rrd := needTool(t, "rrdtool")
	dir := t.TempDir()
	S, n, _ := monthRRD(t, rrd, dir, 3000)
	end := S + n*300
	file := filepath.Join(dir, "port.rrd")
	out := run(t, dir, nil, "", rrd, "xport", "--showtime", "--step", "300", "--maxrows", "9000", "--start", fmt.Sprint(S), "--end", fmt.Sprint(end),
		"DEF:in="+file+":ds0:AVERAGE", "DEF:out="+file+":ds1:AVERAGE", "XPORT:in:in", "XPORT:out:out")
	s := mustRead(t, "port.xml", out, ReadOptions{})[0]
	g := strings.Fields(run(t, dir, nil, "", rrd, "graph", "/dev/null", "--start", fmt.Sprint(S), "--end", fmt.Sprint(end), "--step", "300", "-w", "9000",
		"DEF:v="+file+":ds0:AVERAGE", "VDEF:p=v,95,PERCENT", "VDEF:pn=v,95,PERCENTNAN", "PRINT:p:%.6lf", "PRINT:pn:%.6lf"))
	if len(g) != 3 {
		t.Fatalf("graph printed %q", g)
	}
	figure := func(s string) string {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatFloat(v*8/1e6, 'f', 5, 64) // bytes/s to Mbit/s
	}
	percent, percentNaN := figure(g[1]), figure(g[2])
	if percent == percentNaN {
		t.Fatalf("PERCENT = PERCENTNAN = %s Mbit/s: the gap does not move the rank", percent)
	}
	p := billing.MonthPeriod(2026, time.September, time.UTC)
	if r, err := billing.BillSeries(s, p, nil, billing.Options{}); err != nil || r.Samples.Missing != 13 {
		t.Fatalf("the month: %v (want 13 slots missing)", err)
	}
	for _, c := range []struct{ billed, gaps, not string }{{percentNaN, "skip", "zero"}, {percent, "zero", "skip"}} {
		rc, err := billing.Reconcile(s, []billing.Period{p}, c.billed, billing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		has := func(gaps string) bool {
			for _, m := range rc.Matches {
				if m.Method == billing.RRDtool && m.Direction == billing.DirIn && m.Gaps == gaps {
					return true
				}
			}
			return false
		}
		if !has(c.gaps) || has(c.not) {
			t.Errorf("rrdtool billed %s Mbit/s (gaps %s): matches %+v", c.billed, c.gaps, rc.Matches)
		}
	}
}

package ingest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 35: the export command named for an .rrd given in place of its
// export lacked --step 300 (and --maxrows): run on a month, rrdtool xport
// fits the range into 400 rows and writes 2-hour averages, which the
// 95th refuses as coarse. The command the message gives, run by the real
// rrdtool on an RRD holding a month of 5-minute rows, yields those rows.
func TestRRDExportHintYieldsFiveMinuteRows(t *testing.T) {
	rrd := needTool(t, "rrdtool")
	dir := t.TempDir()
	S, n, rate := monthRRD(t, rrd, dir, -1)
	_, err := ReadFile(filepath.Join(dir, "port.rrd"), ReadOptions{})
	if err == nil {
		t.Fatal("an .rrd was read as a log")
	}
	m := regexp.MustCompile(`rrdtool (xport [^>]*) > FILE\.xml`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no export command in %q", err)
	}
	cmd := strings.NewReplacer("START", fmt.Sprint(S), "END", fmt.Sprint(S+n*300), "FILE", filepath.Join(dir, "port")).Replace(m[1])
	out := run(t, dir, nil, "", rrd, strings.Fields(cmd)...)
	s := mustRead(t, "port.xml", out, ReadOptions{})[0]
	if s.Step != 300 || len(s.Slots) != int(n) {
		t.Fatalf("%s: step %d, %d slots; want 300 and %d", cmd, s.Step, len(s.Slots), n)
	}
	// Each 5-minute row is the rate fed (bytes/s × 300 in the slot).
	for i, sl := range s.Slots {
		k := (sl.Start-S)/300 + 1
		if want := float64(rate(k) * 300); sl.In < want-1e-6 || sl.In > want+1e-6 {
			t.Fatalf("slot %d (%s): %.3f bytes in, fed %.0f", i, fmtTime(sl.Start), sl.In, want)
		}
	}
}

// monthRRD writes dir/port.rrd as MRTG lays one out (ds0 in, ds1 out,
// COUNTER), with a 5-minute archive long enough for a month beside an
// hourly one, fed September 2026 at rate(k) bytes/s in and half that out;
// from update gap on, 12 updates are skipped (heartbeat 600 s: 13 unknown
// rows), none when gap < 0. It returns the month's start, its slots and rate.
func monthRRD(t *testing.T, rrd, dir string, gap int64) (int64, int64, func(int64) int64) {
	t.Helper()
	const S = int64(1788220800) // 2026-09-01T00:00:00Z
	const n = 30 * 288
	run(t, dir, nil, "", rrd, "create", "port.rrd", "--start", fmt.Sprint(S-300), "--step", "300",
		"DS:ds0:COUNTER:600:0:U", "DS:ds1:COUNTER:600:0:U", "RRA:AVERAGE:0.5:1:9000", "RRA:AVERAGE:0.5:12:1000")
	rate := func(k int64) int64 { return 1000 + (k*7919)%90000 }
	var c int64
	for k := int64(0); k <= n; k += 500 {
		args := []string{"update", "port.rrd"}
		for j := k; j <= min(k+499, n); j++ {
			if j > 0 {
				c += rate(j) * 300
			}
			if gap >= 0 && j >= gap && j < gap+12 {
				continue
			}
			args = append(args, fmt.Sprintf("%d:%d:%d", S+300*j, c, c/2))
		}
		run(t, dir, nil, "", rrd, args...)
	}
	return S, n, rate
}

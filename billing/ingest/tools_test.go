package ingest

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// Real tools as oracles: rrdtool, MRTG's rateup and vnstat write the files,
// the readers read them back, and the slot values must equal what was fed
// to the tool; rrdtool's own VDEF PERCENT/PERCENTNAN must equal the 95th
// taken from the series the reader built.

// needTool finds a tool; it may be missing only when not root (CI runs as
// root and installs it).
func needTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real-tool test skipped in -short mode")
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("%s is not installed (scripts/test installs it): %v", name, err)
		}
		t.Skipf("%s is not installed and not root: skipped", name)
	}
	return p
}

func run(t *testing.T, dir string, env []string, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// rrdPercent is rrdtool ≥ 1.4's VDEF PERCENT, written here from the anchors
// (§1.2) independently of the engine: idx0 = round(95·(n−1)/100) over all
// rows, unknown rows sorting lowest; with nan=false (PERCENTNAN) the unknown
// rows are left out. Unknown rows are passed as gaps count.
func rrdPercent(present []float64, gaps int, withGaps bool) float64 {
	a := slices.Clone(present)
	slices.Sort(a)
	n := len(a)
	if withGaps {
		n += gaps
	}
	idx := int(math.Floor(0.95*float64(n-1) + 0.5))
	if withGaps {
		if idx < gaps {
			return 0 // an unknown row; as zero it is 0
		}
		idx -= gaps
	}
	return a[idx]
}

func TestRRDToolXportAndPercentMatchReader(t *testing.T) {
	rrd := needTool(t, "rrdtool")
	dir := t.TempDir()
	const S = int64(1780272000) // 2026-06-01T00:00:00Z
	const n = 8640              // 30 days of 5-minute intervals
	// Interval k = [S+300k, S+300k+300) carries rateIn(k) bytes/s; every 97th
	// is an 8× burst; updates 1000..1011 are skipped: with heartbeat 600 the
	// 3900 s from update 999 to update 1012 are unknown, 13 intervals (999..1011).
	rateIn := func(k int64) float64 {
		r := float64(100000 + (k*7919)%400000)
		if k%97 == 0 {
			r *= 8
		}
		return r
	}
	rateOut := func(k int64) float64 { return float64(50000 + (k*104729)%300000) }
	skipped := func(k int64) bool { return k >= 1000 && k < 1012 }

	run(t, dir, nil, "", rrd, "create", "port.rrd", "--start", fmt.Sprint(S-300), "--step", "300",
		"DS:in:DERIVE:600:0:U", "DS:out:DERIVE:600:0:U", "RRA:AVERAGE:0.5:1:9000")
	var script strings.Builder
	var ci, co int64
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			script.WriteString("update port.rrd " + strings.Join(batch, " ") + "\n")
			batch = batch[:0]
		}
	}
	for k := int64(0); k <= n; k++ {
		if !skipped(k) {
			batch = append(batch, fmt.Sprintf("%d:%d:%d", S+300*k, ci, co))
			if len(batch) == 400 {
				flush()
			}
		}
		ci += int64(rateIn(k)) * 300
		co += int64(rateOut(k)) * 300
	}
	flush()
	run(t, dir, nil, script.String(), rrd, "-")

	// Bounds 100 s inside the aligned range: xport and graph then both cover
	// exactly the intervals [S, S+300n) (checked below through the row count).
	start, end := fmt.Sprint(S+100), fmt.Sprint(S+300*n-100)
	defs := []string{"--start", start, "--end", end, "--step", "300", "-m", "9000",
		"DEF:i=port.rrd:in:AVERAGE", "DEF:o=port.rrd:out:AVERAGE", "XPORT:i:in", "XPORT:o:out"}
	// All four shapes: XML and JSON, with and without --showtime.
	variants := map[string][]string{
		"port.xml":    {"xport"},
		"port-t.xml":  {"xport", "--showtime"},
		"port.json":   {"xport", "--json"},
		"port-t.json": {"xport", "--json", "--showtime"},
	}
	var others []*billing.Series
	for name, args := range variants {
		out := run(t, dir, nil, "", rrd, append(args, defs...)...)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		s := mustReadFile(t, filepath.Join(dir, name), ReadOptions{From: S, To: S + 300*n})[0]
		if want := map[bool]string{true: "rrdtool-json", false: "rrdtool-xml"}[strings.HasSuffix(name, ".json")]; s.Format != want {
			t.Fatalf("%s: format %s", name, s.Format)
		}
		if len(s.Slots) != n-13 {
			t.Fatalf("%s: %d slots, want %d present", name, len(s.Slots), n-13)
		}
		others = append(others, s)
	}
	x := others[0]
	var ins, outs []float64
	for i, s := range x.Slots {
		k := (s.Start - S) / 300
		if k >= 999 && k <= 1011 {
			t.Fatalf("slot %d should be a gap", k)
		}
		if math.Abs(s.In-rateIn(k)*300) > 1e-9*s.In || math.Abs(s.Out-rateOut(k)*300) > 1e-9*s.Out {
			t.Fatalf("slot %d = %+v, want in %v out %v bytes", k, s, rateIn(k)*300, rateOut(k)*300)
		}
		for _, o := range others[1:] {
			if o.Slots[i] != s {
				t.Fatalf("%s slot %+v, %s slot %+v", o.Name, o.Slots[i], x.Name, s)
			}
		}
		ins = append(ins, s.In/300)
		outs = append(outs, s.Out/300)
	}

	g := run(t, dir, nil, "", rrd, "graph", "/dev/null", "--start", start, "--end", end, "--step", "300", "-w", "9000",
		"DEF:i=port.rrd:in:AVERAGE", "DEF:o=port.rrd:out:AVERAGE",
		"VDEF:ipn=i,95,PERCENTNAN", "VDEF:ip=i,95,PERCENT", "VDEF:opn=o,95,PERCENTNAN", "VDEF:op=o,95,PERCENT",
		"CDEF:all=i,UN,1,1,IF", "VDEF:rows=all,TOTAL",
		"PRINT:ipn:%.6lf", "PRINT:ip:%.6lf", "PRINT:opn:%.6lf", "PRINT:op:%.6lf", "PRINT:rows:%.0lf")
	lines := strings.Fields(g)[1:] // the first line is the image size
	var vals []float64
	for _, l := range lines {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatalf("rrdtool graph printed %q", g)
		}
		vals = append(vals, v)
	}
	if rows := int(vals[4]) / 300; rows != n {
		t.Fatalf("rrdtool graph used %d rows, the reader's window has %d: the bounds do not match", rows, n)
	}
	gaps := n - len(ins)
	for _, c := range []struct {
		what    string
		rrdtool float64
		ours    float64
	}{
		{"in PERCENTNAN (gaps skipped)", vals[0], rrdPercent(ins, gaps, false)},
		{"in PERCENT (gaps as zero)", vals[1], rrdPercent(ins, gaps, true)},
		{"out PERCENTNAN (gaps skipped)", vals[2], rrdPercent(outs, gaps, false)},
		{"out PERCENT (gaps as zero)", vals[3], rrdPercent(outs, gaps, true)},
	} {
		if math.Abs(c.rrdtool-c.ours) > 1e-6 {
			t.Errorf("%s: rrdtool %.6f, from the reader's series %.6f", c.what, c.rrdtool, c.ours)
		}
	}
	// The engine's rrdtool method on the same series agrees too.
	sorted := slices.Clone(ins)
	slices.Sort(sorted)
	if got := billing.Percentile95("rrdtool", sorted); math.Abs(got-vals[0]) > 1e-6 {
		t.Errorf("billing.Percentile95(rrdtool) = %.6f, rrdtool PERCENTNAN %.6f", got, vals[0])
	}
	if vals[0] == vals[1] {
		t.Logf("note: PERCENT and PERCENTNAN coincide on this data (%.0f)", vals[0])
	}
}

func TestRateupLogSlotsEqualTheRatesFed(t *testing.T) {
	rateup := needTool(t, "rateup")
	dir := t.TempDir()
	const S = int64(1780272000)
	const n = 54 * 12 // 54 hours of updates: 50 h of 5-minute rows and older 30-minute rows
	rateIn := func(k int64) int64 { return 2000 + (k*7919)%90000 }
	rateOut := func(k int64) int64 { return 1000 + (k*104729)%50000 }
	// One rateup run takes many updates ("t TIME u IN OUT ABSMAX" repeated),
	// applied in order as separate runs would be; 72 per run keeps it quick.
	var ci, co int64
	var args []string
	for k := int64(0); k <= n; k++ {
		if len(args) == 0 {
			args = []string{dir + "/", "port1", fmt.Sprint(S + 300*k)}
		} else {
			args = append(args, "t", fmt.Sprint(S+300*k))
		}
		args = append(args, "u", fmt.Sprint(ci), fmt.Sprint(co), "125000000")
		if k%72 == 71 || k == n {
			run(t, dir, nil, "", rateup, args...)
			args = nil
		}
		ci += rateIn(k) * 300
		co += rateOut(k) * 300
	}
	path := filepath.Join(dir, "port1.log")
	// The 5-minute rows: the last ~50 h.
	end := S + 300*n
	s := mustReadFile(t, path, ReadOptions{From: end - 40*3600, To: end})[0]
	if s.Format != "mrtg" || s.Step != 300 || len(s.Slots) != 40*12 {
		t.Fatalf("format %s step %d, %d slots; want mrtg, 300, %d", s.Format, s.Step, len(s.Slots), 40*12)
	}
	for _, sl := range s.Slots {
		k := (sl.Start - S) / 300
		if sl.In != float64(rateIn(k)*300) || sl.Out != float64(rateOut(k)*300) {
			t.Fatalf("slot %d (%s) = %.0f/%.0f bytes, fed %d/%d", k, fmtTime(sl.Start), sl.In, sl.Out, rateIn(k)*300, rateOut(k)*300)
		}
	}
	// The whole month: the older part is 30-minute rows, so the series is coarse
	// and says so; its volume still matches what was fed, to rateup's own
	// consolidation arithmetic (integer averages: 21795 B/s written for a
	// half hour fed 21797.5 on average), here within 1e-4.
	m := mustReadFile(t, path, ReadOptions{From: S, To: end})[0]
	if m.Step <= 300 || !hasWarning(m, "5-minute rows for the last") {
		t.Errorf("month: step %d, warnings %q", m.Step, m.Warnings)
	}
	var got, fed float64
	for _, sl := range m.Slots {
		got += sl.In
	}
	for k := int64(0); k < n; k++ {
		fed += float64(rateIn(k) * 300)
	}
	if math.Abs(got-fed) > 1e-4*fed {
		t.Errorf("month volume %.0f bytes, fed %.0f", got, fed)
	}
	// The bill says which rows priced the volume: rateup keeps 600
	// 5-minute rows (50 h), and the 4 h before them are 8 30-minute rows.
	p, _ := billing.RangePeriod(time.Unix(S, 0), time.Unix(end, 0), time.UTC)
	r, err := billing.BillSeries(m, p, nil, billing.Options{AllowCoarse: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []billing.Resolution{{StepS: 300, Rows: 600, Hours: 50}, {StepS: 1800, Rows: 8, Hours: 4}}
	if fmt.Sprint(r.Samples.Resolutions) != fmt.Sprint(want) {
		t.Errorf("resolutions %+v, want %+v", r.Samples.Resolutions, want)
	}
}

func TestVnstatJSONFromARealDatabase(t *testing.T) {
	vnstat := needTool(t, "vnstat")
	vnstatd := needTool(t, "vnstatd")
	sqlite := needTool(t, "sqlite3")
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "vnstat.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("DatabaseDir %q\nUseUTC 1\n5MinuteHours -1\n", db)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TZ=UTC"}
	run(t, dir, env, "", vnstatd, "--config", conf, "--initdb")
	// vnstatd does not monitor a fake interface; the rows are written into its
	// database directly, as the daemon would.
	run(t, dir, env, "", vnstat, "--config", conf, "--add", "-i", "lc-fake0", "--force")
	const S = int64(1780272000)
	type row struct{ t, rx, tx int64 }
	var rows []row
	var sql strings.Builder
	sql.WriteString("BEGIN;\n")
	for k := int64(0); k < 8640; k++ {
		if k%500 == 7 { // a few missing entries
			continue
		}
		r := row{S + 300*k, 1_000_000 + (k*7919)%90_000_000, 500_000 + (k*104729)%40_000_000}
		rows = append(rows, r)
		fmt.Fprintf(&sql, "INSERT INTO fiveminute(interface,date,rx,tx) VALUES ((SELECT id FROM interface WHERE name='lc-fake0'),'%s',%d,%d);\n",
			strings.Replace(fmtTime(r.t)[:19], "T", " ", 1), r.rx, r.tx)
	}
	sql.WriteString("COMMIT;\n")
	run(t, dir, env, sql.String(), sqlite, filepath.Join(db, "vnstat.db"))
	out := run(t, dir, env, "", vnstat, "--config", conf, "--json", "f", "0")
	path := filepath.Join(dir, "vnstat.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(s *billing.Series) {
		t.Helper()
		if s.Name != "lc-fake0" || s.Step != 300 || len(s.Slots) != len(rows) {
			t.Fatalf("name %s step %d, %d slots; want lc-fake0, 300, %d", s.Name, s.Step, len(s.Slots), len(rows))
		}
		for i, r := range rows {
			if sl := s.Slots[i]; sl.Start != r.t || sl.In != float64(r.rx) || sl.Out != float64(r.tx) {
				t.Fatalf("slot %d = %+v, inserted %+v", i, sl, r)
			}
		}
	}
	s := mustReadFile(t, path, ReadOptions{})[0]
	if s.Format != "vnstat" {
		t.Fatalf("format %s", s.Format)
	}
	check(s)
	// The same output as vnstat < 2.10 writes it (no timestamps), read in UTC.
	old := regexp.MustCompile(`,"timestamp":\d+`).ReplaceAllString(out, "")
	check(mustRead(t, "old.json", old, ReadOptions{})[0])
}

// rateup as the oracle for a poller outage: 48 h of 5-minute updates with
// 36 missed in a row (3 h). rateup fills the outage with the last measured
// rate, so the log has every row (100 % coverage, as MRTG reports it); the
// 36 missed intervals and the one closed by the first update after them
// repeat that rate: 37 slots filled in (hand: 36 + 1), measured coverage
// (576 − 37) / 576 = 0.935764.
func TestRateupOutageIsCoverageButNotMeasured(t *testing.T) {
	rateup := needTool(t, "rateup")
	dir := t.TempDir()
	const S = int64(1780272000)
	const n = 576
	rate := func(k int64) int64 { return 2000 + (k*7919)%90000 }
	var ci, co int64
	var args []string
	flush := func() {
		if len(args) > 0 {
			run(t, dir, nil, "", rateup, args...)
			args = nil
		}
	}
	for k := int64(0); k <= n; k++ {
		if k > 0 {
			ci += rate(k) * 300
			co += rate(k+1) * 150
		}
		if k >= 200 && k < 236 {
			continue // the poller is down
		}
		if len(args) == 0 {
			args = []string{dir + "/", "port1", fmt.Sprint(S + 300*k)}
		} else {
			args = append(args, "t", fmt.Sprint(S+300*k))
		}
		args = append(args, "u", fmt.Sprint(ci), fmt.Sprint(co), "125000000")
		if k%72 == 71 {
			flush()
		}
	}
	flush()
	s := mustReadFile(t, filepath.Join(dir, "port1.log"), ReadOptions{From: S, To: S + n*300})[0]
	if len(s.Slots) != n || len(s.Filled) != 37 {
		t.Fatalf("%d slots, %d filled; want %d and 37", len(s.Slots), len(s.Filled), n)
	}
	if s.Filled[0] != S+200*300-300 || s.Filled[36] != S+235*300 {
		t.Errorf("filled %s .. %s", fmtTime(s.Filled[0]), fmtTime(s.Filled[36]))
	}
	p, _ := billing.RangePeriod(time.Unix(S, 0), time.Unix(S+n*300, 0), time.UTC)
	r, err := billing.BillSeries(s, p, nil, billing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples.Coverage != 1 || r.Samples.Filled != 37 || r.Samples.MeasuredCoverage != 0.935764 {
		t.Errorf("samples %+v", r.Samples)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "93.58 % known to be measured") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// The files users give in place of their text exports, made by the real
// tools: vnstat's database, an rrdtool .rrd, a gzip'd log. Each is named with
// the command that exports it, with --input forced or not, never parsed as
// garbage (a binary "header" echoed to the terminal).
func TestDatabasesGivenInsteadOfTheirExportsAreNamed(t *testing.T) {
	vnstatd := needTool(t, "vnstatd")
	rrd := needTool(t, "rrdtool")
	gz := needTool(t, "gzip")
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "vnstat.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("DatabaseDir %q\nUseUTC 1\n", db)), 0o644)
	run(t, dir, []string{"TZ=UTC"}, "", vnstatd, "--config", conf, "--initdb")
	run(t, dir, nil, "", rrd, "create", "port.rrd", "--step", "300", "DS:ds0:COUNTER:600:0:U", "DS:ds1:COUNTER:600:0:U", "RRA:AVERAGE:0.5:1:600")
	os.WriteFile(filepath.Join(dir, "port.csv"), []byte("timestamp,in_bytes,out_bytes\n1780272000,1,2\n"), 0o644)
	run(t, dir, nil, "", gz, "port.csv")
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(i * 7919 % 251) // includes NUL bytes
	}
	os.WriteFile(filepath.Join(dir, "noise.bin"), noise, 0o644)
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(db, "vnstat.db"), "a SQLite database (vnstat's vnstat.db?), not a traffic log: export it first, vnstat --json -i IFACE"},
		{filepath.Join(dir, "port.rrd"), "an rrdtool database (.rrd), not a traffic log: export it first, rrdtool xport"},
		{filepath.Join(dir, "port.csv.gz"), "gzip-compressed: gunzip it first"},
		{filepath.Join(dir, "noise.bin"), "binary data, not a text traffic log"},
	} {
		for _, format := range []string{"", "csv", "vnstat", "mrtg"} {
			_, err := ReadFile(tc.file, ReadOptions{Format: format})
			if err == nil || !strings.Contains(err.Error(), tc.file+":1: "+tc.want) {
				t.Errorf("%s (--input %q): %v; want %q", filepath.Base(tc.file), format, err, tc.want)
			}
		}
	}
}

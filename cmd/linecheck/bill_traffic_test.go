package main

import (
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/report"
)

// trafficLog is a small log to compute by hand: one slot on 30 September
// (1000 in, 2000 out), twelve on 1 October 00:00–00:55 (300 in, 600 out
// each: 3600 and 7200 in that hour and day), one on 2 October (5000 in).
func trafficLog(t *testing.T) string {
	var b strings.Builder
	b.WriteString("time,in_bytes,out_bytes\n2026-09-30T23:55:00Z,1000,2000\n")
	for i := range 12 {
		b.WriteString("2026-10-01T00:" + []string{"00", "05", "10", "15", "20", "25", "30", "35", "40", "45", "50", "55"}[i] + ":00Z,300,600\n")
	}
	b.WriteString("2026-10-02T10:00:00Z,5000,0\n")
	return writeFile(t, "port.csv", b.String())
}

func TestBillDailyHourlyAndMonthlyHistory(t *testing.T) {
	log := trafficLog(t)
	out, errs, code := billRun(t, log, "--daily", "--period", "2026-10", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, _ := csvOne(t, out)
	if len(rows) != 31 {
		t.Fatalf("%d days, want October's 31", len(rows))
	}
	// 1 Oct: 3600 + 7200 = 10800 bytes, 10800·8/86400 = 1 bit/s on average, 12 of 288 slots.
	d1, d2 := rows[0], rows[1]
	if d1["day"] != "2026-10-01" || d1["in_bytes"] != "3600" || d1["out_bytes"] != "7200" || d1["total_bytes"] != "10800" || d1["avg_bps"] != "1" || d1["slots"] != "12" || d1["slots_expected"] != "288" {
		t.Errorf("1 October %v", d1)
	}
	if d2["in_bytes"] != "5000" || d2["total_bytes"] != "5000" || d2["slots"] != "1" {
		t.Errorf("2 October %v", d2)
	}

	out, _, code = billRun(t, log, "--hourly", "--from", "2026-10-01T00:00", "--to", "2026-10-01T02:00", "--format", "csv")
	if rows, _ = csvOne(t, out); code != 0 || len(rows) != 2 || rows[0]["hour"] != "2026-10-01 00:00" || rows[0]["total_bytes"] != "10800" || rows[0]["avg_bps"] != "24" || rows[1]["slots"] != "0" {
		t.Errorf("hourly (10800·8/3600 = 24 bit/s, then an empty hour): %v", rows)
	}

	// --period all, now = 16 October 00:00: September (3000 bytes, 95th of its one
	// slot 2000·8/300 = 53.33 bit/s out) and October so far, 15 of 31 days:
	// 8600 in, 7200 out, projected ×31/15 to 17773, 14880, 32653 bytes.
	out, _, code = billRun(t, log, "--period", "all", "--now", "2026-10-16T00:00:00Z", "--format", "csv")
	if rows, _ = csvOne(t, out); code != 0 || len(rows) != 2 {
		t.Fatalf("exit %d, months %v, want September and October", code, rows)
	}
	sep, oct := rows[0], rows[1]
	if sep["month"] != "2026-09" || sep["total_bytes"] != "3000" || sep["p95_bps"] != "53.3333333333" || sep["estimate"] != "false" {
		t.Errorf("September %v", sep)
	}
	if oct["month"] != "2026-10" || oct["in_bytes"] != "8600" || oct["out_bytes"] != "7200" || oct["estimate"] != "true" ||
		oct["estimate_in_bytes"] != "17773" || oct["estimate_out_bytes"] != "14880" || oct["estimate_total_bytes"] != "32653" || oct["elapsed_fraction"] != "0.483870967742" {
		t.Errorf("October %v", oct)
	}

	// A range: one row per month, a month without samples is "-", not 0.
	out, _, code = billRun(t, log, "--period", "2026-08..2026-10", "--now", "2026-12-01T00:00:00Z")
	if code != 0 || !strings.Contains(out, "2026-08        -        -         -           -   0/8928            -") || strings.Contains(out, "2026-10 estimate") {
		t.Errorf("range table:\n%s", out)
	}
	out, _, code = billRun(t, log, "--period", "all", "--now", "2026-10-16T00:00:00Z")
	if code != 0 || !strings.Contains(out, "2026-10 estimate") || !strings.Contains(out, "projected to the month's end") {
		t.Errorf("the current month's estimate is not labelled:\n%s", out)
	}
	for _, bad := range [][]string{{"--daily", "--hourly"}, {"--daily", "--period", "all"}, {"--period", "2026-10..2026-08"}, {"--daily", "--table", "bills", "--format", "csv"}} {
		if _, errs, code := billRun(t, append([]string{log}, bad...)...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, %q; want 2 and a message", bad, code, errs)
		}
	}
}

// Default tables fit 120 columns (no terminal in tests), every line; --wide
// keeps each row on one line.
func TestBillAndCompareTablesFit120Columns(t *testing.T) {
	long := func(out string) (n int, widest int) {
		for _, l := range strings.Split(out, "\n") {
			w := report.Width(l)
			widest = max(widest, w)
			if w > report.DefaultWidth {
				n++
			}
		}
		return n, widest
	}
	out, errs, code := billRun(t, sampleCSV, "--offers", sampleOffers)
	if n, w := long(out); code != 0 || n > 0 {
		t.Errorf("bill: exit %d %s; %d lines over 120 columns (widest %d):\n%s", code, errs, n, w, out)
	}
	out, _, _ = billRun(t, sampleCSV, "--offers", sampleOffers, "--wide")
	if n, _ := long(out); n == 0 || !strings.Contains(out, "◀ cheapest") {
		t.Errorf("bill --wide: no row wider than 120 columns, expected the bills with their notes on one line:\n%s", out)
	}
	for _, f := range []string{"../../samples/candidates.yaml", "../../samples/three-networks.yaml"} {
		out, _ := prRun(t, "compare", "--offline", f)
		if n, w := long(out); n > 0 {
			t.Errorf("compare %s: %d lines over 120 columns (widest %d):\n%s", f, n, w, out)
		}
	}
}

// Several logs get one summary line per port before the details: a has
// 2×100 in, 2×200 out; b 2×300 in, 2×400 out.
func TestBillPortSummaryOneLinePerPort(t *testing.T) {
	a := writeFile(t, "a.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,100,200\n2026-10-01T00:05:00Z,100,200\n")
	b := writeFile(t, "b.csv", "time,in_bytes,out_bytes\n2026-10-01T00:00:00Z,300,400\n2026-10-01T00:05:00Z,300,400\n")
	out, errs, code := billRun(t, a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "Ports (2 series") || strings.Join(strings.Fields(lines[2]), " ") != "a 200.00 B 400.00 B 600.00 B 0.00 0.02%" ||
		strings.Join(strings.Fields(lines[3]), " ") != "b 600.00 B 800.00 B 1.40 kB 0.00 0.02%" {
		t.Errorf("summary:\n%s", strings.Join(lines[:5], "\n"))
	}
	out, _, _ = billRun(t, a, b, "--offers", sampleOffers)
	if !strings.Contains(strings.Split(out, "\n\n")[0], "cheapest") {
		t.Errorf("with offers the summary names each port's cheapest offer:\n%s", out)
	}
}

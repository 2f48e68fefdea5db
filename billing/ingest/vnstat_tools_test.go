package ingest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
	"github.com/shopspring/decimal"
)

// vnstatMonth writes a real vnstat 2.x export (`vnstat --json`) of
// September 2026 (UTC) for lc-fake0: the traffic of every 5-minute interval
// k of the month is five(k), and vnstat's database holds, as vnstatd keeps
// it, the 5-minute entries from fiveFrom on, the hourly entries from
// hourFrom on and the daily ones from dayFrom on, each the sum of its
// 5-minute intervals (vnstatd adds every update to every resolution).
func vnstatMonth(t *testing.T, five func(k int64) (rx, tx int64), fiveFrom, hourFrom, dayFrom int64) string {
	t.Helper()
	vnstat := needTool(t, "vnstat")
	vnstatd := needTool(t, "vnstatd")
	sqlite := needTool(t, "sqlite3")
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "vnstat.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("DatabaseDir %q\nUseUTC 1\n", db)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TZ=UTC"}
	run(t, dir, env, "", vnstatd, "--config", conf, "--initdb")
	run(t, dir, env, "", vnstat, "--config", conf, "--add", "-i", "lc-fake0", "--force")
	var sql strings.Builder
	sql.WriteString("BEGIN;\n")
	hour := map[int64][2]int64{}
	day := map[int64][2]int64{}
	for k := int64(0); k < vnstatSlots; k++ {
		ts := vnstatS + 300*k
		rx, tx := five(k)
		if ts >= fiveFrom {
			fmt.Fprintf(&sql, "INSERT INTO fiveminute(interface,date,rx,tx) VALUES (1,'%s',%d,%d);\n", sqlTime(ts), rx, tx)
		}
		h, d := ts-ts%3600, ts-ts%86400
		hour[h] = [2]int64{hour[h][0] + rx, hour[h][1] + tx}
		day[d] = [2]int64{day[d][0] + rx, day[d][1] + tx}
	}
	for _, tab := range []struct {
		name string
		from int64
		rows map[int64][2]int64
	}{{"hour", hourFrom, hour}, {"day", dayFrom, day}} {
		for ts, v := range tab.rows {
			if ts >= tab.from {
				fmt.Fprintf(&sql, "INSERT INTO %s(interface,date,rx,tx) VALUES (1,'%s',%d,%d);\n", tab.name, sqlTime(ts), v[0], v[1])
			}
		}
	}
	sql.WriteString("COMMIT;\n")
	run(t, dir, env, sql.String(), sqlite, filepath.Join(db, "vnstat.db"))
	// The whole export, and beside it the 5-minute entries alone (f).
	for _, mode := range []string{"", "f"} {
		args := []string{"--config", conf, "--json"}
		if mode != "" {
			args = append(args, mode, "0")
		}
		out := run(t, dir, env, "", vnstat, args...)
		if err := os.WriteFile(filepath.Join(dir, "vnstat"+mode+".json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "vnstat.json")
}

const (
	vnstatS     = int64(1788220800) // 2026-09-01T00:00:00Z
	vnstatSlots = 30 * 288
)

func sqlTime(t int64) string { return time.Unix(t, 0).UTC().Format("2006-01-02 15:04:05") }

// Issue 35: a month's vnstat export has 5-minute entries for the last 48 h
// only (5MinuteHours 48, the default), hourly or daily entries before. The
// bill priced the 5-minute entries alone, 16 times too little. The month's
// volume is every byte once: the coarser entries for the time before the
// 5-minute ones, the finer ones inside it, and the hour (day) the finer
// entries begin inside counts only what it holds beyond them.
func TestVnstatMonthVolumeUsesTheCoarserEntriesBeforeThe5MinuteOnes(t *testing.T) {
	five := func(k int64) (int64, int64) { return 1_000_000 + (k*7919)%90_000_000, 500_000 + (k*104729)%40_000_000 }
	var fedIn, fedOut int64
	for k := int64(0); k < vnstatSlots; k++ {
		rx, tx := five(k)
		fedIn += rx
		fedOut += tx
	}
	end := vnstatS + 30*86400
	for _, tc := range []struct {
		name                 string
		fiveFrom, hourFrom   int64
		dayFrom              int64
		wantRes              []billing.Resolution
		wantText             string
		wantStep             int64
		coarseFrom, fineFrom int64 // slots in [coarseFrom, fineFrom) hold the rest of the hour fineFrom is in
	}{
		// 5-minute entries from 23:35 on the 28th (48 h 25 min), hourly
		// entries for the whole month: 671 whole hours, and the 23:00 hour
		// of the 28th counts its 7 intervals before 23:35.
		{"hours for the month", end - 48*3600 - 25*60, vnstatS, end,
			[]billing.Resolution{{StepS: 300, Rows: 581, Hours: 48.42}, {StepS: 3600, Rows: 672, Hours: 671.58}},
			"volume from 581 five-minute rows (48.42 h) and 672 hourly rows (671.58 h)", 3600,
			end - 49*3600, end - 48*3600 - 25*60},
		// vnstat's defaults: 5MinuteHours 48, HourlyDays 4, daily entries
		// for the month: 26 days, 48 hours, 576 five-minute entries.
		{"vnstat defaults", end - 48*3600, end - 4*86400, vnstatS,
			[]billing.Resolution{{StepS: 300, Rows: 576, Hours: 48}, {StepS: 3600, Rows: 48, Hours: 48}, {StepS: 86400, Rows: 26, Hours: 624}},
			"volume from 576 five-minute rows (48 h), 48 hourly rows (48 h) and 26 daily rows (624 h)", 86400,
			0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := vnstatMonth(t, five, tc.fiveFrom, tc.hourFrom, tc.dayFrom)
			s := mustReadFile(t, path, ReadOptions{})[0]
			if s.Name != "lc-fake0" || s.Step != tc.wantStep || len(s.Slots) != vnstatSlots || s.FineHint == "" {
				t.Fatalf("name %s step %d, %d slots, hint %q; want lc-fake0, %d, %d slots and a hint", s.Name, s.Step, len(s.Slots), s.FineHint, tc.wantStep, vnstatSlots)
			}
			var in, out float64
			for i, sl := range s.Slots {
				in += sl.In
				out += sl.Out
				k := (sl.Start - vnstatS) / 300
				rx, tx := five(k)
				if sl.Start >= tc.fiveFrom && (sl.In != float64(rx) || sl.Out != float64(tx)) {
					t.Fatalf("slot %d (%s) = %+v, the 5-minute entry is %d, %d", i, fmtTime(sl.Start), sl, rx, tx)
				}
			}
			// Every byte once: the sum of the 5-minute intervals fed (to
			// the float rounding of hours spread over 12 slots).
			if math.Abs(in-float64(fedIn)) > 0.5 || math.Abs(out-float64(fedOut)) > 0.5 {
				t.Errorf("month volume %.0f in, %.0f out; fed %d, %d", in, out, fedIn, fedOut)
			}
			if tc.coarseFrom < tc.fineFrom {
				// The hour the 5-minute entries begin in: its entry less
				// the 5-minute entries in it, over the 7 slots before them.
				var hin, fin int64
				for ts := tc.coarseFrom; ts < tc.coarseFrom+3600; ts += 300 {
					rx, _ := five((ts - vnstatS) / 300)
					hin += rx
					if ts >= tc.fineFrom {
						fin += rx
					}
				}
				want := float64(hin-fin) / 7
				for _, sl := range s.Slots {
					if sl.Start >= tc.coarseFrom && sl.Start < tc.fineFrom && math.Abs(sl.In-want) > 1e-6*want {
						t.Errorf("slot %s: %.3f bytes in, want (%d − %d) / 7 = %.3f", fmtTime(sl.Start), sl.In, hin, fin, want)
					}
				}
			}

			p := billing.MonthPeriod(2026, time.September, time.UTC)
			offers, err := billing.ParseOffers([]byte("offers:\n  - name: pergb\n    currency: USD\n    bandwidth: {scheme: per-gb, price_per_gb: \"0.01\", direction: sum}\n"+
				"  - name: p95\n    currency: USD\n    bandwidth: {scheme: p95, price_per_mbps: \"1\"}\n"), "offers.yaml")
			if err != nil {
				t.Fatal(err)
			}
			r, err := billing.BillSeries(s, p, offers.Offers[:1], billing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// By hand: (in + out) bytes / 10^9 × 0.01 USD, rounded to the cent.
			wantAmount := decimal.New(fedIn+fedOut, -9).Mul(decimal.New(1, -2)).Round(2).StringFixed(2)
			if r.Traffic.TotalBytes != fedIn+fedOut || r.Bills[0].Amount != wantAmount {
				t.Errorf("total %d bytes billed %s; want %d, %s", r.Traffic.TotalBytes, r.Bills[0].Amount, fedIn+fedOut, wantAmount)
			}
			if fmt.Sprint(r.Samples.Resolutions) != fmt.Sprint(tc.wantRes) || r.Samples.Missing != 0 {
				t.Errorf("resolutions %+v, %d missing; want %+v, 0", r.Samples.Resolutions, r.Samples.Missing, tc.wantRes)
			}
			if !strings.Contains(strings.Join(r.Warnings, "\n"), tc.wantText) {
				t.Errorf("warnings %q", r.Warnings)
			}
			// The 95th refuses the coarse part, naming vnstat's setting.
			_, err = billing.BillSeries(s, p, offers.Offers[1:], billing.Options{})
			if !errors.Is(err, billing.ErrCoarse) || !strings.Contains(err.Error(), "set 5MinuteHours 744 or more") {
				t.Errorf("95th on the month: %v; want ErrCoarse naming 5MinuteHours", err)
			}
			// An export of the 5-minute entries alone says what it lacks.
			f := mustReadFile(t, filepath.Join(filepath.Dir(path), "vnstatf.json"), ReadOptions{From: vnstatS, To: end})[0]
			if f.Step != 300 || len(f.Slots) != tc.wantRes[0].Rows || !hasWarning(f, "the export has 5-minute entries only, from "+fmtTime(tc.fiveFrom)) || !hasWarning(f, "vnstat --json -i lc-fake0") {
				t.Errorf("vnstat --json f: step %d, %d slots, warnings %q", f.Step, len(f.Slots), f.Warnings)
			}
			// The 5-minute part alone is 5-minute data: its 95th bills.
			last, _ := billing.RangePeriod(time.Unix(end-48*3600, 0), time.Unix(end, 0), time.UTC)
			r, err = billing.BillSeries(s, last, offers.Offers[1:], billing.Options{})
			if err != nil || r.Samples.Present != 576 || r.Samples.Resolutions != nil {
				t.Errorf("95th of the last 48 h: %v", err)
			}
		})
	}
}

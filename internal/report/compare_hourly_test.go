package report

import (
	"reflect"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The hourly row: each hour's p95 on one scale for every candidate (10 to
// 80 ms here: 10 → ▁, 45 → (45−10)/70·7 = 3.5 → ▄, 80 → █), "·" for an hour
// without an answer, the worst hour with its p95 and loss.
func TestCompareHourlyRowDrawsTheDayOnOneScale(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	day := func(p95 map[int]float64, none int) []verdict.HourSummary {
		hs := make([]verdict.HourSummary, 24)
		for h := range hs {
			hs[h] = verdict.HourSummary{Hour: h, Sent: 60, Recv: 60, RTTP95: 10}
			if v, ok := p95[h]; ok {
				hs[h].RTTP95 = v
				hs[h].Loss = 0.05
				hs[h].Recv = 57
			}
		}
		if none >= 0 {
			hs[none] = verdict.HourSummary{Hour: none}
		}
		return hs
	}
	r := &compare.Result{Candidates: []*verdict.Evaluation{
		{Name: "lossy", Hourly: day(map[int]float64{20: 45, 21: 80}, 3)},
		{Name: "steady", Hourly: day(nil, -1)},
	}}
	r.SLA.Zone = sh
	tab, ok := compareHourlyTable(r, FormatTable)
	if !ok {
		t.Fatal("no hourly table")
	}
	if want := "The users' day (Asia/Shanghai): p95 by hour, 00–23, 10.0–80.0 ms"; tab.Title != want {
		t.Errorf("title %q, want %q", tab.Title, want)
	}
	want := [][]string{
		{"lossy", "▁▁▁·▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▄█▁▁", "21:00", "80.00", "5.00%"},
		{"steady", "▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁", "00:00", "10.00", "0.00%"},
	}
	if !reflect.DeepEqual(tab.Rows, want) {
		t.Errorf("rows\n%q\nwant\n%q", tab.Rows, want)
	}
	if _, ok := compareHourlyTable(r, FormatCSV); ok {
		t.Error("an hourly bar row in CSV: machine formats carry hourly[] in JSON")
	}
}

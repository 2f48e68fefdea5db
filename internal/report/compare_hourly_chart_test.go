package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/compare"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The chart of the users' day: one curve a candidate, each hour's p95 at
// its hour, an hour without an answered probe NaN (a gap, never 0), the
// SLA's p95 bound dashed; in the HTML report and in compare --plot.
func TestCompareHourlyChartLeavesHoursWithoutAnswersOut(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	hs := make([]verdict.HourSummary, 24)
	for h := range hs {
		hs[h] = verdict.HourSummary{Hour: h, Sent: 60, Recv: 60, RTTP95: 30 + float64(h)}
	}
	hs[4] = verdict.HourSummary{Hour: 4}                    // nothing sent
	hs[5] = verdict.HourSummary{Hour: 5, Sent: 60, Loss: 1} // all lost: no RTT
	bound := 80.0
	r := &compare.Result{Candidates: []*verdict.Evaluation{{Name: "hk", Hourly: hs}, {Name: "live-only"}}}
	r.SLA.Zone, r.SLA.RTTP95ms = sh, &bound
	x, ok := CompareHourlyChart(r)
	if !ok {
		t.Fatal("no chart")
	}
	if len(x.Curves) != 2 || x.Curves[0].Name != "hk" || !x.Curves[1].Dash || x.Curves[1].Y[0] != 80 {
		t.Fatalf("curves %+v: want hk and the dashed SLA bound at 80 ms", x.Curves)
	}
	c := x.Curves[0]
	for h := range 24 {
		switch {
		case h == 4 || h == 5:
			if !math.IsNaN(c.Y[h]) {
				t.Errorf("hour %d without answers drawn at %v, want NaN (a gap)", h, c.Y[h])
			}
		case c.X[h] != float64(h) || c.Y[h] != 30+float64(h):
			t.Errorf("hour %d at (%v, %v), want (%d, %d)", h, c.X[h], c.Y[h], h, 30+h)
		}
	}
	if !strings.Contains(x.Title, "Asia/Shanghai") {
		t.Errorf("title %q does not name the users' zone", x.Title)
	}
	var b bytes.Buffer
	if err := WriteCompareHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<h2>The users' day</h2>") || !strings.Contains(b.String(), "RTT p95 by hour") {
		t.Error("the HTML report lacks the hour-of-day chart")
	}
	f, ok, err := CompareHourlyChartFile("day.png", r)
	if err != nil || !ok || !bytes.HasPrefix(f.Data, []byte("\x89PNG")) {
		t.Errorf("--plot day.png: ok %v err %v, %d bytes: want a PNG", ok, err, len(f.Data))
	}
	// Without any answered hour there is no chart at all.
	if _, ok := CompareHourlyChart(&compare.Result{Candidates: []*verdict.Evaluation{{Name: "x", Hourly: make([]verdict.HourSummary, 24)}}}); ok {
		t.Error("a chart without any answered hour")
	}
}

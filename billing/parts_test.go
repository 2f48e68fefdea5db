package billing

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestPartRowsInCountsTheRowsThatMeetTheWindow(t *testing.T) {
	p := Part{Start: 0, End: 10 * 3600, Step: 3600, Rows: 10}
	for _, tc := range []struct {
		a, b int64
		want int
	}{
		{0, 10 * 3600, 10},
		{-100, 100, 1},            // the first row only
		{3600, 7200, 1},           // exactly the second row
		{3599, 7201, 3},           // touches the first, second and third
		{10 * 3600, 11 * 3600, 0}, // after the part
		{5*3600 + 1, 5*3600 + 2, 1},
	} {
		if got := p.rowsIn(tc.a, tc.b); got != tc.want {
			t.Errorf("rowsIn(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	cut := Part{Start: 100, End: 400, Step: 3600, Rows: 1}
	if cut.rowsIn(0, 200) != 1 || cut.rowsIn(400, 500) != 0 {
		t.Errorf("a cut row: %d, %d", cut.rowsIn(0, 200), cut.rowsIn(400, 500))
	}
}

// An aggregate of a port with a coarse stretch (a vnstat month) and a
// 5-minute port keeps the coarse stretch: the 95th is refused where it
// meets the period and bills where it does not; the volume counts both.
func TestAggregateKeepsTheCoarsePartsOfItsInputs(t *testing.T) {
	s0 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).Unix()
	day := int64(86400)
	mixed := &Series{Name: "vn", Step: 3600, FineHint: "set 5MinuteHours",
		Parts: []Part{{Start: s0, End: s0 + day, Step: 3600, Rows: 24}, {Start: s0 + day, End: s0 + 2*day, Step: 300, Rows: 288}}}
	fine := &Series{Name: "csv", Step: 300}
	for ts := s0; ts < s0+2*day; ts += SlotSeconds {
		mixed.Slots = append(mixed.Slots, Slot{Start: ts, In: 100, Out: 10})
		fine.Slots = append(fine.Slots, Slot{Start: ts, In: 1, Out: 2})
	}
	agg := Aggregate([]*Series{mixed, fine}, "both")
	both, _ := RangePeriod(time.Unix(s0, 0), time.Unix(s0+2*day, 0), time.UTC)
	_, err := BillSeries(agg, both, nil, Options{})
	if !errors.Is(err, ErrCoarse) {
		t.Fatalf("95th over the hourly day: %v, want ErrCoarse", err)
	}
	// The parts say what it has, the vnstat port's hint how to do better.
	if !strings.Contains(err.Error(), "864 five-minute rows (72 h) and 24 hourly rows (24 h)") || !strings.Contains(err.Error(), "(set 5MinuteHours)") {
		t.Errorf("message %q", err)
	}
	second, _ := RangePeriod(time.Unix(s0+day, 0), time.Unix(s0+2*day, 0), time.UTC)
	r, err := BillSeries(agg, second, nil, Options{})
	if err != nil || r.P95 == nil || r.Samples.SourceS != 300 {
		t.Fatalf("the 5-minute day: %v", err)
	}
	r, err = BillSeries(agg, both, nil, Options{AllowCoarse: true})
	if err != nil {
		t.Fatal(err)
	}
	// By hand: 576 slots of 101 in and 12 out.
	if r.Traffic.InBytes != 576*101 || r.Traffic.OutBytes != 576*12 || fmt.Sprint(r.Samples.Resolutions) != "[{300 864 72} {3600 24 24}]" {
		t.Errorf("traffic %+v, resolutions %v", r.Traffic, r.Samples.Resolutions)
	}
}

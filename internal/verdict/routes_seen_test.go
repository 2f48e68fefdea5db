package verdict

import (
	"strings"
	"testing"
	"time"
)

// seenFailure names the first disallowed route of each direction with its
// time, the allowed classes seen otherwise, and leaves out routes of
// another carrier when one is asked for.
func TestSeenFailureNamesTheTimeAndTheCarrier(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := func(d, h, m int, loc *time.Location) *time.Time {
		v := time.Date(2026, 11, d, h, m, 0, 0, loc)
		return &v
	}
	routes := []SeenRoute{
		{Direction: "forward", LineClass: "cn2-gia", Carrier: "telecom", First: at(1, 0, 5, ny), Last: at(3, 23, 5, ny), Count: 70},
		{Direction: "forward", LineClass: "chinanet-163", Carrier: "telecom", First: at(1, 21, 5, ny), Last: at(3, 20, 5, ny), Count: 2},
		{Direction: "return", LineClass: "cn2-gt", First: at(2, 3, 0, time.UTC), Last: at(2, 3, 0, time.UTC), Count: 1},
	}
	cls, note, failed := seenFailure(routes, []string{"cn2-gia"}, "")
	if !failed || cls != "chinanet-163" {
		t.Fatalf("failed %v class %q, want chinanet-163", failed, cls)
	}
	for _, want := range []string{
		"forward route over the days: chinanet-163 at 21:05 on 1 Nov and 1 more time(s) until 20:05 on 3 Nov, cn2-gia otherwise (72 traces)",
		"return route over the days: cn2-gt at 03:00 UTC on 2 Nov (1 trace)",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if _, _, failed := seenFailure(routes, []string{"cn2-gia", "chinanet-163"}, "unicom"); failed {
		t.Error("no unicom route was seen: nothing can fail for unicom")
	}
	if _, _, failed := seenFailure(routes, []string{"cn2-gia", "chinanet-163", "cn2-gt"}, ""); failed {
		t.Error("every class allowed, yet a failure")
	}
}

package compare

import (
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/verdict"
)

func TestTrafficMonthPicksTheBilledMonth(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name      string
		traffic   candidates.Traffic
		now       time.Time
		wantStart string // RFC 3339, in the traffic's zone
		wantEnd   string
	}{
		{"log without period: its last month with data", candidates.Traffic{Log: "../../samples/traffic/2026-10.csv"}, at("2027-05-05T00:00:00Z"),
			"2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z"},
		{"log with a period", candidates.Traffic{Log: "../../samples/traffic/2026-10.csv", Period: "2026-09"}, at("2027-05-05T00:00:00Z"),
			"2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z"},
		// AddDate(0, -1, 0) on March 31 lands on March 3: the month before is February.
		{"synthetic on March 31: February", candidates.Traffic{MonthlyGB: 1000, PeakMbps: 100, Shape: "flat"}, at("2026-03-31T12:00:00Z"),
			"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		// 2026-03-31 20:00 UTC is April 1 04:00 in Shanghai: the month before is March there.
		{"synthetic: the month before now in traffic.tz", candidates.Traffic{MonthlyGB: 1000, PeakMbps: 100, Shape: "flat", TZ: "Asia/Shanghai"}, at("2026-03-31T20:00:00Z"),
			"2026-03-01T00:00:00+08:00", "2026-04-01T00:00:00+08:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &candidates.File{Path: "c.yaml", Traffic: c.traffic}
			s, p, err := verdict.TrafficMonth(f, c.now)
			if err != nil {
				t.Fatal(err)
			}
			if s == nil {
				t.Fatal("no series")
			}
			if got := p.Start.Format(time.RFC3339); got != c.wantStart {
				t.Errorf("start %s, want %s", got, c.wantStart)
			}
			if got := p.End.Format(time.RFC3339); got != c.wantEnd {
				t.Errorf("end %s, want %s", got, c.wantEnd)
			}
		})
	}
}

func TestTrafficMonthErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name    string
		traffic candidates.Traffic
		want    string
	}{
		{"unknown zone", candidates.Traffic{MonthlyGB: 1, PeakMbps: 1, Shape: "flat", TZ: "Mars/Olympus"}, "c.yaml: traffic.tz: "},
		{"bad period", candidates.Traffic{MonthlyGB: 1, PeakMbps: 1, Shape: "flat", Period: "2026-13"}, "c.yaml: traffic.period: "},
		{"missing log", candidates.Traffic{Log: "/nonexistent/t.csv"}, "traffic.log: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := verdict.TrafficMonth(&candidates.File{Path: "c.yaml", Traffic: c.traffic}, time.Now())
			if err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
				t.Errorf("error %v, want it to start with %q", err, c.want)
			}
		})
	}
}

package candidates

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadSLA(t *testing.T, sla string) (*File, error) {
	t.Helper()
	y := strings.Replace(validYAML, "sla: {rtt_p95_ms: 60, loss: 0.005, jitter_ms: 5, line_classes: [cn2-gia, cu-9929, cmin2], max_stretch: 2.0}\n", sla, 1)
	dir := writeFiles(t, map[string]string{"c.yaml": y, "rec/hk.ndjson": "", "offers.yaml": ""})
	return Load(filepath.Join(dir, "c.yaml"))
}

func TestSLAWindowsAreReadWithTheirZoneAndDays(t *testing.T) {
	f, err := loadSLA(t, `sla:
  loss: 0.01
  windows:
    evening: {from: "20:00", to: "23:00"}
    night: {from: "22:00", to: "02:00", tz: America/New_York, days: [fri, Saturday]}
`)
	if err != nil {
		t.Fatal(err)
	}
	ws := f.SLA.Windows
	if len(ws) != 2 || ws[0].Name != "evening" || ws[1].Name != "night" {
		t.Fatalf("windows = %+v", ws)
	}
	if ws[0].TZ != "Asia/Shanghai" || ws[0].From != 20*60 || ws[0].To != 23*60 {
		t.Errorf("evening = %+v, want 20:00–23:00 in the users' zone Asia/Shanghai", ws[0])
	}
	if got := ws[1].Hours(); got != "22:00–02:00 America/New_York on fri, sat" {
		t.Errorf("night hours = %q", got)
	}
	if _, ok := f.SLA.Evening(); ok {
		t.Error("the evening default applies beside given windows")
	}
	ny, _ := time.LoadLocation("America/New_York")
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 11, 6, 22, 0, 0, 0, ny), true},  // Friday 22:00
		{time.Date(2026, 11, 7, 1, 59, 0, 0, ny), true},  // Saturday 01:59, Friday's window
		{time.Date(2026, 11, 7, 2, 0, 0, 0, ny), false},  // its end
		{time.Date(2026, 11, 8, 1, 0, 0, 0, ny), true},   // Sunday 01:00, Saturday's window
		{time.Date(2026, 11, 9, 1, 0, 0, 0, ny), false},  // Monday 01:00, Sunday's: not a day of it
		{time.Date(2026, 11, 5, 23, 0, 0, 0, ny), false}, // Thursday
	} {
		if got := ws[1].Contains(c.at); got != c.want {
			t.Errorf("night.Contains(%s) = %v, want %v", c.at.Format(time.RFC1123), got, c.want)
		}
	}
}

func TestTheEveningDefaultFollowsTheUsersZoneAndWindowsOff(t *testing.T) {
	f, err := loadSLA(t, "sla: {loss: 0.01}\n")
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := f.SLA.Evening()
	if !ok || ev.Hours() != "20:00–23:00 Asia/Shanghai" || !ev.Default {
		t.Errorf("evening default = %+v %v, want 20:00–23:00 Asia/Shanghai", ev, ok)
	}
	f, err = loadSLA(t, "sla: {loss: 0.01, tz: Europe/London}\n")
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := f.SLA.Evening(); ev.TZ != "Europe/London" {
		t.Errorf("sla.tz does not override the users' zone: %q", ev.TZ)
	}
	f, err = loadSLA(t, "sla: {loss: 0.01, windows: {}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.SLA.Evening(); ok || !f.SLA.WindowsOff {
		t.Error("windows: {} does not turn the evening off")
	}
}

func TestBadSLAWindowsAreRefusedWithTheirLine(t *testing.T) {
	for _, c := range []struct{ sla, want string }{
		{"sla:\n  windows:\n    evening: {from: \"25:00\", to: \"23:00\"}\n", `c.yaml:21: sla.windows.evening.from: "25:00": want a time of day as "HH:MM"`},
		{"sla:\n  windows:\n    evening: {from: \"20:00\", to: \"8pm\"}\n", `c.yaml:21: sla.windows.evening.to: "8pm"`},
		{"sla:\n  windows:\n    evening: {from: \"20:00\", to: \"23:00\", tz: Mars/Olympus}\n", `c.yaml:21: sla.windows.evening.tz: "Mars/Olympus": not a time zone`},
		{"sla:\n  windows:\n    evening: {from: \"20:00\", to: \"23:00\", days: [mon, fun]}\n", `c.yaml:21: sla.windows.evening.days: "fun": not a day`},
		{"sla:\n  windows:\n    evening: {from: \"20:00\", to: \"20:00\"}\n", `sla.windows.evening: from and to are both 20:00`},
		{"sla:\n  windows:\n    evening: {from: \"20:00\", till: \"23:00\"}\n", `sla.windows.evening`},
		{"sla:\n  windows:\n    all: {from: \"20:00\", to: \"23:00\"}\n", `sla.windows.all: a window needs a name other than "all"`},
		{"sla:\n  tz: Nowhere/Land\n", `c.yaml:20: sla.tz: "Nowhere/Land": not a time zone`},
		{"sla:\n  windows: [evening]\n", `sla.windows: want a map of named windows`},
	} {
		_, err := loadSLA(t, c.sla)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.sla, err, c.want)
		}
	}
}

// A window's occurrences over a recording, and whether the recording holds
// a whole one, across a change of summer time.
func TestWindowCoverageAcrossADSTChange(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	w := Window{Name: "evening", From: 20 * 60, To: 23 * 60, Loc: ny, TZ: ny.String()}
	// 2026-11-01 02:00 EDT → 01:00 EST.
	first := time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC)
	last := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	occ := w.Occurrences(first, last)
	var inside []string
	for _, o := range occ {
		if !o[0].Before(first) && !o[1].After(last) {
			inside = append(inside, o[0].UTC().Format("01-02 15:04")+"/"+o[1].UTC().Format("15:04"))
		}
	}
	// 20:00 EDT = 00:00 UTC on 31 Oct, 20:00 EST = 01:00 UTC on 1 Nov.
	if got, want := strings.Join(inside, " "), "11-01 00:00/03:00 11-02 01:00/04:00"; got != want {
		t.Errorf("occurrences inside = %s, want %s", got, want)
	}
	if !w.CoveredBy(first, last) || w.CoveredBy(first, first.Add(6*time.Hour)) {
		t.Error("CoveredBy wrong")
	}
}

package candidates

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	// The zones of the users' cities must load on a machine without a
	// zoneinfo database (a container, Windows): the binary carries its own.
	_ "time/tzdata"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/internal/geo"
	"github.com/linecheck/linecheck/yamlmsg"
)

// Window is a named span of the users' day (sla.windows): every measured
// check is judged over the probes whose time falls in it as well as over
// the whole recording (issue 30). From and To are minutes after midnight
// in Loc; To ≤ From is a window across midnight (22:00–02:00). Days, when
// given, are the days a window starts on (a window across midnight that
// starts on Friday holds Saturday's 00:00–02:00).
type Window struct {
	Name     string
	From, To int
	// TZ is the zone's name as Loc has it (Asia/Shanghai).
	TZ   string
	Loc  *time.Location
	Days []time.Weekday
	// Default is the evening compare judges without sla.windows.
	Default bool
}

// EveningName and the hours of the evening default (issue 30): 晚高峰,
// when every home in the province is online.
const (
	EveningName = "evening"
	eveningFrom = 20 * 60
	eveningTo   = 23 * 60
)

// Evening is the default evening window in the users' zone; false when
// windows are turned off (`windows: {}`), given, or the zone is unknown.
func (s SLA) Evening() (Window, bool) {
	if s.WindowsOff || len(s.Windows) > 0 || s.Zone == nil {
		return Window{}, false
	}
	return Window{Name: EveningName, From: eveningFrom, To: eveningTo, TZ: s.Zone.String(), Loc: s.Zone, Default: true}, true
}

// JudgedWindows are the windows an SLA is judged over besides the whole
// recording: sla.windows, else the default evening in the users' zone
// (Evening), else none. A surface may still leave the evening out until
// its probes cover one.
func (s SLA) JudgedWindows() []Window {
	if len(s.Windows) > 0 {
		return s.Windows
	}
	if ev, ok := s.Evening(); ok {
		return []Window{ev}
	}
	return nil
}

// Hours is the window's span in words: "20:00–23:00 Asia/Shanghai", with
// its days when it has some ("… on sat, sun").
func (w Window) Hours() string {
	s := fmt.Sprintf("%s–%s %s", clock(w.From), clock(w.To), w.TZ)
	if len(w.Days) > 0 {
		var d []string
		for _, x := range w.Days {
			d = append(d, dayNames[x])
		}
		s += " on " + strings.Join(d, ", ")
	}
	return s
}

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// Contains tells whether the instant t falls in the window: its local time
// in [From, To) on one of Days (the day the window started on, for the
// hours after midnight of a window across it). A time of day is read on the
// local clock, so a window keeps its hours across a change of summer time.
func (w Window) Contains(t time.Time) bool {
	if t.IsZero() {
		return false
	}
	lt := t.In(w.Loc)
	m := lt.Hour()*60 + lt.Minute()
	day := lt.Weekday()
	switch {
	case w.From < w.To:
		if m < w.From || m >= w.To {
			return false
		}
	case m >= w.From:
	case m < w.To:
		day = (day + 6) % 7
	default:
		return false
	}
	return len(w.Days) == 0 || slices.Contains(w.Days, day)
}

// Occurrences are the window's spans [start, end) that begin on the local
// days from first's to last's (and the day before first, for a window across
// midnight), in order. A start or end on a clock time that a change of
// summer time skips is the instant time.Date normalises it to.
func (w Window) Occurrences(first, last time.Time) [][2]time.Time {
	var out [][2]time.Time
	a, b := first.In(w.Loc), last.In(w.Loc)
	d := time.Date(a.Year(), a.Month(), a.Day()-1, 12, 0, 0, 0, w.Loc)
	for ; !d.After(b); d = d.AddDate(0, 0, 1) {
		if len(w.Days) > 0 && !slices.Contains(w.Days, d.Weekday()) {
			continue
		}
		start := time.Date(d.Year(), d.Month(), d.Day(), w.From/60, w.From%60, 0, 0, w.Loc)
		endDay := d.Day()
		if w.To <= w.From {
			endDay++
		}
		end := time.Date(d.Year(), d.Month(), endDay, w.To/60, w.To%60, 0, 0, w.Loc)
		out = append(out, [2]time.Time{start, end})
	}
	return out
}

// CoveredBy tells whether a recording from first to last (its first and last
// probe) holds at least one whole occurrence of the window.
func (w Window) CoveredBy(first, last time.Time) bool {
	for _, o := range w.Occurrences(first, last) {
		if !o[0].Before(first) && !o[1].After(last.Add(time.Minute)) {
			return true
		}
	}
	return false
}

var dayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// parseDay reads a day as three letters or in full, any case.
func parseDay(s string) (time.Weekday, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range dayNames {
		if s == n || s == strings.ToLower(time.Weekday(i).String()) {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

// parseClock reads HH:MM, 00:00 to 24:00 (24:00 is the end of the day).
func parseClock(s string) (int, bool) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, false
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || hh == 24 && mm != 0 {
		return 0, false
	}
	return hh*60 + mm, true
}

type rawWindow struct {
	From string   `yaml:"from"`
	To   string   `yaml:"to"`
	TZ   string   `yaml:"tz"`
	Days []string `yaml:"days"`
}

// loadZone loads an IANA zone name; "UTC" and "Local" are refused as
// ambiguous only for Local (the machine's, not the users').
func loadZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "local") {
		return nil, fmt.Errorf("not a zone")
	}
	return time.LoadLocation(name)
}

// slaWindows reads sla.tz and sla.windows and settles the users' zone.
func (v *validator) slaWindows(f *File, rs *rawSLA) {
	s := &f.SLA
	if rs != nil && rs.TZ != "" {
		loc, err := loadZone(rs.TZ)
		if err != nil {
			v.errf(rs.keyLines["tz"], "sla.tz: %q: not a time zone: give an IANA name such as Asia/Shanghai or America/New_York", rs.TZ)
		} else {
			s.Zone, s.ZoneFrom = loc, "sla.tz"
		}
	}
	if s.Zone == nil {
		places := append(append([]Place(nil), f.Users...), f.Vantage)
		for i, p := range places {
			if z, ok := geo.Zone(p.City); ok {
				if loc, err := time.LoadLocation(z); err == nil {
					s.Zone = loc
					s.ZoneFrom = "the users' city " + p.City
					if i == len(places)-1 {
						s.ZoneFrom = "the vantage's city " + p.City
					}
					break
				}
			}
		}
	}
	if rs == nil || rs.Windows.Kind == 0 {
		return
	}
	n := &rs.Windows
	if n.Kind != yaml.MappingNode {
		v.errf(n.Line, "sla.windows: want a map of named windows, e.g. windows: {evening: {from: \"20:00\", to: \"23:00\", tz: Asia/Shanghai}}; windows: {} turns the evening default off")
		return
	}
	if len(n.Content) == 0 {
		s.WindowsOff = true
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, line := n.Content[i].Value, n.Content[i].Line
		where := "sla.windows." + name
		if name == "" || name == "all" {
			v.errf(line, "%s: a window needs a name other than \"all\" (the whole recording)", where)
			continue
		}
		var rw rawWindow
		if err := yamlmsg.DecodeStrict(n.Content[i+1], &rw); err != nil {
			v.errf(n.Content[i+1].Line, "%s: %s", where, yamlmsg.Humanize(err.Error()))
			continue
		}
		w := Window{Name: name}
		ok := true
		var good bool
		if w.From, good = parseClock(rw.From); !good {
			v.errf(line, "%s.from: %q: want a time of day as \"HH:MM\" (quoted), 00:00 to 24:00", where, rw.From)
			ok = false
		}
		if w.To, good = parseClock(rw.To); !good {
			v.errf(line, "%s.to: %q: want a time of day as \"HH:MM\" (quoted), 00:00 to 24:00", where, rw.To)
			ok = false
		}
		if ok && w.From == w.To {
			v.errf(line, "%s: from and to are both %s: an empty window (a window across midnight ends before it starts: 22:00 to 02:00)", where, rw.From)
			ok = false
		}
		w.From %= 24 * 60
		if w.To == 24*60 {
			w.To = 0
		}
		switch {
		case rw.TZ != "":
			loc, err := loadZone(rw.TZ)
			if err != nil {
				v.errf(line, "%s.tz: %q: not a time zone: give an IANA name such as Asia/Shanghai or America/New_York", where, rw.TZ)
				ok = false
			} else {
				w.Loc = loc
			}
		case s.Zone != nil:
			w.Loc = s.Zone
		default:
			v.errf(line, "%s.tz: required: the users' and vantage's cities give no time zone (or set sla.tz)", where)
			ok = false
		}
		for _, d := range rw.Days {
			wd, good := parseDay(d)
			if !good {
				v.errf(line, "%s.days: %q: not a day (mon, tue, wed, thu, fri, sat, sun)", where, d)
				ok = false
				continue
			}
			if !slices.Contains(w.Days, wd) {
				w.Days = append(w.Days, wd)
			}
		}
		if rw.Days != nil && len(rw.Days) == 0 {
			v.errf(line, "%s.days: empty: list the days the window starts on, or leave days out for every day", where)
			ok = false
		}
		if ok {
			w.TZ = w.Loc.String()
			s.Windows = append(s.Windows, w)
		}
	}
}

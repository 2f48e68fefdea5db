package billing

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Period is a billing period [Start, End) and the name of the time zone its
// calendar days are counted in (see the package doc).
type Period struct {
	Start, End time.Time
	TZ         string
}

// MonthPeriod returns the calendar month year-month in loc (UTC when nil).
func MonthPeriod(year int, month time.Month, loc *time.Location) Period {
	if loc == nil {
		loc = time.UTC
	}
	start := time.Date(year, month, 1, 0, 0, 0, 0, loc)
	return Period{Start: start, End: start.AddDate(0, 1, 0), TZ: loc.String()}
}

// ParseMonth parses "YYYY-MM" into the calendar month in loc.
func ParseMonth(s string, loc *time.Location) (Period, error) {
	t, err := time.Parse("2006-01", strings.TrimSpace(s))
	if err != nil {
		return Period{}, fmt.Errorf("period %q: want YYYY-MM, e.g. 2026-10", s)
	}
	return MonthPeriod(t.Year(), t.Month(), loc), nil
}

// ParseTime parses a --from/--to value in loc: RFC 3339, "YYYY-MM-DD",
// "YYYY-MM-DDTHH:MM" or "YYYY-MM-DD HH:MM[:SS]" (local to loc), or unix seconds.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	var unix int64
	if _, err := fmt.Sscanf(s, "%d", &unix); err == nil && fmt.Sprint(unix) == s {
		if unix < 0 || unix > maxUnix {
			return time.Time{}, fmt.Errorf("time %q: unix seconds outside 1970-01-01 … 9999-12-31 (0 … %d)", s, maxUnix)
		}
		return time.Unix(unix, 0).In(loc), nil
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2026-10-01T00:00:00Z), YYYY-MM-DD[THH:MM] or unix seconds", s)
}

// maxUnix is 9999-12-31T23:59:59Z, the last second a --from/--to may name.
const maxUnix = 253402300799

// MaxRangeDays bounds a --from/--to period: a bill is built on a 5-minute
// grid over the whole period, so a period of centuries would exhaust memory
// instead of answering. Ten years (105,120 slots a year) is far beyond any
// billing cycle.
const MaxRangeDays = 3660

// RangePeriod returns [from, to) with days counted in loc.
func RangePeriod(from, to time.Time, loc *time.Location) (Period, error) {
	if loc == nil {
		loc = time.UTC
	}
	if !to.After(from) {
		return Period{}, fmt.Errorf("--to %s is not after --from %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	if to.Sub(from) > MaxRangeDays*24*time.Hour {
		return Period{}, fmt.Errorf("--from %s --to %s: %d days is longer than a billing period can be (at most %d days): bill one month (--period YYYY-MM), a shorter range, or every month with --period all",
			from.Format(time.RFC3339), to.Format(time.RFC3339), int64(to.Sub(from)/(24*time.Hour)), MaxRangeDays)
	}
	return Period{Start: from.In(loc), End: to.In(loc), TZ: loc.String()}, nil
}

// Boundary is the rule that decides which slots belong to a period.
type Boundary string

// The boundary rules.
const (
	// BoundaryStart: a slot belongs to the period when its start is in
	// [Start, End) (the default; the package doc).
	BoundaryStart Boundary = "slot-start"
	// BoundaryLibreNMS is LibreNMS's selection: rows are stamped at the end of
	// the interval they measure and selected with timestamp > from AND
	// timestamp <= to, to being the last day's 23:59:59. A slot belongs when
	// Start < its end <= End − 1 s, so a month's last slot (ending on the
	// next month's first second) drops.
	BoundaryLibreNMS Boundary = "librenms"
)

// Boundaries are the boundary rules, default first.
var Boundaries = []Boundary{BoundaryStart, BoundaryLibreNMS}

// ParseBoundary returns the rule named s, or an error naming the rules.
func ParseBoundary(s string) (Boundary, error) {
	for _, b := range Boundaries {
		if string(b) == s {
			return b, nil
		}
	}
	return "", fmt.Errorf("boundary %q: use one of %s", s, joinNames(Boundaries))
}

// window returns the slot starts [from, to) that belong to p under the rule.
func (b Boundary) window(p Period, width int64) (from, to int64) {
	a, e := p.Start.Unix(), p.End.Unix()
	if b == BoundaryLibreNMS {
		// end = start + width: a < end <= e−1  ⇔  a−width < start <= e−1−width.
		return a - width + 1, e - width
	}
	return a, e
}

// ErrNoData is returned when there is nothing to bill.
var ErrNoData = errors.New("no traffic samples")

// LastMonthWithData returns the calendar month in loc that holds the latest
// slot of any of the series.
func LastMonthWithData(s []*Series, loc *time.Location) (Period, error) {
	if loc == nil {
		loc = time.UTC
	}
	var last int64
	found := false
	for _, x := range s {
		if x == nil || len(x.Slots) == 0 {
			continue
		}
		if t := x.Slots[len(x.Slots)-1].Start; !found || t > last {
			last, found = t, true
		}
	}
	if !found {
		return Period{}, fmt.Errorf("%w: every row is a gap (empty, NaN or unknown values)", ErrNoData)
	}
	t := time.Unix(last, 0).In(loc)
	return MonthPeriod(t.Year(), t.Month(), loc), nil
}

// Label names the period for tables: "2026-10" for a calendar month, else the range.
func (p Period) Label() string {
	s := p.Start
	if s.Day() == 1 && s.Hour() == 0 && s.Minute() == 0 && s.Second() == 0 && p.End.Equal(s.AddDate(0, 1, 0)) {
		return s.Format("2006-01")
	}
	return s.Format("2006-01-02 15:04") + " – " + p.End.Format("2006-01-02 15:04 MST")
}

// location returns the period's time zone (UTC if TZ does not load).
func (p Period) location() *time.Location {
	if p.Start.Location() != nil && p.Start.Location().String() == p.TZ {
		return p.Start.Location()
	}
	if loc, err := time.LoadLocation(p.TZ); err == nil {
		return loc
	}
	return time.UTC
}

// firstSlot is the start of the first slot inside the period (a multiple of width).
func (p Period) firstSlot(width int64) int64 { return ceilDiv(p.Start.Unix(), width) * width }

// ExpectedSlots is the number of width-second slots whose start lies in [Start, End).
func (p Period) ExpectedSlots(width int64) int {
	if width <= 0 {
		width = SlotSeconds
	}
	n := ceilDiv(p.End.Unix(), width) - ceilDiv(p.Start.Unix(), width)
	if n < 0 {
		return 0
	}
	return int(n)
}

// Days returns the calendar days (in the period's zone) the period touches,
// each as [start, end) clipped to the period.
func (p Period) Days() [][2]int64 {
	loc := p.location()
	var out [][2]int64
	t := p.Start.In(loc)
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	for d.Before(p.End) {
		next := d.AddDate(0, 0, 1)
		a, b := d.Unix(), next.Unix()
		if a < p.Start.Unix() {
			a = p.Start.Unix()
		}
		if b > p.End.Unix() {
			b = p.End.Unix()
		}
		if b > a {
			out = append(out, [2]int64{a, b})
		}
		d = next
	}
	return out
}

// Hours is the length of the period in hours (744 for a 31-day UTC month,
// 743 or 745 across a DST change).
func (p Period) Hours() int64 { return (p.End.Unix() - p.Start.Unix()) / 3600 }

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

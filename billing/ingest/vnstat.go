package ingest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// vnstat 2.x JSON (`vnstat --json`): per interface, "fiveminute", "hour"
// and "day" entries of rx/tx bytes, each stamped with the START of its
// interval. vnstat 2.10+ writes a unix "timestamp"; older 2.x only the
// local date and time, read in ReadOptions.Loc. The 5-minute entries are
// used where they exist, the hourly and then the daily ones for the time
// before them (coarse: Step 3600 or 86400, see series).

type vnstatEntry struct {
	Date struct {
		Year, Month, Day int
	} `json:"date"`
	Time *struct {
		Hour, Minute int
	} `json:"time"`
	Timestamp *json.Number `json:"timestamp"`
	Rx        json.Number  `json:"rx"`
	Tx        json.Number  `json:"tx"`
}

type vnstatIface struct {
	name    string
	line    int64
	updated int64
	five    []rawPoint
	hour    []rawPoint
	day     []rawPoint
	noStamp bool
}

// vnstatReader reads vnstat --json, told by its version keys.
var vnstatReader = trafficReader{name: "vnstat", rank: 10, jsonTitle: "vnstat --json",
	detect: func(s []byte) bool { return jsonWith(s, `"vnstatversion"`, `"jsonversion"`) },
	read:   func(in readInput) ([]*billing.Series, error) { return readVnstat(in.br, in.name, in.opts) },
}

func readVnstat(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	d, err := newJSONDoc(r, file)
	if err != nil {
		return nil, err
	}
	var ifaces []*vnstatIface
	err = d.object("", func(key string, line int64) error {
		switch key {
		case "jsonversion":
			var v string
			if err := d.decode(key, &v); err != nil {
				return err
			}
			if v == "1" {
				return d.errf(line, key, "vnstat 1.x JSON has no 5-minute entries; use vnstat 2.x --json f")
			}
			return nil
		case "interfaces":
			return d.array(key, func(i int, line int64) error {
				ifc := &vnstatIface{line: line, name: fmt.Sprintf("interface%d", i)}
				ifaces = append(ifaces, ifc)
				return ifc.read(d, fmt.Sprintf("interfaces[%d]", i), opts)
			})
		}
		return d.skip(key)
	})
	if err != nil {
		return nil, err
	}
	if len(ifaces) == 0 {
		return nil, &ReadError{File: file, Line: 1, Field: "interfaces", Msg: "no interfaces", Err: ErrEmpty}
	}
	var out []*billing.Series
	for _, ifc := range ifaces {
		s, err := ifc.series(file, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// read decodes one interface object (field names it in messages): its
// name, update time and the fiveminute and hour entries.
func (ifc *vnstatIface) read(d *jsonDoc, field string, opts ReadOptions) error {
	return d.object(field, func(k string, line int64) error {
		switch k {
		case "name":
			return d.decode(k, &ifc.name)
		case "updated":
			var u struct{ Timestamp json.Number }
			if err := d.decode(k, &u); err != nil {
				return err
			}
			ifc.updated, _ = u.Timestamp.Int64()
			return nil
		case "traffic":
			return d.object(k, func(k string, line int64) error {
				var dst *[]rawPoint
				switch k {
				case "fiveminute":
					dst = &ifc.five
				case "hour":
					dst = &ifc.hour
				case "day":
					dst = &ifc.day
				default:
					return d.skip(k)
				}
				return d.array(k, func(j int, line int64) error {
					field := fmt.Sprintf("%s[%d]", k, j)
					var e vnstatEntry
					if err := d.decode(field, &e); err != nil {
						return err
					}
					p, noStamp, err := vnstatPoint(d, &e, line, field, opts)
					if err != nil {
						return err
					}
					ifc.noStamp = ifc.noStamp || noStamp
					*dst = append(*dst, p)
					return nil
				})
			})
		}
		return d.skip(k)
	})
}

// vnstatLevel is one resolution of an export: its entries and their span.
type vnstatLevel struct {
	pts  []rawPoint
	step int64
	what string // the JSON array, for messages
}

// vnstatSpan is the traffic of [start, start+dur) taken from one entry (or
// from the part of an entry that finer entries do not cover).
type vnstatSpan struct {
	start, dur int64
	step       int64 // of the entry it comes from
	in, out    float64
	line       int64
}

// series puts the interface's entries on the grid. vnstat keeps 5-minute
// entries for 5MinuteHours (48 by default), hourly ones for HourlyDays (4)
// and daily ones for DailyDays (62): a month's export has 5-minute entries
// for its last two days only (issue 35: a bill on those alone was 16 times
// too small). Each resolution fills the time the finer ones do not cover:
// an hour (day) wholly before the 5-minute (hourly) entries counts whole;
// the one they begin inside counts what it holds beyond the finer entries
// in it, spread over its part before them, so that no byte counts twice.
// Gaps among the finer entries stay gaps: the coarser rows only fill the
// time before them. Series.Parts says which step fed what.
func (ifc *vnstatIface) series(file string, opts ReadOptions) (*billing.Series, error) {
	levels := []vnstatLevel{{ifc.five, billing.SlotSeconds, "fiveminute"}, {ifc.hour, 3600, "hour"}, {ifc.day, 86400, "day"}}
	b := newBuilder(file, ifc.name, opts)
	if ifc.noStamp {
		b.warnf(ifc.line, "vnstat before 2.10 writes local times only: read in %s (give the time zone vnstat ran in with --tz)", opts.loc())
	}
	var spans []vnstatSpan // ascending by start within each level
	var lo, hi int64       // the stretch the finer levels cover (lo == hi: none yet)
	finest := -1
	for li := range levels {
		lv := &levels[li]
		pts := lv.pts
		if len(pts) == 0 {
			continue
		}
		// vnstat lists entries oldest first; accept newest first as well.
		if len(pts) > 1 && pts[0].t > pts[1].t {
			slices.Reverse(pts)
		}
		if err := vnstatOrder(b.file, *lv); err != nil {
			return nil, err
		}
		if finest < 0 {
			finest = li
		}
		var added []vnstatSpan
		for _, p := range pts {
			s, e := p.t, p.t+lv.step
			if lo == hi || e <= lo || s >= hi {
				added = append(added, vnstatSpan{s, lv.step, lv.step, p.in, p.out, p.line})
				continue
			}
			// An entry that starts inside the finer entries' stretch is
			// theirs: the newest hour runs past their end only because it
			// is still filling (vnstat updates every resolution at once).
			if s >= lo {
				continue
			}
			fin, fout := vnstatSum(spans, s, e)
			rin, rout := p.in-fin, p.out-fout
			if rin < 0 || rout < 0 {
				b.warnf(p.line, "the %s entry at %s holds %.0f bytes rx, %.0f tx: less than the finer entries inside it (%.0f, %.0f); its part before them is taken as 0",
					lv.what, fmtTime(s), p.in, p.out, fin, fout)
				rin, rout = max(rin, 0), max(rout, 0)
			}
			added = append(added, vnstatSpan{s, lo - s, lv.step, rin, rout, p.line})
		}
		first, last := pts[0].t, pts[len(pts)-1].t+lv.step
		if lo == hi {
			lo, hi = first, last
		} else {
			lo, hi = min(lo, first), max(hi, last)
		}
		spans = append(spans, added...)
		slices.SortFunc(spans, func(a, b vnstatSpan) int { return cmp.Compare(a.start, b.start) })
	}
	if finest < 0 {
		return nil, &ReadError{File: file, Line: int(ifc.line), Field: ifc.name, Msg: "no fiveminute, hour or day entries (write them with vnstat --json)", Err: ErrEmpty}
	}
	var ps parts
	for _, sp := range spans {
		b.checkRate(sp.line, sp.in, sp.out, sp.dur)
		b.addSpan(sp.start, sp.dur, sp.in, sp.out)
		ps.add(sp.start, sp.start+sp.dur, sp.step)
	}
	ps.keep(b.s)
	if len(ifc.hour) == 0 && len(ifc.day) == 0 && len(b.s.Slots) > 0 {
		// `vnstat --json f` on default settings: the 48 h before the export.
		from := b.mStart
		if b.win.bounded() {
			from = b.win.from
		}
		if first := b.s.Slots[0].Start; first > from {
			b.warnf(ifc.line, "the export has 5-minute entries only, from %s on (vnstat keeps them for 5MinuteHours, 48 h by default): the time before is missing; export the hourly and daily entries too (vnstat --json -i %s) to bill the period's volume", fmtTime(first), ifc.name)
		}
	}
	if lv := levels[finest]; ifc.updated > 0 {
		if last := lv.pts[len(lv.pts)-1]; ifc.updated < last.t+lv.step && ifc.updated >= last.t {
			b.warnf(last.line, "the newest entry (%s) was still filling when vnstat wrote this file", fmtTime(last.t))
		}
	}
	if finest > 0 {
		b.warnf(ifc.line, "no 5-minute entries: %s entries used (vnstat keeps 5-minute entries for 5MinuteHours, 48 by default; write them with vnstat --json)", levels[finest].what)
	}
	if b.s.Step > billing.SlotSeconds {
		b.s.FineHint = vnstatFineHint
	}
	return b.finish(), nil
}

// vnstatFineHint is how to have vnstat keep 5-minute entries for a month.
const vnstatFineHint = "vnstat keeps 5-minute entries for its 5MinuteHours setting, 48 hours by default: set 5MinuteHours 744 or more, or -1 to keep them all, in vnstat.conf"

// vnstatOrder checks that a level's entries rise and, below a day (whose
// length in local time varies), are whole steps apart.
func vnstatOrder(file string, lv vnstatLevel) error {
	for i := 1; i < len(lv.pts); i++ {
		p, prev := lv.pts[i], lv.pts[i-1]
		d := p.t - prev.t
		if d <= 0 {
			return orderErr(file, p, prev, lv.what)
		}
		if lv.step < 86400 && d%lv.step != 0 {
			return errAt(file, p.line, lv.what, "mixed steps: %d s after line %d, not a multiple of the %d s step", d, prev.line, lv.step)
		}
	}
	return nil
}

// vnstatSum is the traffic of the spans (ascending) that start in [s, e).
func vnstatSum(spans []vnstatSpan, s, e int64) (in, out float64) {
	i, _ := slices.BinarySearchFunc(spans, s, func(sp vnstatSpan, t int64) int { return cmp.Compare(sp.start, t) })
	for ; i < len(spans) && spans[i].start < e; i++ {
		in += spans[i].in
		out += spans[i].out
	}
	return in, out
}

func vnstatPoint(d *jsonDoc, e *vnstatEntry, line int64, field string, opts ReadOptions) (rawPoint, bool, error) {
	p := rawPoint{line: line}
	noStamp := e.Timestamp == nil
	if !noStamp {
		t, err := e.Timestamp.Int64()
		if err != nil || t < 0 {
			return p, false, d.errf(line, field+".timestamp", "%q is not a unix time", e.Timestamp.String())
		}
		p.t = t
	} else {
		dt := e.Date
		hh, mm := 0, 0
		if e.Time != nil {
			hh, mm = e.Time.Hour, e.Time.Minute
		}
		if dt.Year < 1970 || dt.Month < 1 || dt.Month > 12 || dt.Day < 1 || dt.Day > daysIn(dt.Year, dt.Month) || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
			return p, false, d.errf(line, field+".date", "%04d-%02d-%02d %02d:%02d is not a valid date and time", dt.Year, dt.Month, dt.Day, hh, mm)
		}
		p.t = time.Date(dt.Year, time.Month(dt.Month), dt.Day, hh, mm, 0, 0, opts.loc()).Unix()
	}
	for k, n := range []json.Number{e.Rx, e.Tx} {
		name := []string{"rx", "tx"}[k]
		if n == "" {
			return p, false, d.errf(line, field+"."+name, "missing")
		}
		v, _, msg := parseValue([]byte(n))
		if msg != "" {
			return p, false, d.errf(line, field+"."+name, "%s", msg)
		}
		if k == 0 {
			p.in = v
		} else {
			p.out = v
		}
	}
	return p, noStamp, nil
}

package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// vnstat 2.x JSON (`vnstat --json f`): per interface, "fiveminute" entries
// of rx/tx bytes, each stamped with the START of its 5 minutes. vnstat 2.10+
// writes a unix "timestamp"; older 2.x only the local date and time, read in
// ReadOptions.Loc. Without 5-minute entries the "hour" entries are used
// (coarse, Step 3600).

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
	name      string
	line      int64
	updated   int64
	five      []rawPoint
	hour      []rawPoint
	noStamp   bool
	fiveFound bool
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
					dst, ifc.fiveFound = &ifc.five, true
				case "hour":
					dst = &ifc.hour
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

// series puts the interface's 5-minute entries on the grid, or its hourly
// ones when it has none.
func (ifc *vnstatIface) series(file string, opts ReadOptions) (*billing.Series, error) {
	pts, step, what := ifc.five, int64(billing.SlotSeconds), "fiveminute"
	if !ifc.fiveFound || len(ifc.five) == 0 && len(ifc.hour) > 0 {
		pts, step, what = ifc.hour, 3600, "hour"
	}
	if len(pts) == 0 {
		return nil, &ReadError{File: file, Line: int(ifc.line), Field: ifc.name, Msg: "no fiveminute entries (write them with vnstat --json f)", Err: ErrEmpty}
	}
	// vnstat lists entries oldest first; accept newest first as well.
	if len(pts) > 1 && pts[0].t > pts[1].t {
		for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
			pts[i], pts[j] = pts[j], pts[i]
		}
	}
	b := newBuilder(file, ifc.name, opts)
	if ifc.noStamp {
		b.warnf(ifc.line, "vnstat before 2.10 writes local times only: read in %s (give the time zone vnstat ran in with --tz)", opts.loc())
	}
	if err := b.addRegular(pts, regular{step: step, field: what}); err != nil {
		return nil, err
	}
	if last := pts[len(pts)-1]; ifc.updated > 0 && ifc.updated < last.t+step && ifc.updated >= last.t {
		b.warnf(last.line, "the newest entry (%s) was still filling when vnstat wrote this file", fmtTime(last.t))
	}
	if step > billing.SlotSeconds {
		b.warnf(ifc.line, "no 5-minute entries: hourly entries used (write them with vnstat --json f)")
	}
	return b.finish(), nil
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

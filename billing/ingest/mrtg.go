package ingest

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strconv"

	"github.com/linecheck/linecheck/billing"
)

// readMRTG reads an MRTG log written by rateup (man mrtg-logfile): line 1 is
// "time in_counter out_counter"; every other line is "time avg_in avg_out
// max_in max_out", rates in bytes/s, newest first, the time marking the END
// of the row's interval, which starts at the next (older) row's time. The
// first ~50 h are 5-minute rows, then 30-minute, 2-hour and daily rows:
// coarse rows are spread evenly over the slots they cover (the rows do not
// overlap, so every byte counts once), Series.Parts says which step each
// stretch was read at and Series.Step is the coarsest step among the rows
// kept, so that the engine can refuse them for percentile billing.
// mrtgFilled marks the 5-minute rows rateup filled in: when the poller
// misses updates, the next update repeats the last measured rate over every
// row of the outage (it does not spread the counter delta), so the log shows
// a run of rows with the same four rates and 100 % coverage. Measured
// traffic does not hold one rate to the byte per second, in and out, for
// half an hour: a run of at least mrtgFillRun such rows is an outage, and
// every row of it but its oldest (the last real measurement) is filled in.
// Shorter outages are not told apart from steady traffic; a run of zeros is
// left alone (an idle port repeats zeros too).
func mrtgFilled(b *builder, rows []rawPoint, keys []string, durs []int64) {
	var filled []int64
	five := func(i int) bool {
		return durs[i] == billing.SlotSeconds && !rows[i].unknown && (rows[i].in != 0 || rows[i].out != 0)
	}
	for i := 0; i < len(rows); {
		j := i + 1
		for five(i) && j < len(rows) && five(j) && keys[j] == keys[i] {
			j++
		}
		if j-i >= mrtgFillRun {
			for k := i; k < j-1; k++ { // rows[j-1], the oldest, was measured
				start := floorSlot(rows[k].t - durs[k])
				if !b.win.bounded() || start >= b.win.from && start < b.win.to {
					filled = append(filled, start)
				}
			}
		}
		i = j
	}
	if len(filled) == 0 {
		return
	}
	slices.Reverse(filled) // rows are newest first
	// Without a period only the latest month is kept: so are its marks.
	if sl := b.s.Slots; len(sl) > 0 {
		i := 0
		for i < len(filled) && filled[i] < sl[0].Start {
			i++
		}
		filled = filled[i:]
	}
	b.s.Filled = filled
	if len(filled) > 0 {
		b.warnf(0, "%d 5-minute rows repeat the rate before them to the byte: rateup fills a poller outage with the last rate measured, so these slots (%.1f h) are present but not measured",
			len(filled), float64(len(filled))*billing.SlotSeconds/3600)
	}
}

// mrtgFillRun is the shortest run of identical 5-minute rows taken for an
// outage: 30 minutes of the same rate to the byte per second.
const mrtgFillRun = 7

// mrtgUnset is what rateup writes for a row it never filled (INT64_MIN,
// seen on the oldest daily row of a new log): a gap, not a negative rate.
const mrtgUnset = "-9223372036854775808"

// mrtgReader reads MRTG logs: a line of 3 numbers, then lines of 5.
var mrtgReader = trafficReader{name: "mrtg", rank: 50,
	detect: func(s []byte) bool {
		lines := firstLines(s, 3)
		return len(lines) >= 2 && numericFields(lines[0]) == 3 && numericFields(lines[1]) == 5
	},
	read: func(in readInput) ([]*billing.Series, error) { return readMRTG(in.br, in.name, in.opts) },
}

func readMRTG(r io.Reader, file string, opts ReadOptions) ([]*billing.Series, error) {
	rows, keys, err := scanMRTG(r, file)
	if err != nil {
		return nil, err
	}
	b := newBuilder(file, baseName(file), opts)
	durs, err := mrtgDurations(file, rows)
	if err != nil {
		return nil, err
	}
	// Oldest first, so slots arrive in ascending order.
	var ps parts
	for i := len(rows) - 1; i >= 0; i-- {
		p, dur := rows[i], durs[i]
		if p.unknown {
			continue
		}
		in, out := p.in*float64(dur), p.out*float64(dur)
		b.checkRate(p.line, in, out, dur)
		b.addSpan(p.t-dur, dur, in, out)
		ps.add(p.t-dur, p.t, max(dur, billing.SlotSeconds))
	}
	ps.keep(b.s)
	mrtgFilled(b, rows, keys, durs)
	// rateup stamps its newest row with the poll time; rows before it are
	// contiguous, so only a newest time inside a slot leaves that slot short.
	if t0 := rows[0].t; t0%billing.SlotSeconds != 0 {
		b.warnf(rows[0].line, "the newest row ends at %s, inside its 5 minutes: that slot covers only %d s", fmtTime(t0), t0-floorSlot(t0))
	}
	mrtgStep(b, rows, durs)
	return []*billing.Series{b.finish()}, nil
}

// scanMRTG reads the log's rate rows, newest first, with the four rates
// of each as written (to spot repeats); the header line is checked.
func scanMRTG(r io.Reader, file string) (rows []rawPoint, keys []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var line int64
	head := false
	for sc.Scan() {
		line++
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if !head {
			if err := mrtgHeader(f, file, line); err != nil {
				return nil, nil, err
			}
			head = true
			continue
		}
		p, err := mrtgRow(f, file, line)
		if err != nil {
			return nil, nil, err
		}
		if n := len(rows); n > 0 && p.t >= rows[n-1].t {
			prev := rows[n-1]
			if p.t == prev.t {
				return nil, nil, errAt(file, line, "time", "duplicate timestamp %s (line %d has the same)", fmtTime(p.t), prev.line)
			}
			return nil, nil, errAt(file, line, "time", "timestamp %s is out of order: MRTG rows are newest first, line %d has the older %s", fmtTime(p.t), prev.line, fmtTime(prev.t))
		}
		rows = append(rows, p)
		keys = append(keys, string(bytes.Join(f[1:], []byte{' '})))
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, nil, errAt(file, line+1, "", "line longer than 1 MB")
		}
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, &ReadError{File: file, Line: int(max(line, 1)), Msg: "MRTG log without rate rows", Err: ErrEmpty}
	}
	return rows, keys, nil
}

// mrtgHeader checks the log's first line: the time and the two counters
// of the last poll.
func mrtgHeader(f [][]byte, file string, line int64) error {
	if len(f) != 3 {
		return errAt(file, line, "", "MRTG log: the first line must be \"time in_counter out_counter\", got %d fields", len(f))
	}
	for i, name := range []string{"time", "in_counter", "out_counter"} {
		if _, err := strconv.ParseUint(string(f[i]), 10, 64); err != nil {
			return errAt(file, line, name, "%s is not an unsigned integer", quoteShort(f[i]))
		}
	}
	return nil
}

// mrtgRow reads a rate row: its time and the average rates in and out
// (the maxima are checked, not kept).
func mrtgRow(f [][]byte, file string, line int64) (rawPoint, error) {
	if len(f) != 5 {
		return rawPoint{}, errAt(file, line, "", "MRTG log: want 5 fields \"time avg_in avg_out max_in max_out\", got %d", len(f))
	}
	t, msg := parseUnix(f[0])
	if msg != "" {
		return rawPoint{}, errAt(file, line, "time", "%s", msg)
	}
	p := rawPoint{t: t, line: line}
	for i, name := range []string{"avg_in", "avg_out", "max_in", "max_out"} {
		if string(f[i+1]) == mrtgUnset {
			p.unknown = true
			continue
		}
		v, unknown, msg := parseValue(f[i+1])
		if msg == "" && unknown {
			msg = quoteShort(f[i+1]) + " is not a number"
		}
		if msg != "" {
			return rawPoint{}, errAt(file, line, name, "%s", msg)
		}
		switch i {
		case 0:
			p.in = v
		case 1:
			p.out = v
		}
	}
	return p, nil
}

// mrtgDurations is the span each row averages: the time since the row
// below it (the oldest takes its neighbour's, a lone row 5 minutes).
func mrtgDurations(file string, rows []rawPoint) ([]int64, error) {
	durs := make([]int64, len(rows))
	for i := range rows {
		switch {
		case i+1 < len(rows):
			durs[i] = rows[i].t - rows[i+1].t
		case i > 0:
			durs[i] = durs[i-1]
		default:
			durs[i] = billing.SlotSeconds
		}
		if durs[i] > maxInterval {
			return nil, errAt(file, rows[i].line, "time", "%d s since the row below: longer than 7 days", durs[i])
		}
	}
	return durs, nil
}

// mrtgStep sets the series' step: the coarsest row that fed a kept slot,
// with a warning when MRTG's consolidation made it coarser than 5 minutes.
func mrtgStep(b *builder, rows []rawPoint, durs []int64) {
	sl := b.s.Slots
	if len(sl) == 0 {
		b.s.Step = billing.SlotSeconds
		return
	}
	lo, hi := sl[0].Start, sl[len(sl)-1].Start+billing.SlotSeconds
	for i, p := range rows {
		if p.t > lo && p.t-durs[i] < hi {
			b.s.Step = max(b.s.Step, durs[i], billing.SlotSeconds)
		}
	}
	if b.s.Step > billing.SlotSeconds {
		fine := int64(0)
		for i := 0; i < len(rows) && durs[i] <= billing.SlotSeconds; i++ {
			fine = rows[0].t - rows[i].t + durs[i]
		}
		b.warnf(rows[0].line, "MRTG keeps 5-minute rows for the last %.1f h only; older rows are %d s averages", float64(fine)/3600, b.s.Step)
	}
}

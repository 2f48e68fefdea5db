package ingest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linecheck/linecheck/billing"
)

// CSV reader. The file is streamed in chunks cut at line ends; parser
// goroutines (one per core) split fields and parse numbers by hand without
// allocating, drop rows outside the period right after parsing the
// timestamp, and the chunks are merged back in file order, so that line
// numbers, row order and counters work across chunks. Memory is bounded by
// the rows kept (one period per series) plus a few chunks in flight.

// csvChunkSize is the size of the chunks the parsers share out (a variable
// so that tests can cut small files into many chunks); csvFastRows turns
// on parseChunk's one-pass reading of the common row shape (tests compare
// it with the general path).
var (
	csvChunkSize = 4 << 20
	csvFastRows  = true
)

const (
	// csvMargin is kept on both sides of [From, To) while reading: an
	// end-stamped row or a counter reading just outside the period still
	// feeds a slot inside it.
	csvMargin = 86400
)

var (
	csvTimeNames  = []string{"timestamp", "time", "ts", "date", "datetime", "start", "interval_start", "end", "interval_end"}
	csvIfaceNames = []string{"interface", "iface", "ifname", "if_name", "ifdescr", "port", "device", "name"}
	csvInNames    = []string{"in_bytes", "rx_bytes", "bytes_in", "in_octets", "ifhcinoctets", "ifinoctets", "in", "rx", "in_bps", "rx_bps", "bps_in"}
	csvOutNames   = []string{"out_bytes", "tx_bytes", "bytes_out", "out_octets", "ifhcoutoctets", "ifoutoctets", "out", "tx", "out_bps", "tx_bps", "bps_out"}
)

// csvLayout is what the header row says about the data rows.
type csvLayout struct {
	n                  int // fields per row
	ts, iface, in, out int // column indexes; iface < 0 when absent
	tsName, inName     string
	outName, ifaceName string
	units              string
	shown              map[string]string // lower-case name → the header's spelling
	bits               int               // counter width: 32, 64, or 0 (decide per drop)
	end                bool
	loc                *time.Location
}

func isBpsName(s string) bool { return strings.HasSuffix(s, "_bps") || strings.HasPrefix(s, "bps_") }

func csvHeader(rec []string, file string, line int64, opts ReadOptions) (*csvLayout, error) {
	lay := &csvLayout{n: len(rec), ts: -1, iface: -1, in: -1, out: -1, loc: opts.loc()}
	names := make([]string, len(rec))
	for i, h := range rec {
		names[i] = strings.ToLower(strings.TrimSpace(h))
	}
	find := func(cands []string) int {
		for _, c := range cands {
			if i := slices.Index(names, strings.ToLower(c)); i >= 0 {
				return i
			}
		}
		return -1
	}
	lay.ts = find(csvTimeNames)
	lay.iface = find(csvIfaceNames)
	if len(opts.Columns) > 0 {
		lay.in = find(opts.Columns[:1])
		if len(opts.Columns) > 1 {
			lay.out = find(opts.Columns[1:2])
		}
		for i, c := range opts.Columns {
			if find([]string{c}) < 0 {
				return nil, errAt(file, line, "header", "no column named %q (columns: %s)", opts.Columns[i], strings.Join(rec, ", "))
			}
		}
	} else {
		lay.in = find(csvInNames)
		lay.out = find(csvOutNames)
	}
	if lay.ts < 0 {
		return nil, errAt(file, line, "header", "no timestamp column (want one of %s; found %s)", strings.Join(csvTimeNames, ", "), plainOrQuoted(strings.Join(rec, ", ")))
	}
	if lay.in < 0 || lay.out < 0 && len(opts.Columns) != 1 {
		return nil, errAt(file, line, "header", "no in/out columns (want in_bytes,out_bytes or in_bps,out_bps, or name them with --columns; found %s)", strings.Join(rec, ", "))
	}
	lay.tsName, lay.inName = names[lay.ts], names[lay.in]
	lay.shown = map[string]string{}
	for i, n := range names {
		lay.shown[n] = strings.TrimSpace(rec[i]) // as the header spells it, for messages
	}
	if lay.iface >= 0 {
		lay.ifaceName = names[lay.iface]
	}
	if lay.out >= 0 {
		lay.outName = names[lay.out]
	}
	lay.units = opts.Units
	if err := unitsContradict(lay, file, line); err != nil {
		return nil, err
	}
	if lay.units == "" {
		lay.units = "bytes"
		if isBpsName(lay.inName) {
			lay.units = "bps"
		}
		if lay.out >= 0 && isBpsName(lay.outName) != isBpsName(lay.inName) {
			return nil, errAt(file, line, "header", "%s and %s: one is a rate (bit/s), the other is not; give --units", lay.inName, lay.outName)
		}
	}
	switch lay.units {
	case "counter32":
		lay.bits = 32
	case "counter64":
		lay.bits = 64
	}
	switch {
	case opts.Stamp != "":
		lay.end = opts.Stamp == "end"
	default:
		lay.end = lay.tsName == "end" || lay.tsName == "interval_end"
	}
	return lay, nil
}

func (l *csvLayout) counters() bool { return strings.HasPrefix(l.units, "counter") }

// counterName says whether a column name is an SNMP octet counter's
// (ifHCInOctets, ifInOctets, in_octets, …) or says "counter".
func counterName(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "octets") || strings.Contains(s, "counter")
}

// unitsContradict refuses a --units that the header says is wrong: a rate
// for columns named as byte counts, or bytes/counters for columns named as
// bit rates. Read silently, either is off by a factor of 8·300 or worse.
func unitsContradict(lay *csvLayout, file string, line int64) error {
	if lay.units == "" {
		return nil
	}
	for _, name := range []string{lay.inName, lay.outName} {
		if name == "" {
			continue
		}
		isBytes := strings.Contains(name, "bytes") || strings.Contains(name, "octets")
		switch {
		case lay.units == "bps" && isBytes:
			want := "bytes"
			if counterName(name) {
				want = "counter (or counter32, counter64)"
			}
			return errAt(file, line, "header", "--units bps contradicts the header: %s is named as a byte count, not a bit rate (use --units %s, or leave --units out)", lay.shown[name], want)
		case lay.units != "bps" && isBpsName(name):
			return errAt(file, line, "header", "--units %s contradicts the header: %s is named as a bit rate (use --units bps, or leave --units out)", lay.units, lay.shown[name])
		}
	}
	return nil
}

// csvHeadRows and csvHeadBytes bound the data rows the counter check looks
// at: enough for a few rows of each of a thousand interfaces.
// csvHeadPerIface is the rows judged per interface: a ramp of bytes per
// interval looks more like a counter the longer it is watched.
const (
	csvHeadRows     = 16384
	csvHeadBytes    = 1 << 20
	csvHeadPerIface = 64
)

// detectCounters looks at the first rows after the header (head) when no
// --units is given: values that only ever rise, by small steps against their
// size, are cumulative counters, not bytes per interval. With counter-like
// column names they are read as counters (a note says so); with other names
// the read is refused with the flag to use, since either reading may be
// meant and they differ by orders of magnitude.
func detectCounters(lay *csvLayout, units string, head []byte, file string, line int64) (note string, err error) {
	if units != "" || lay.units != "bytes" {
		return "", nil // --units given, or the columns are named as rates
	}
	per, order := headReadings(lay, head)
	// Counter-like names need less evidence than names that say bytes per
	// interval, whose refusal needs an unmistakable counter.
	named := counterName(lay.inName) && (lay.out < 0 || counterName(lay.outName))
	minRows, ratio := 4, 10.0
	if !named {
		minRows, ratio = 32, 100
	}
	counting, judged := 0, 0
	for _, k := range order {
		o := per[k]
		if len(o.in) < minRows {
			continue
		}
		judged++
		if cumulative(o.in, ratio, !named) && (lay.out < 0 || cumulative(o.out, ratio, !named)) {
			counting++
		}
	}
	if judged == 0 || counting*2 <= judged {
		if named && len(order) > 0 {
			return wrapped32(lay, per[order[0]].in, per[order[0]].out, per[order[0]].ts), nil
		}
		return "", nil
	}
	names := lay.shown[lay.inName]
	if lay.out >= 0 {
		names += ", " + lay.shown[lay.outName]
	}
	if !named {
		return "", errAt(file, line, "header", "%s only ever rise, like SNMP octet counters, but are named as bytes per interval: "+
			"give --units counter (or counter32, counter64) to read them as counters, or --units bytes if they really are bytes per interval", names)
	}
	// ifHC… are 64-bit by definition; other names (ifInOctets is 32-bit in
	// IF-MIB, but exports rename columns) let each drop decide its width.
	lay.units, lay.bits = "counter", 0
	if strings.HasPrefix(lay.inName, "ifhc") {
		lay.units, lay.bits = "counter64", 64
	}
	return fmt.Sprintf("%s: SNMP octet counters (the readings only rise): read as --units %s (each delta is the traffic between two polls); --units bytes reads them as bytes per interval", names, lay.units), nil
}

// headReadings are the first rows' readings (head: the text after the
// header), per interface in the order they first appear, up to
// csvHeadPerIface each; rows that do not parse are passed over.
func headReadings(lay *csvLayout, head []byte) (map[string]*headObs, []string) {
	per := map[string]*headObs{}
	var order []string
	f := make([][]byte, lay.n)
	rows := 0
	for len(head) > 0 && rows < csvHeadRows {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break // a partial last line: leave it
		}
		ln := bytes.TrimRight(head[:i], "\r")
		head = head[i+1:]
		if len(ln) == 0 || ln[0] == '#' || bytes.IndexByte(ln, '"') >= 0 {
			continue
		}
		if splitFields(ln, f) != lay.n {
			continue
		}
		rows++
		var nb []byte
		if lay.iface >= 0 {
			nb = trimSpace(f[lay.iface])
		}
		o := per[string(nb)] // no copy of the name for a lookup
		if o == nil {
			key := string(nb)
			o = &headObs{}
			per[key] = o
			order = append(order, key)
		}
		if len(o.in) >= csvHeadPerIface {
			continue // enough rows of it judged: its values would not be kept
		}
		vi, ui, msg := parseValue(trimSpace(f[lay.in]))
		if msg != "" || ui {
			continue
		}
		vo := vi
		if lay.out >= 0 {
			var uo bool
			if vo, uo, msg = parseValue(trimSpace(f[lay.out])); msg != "" || uo {
				continue
			}
		}
		if len(o.in) < csvHeadPerIface {
			o.in, o.out = append(o.in, vi), append(o.out, vo)
			if t, msg := parseStamp(trimSpace(f[lay.ts]), lay.loc); msg == "" {
				o.ts = append(o.ts, t)
			}
		}
		if lay.iface < 0 && len(o.in) == csvHeadPerIface {
			break // the one series is judged: no later row can change that
		}
	}
	return per, order
}

// headObs is one interface's readings in the rows detectCounters reads.
type headObs struct {
	in, out []float64
	ts      []int64
}

// wrapped32 speaks when columns named like octet counters do not read as
// counters and every reading fits 32 bits with many falls: the pattern of a
// 32-bit counter (IF-MIB ifInOctets) polled too slowly for its link. Above
// 2^32·8/step bit/s (114.5 Mbit/s at 300 s) it wraps more than once between
// polls, each reading looks random in 0..2^32, and neither reading recovers
// the volume (issue 20: read as counters a 200 Mbit/s log billed 85 Mbit/s;
// read as bytes per interval it bills the readings themselves). They are
// read as bytes per interval, as before, but not silently.
func wrapped32(lay *csvLayout, in, out []float64, ts []int64) string {
	// A counter that wraps between polls reads like a random number in
	// 0..2^32: the readings span most of the range. Bytes per interval of a
	// steady link cluster, and small ones never reach the upper half.
	falls, steps := 0, 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range [][]float64{in, out} {
		for i, x := range v {
			if x > math.MaxUint32 || x < 0 {
				return ""
			}
			lo, hi = min(lo, x), max(hi, x)
			if i > 0 {
				steps++
				if x < v[i-1] {
					falls++
				}
			}
		}
	}
	if steps == 0 || falls*10 < steps || hi < 1<<31 || lo >= 1<<30 {
		return ""
	}
	step := int64(0)
	if len(ts) > 1 {
		d := make([]int64, 0, len(ts)-1)
		for i := 1; i < len(ts); i++ {
			if ts[i] > ts[i-1] {
				d = append(d, ts[i]-ts[i-1])
			}
		}
		if len(d) > 0 {
			slices.Sort(d)
			step = d[len(d)/2]
		}
	}
	names := lay.shown[lay.inName]
	if lay.out >= 0 {
		names += ", " + lay.shown[lay.outName]
	}
	limit := func(s int64) string { return fmt.Sprintf("%.1f Mbit/s", float64(uint64(1)<<32)*8/float64(s)/1e6) }
	poll := "polled every 300 s it can be read up to " + limit(300)
	if step > 0 {
		poll = fmt.Sprintf("polled every %d s (this log's step) it can be read up to %s", step, limit(step))
	}
	return fmt.Sprintf("%s are named like octet counters but fall in %d of %d readings and all fit 32 bits: read as bytes per interval. "+
		"If they are 32-bit counters, %s and a faster link wraps unseen between polls, so the volume cannot be recovered: "+
		"poll the 64-bit ifHCInOctets/ifHCOutOctets, or poll more often; --units counter32 checks them as counters", names, falls, steps, poll)
}

// cumulative says whether readings look like a counter: nearly every step
// rises (a wrap or a reset may drop it; strict: at most one drop), and the
// typical reading is at least ratio times the typical rise (a counter holds
// everything since it started; bytes per interval are of the size of their
// changes).
func cumulative(v []float64, ratio float64, strict bool) bool {
	rises := 0
	var deltas, levels []float64
	for i := 1; i < len(v); i++ {
		if v[i] > v[i-1] {
			rises++
			deltas = append(deltas, v[i]-v[i-1])
		}
		levels = append(levels, v[i])
	}
	if rises*10 < (len(v)-1)*9 || strict && rises < len(v)-2 || len(deltas) < 3 {
		return false
	}
	slices.Sort(deltas)
	slices.Sort(levels)
	return levels[len(levels)/2] >= ratio*deltas[len(deltas)/2]
}

// csvSeries is the rows of one interface gathered so far: with a period,
// the chunks' own row slices in file order (segs, never copied while
// reading); without one, the rows of the latest months (pts).
type csvSeries struct {
	name   string
	st     *pointStream // streamed: the rows went onto the grid as read
	segs   []csvSeg
	rows   int // rows in segs
	pts    []rawPoint
	mEnd   int64 // unbounded window: end of the latest month seen
	keepLo int64 // unbounded window: rows before it are dropped
}

// csvSeg is one chunk's rows of an interface; base is the number of lines
// before the chunk, which its rows' lines count from.
type csvSeg struct {
	base int64
	rows []csvRow
}

// csvRow is a kept CSV row as parsed: a rawPoint with its line counted from
// the start of its chunk (a chunk holds far fewer than 2^32 lines), 32
// bytes instead of 40, as a month of 100 interfaces is ~900,000 of them.
type csvRow struct {
	t       int64
	in, out float64
	line    uint32
	unknown bool
}

// point is the row as a rawPoint, its line counted from the file's start.
func (r csvRow) point(base int64) rawPoint {
	return rawPoint{t: r.t, line: base + int64(r.line), in: r.in, out: r.out, unknown: r.unknown}
}

// csvPart is what one chunk contributes, per interface in order of appearance.
type csvPart struct {
	names []string
	keys  []string // the parser's key of each name
	pts   [][]csvRow
	maxT  []int64 // the latest timestamp per interface
}

type csvChunk struct {
	seq     int
	buf     []byte
	long    bool // a line longer than a chunk
	mapped  bool // buf is part of a whole file in memory (mapped, or read at once)
	release bool // a mapping: drop its pages once parsed
}

type csvResult struct {
	seq   int
	buf   []byte
	lines int64
	part  csvPart
	err   *ReadError // Line is relative to the chunk
}

// csvReader reads CSV with a header row: a first line with a comma and a
// letter, detected last.
var csvReader = trafficReader{name: "csv", rank: 60,
	detect: func(s []byte) bool {
		lines := firstLines(s, 1)
		return s[0] != '{' && s[0] != '<' && len(lines) >= 1 && bytes.IndexByte(lines[0], ',') >= 0 &&
			bytes.ContainsFunc(lines[0], func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	},
	read: func(in readInput) ([]*billing.Series, error) {
		series, err := readCSV(in.br, in.name, in.opts, in.src)
		if err == nil {
			cutLastLine(series, in.name, in.src, in.tail)
		}
		return series, err
	},
}

func readCSV(br *bufio.Reader, file string, opts ReadOptions, src mapped) ([]*billing.Series, error) {
	var (
		line int64
		rec  []string
	)
	for {
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, errAt(file, line+1, "header", "header line longer than 1 MB")
		}
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				return nil, &ReadError{File: file, Line: int(max(line, 1)), Msg: "empty input: no header row", Err: ErrEmpty}
			}
			return nil, err
		}
		line++
		s := strings.TrimSpace(strings.TrimPrefix(string(raw), "\ufeff"))
		if s == "" || s[0] == '#' {
			continue
		}
		r := csv.NewReader(strings.NewReader(s))
		r.FieldsPerRecord = -1
		if rec, err = r.Read(); err != nil {
			return nil, &ReadError{File: file, Line: int(line), Field: "header", Msg: err.Error(), Err: err}
		}
		break
	}
	lay, err := csvHeader(rec, file, line, opts)
	if err != nil {
		return nil, err
	}
	feed := readerFeeder(br)
	var (
		head []byte
		rest []byte // the rest of a file in memory: what the header left unread
	)
	if src.data != nil {
		off := len(src.data) - src.rd.Len() - br.Buffered()
		rest = src.data[off:]
		head = rest[:min(len(rest), csvHeadBytes)]
	} else {
		head, _ = br.Peek(min(csvHeadBytes, br.Size()))
	}
	backwards := src.data != nil && !opts.window().bounded() && !finerThanSlots(lay, head)
	if src.data != nil {
		feed = mappedFeeder(rest, backwards, !src.heap)
	}
	note, err := detectCounters(lay, opts.Units, head, file, line)
	if err != nil {
		return nil, err
	}
	gs := newCSVGrids(lay, opts, rest)
	acc, err := csvStream(file, lay, opts, line, feed, backwards, gs)
	var series []*billing.Series
	if err == nil && len(acc) > 0 {
		series, err = csvBuild(file, lay, opts, acc, gs)
	}
	if err == errCSVGrid {
		// Not on the grid: the rows, from the start of the data again.
		csvGridStops.Add(1)
		series = nil
		acc, err = csvStream(file, lay, opts, line, mappedFeeder(rest, backwards, !src.heap), backwards, nil)
		if err == nil && len(acc) > 0 {
			series, err = csvBuild(file, lay, opts, acc, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(acc) == 0 {
		msg := "no data rows after the header"
		if w := opts.window(); w.bounded() {
			msg = "no data rows inside the requested period " + time.Unix(w.from, 0).UTC().Format(time.RFC3339) +
				" .. " + time.Unix(w.to, 0).UTC().Format(time.RFC3339) + "; check --period, --from, --to and --tz"
		}
		return nil, &ReadError{File: file, Line: int(line), Msg: msg, Err: ErrEmpty}
	}
	if err == nil && note != "" {
		for _, s := range series {
			s.Warnings = append([]string{fmt.Sprintf("%s:%d: %s", file, line, note)}, s.Warnings...)
		}
	}
	return series, err
}

// finerThanSlots says whether the first rows of an interface are closer
// than a slot (per-second rows, say). Such a file is read forwards and
// streamed onto the grid, never read last chunk first (which must hold the
// rows to put them in order: a month of per-second rows is 2.7 M of them).
func finerThanSlots(lay *csvLayout, head []byte) bool {
	per, _ := headReadings(lay, head)
	for _, o := range per {
		for i := 1; i < len(o.ts); i++ {
			if d := o.ts[i] - o.ts[i-1]; d > 0 && d < billing.SlotSeconds {
				return true
			}
		}
	}
	return false
}

// csvFeeder cuts the input into chunks of whole lines and sends them on
// jobs until the input ends or done is closed; buffers come back on free.
type csvFeeder func(jobs chan<- csvChunk, free chan []byte, done <-chan struct{}, nbuf int) error

// readerFeeder reads chunks from br into recycled buffers.
func readerFeeder(br *bufio.Reader) csvFeeder {
	return func(jobs chan<- csvChunk, free chan []byte, done <-chan struct{}, nbuf int) error {
		var carry []byte
		allocated := 0
		for seq := 0; ; seq++ {
			var buf []byte
			select {
			case buf = <-free:
			case <-done:
				return nil
			default:
				// Buffers are made as needed: a small first one for small
				// files, then full chunks, at most nbuf in flight.
				if allocated < nbuf {
					size := csvChunkSize
					if allocated == 0 {
						size = min(256<<10, csvChunkSize)
					}
					buf = make([]byte, size)
					allocated++
				} else {
					select {
					case buf = <-free:
					case <-done:
						return nil
					}
				}
			}
			if seq > 0 && cap(buf) < csvChunkSize {
				buf = make([]byte, csvChunkSize)
			}
			buf = buf[:cap(buf)]
			n := copy(buf, carry)
			var last bool
			for {
				m, err := io.ReadFull(br, buf[n:])
				n += m
				last = err == io.EOF || err == io.ErrUnexpectedEOF
				if err != nil && !last {
					return err
				}
				if last || len(buf) >= csvChunkSize || bytes.LastIndexByte(buf[:n], '\n') >= 0 {
					break
				}
				// A first line longer than the small first buffer.
				nb := make([]byte, csvChunkSize)
				copy(nb, buf[:n])
				buf = nb
			}
			c := csvChunk{seq: seq, buf: buf[:n]}
			if !last {
				cut := bytes.LastIndexByte(buf[:n], '\n')
				if cut < 0 {
					c.long = true
					last = true
				} else {
					carry = append(carry[:0], buf[cut+1:n]...)
					c.buf = buf[:cut+1]
				}
			}
			select {
			case jobs <- c:
			case <-done:
				return nil
			}
			if last {
				return nil
			}
		}
	}
}

// mappedFeeder cuts a file mapped in memory into chunks: no copies. With
// backwards set it sends the last chunk first: without a period, the end of
// a time-ordered file tells each interface's latest month, and the parsers
// then skip older rows after reading only their timestamp and interface.
func mappedFeeder(data []byte, backwards, release bool) csvFeeder {
	return func(jobs chan<- csvChunk, _ chan []byte, done <-chan struct{}, _ int) (err error) {
		defer recoverFault(catchFaults(), &err, "")
		var chunks [][]byte
		for len(data) > 0 {
			n := min(csvChunkSize, len(data))
			if n < len(data) {
				if cut := bytes.LastIndexByte(data[:n], '\n'); cut >= 0 {
					n = cut + 1
				} else if i := bytes.IndexByte(data[n:], '\n'); i >= 0 {
					n += i + 1
				} else {
					n = len(data)
				}
			}
			chunks = append(chunks, data[:n])
			data = data[n:]
		}
		for i := range chunks {
			seq := i
			if backwards {
				seq = len(chunks) - 1 - i
			}
			select {
			case jobs <- csvChunk{seq: seq, buf: chunks[seq], mapped: true, release: release}:
			case <-done:
				return nil
			}
		}
		return nil
	}
}

// csvStream runs the chunk pipeline and returns the kept rows per interface.
func csvStream(file string, lay *csvLayout, opts ReadOptions, headerLines int64, feed csvFeeder, backwards bool, gs *csvGrids) ([]*csvSeries, error) {
	nw := max(1, runtime.GOMAXPROCS(0))
	nbuf := 2*nw + 2
	free := make(chan []byte, nbuf)
	jobs := make(chan csvChunk, nbuf)
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(jobs)
		readErr = feed(jobs, free, done, nbuf)
	}()
	results := parseChunks(file, lay, opts, jobs, nw, nbuf, backwards, gs)
	col := csvCollector{index: map[string]*csvSeries{}, base: headerLines, w: opts.window(), gs: gs,
		file: file, lay: lay, opts: opts, stream: gs == nil && !backwards}
	pending := map[int]csvResult{}
	next := 0
	for res := range results {
		pending[res.seq] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if col.take(r) {
				close(done)
			}
			if cap(r.buf) > 0 {
				select {
				case free <- r.buf[:0]:
				default:
				}
			}
		}
	}
	if col.err != nil {
		return nil, col.err
	}
	if readErr != nil {
		return nil, readErr
	}
	if gs != nil && gs.off.Load() {
		return nil, errCSVGrid
	}
	return col.all, nil
}

// parseChunks starts nw parsers on the chunks from jobs; their results
// come in any order, and the channel closes when all are parsed.
func parseChunks(file string, lay *csvLayout, opts ReadOptions, jobs <-chan csvChunk, nw, nbuf int, backwards bool, gs *csvGrids) <-chan csvResult {
	results := make(chan csvResult, nbuf)
	var bounds *csvBounds
	if backwards {
		bounds = &csvBounds{m: map[string]int64{}}
	}
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newCSVParser(file, lay, opts)
			p.bounds = bounds
			p.grids = gs
			for c := range jobs {
				r := p.parseGuarded(c)
				p.shareBounds(r)
				if c.mapped {
					if c.release {
						// Parsed: its pages need not stay in this process (the
						// page cache keeps them), so RSS stays bounded.
						dropPages(c.buf)
					}
					r.buf = nil
				}
				results <- r
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	return results
}

// csvCollector takes the parsed chunks in file order and gathers their
// rows per interface, numbering lines from the file's start.
type csvCollector struct {
	all   []*csvSeries // in the order the interfaces first appear
	index map[string]*csvSeries
	base  int64 // lines before the next chunk
	w     window
	gs    *csvGrids
	err   *ReadError // the first chunk's error; later chunks are only counted

	// stream: the rows come in file order and go onto each interface's
	// grid as they come (pointStream), so memory is the slots, not the rows.
	stream bool
	file   string
	lay    *csvLayout
	opts   ReadOptions
}

// take adds the next chunk; true when it is the first to fail (the reader
// may stop).
func (col *csvCollector) take(r csvResult) (failed bool) {
	base := col.base
	col.base += r.lines
	if col.gs != nil {
		col.gs.bases = append(col.gs.bases, base)
	}
	if col.err != nil {
		return false
	}
	if r.err != nil {
		r.err.Line += int(base)
		col.err = r.err
		return true
	}
	for i, name := range r.part.names {
		s := col.index[name]
		if s == nil {
			s = &csvSeries{name: name}
			col.index[name] = s
			col.all = append(col.all, s)
			if col.stream {
				s.st = col.newStream(name)
			}
		}
		if s.st != nil {
			for _, row := range r.part.pts[i] {
				if err := s.st.add(row.point(base)); err != nil {
					// The error nearest the top of the file: another
					// interface of this chunk may have one on an earlier line.
					var re *ReadError
					if errors.As(err, &re) && (col.err == nil || re.Line < col.err.Line) {
						col.err = re
					}
					break
				}
			}
		} else if col.gs != nil {
			// In the grids already.
		} else if col.w.bounded() {
			// Kept as parsed: csvBuild reads them in order.
			if rows := r.part.pts[i]; len(rows) > 0 {
				s.segs = append(s.segs, csvSeg{base: base, rows: rows})
				s.rows += len(rows)
			}
		} else {
			s.add(r.part.pts[i], base, col.w)
		}
	}
	return col.err != nil
}

// newStream starts the grid of a streamed interface.
func (col *csvCollector) newStream(name string) *pointStream {
	b := newBuilder(col.file, name, col.opts)
	if col.lay.counters() {
		return newCounterStream(b, col.lay.bits, col.lay.tsName)
	}
	return newRegularStream(b, regular{end: col.lay.end, rate: col.lay.units == "bps", field: col.lay.tsName})
}

// add appends a chunk's rows, fixing their line numbers; without a period it
// keeps only the latest calendar month seen and the one before (an
// end-stamped first row of a month belongs to the month before).
func (s *csvSeries) add(rows []csvRow, base int64, w window) {
	for _, r := range rows {
		p := r.point(base)
		if !w.bounded() && p.t >= s.mEnd {
			_, s.mEnd = monthBounds(p.t, w.loc)
			s.keepLo = latestKeepFrom(p.t, w.loc)
			i := 0
			for i < len(s.pts) && s.pts[i].t < s.keepLo {
				i++
			}
			if i > 0 {
				s.pts = append(s.pts[:0], s.pts[i:]...)
			}
		}
		s.pts = append(s.pts, p)
	}
}

// latestKeepFrom is the earliest row time that can still feed the latest
// calendar month when a row at t has been seen: the month before t's (an
// end-stamped first row of a month belongs to the month before), less the
// margin.
func latestKeepFrom(t int64, loc *time.Location) int64 {
	ms, _ := monthBounds(t, loc)
	prev, _ := monthBounds(ms-1, loc)
	return prev - csvMargin
}

// csvBounds is shared by the parsers of a file read backwards: per interface,
// the earliest row time that can still matter (latestKeepFrom of the latest
// row seen so far).
type csvBounds struct {
	mu sync.RWMutex
	m  map[string]int64
}

// csvBuild puts each interface's rows on the grid, one series per core at
// a time; each worker gathers a series' chunk rows into one buffer of its
// own, reused from series to series.
func csvBuild(file string, lay *csvLayout, opts ReadOptions, acc []*csvSeries, gs *csvGrids) ([]*billing.Series, error) {
	out := make([]*billing.Series, len(acc))
	errs := make([]error, len(acc))
	var (
		wg      sync.WaitGroup
		next    atomic.Int64
		offGrid atomic.Bool
	)
	spec := regular{end: lay.end, rate: lay.units == "bps", field: lay.tsName}
	for range min(max(1, runtime.GOMAXPROCS(0)), len(acc)) {
		wg.Go(func() {
			var buf []rawPoint
			for {
				i := int(next.Add(1) - 1)
				if i >= len(acc) {
					return
				}
				s := acc[i]
				if s.st != nil {
					errs[i] = s.st.finish()
					out[i] = s.st.b.finish()
					continue
				}
				if gs != nil {
					b := &builder{file: file, win: opts.window(), port: opts.PortBps, s: &billing.Series{Name: s.name}}
					if !gs.build(b, gs.lookup(s.name), spec) {
						offGrid.Store(true)
						return
					}
					out[i] = b.finish()
					continue
				}
				pts := s.pts
				if s.segs != nil {
					buf = slices.Grow(buf[:0], s.rows)
					for _, sg := range s.segs {
						for _, r := range sg.rows {
							buf = append(buf, r.point(sg.base))
						}
					}
					pts = buf
				}
				b := newBuilder(file, s.name, opts)
				var err error
				if lay.counters() {
					err = b.addCounters(pts, lay.bits, lay.tsName)
				} else {
					err = b.addRegular(pts, spec)
				}
				s.pts, s.segs = nil, nil
				out[i], errs[i] = b.finish(), err
			}
		})
	}
	wg.Wait()
	if offGrid.Load() {
		return nil, errCSVGrid
	}
	// The error nearest the top of the file, whichever series it is in.
	var first *ReadError
	for _, err := range errs {
		var re *ReadError
		if errors.As(err, &re) && (first == nil || re.Line < first.Line) {
			first = re
		}
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// csvParser parses chunks; one per goroutine.
type csvParser struct {
	file    string
	lay     *csvLayout
	bounded bool
	lo, hi  int64
	fields  [][]byte
	names   map[string]*csvName // interface names seen by this parser
	// the last timestamp parsed
	lastRaw  []byte
	lastT    int64
	haveLast bool
	plainRaw bool      // lastRaw holds no comma or quote
	pfx      csvPrefix // lastRaw and a comma, for fastRow
	single   string
	prev     *csvName // the interface of the row before
	fast     bool     // the layout is timestamp,interface,in,out (either order of in, out)
	// the current chunk's kept rows in file order and their interface's
	// index in the part (see keep, group); pos is group's scratch
	rows    []csvRow
	rowK    []int32
	pos     []int
	lineLen int // mean line length of the last chunk parsed
	bounds  *csvBounds
	grids   *csvGrids // grid mode: kept rows go into their cells
	seq     int       // the chunk being parsed // reading backwards without a period: shared bounds
}

// loadBounds copies the shared bounds into the parser's interface table.
func (p *csvParser) loadBounds() {
	if p.bounds == nil {
		return
	}
	p.bounds.mu.RLock()
	defer p.bounds.mu.RUnlock()
	if len(p.bounds.m) > 1<<14 {
		return // too many interfaces to copy per chunk; skip nothing
	}
	for name, lo := range p.bounds.m {
		key := name
		if p.lay.iface < 0 {
			key = ""
		}
		e := p.names[key]
		if e == nil {
			e = &csvName{name: name, chunk: -1}
			p.names[key] = e
		}
		e.keepLo = lo
	}
}

// shareBounds publishes what a parsed chunk says about each interface's
// latest month.
func (p *csvParser) shareBounds(r csvResult) {
	if p.bounds == nil || r.err != nil || len(r.part.names) == 0 {
		return
	}
	p.bounds.mu.Lock()
	defer p.bounds.mu.Unlock()
	for k, name := range r.part.names {
		if r.part.maxT[k] == math.MinInt64 {
			continue // all its rows in this chunk were skipped
		}
		lo := latestKeepFrom(r.part.maxT[k], p.lay.loc)
		if old, ok := p.bounds.m[name]; !ok || lo > old {
			p.bounds.m[name] = lo
		}
	}
}

// csvName is an interface name and its index in the current chunk's part.
type csvName struct {
	name   string
	key    string   // the bytes of the interface column ("" without one)
	succ   *csvName // the interface that followed this one last
	plain  bool     // key holds no comma or quote (fastRow may match it)
	grid   *csvGrid // its grid in grid mode, once it has one
	chunk  int      // the chunk k refers to
	k      int
	keepLo int64 // rows before it cannot be in the latest month kept (reverse mode)
}

func newCSVParser(file string, lay *csvLayout, opts ReadOptions) *csvParser {
	p := &csvParser{file: file, lay: lay, fields: make([][]byte, lay.n), names: map[string]*csvName{}, single: baseName(file)}
	if opts.To > opts.From {
		p.bounded, p.lo, p.hi = true, opts.From-csvMargin, opts.To+csvMargin
	}
	// timestamp, interface, in, out (in and out either way round), or
	// timestamp, in, out without an interface column
	p.fast = csvFastRows && lay.ts == 0 && (lay.n == 4 && lay.iface == 1 && (lay.in == 2 && lay.out == 3 || lay.in == 3 && lay.out == 2) ||
		lay.n == 3 && lay.iface < 0 && (lay.in == 1 && lay.out == 2 || lay.in == 2 && lay.out == 1))
	return p
}

// stamp parses a timestamp, reusing the last result: exports repeat the
// same timestamp for every interface.
func (p *csvParser) stamp(raw []byte, plain bool) (int64, string) {
	if p.haveLast && string(raw) == string(p.lastRaw) {
		return p.lastT, ""
	}
	t, msg := parseStamp(trimSpace(raw), p.lay.loc)
	if msg == "" {
		p.setLast(raw, t, plain || bytes.IndexByte(raw, ',') < 0 && bytes.IndexByte(raw, '"') < 0)
	}
	return t, msg
}

// setLast records the timestamp parsed last; plain says raw holds no comma
// or quote.
func (p *csvParser) setLast(raw []byte, t int64, plain bool) {
	p.lastRaw, p.lastT, p.haveLast = append(p.lastRaw[:0], raw...), t, true
	p.plainRaw = plain
	p.pfx.set(raw, nil)
}

// fastRow reads the common row at the start of buf in one pass: the
// timestamp of the row before, the interface that followed the previous
// row's interface last time, and two plain integers, with nothing else on
// the line (no quotes, spaces, gaps, or other number forms), and finds the
// line's end on the way. It does exactly what the general path of
// parseChunk does with such a line (skipped outside the period, else kept)
// and returns its length with the newline; for any other line it returns 0
// having changed nothing, and the general path reads it.
func (p *csvParser) fastRow(buf []byte, line int64, seq int, part *csvPart) int {
	var n int // the timestamp and its comma
	if p.haveLast && p.plainRaw && p.pfx.match(buf) {
		n = len(p.pfx.b)
	} else {
		// Another timestamp: plain unix seconds are read here, as stamp
		// would (parseUnix takes at most 12 digits), and recorded as the
		// last one, as stamp does: the general path then finds it repeated.
		var t int64
		i := 0
		for ; i < len(buf) && i < 13 && buf[i] >= '0' && buf[i] <= '9'; i++ {
			t = t*10 + int64(buf[i]-'0')
		}
		if i == 0 || i > 12 || i >= len(buf) || buf[i] != ',' {
			return 0
		}
		// (setLast, with the prefix's words read off buf: a file with a
		// timestamp per row sets one per row)
		p.lastRaw, p.lastT, p.haveLast, p.plainRaw = append(p.lastRaw[:0], buf[:i]...), t, true, true
		p.pfx.set(buf[:i], buf)
		n = i + 1
	}
	t := p.lastT
	if p.bounded && (t < p.lo || t >= p.hi) {
		// The general path skips it after the timestamp too.
		if i := bytes.IndexByte(buf[n:], '\n'); i >= 0 {
			return n + i + 1
		}
		return len(buf)
	}
	q := p.prev
	if q == nil || q.succ == nil {
		return 0
	}
	e := q.succ
	rest := buf[n:]
	if e.chunk != seq || t < e.keepLo {
		// (before keepLo: skipped only after the field count check, the general path's)
		return 0
	}
	if p.lay.iface >= 0 {
		k := len(e.key)
		if !e.plain || len(rest) <= k || rest[k] != ',' || string(rest[:k]) != e.key {
			return 0
		}
		rest = rest[k+1:]
	}
	// in and out: digits up to the comma, then digits to the line's end.
	maxDigits := 18 // parseValue's integer form
	if p.lay.counters() {
		maxDigits = 19 // parseCounter's
	}
	var a, b uint64
	i := 0
	for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		a = a*10 + uint64(rest[i]-'0')
	}
	if i == 0 || i > maxDigits || i >= len(rest) || rest[i] != ',' {
		return 0
	}
	rest = rest[i+1:]
	j := 0
	for ; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
		b = b*10 + uint64(rest[j]-'0')
	}
	if j == 0 || j > maxDigits {
		return 0
	}
	// The line's end: LF, CR LF, a CR or nothing at the end of the input.
	end := j
	switch {
	case j == len(rest):
	case rest[j] == '\n':
		end++
	case rest[j] == '\r' && (j+1 == len(rest) || rest[j+1] == '\n'):
		end = min(j+2, len(rest))
	default:
		return 0
	}
	if p.lay.in > p.lay.out {
		a, b = b, a
	}
	pt := csvRow{t: t, line: uint32(line)}
	if p.lay.counters() {
		if p.lay.bits == 32 && (a > math.MaxUint32 || b > math.MaxUint32) {
			return 0 // the general path words the error
		}
		pt.in, pt.out = math.Float64frombits(a), math.Float64frombits(b)
	} else {
		vi, vo := float64(int64(a)), float64(int64(b))
		if p.lay.units == "bps" {
			vi, vo = vi/8, vo/8
		}
		pt.in, pt.out = vi, vo
	}
	p.prev = e
	p.keep(part, e, pt)
	return len(buf) - len(rest) + end
}

// csvPrefix is a timestamp and its comma, matched at a line's start by
// three word loads instead of a call (rows repeat the timestamp of the row
// before: it is the first test of every row).
type csvPrefix struct {
	b    []byte
	w, m [3]uint64 // the bytes as little-endian words and which of them count
}

// set makes raw and a comma the prefix. line, when not nil, is where raw
// starts with its comma after it: the words are read off it.
func (q *csvPrefix) set(raw, line []byte) {
	q.b = append(append(q.b[:0], raw...), ',')
	n := len(q.b)
	if n > 24 {
		return
	}
	q.m = prefixMasks[n]
	if len(line) >= 24 {
		q.w[0] = binary.LittleEndian.Uint64(line) & q.m[0]
		q.w[1] = binary.LittleEndian.Uint64(line[8:]) & q.m[1]
		q.w[2] = binary.LittleEndian.Uint64(line[16:]) & q.m[2]
		return
	}
	var a [24]byte
	copy(a[:], q.b)
	for i := range 3 {
		q.w[i] = binary.LittleEndian.Uint64(a[8*i:])
	}
}

// prefixMasks[n] selects the first n bytes of three little-endian words.
var prefixMasks = func() (m [25][3]uint64) {
	for n := range m {
		for i := range 3 {
			switch k := n - 8*i; {
			case k >= 8:
				m[n][i] = math.MaxUint64
			case k > 0:
				m[n][i] = 1<<(8*k) - 1
			}
		}
	}
	return m
}()

// match says whether b starts with the prefix.
func (q *csvPrefix) match(b []byte) bool {
	if len(b) >= 24 && len(q.b) <= 24 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		return (x0^q.w[0])&q.m[0]|(x1^q.w[1])&q.m[1]|(x2^q.w[2])&q.m[2] == 0
	}
	return len(b) >= len(q.b) && string(b[:len(q.b)]) == string(q.b)
}

// keep adds a kept row of the interface at index k of the chunk's part: to
// the parser's own buffer, in file order, which group then splits.
func (p *csvParser) keep(part *csvPart, e *csvName, pt csvRow) {
	part.maxT[e.k] = max(part.maxT[e.k], pt.t)
	if p.grids != nil {
		p.put(e, pt)
		return
	}
	p.rows = append(p.rows, pt)
	p.rowK = append(p.rowK, int32(e.k))
}

// group moves the chunk's kept rows from the parser's buffer into one
// allocation of their exact size, each interface's rows together and in
// file order: no slice per interface grown by appending, and the buffer is
// reused for the next chunk.
func (p *csvParser) group(part *csvPart) {
	nk := len(part.names)
	part.pts = part.pts[:nk]
	if len(p.rows) == 0 {
		return
	}
	pos := slices.Grow(p.pos[:0], nk)[:nk]
	clear(pos)
	for _, k := range p.rowK {
		pos[k]++
	}
	all := make([]csvRow, len(p.rows))
	off := 0
	for k, n := range pos {
		part.pts[k] = all[off : off+n : off+n]
		pos[k] = off
		off += n
	}
	for i, r := range p.rows {
		k := p.rowK[i]
		all[pos[k]] = r
		pos[k]++
	}
	p.pos = pos
}

// splitFields splits a line at commas into dst and returns the field count
// (which may exceed len(dst)).
func splitFields(ln []byte, dst [][]byte) int {
	n := 0
	for {
		i := bytes.IndexByte(ln, ',')
		if i < 0 {
			if n < len(dst) {
				dst[n] = ln
			}
			return n + 1
		}
		if n < len(dst) {
			dst[n] = ln[:i]
		}
		n++
		ln = ln[i+1:]
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseGuarded parses a chunk; a memory fault while reading it (the mapped
// file was truncated) becomes the chunk's error.
func (p *csvParser) parseGuarded(c csvChunk) (res csvResult) {
	var err error
	defer func() {
		if err != nil {
			res = csvResult{seq: c.seq, buf: c.buf, err: truncatedErr(p.file, -1, -1)}
		}
	}()
	defer recoverFault(catchFaults(), &err, p.file)
	return p.parseChunk(c)
}

func (p *csvParser) parseChunk(c csvChunk) csvResult {
	res := csvResult{seq: c.seq, buf: c.buf}
	if c.long {
		res.err = errAt(p.file, 1, "", "line longer than %d KB", len(c.buf)>>10)
		return res
	}
	p.loadBounds()
	p.seq = c.seq
	p.resetRows(len(c.buf))
	lay := p.lay
	buf := c.buf
	var line int64
	fail := func(field, msg string) csvResult {
		res.err = errAt(p.file, line, field, "%s", msg)
		res.lines = line
		return res
	}
	for len(buf) > 0 {
		if p.fast {
			if n := p.fastRow(buf, line+1, c.seq, &res.part); n > 0 {
				buf = buf[n:]
				line++
				continue
			}
		}
		// (the line's end is found here, not in a function: this is the
		// path of every row fastRow does not read)
		var ln []byte
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			ln, buf = buf[:i], buf[i+1:]
		} else {
			ln, buf = buf, nil
		}
		line++
		if n := len(ln); n > 0 && ln[n-1] == '\r' {
			ln = ln[:n-1]
		}
		if len(ln) == 0 || ln[0] == '#' {
			continue
		}
		t, haveT, msg := p.leadStamp(ln)
		if msg != "" {
			return fail(lay.tsName, msg)
		}
		if haveT && p.outside(t) {
			continue
		}
		var nf int
		if bytes.IndexByte(ln, '"') < 0 {
			nf = splitFields(ln, p.fields)
		} else if nf, msg = p.splitQuoted(ln); msg != "" {
			return fail("", msg)
		}
		if nf != lay.n {
			return fail("", fmt.Sprintf("%d fields, the header has %d", nf, lay.n))
		}
		f := p.fields
		if !haveT {
			if t, msg = p.stamp(f[lay.ts], false); msg != "" {
				return fail(lay.tsName, msg)
			}
			if p.outside(t) {
				continue
			}
		}
		e, msg := p.rowName(f, c.seq, &res.part)
		if msg != "" {
			return fail(lay.ifaceName, msg)
		}
		if t < e.keepLo {
			continue // before the latest month already seen for this interface
		}
		pt := csvRow{t: t, line: uint32(line)}
		if field, msg := p.rowValues(f, &pt); msg != "" {
			return fail(field, msg)
		}
		p.keep(&res.part, e, pt)
	}
	res.lines = line
	if line > 0 {
		p.lineLen = max(1, len(c.buf)/int(line))
	}
	p.group(&res.part)
	return res
}

// resetRows empties the chunk's rows, with room for a chunk of size bytes.
func (p *csvParser) resetRows(size int) {
	if p.lineLen > 0 && p.grids == nil {
		// Room for every line of the chunk at the last chunk's mean line
		// length, made once per parser: growing by appending would copy,
		// clear and fault in twice the memory, chunk after chunk.
		if n := size/p.lineLen + size/p.lineLen/8 + 64; cap(p.rows) < n {
			p.rows, p.rowK = make([]csvRow, 0, n), make([]int32, 0, n)
		}
	}
	p.rows, p.rowK = p.rows[:0], p.rowK[:0]
}

// outside says a timestamp falls outside the period read (with its margin).
func (p *csvParser) outside(t int64) bool { return p.bounded && (t < p.lo || t >= p.hi) }

// leadStamp is the fast skip: with the timestamp first, a row outside the
// period is dropped after parsing only that field (rows outside the
// period are not checked further). haveT is false when the timestamp is
// not first or is quoted: it is read with the other fields.
func (p *csvParser) leadStamp(ln []byte) (t int64, haveT bool, msg string) {
	if p.lay.ts != 0 {
		return 0, false, ""
	}
	if n := len(p.lastRaw); p.haveLast && len(ln) > n && ln[n] == ',' && string(ln[:n]) == string(p.lastRaw) {
		// The same timestamp as the row before (every interface
		// repeats it): no need to look further.
		return p.lastT, true, ""
	}
	// A byte loop: the field is short, IndexByte's setup costs more.
	i, quoted := 0, false
	for ; i < len(ln) && ln[i] != ','; i++ {
		quoted = quoted || ln[i] == '"'
	}
	if quoted {
		return 0, false, ""
	}
	if t, msg = p.stamp(ln[:i], true); msg != "" {
		return 0, false, msg
	}
	return t, true, ""
}

// splitQuoted splits a line with quotes into p.fields, read as CSV, and
// returns the field count (which may exceed len(p.fields)).
func (p *csvParser) splitQuoted(ln []byte) (nf int, msg string) {
	r := csv.NewReader(bytes.NewReader(ln))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	rec, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, fmt.Sprintf("%v (a quoted field may not span lines)", err)
	}
	for i := 0; i < len(rec) && i < len(p.fields); i++ {
		p.fields[i] = []byte(rec[i])
	}
	return len(rec), ""
}

// rowName is the row's interface (no column: one series, key ""),
// registered in part the first time the chunk meets it.
func (p *csvParser) rowName(f [][]byte, seq int, part *csvPart) (*csvName, string) {
	lay := p.lay
	var nb []byte
	if lay.iface >= 0 {
		if nb = trimSpace(f[lay.iface]); len(nb) == 0 {
			return nil, "empty interface name"
		}
	}
	// Exports repeat the interfaces in one order: the one that followed
	// the previous row's last time is tried before the map.
	var e *csvName
	if q := p.prev; q != nil && q.succ != nil && q.succ.key == string(nb) {
		e = q.succ
	} else {
		if e = p.names[string(nb)]; e == nil {
			e = &csvName{name: p.single, key: string(nb), chunk: -1, keepLo: math.MinInt64}
			e.plain = bytes.IndexByte(nb, ',') < 0 && bytes.IndexByte(nb, '"') < 0
			if lay.iface >= 0 {
				e.name = e.key
			}
			p.names[e.key] = e
		}
		if q != nil {
			q.succ = e
		}
	}
	p.prev = e
	if e.chunk != seq {
		// Registered even when its rows are skipped: series come out in
		// the order the interfaces first appear in the file.
		e.chunk, e.k = seq, len(part.names)
		part.names = append(part.names, e.name)
		part.keys = append(part.keys, e.key)
		part.pts = append(part.pts, nil)
		part.maxT = append(part.maxT, math.MinInt64)
	}
	return e, ""
}

// rowValues reads the row's in and out into pt (bytes, or raw counter
// bits); on a bad value it names the field and says what is wrong.
func (p *csvParser) rowValues(f [][]byte, pt *csvRow) (field, msg string) {
	lay := p.lay
	inB := trimSpace(f[lay.in])
	var outB []byte
	if lay.out >= 0 {
		outB = trimSpace(f[lay.out])
	}
	if lay.counters() {
		ci, ui, msg := parseCounter(inB, lay.bits)
		if msg != "" {
			return lay.inName, msg
		}
		var co uint64
		var uo bool
		if lay.out >= 0 {
			if co, uo, msg = parseCounter(outB, lay.bits); msg != "" {
				return lay.outName, msg
			}
		}
		pt.in, pt.out, pt.unknown = math.Float64frombits(ci), math.Float64frombits(co), ui || uo
		return "", ""
	}
	vi, ui, msg := parseValue(inB)
	if msg != "" {
		return lay.inName, msg
	}
	var vo float64
	var uo bool
	if lay.out >= 0 {
		if vo, uo, msg = parseValue(outB); msg != "" {
			return lay.outName, msg
		}
	}
	if lay.units == "bps" {
		vi, vo = vi/8, vo/8
	}
	pt.in, pt.out, pt.unknown = vi, vo, ui || uo
	return "", ""
}

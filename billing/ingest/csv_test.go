package ingest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

func TestCSVBytesPerIntervalWithInterfaceColumn(t *testing.T) {
	in := "timestamp,interface,in_bytes,out_bytes\n" +
		"2026-06-01T00:00:00Z,eth0,100,200\n" +
		"2026-06-01T00:00:00Z,eth1,1,2\n" +
		"2026-06-01T00:05:00Z,eth0,300,400\n" +
		"2026-06-01T00:10:00+02:00,eth1,5,6\n" // 2026-05-31T22:10Z
	good := in[:strings.LastIndex(in[:len(in)-1], "\n")+1]
	ss := mustRead(t, "t.csv", good, ReadOptions{})
	if len(ss) != 2 || ss[0].Name != "eth0" || ss[1].Name != "eth1" {
		t.Fatalf("series %v", ss)
	}
	june1 := int64(1780272000) // 2026-06-01T00:00:00Z
	wantSlots(t, ss[0], []billing.Slot{slot(june1, 100, 200), slot(june1+300, 300, 400)})
	wantSlots(t, ss[1], []billing.Slot{slot(june1, 1, 2)})
	// eth1's second row is 7h50m before its first: out of order.
	_, err := readStr("t.csv", in, ReadOptions{})
	wantReadErr(t, err, "t.csv:5: timestamp: timestamp 2026-05-31T22:10:00Z is out of order: line 3 has the later 2026-06-01T00:00:00Z")
}

func TestCSVStampsAndUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		opts ReadOptions
		want []billing.Slot
		step int64
	}{
		{"start stamps, unix seconds", "timestamp,in_bytes,out_bytes\n600,1,2\n900,3,4\n", ReadOptions{}, []billing.Slot{slot(600, 1, 2), slot(900, 3, 4)}, 300},
		{"end stamps", "timestamp,in_bytes,out_bytes\n600,1,2\n900,3,4\n", ReadOptions{Stamp: "end"}, []billing.Slot{slot(300, 1, 2), slot(600, 3, 4)}, 300},
		{"end stamps in a period", "timestamp,in_bytes,out_bytes\n600,1,1\n900,2,2\n1200,3,3\n1500,4,4\n", ReadOptions{Stamp: "end", From: 600, To: 1200}, []billing.Slot{slot(600, 2, 2), slot(900, 3, 3)}, 300},
		{"column named end", "end,in_bytes,out_bytes\n600,1,2\n900,3,4\n", ReadOptions{}, []billing.Slot{slot(300, 1, 2), slot(600, 3, 4)}, 300},
		{"bit rates", "timestamp,in_bps,out_bps\n600,8,16\n900,80,0.8\n", ReadOptions{}, []billing.Slot{slot(600, 300, 600), slot(900, 3000, 30)}, 300},
		{"finer samples summed", "timestamp,in_bytes,out_bytes\n600,1,2\n660,1,2\n720,1,2\n840,1,2\n900,5,5\n", ReadOptions{}, []billing.Slot{slot(600, 4, 8), slot(900, 5, 5)}, 60},
		{"finer end-stamped", "timestamp,in_bytes,out_bytes\n660,1,1\n720,1,1\n900,1,1\n960,7,7\n", ReadOptions{Stamp: "end"}, []billing.Slot{slot(600, 3, 3), slot(900, 7, 7)}, 60},
		{"coarse spread", "timestamp,in_bytes,out_bytes\n0,900,300\n900,3,0\n", ReadOptions{}, []billing.Slot{slot(0, 300, 100), slot(300, 300, 100), slot(600, 300, 100), slot(900, 1, 0), slot(1200, 1, 0), slot(1500, 1, 0)}, 900},
		{"gap of whole steps", "timestamp,in_bytes,out_bytes\n0,1,1\n900,2,2\n1200,3,3\n", ReadOptions{}, []billing.Slot{slot(0, 1, 1), slot(900, 2, 2), slot(1200, 3, 3)}, 300},
		{"unknown values are gaps", "timestamp,in_bytes,out_bytes\n0,1,1\n300,NaN,2\n600,,\n900,3,3\n", ReadOptions{}, []billing.Slot{slot(0, 1, 1), slot(900, 3, 3)}, 300},
		{"naive time in a zone", "time,rx,tx\n2026-06-01 08:00:00,1,1\n", ReadOptions{Loc: time.FixedZone("CST", 8*3600)}, []billing.Slot{slot(1780272000, 1, 1)}, 300},
		{"quoted fields", "\"timestamp\",\"in_bytes\",\"out_bytes\"\n\"600\",\"1\",\"2\"\n900,3,4\r\n", ReadOptions{}, []billing.Slot{slot(600, 1, 2), slot(900, 3, 4)}, 300},
		{"columns option", "timestamp,a,b,c\n600,1,2,3\n", ReadOptions{Columns: []string{"c", "a"}}, []billing.Slot{slot(600, 3, 1)}, 300},
		{"comments and blank lines", "# exported\ntimestamp,in_bytes,out_bytes\n\n600,1,2\n# x\n900,3,4\n", ReadOptions{}, []billing.Slot{slot(600, 1, 2), slot(900, 3, 4)}, 300},
		{"fractional seconds", "timestamp,in_bytes,out_bytes\n2026-06-01T00:00:00.250Z,1,2\n600.5,1,1\n", ReadOptions{Format: "csv", From: 0, To: 0}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := readStr("t.csv", tc.in, tc.opts)
			if tc.want == nil {
				wantReadErr(t, err, "t.csv:3: timestamp: timestamp 1970-01-01T00:10:00Z is out of order: line 2 has the later 2026-06-01T00:00:00Z")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantSlots(t, ss[0], tc.want)
			if ss[0].Step != tc.step {
				t.Errorf("step %d, want %d", ss[0].Step, tc.step)
			}
			if ss[0].Name != "t" {
				t.Errorf("name %q, want the file's base name", ss[0].Name)
			}
		})
	}
}

func TestCSVCountersWrapResetAndJitter(t *testing.T) {
	// 32-bit wrap: 4294967000 → 200 is 296+200 = 496 bytes.
	ss := mustRead(t, "c.csv", "timestamp,in_octets,out_octets\n0,4294967000,10\n300,200,20\n600,400,30\n", ReadOptions{Units: "counter32"})
	wantSlots(t, ss[0], []billing.Slot{slot(0, 496, 10), slot(300, 200, 10)})
	if !hasWarning(ss[0], "c.csv:3: in: 32-bit counter wrapped from 4294967000 to 200") {
		t.Errorf("warnings %q", ss[0].Warnings)
	}
	// A drop to near zero from the middle of the range is a reboot: a gap.
	ss = mustRead(t, "c.csv", "timestamp,in_octets,out_octets\n0,1000000000,0\n300,1000000300,0\n600,5,0\n900,10,0\n", ReadOptions{Units: "counter"})
	wantSlots(t, ss[0], []billing.Slot{slot(0, 300, 0), slot(600, 5, 0)})
	if !hasWarning(ss[0], "c.csv:4: in: counter dropped from 1000000300 to 5: a reset, interval left as a gap") {
		t.Errorf("warnings %q", ss[0].Warnings)
	}
	// 64-bit wrap near 2^64: 18446744073709550616 (2^64−1000) → 500 is 1500 bytes, exactly.
	ss = mustRead(t, "c.csv", "timestamp,in_octets,out_octets\n0,18446744073709550616,7\n300,500,7\n", ReadOptions{Units: "counter64"})
	wantSlots(t, ss[0], []billing.Slot{slot(0, 1500, 0)})
	// A 64-bit counter that drops is a reset, not a wrap.
	ss = mustRead(t, "c.csv", "timestamp,in_octets,out_octets\n0,10000000000000,7\n300,500,7\n", ReadOptions{Units: "counter64"})
	if len(ss[0].Slots) != 0 || !hasWarning(ss[0], "reset") {
		t.Errorf("64-bit drop: %+v %q", ss[0].Slots, ss[0].Warnings)
	}
	// Polls at :00 and :07:30 carry 900 bytes: 600 to the first slot, 300 to the next.
	ss = mustRead(t, "c.csv", "timestamp,in_octets,out_octets\n0,0,0\n450,900,0\n", ReadOptions{Units: "counter"})
	wantSlots(t, ss[0], []billing.Slot{slot(0, 600, 0), slot(300, 300, 0)})
	// Port speed: 375 GB in 300 s is 10 Gbit/s, above a 1 Gbit/s port: flagged, not clamped.
	ss = mustRead(t, "c.csv", "timestamp,in_bytes,out_bytes\n0,375000000000,0\n", ReadOptions{PortBps: 1e9})
	if ss[0].Slots[0].In != 375000000000 || !hasWarning(ss[0], "c.csv:2: in: 10000000000 bit/s is above the port speed") {
		t.Errorf("port check: %+v %q", ss[0].Slots, ss[0].Warnings)
	}
}

func TestCSVBadInput(t *testing.T) {
	h := "timestamp,in_bytes,out_bytes\n"
	for _, tc := range []struct {
		in   string
		opts ReadOptions
		want string
	}{
		{h + "600,1,2\n900,\"12,5\",2\n", ReadOptions{}, `t.csv:3: in_bytes: "12,5" is not a number`},
		{h + "600,1,-2\n", ReadOptions{}, `t.csv:2: out_bytes: "-2" is negative`},
		{h + "600,1,2\n600,1,2\n", ReadOptions{}, "t.csv:3: timestamp: duplicate timestamp 1970-01-01T00:10:00Z (line 2 has the same)"},
		{h + "0,1,2\n300,1,2\n600,1,2\n660,1,1\n", ReadOptions{}, "t.csv:5: timestamp: mixed steps: 60 s after line 4, but the rows before are 300 s apart"},
		{h + "0,1,2\n300,1,2\n420,1,1\n", ReadOptions{}, "t.csv:4: timestamp: mixed steps: 120 s after line 3, but the rows before are 300 s apart"},
		{h + "yesterday,1,2\n", ReadOptions{}, `t.csv:2: timestamp: timestamp "yesterday" is neither unix seconds nor RFC 3339`},
		{h + "2026-02-30T00:00:00Z,1,2\n", ReadOptions{}, `t.csv:2: timestamp: timestamp "2026-02-30T00:00:00Z" is not a valid date and time`},
		{h + "600,1\n", ReadOptions{}, "t.csv:2: 2 fields, the header has 3"},
		{h + "600,\"1,2\n", ReadOptions{}, `t.csv:2: extraneous or missing " in quoted-field (a quoted field may not span lines)`},
		{h + "600,1,1e400\n", ReadOptions{}, `t.csv:2: out_bytes: "1e400" is not a finite number`},
		{"time,foo,bar\n", ReadOptions{}, "t.csv:1: header: no in/out columns (want in_bytes,out_bytes or in_bps,out_bps, or name them with --columns; found time, foo, bar)"},
		{"a,in_bytes,out_bytes\n", ReadOptions{}, "t.csv:1: header: no timestamp column (want one of timestamp, time, ts, date, datetime, start, interval_start, end, interval_end; found a, in_bytes, out_bytes)"},
		{"timestamp,in_bps,out_bytes\n", ReadOptions{}, "t.csv:1: header: in_bps and out_bytes: one is a rate (bit/s), the other is not; give --units"},
		{h, ReadOptions{}, "t.csv:1: no data rows after the header"},
		{h + "0,1.5,2\n", ReadOptions{Units: "counter"}, `t.csv:2: in_bytes: "1.5" is not a counter (an unsigned integer)`},
		{h + "0,4294967296,2\n", ReadOptions{Units: "counter32"}, `t.csv:2: in_bytes: "4294967296" is larger than a 32-bit counter`},
		{"timestamp,interface,in_bytes,out_bytes\n0,,1,1\n", ReadOptions{}, "t.csv:2: interface: empty interface name"},
	} {
		_, err := readStr("t.csv", tc.in, tc.opts)
		wantReadErr(t, err, tc.want)
	}
}

func TestCSVLatestMonthWithoutPeriod(t *testing.T) {
	may31 := int64(1780185600) // 2026-05-31T00:00:00Z
	var b strings.Builder
	b.WriteString("timestamp,in_bytes,out_bytes\n")
	for t := may31; t < may31+2*86400; t += 300 {
		fmt.Fprintf(&b, "%d,1,1\n", t)
	}
	s := mustRead(t, "m.csv", b.String(), ReadOptions{})[0]
	if len(s.Slots) != 288 || s.Slots[0].Start != may31+86400 {
		t.Errorf("kept %d slots from %d, want June 1's 288", len(s.Slots), s.Slots[0].Start)
	}
	// End stamps: the row stamped 2026-06-01T00:00Z is May's last slot, so a
	// file ending there keeps May.
	s = mustRead(t, "m.csv", "timestamp,in_bytes,out_bytes\n1780271700,1,1\n1780272000,2,2\n", ReadOptions{Stamp: "end"})[0]
	wantSlots(t, s, []billing.Slot{slot(1780271400, 1, 1), slot(1780271700, 2, 2)})
	// In UTC+8 June starts at 2026-05-31T16:00Z.
	s = mustRead(t, "m.csv", b.String(), ReadOptions{Loc: time.FixedZone("CST", 8*3600)})[0]
	if s.Slots[0].Start != 1780243200 {
		t.Errorf("UTC+8 month starts at %d", s.Slots[0].Start)
	}
}

// TestCSVManyChunksKeepsLineNumbersAndOrder writes a file far larger than a
// chunk: the parallel readers must give the same sums as a hand count, and
// an error in the last row must name its exact line.
func TestCSVManyChunksKeepsLineNumbersAndOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.csv")
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	const ifaces, rows = 7, 40000 // 280k lines, ~12 MB: three chunks or more
	start := int64(1780272000)
	wantIn := make([]float64, ifaces)
	for r := range int64(rows) {
		for i := range int64(ifaces) {
			v := (r*31 + i*7) % 1000003
			wantIn[i] += float64(v)
			fmt.Fprintf(&b, "%d,if%d,%d,%d\n", start+r*300, i, v, 2*v)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Mapped in memory (ReadFile) and streamed through buffers (Read).
	ss := mustReadFile(t, path, ReadOptions{From: start, To: start + rows*300})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := Read(f, path, ReadOptions{From: start, To: start + rows*300})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != ifaces || len(streamed) != ifaces {
		t.Fatalf("%d and %d series", len(ss), len(streamed))
	}
	for i, s := range append(ss, streamed...) {
		i %= ifaces
		var sum float64
		for _, sl := range s.Slots {
			sum += sl.In
			if sl.Out != 2*sl.In {
				t.Fatalf("%s: slot %+v", s.Name, sl)
			}
		}
		if s.Name != fmt.Sprintf("if%d", i) || len(s.Slots) != rows || sum != wantIn[i] {
			t.Errorf("%s: %d slots, in %v; want if%d, %d, %v", s.Name, len(s.Slots), sum, i, rows, wantIn[i])
		}
	}
	// The window keeps only what it asks for.
	ss = mustReadFile(t, path, ReadOptions{From: start + 300*1000, To: start + 300*1010})
	if len(ss[3].Slots) != 10 || ss[3].Slots[0].Start != start+300*1000 {
		t.Errorf("window: %d slots", len(ss[3].Slots))
	}
	// A bad value on the last line.
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "%d,if0,x,1\n", start+rows*300)
	f.Close()
	want := fmt.Sprintf("%s:%d: in_bytes: \"x\" is not a number", path, 1+ifaces*rows+1)
	_, err = ReadFile(path, ReadOptions{})
	wantReadErr(t, err, want)
	f, _ = os.Open(path)
	_, err = Read(f, path, ReadOptions{})
	f.Close()
	wantReadErr(t, err, want)
}

func TestParseStampMatchesTimePackage(t *testing.T) {
	for _, s := range []string{"2026-06-01T00:00:00Z", "1999-12-31T23:59:59+05:30", "2024-02-29T12:00:00-08:00", "2026-11-30T03:03:00.999Z", "1970-01-01T00:00:00Z"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		got, msg := parseStamp([]byte(s), time.UTC)
		if msg != "" || got != want.Unix() {
			t.Errorf("%s: %d %q, want %d", s, got, msg, want.Unix())
		}
	}
	if v, _, msg := parseValue([]byte("123456789012345678")); msg != "" || v != 123456789012345678 {
		t.Errorf("parseValue: %v %q", v, msg)
	}
	if v, _, _ := parseValue([]byte("1.5e3")); v != 1500 || math.IsNaN(v) {
		t.Errorf("parseValue 1.5e3 = %v", v)
	}
}

// TestCSVLatestMonthOfALargeFileReadBackwards: without a period a mapped file
// is parsed last chunk first, and rows older than an interface's latest month
// are skipped early. Interfaces that end in different months must each keep
// their own latest month, and an early bad timestamp is still reported.
func TestCSVLatestMonthOfALargeFileReadBackwards(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "year.csv")
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	oct1 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()
	nov1 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
	dec1 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
	end := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for ts := jan1; ts < end; ts += 300 {
		fmt.Fprintf(&b, "%d,a,%d,1\n", ts, ts%1000)
		if ts < nov1 { // b stops at the end of October
			fmt.Fprintf(&b, "%d,b,%d,2\n", ts, ts%777)
		}
		for i := range 8 { // bulk: the file spans several chunks
			fmt.Fprintf(&b, "%d,c%d,%d,3\n", ts, i, ts%555)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 4*csvChunkSize {
		t.Fatalf("file of %d bytes: too small to span many chunks", b.Len())
	}
	ss := mustReadFile(t, path, ReadOptions{})
	if len(ss) != 10 || ss[0].Name != "a" || ss[1].Name != "b" {
		t.Fatalf("series %v", ss)
	}
	for _, c := range []struct {
		s        *billing.Series
		from, to int64
		mod, out int64
	}{{ss[0], dec1, end, 1000, 1}, {ss[1], oct1, nov1, 777, 2}} {
		if n := (c.to - c.from) / 300; int64(len(c.s.Slots)) != n || c.s.Slots[0].Start != c.from {
			t.Fatalf("%s: %d slots from %s, want %d from %s", c.s.Name, len(c.s.Slots), fmtTime(c.s.Slots[0].Start), n, fmtTime(c.from))
		}
		for _, sl := range c.s.Slots {
			if sl.In != float64(sl.Start%c.mod) || sl.Out != float64(c.out) {
				t.Fatalf("%s: slot %+v", c.s.Name, sl)
			}
		}
	}
	// The streamed read (no mapping, forwards) gives the same.
	f, _ := os.Open(path)
	streamed, err := Read(f, path, ReadOptions{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := range ss {
		if !slices.Equal(ss[i].Slots, streamed[i].Slots) {
			t.Errorf("%s: mapped and streamed reads differ", ss[i].Name)
		}
	}
	// A bad timestamp near the top is found although the top is read last.
	data := []byte(b.String())
	line3 := len("timestamp,interface,in_bytes,out_bytes\n") + len(fmt.Sprintf("%d,a,%d,1\n", jan1, jan1%1000))
	copy(data[line3:], "x")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path, ReadOptions{})
	wantReadErr(t, err, fmt.Sprintf("%s:3: timestamp: timestamp \"x767225600\" is neither unix seconds nor RFC 3339", path))
}

func TestCSVOddButValidShapes(t *testing.T) {
	// A byte-order mark, CRLF line ends, spaces around fields, a quoted
	// interface name with a comma.
	in := "\ufefftimestamp , interface , in_bytes , out_bytes\r\n" +
		"600 , \"ge-0/0/1, uplink\", 1 , 2\r\n" +
		"900,\"ge-0/0/1, uplink\",3 , 4\r\n"
	s := mustRead(t, "t.csv", in, ReadOptions{})[0]
	if s.Name != "ge-0/0/1, uplink" {
		t.Errorf("name %q", s.Name)
	}
	wantSlots(t, s, []billing.Slot{slot(600, 1, 2), slot(900, 3, 4)})
	// A line longer than a read buffer is an error naming its line, not a hang.
	long := "timestamp,in_bytes,out_bytes\n600,1,2\n900,1," + strings.Repeat("9", 5<<20) + "\n"
	_, err := readStr("t.csv", long, ReadOptions{})
	wantReadErr(t, err, "t.csv:3: line longer than 4096 KB")
}

package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// counterCSV writes n polls 300 s apart of counters rising by perSlot bytes
// per poll from start (in) and start/2 (out), wrapping at 2^bits.
func counterCSV(header string, n int, start, perSlot uint64, bits uint) string {
	var b strings.Builder
	b.WriteString(header + "\n")
	mod := uint64(1) << bits
	if bits == 64 {
		mod = 0
	}
	in, out := start, start/2
	for i := range n {
		fmt.Fprintf(&b, "%d,%d,%d\n", 1780272000+int64(i)*300, in, out)
		in += perSlot
		out += perSlot / 2
		if mod != 0 {
			in %= mod
			out %= mod
		}
	}
	return b.String()
}

// The case: SNMP counters under the names docs/readers.md lists,
// without --units. 1 Mbit/s is 37,500,000 bytes per 300 s slot (hand:
// 1e6 / 8 · 300); read as bytes per slot they were the counter readings
// themselves (billed as 36.67 Mbit/s on a real file).
func TestCSVCounterNamesWithRisingReadingsAreReadAsCounters(t *testing.T) {
	doc := counterCSV("timestamp,ifHCInOctets,ifHCOutOctets", 289, 5_000_000_000_000, 37_500_000, 64)
	s := mustRead(t, "snmp.csv", doc, ReadOptions{})[0]
	if len(s.Slots) != 288 {
		t.Fatalf("%d slots, want 288 (289 polls)", len(s.Slots))
	}
	for _, sl := range s.Slots {
		if sl.In != 37_500_000 || sl.Out != 18_750_000 {
			t.Fatalf("slot %+v: want 37500000 in, 18750000 out", sl)
		}
	}
	if !hasWarning(s, "read as --units counter64") {
		t.Errorf("no note that the columns were read as counters: %q", s.Warnings)
	}
	// 32-bit counters (ifInOctets) that wrap: the wrap is an increase.
	doc = counterCSV("timestamp,ifInOctets,ifOutOctets", 289, 4_000_000_000, 37_500_000, 32)
	s = mustRead(t, "snmp32.csv", doc, ReadOptions{})[0]
	for _, sl := range s.Slots {
		if sl.In != 37_500_000 {
			t.Fatalf("32-bit slot %+v", sl)
		}
	}
	if !hasWarning(s, "32-bit counter wrapped") || !hasWarning(s, "read as --units counter ") {
		t.Errorf("warnings %q", s.Warnings)
	}
	// --units bytes keeps the old reading for whoever means it.
	s = mustRead(t, "snmp.csv", counterCSV("timestamp,ifHCInOctets,ifHCOutOctets", 10, 5_000_000_000_000, 37_500_000, 64), ReadOptions{Units: "bytes"})[0]
	if s.Slots[0].In != 5_000_000_000_000 {
		t.Errorf("--units bytes: slot %+v", s.Slots[0])
	}
	// Octet columns holding bytes per interval (they go up and down) stay bytes.
	s = mustRead(t, "b.csv", "timestamp,in_octets,out_octets\n0,5,1\n300,9,2\n600,4,3\n900,7,1\n1200,2,2\n", ReadOptions{})[0]
	if s.Slots[2].In != 4 || hasWarning(s, "counter") {
		t.Errorf("bytes per interval: %+v %q", s.Slots, s.Warnings)
	}
}

func TestCSVCountersUnderByteNamesAreRefusedWithTheFlag(t *testing.T) {
	doc := counterCSV("timestamp,in_bytes,out_bytes", 100, 5_000_000_000_000, 37_500_000, 64)
	_, err := readStr("t.csv", doc, ReadOptions{})
	wantReadErr(t, err, "t.csv:1: header: in_bytes, out_bytes only ever rise, like SNMP octet counters, but are named as bytes per interval: give --units counter (or counter32, counter64) to read them as counters, or --units bytes if they really are bytes per interval")
	ss, err := readStr("t.csv", doc, ReadOptions{Units: "counter"})
	if err != nil || ss[0].Slots[0].In != 37_500_000 {
		t.Fatalf("--units counter: %v", err)
	}
}

func TestCSVUnitsContradictingTheHeaderAreRefused(t *testing.T) {
	for _, tc := range []struct {
		header, units, want string
	}{
		{"timestamp,in_bytes,out_bytes", "bps", "t.csv:1: header: --units bps contradicts the header: in_bytes is named as a byte count, not a bit rate (use --units bytes, or leave --units out)"},
		{"timestamp,ifHCInOctets,ifHCOutOctets", "bps", "t.csv:1: header: --units bps contradicts the header: ifHCInOctets is named as a byte count, not a bit rate (use --units counter (or counter32, counter64), or leave --units out)"},
		{"timestamp,in_bps,out_bps", "bytes", "t.csv:1: header: --units bytes contradicts the header: in_bps is named as a bit rate (use --units bps, or leave --units out)"},
		{"timestamp,in_bps,out_bps", "counter64", "t.csv:1: header: --units counter64 contradicts the header: in_bps is named as a bit rate (use --units bps, or leave --units out)"},
	} {
		_, err := readStr("t.csv", tc.header+"\n0,1,1\n", ReadOptions{Units: tc.units})
		wantReadErr(t, err, tc.want)
	}
	// Names that say nothing (in, rx, a column named with --columns) take any unit.
	if _, err := readStr("t.csv", "timestamp,in,out\n0,1,1\n", ReadOptions{Units: "bps"}); err != nil {
		t.Error(err)
	}
}

// A counter export of many interfaces: the check sees enough rows of each.
func TestCSVCountersOfManyInterfacesAreDetected(t *testing.T) {
	var b strings.Builder
	b.WriteString("timestamp,ifName,ifHCInOctets,ifHCOutOctets\n")
	for k := range 20 {
		for i := range 1000 {
			fmt.Fprintf(&b, "%d,xe-%d,%d,%d\n", 1780272000+k*300, i, 9_000_000_000+i+k*37_500_000, 1_000_000+k*300)
		}
	}
	ss := mustRead(t, "many.csv", b.String(), ReadOptions{})
	if len(ss) != 1000 || ss[999].Slots[0].In != 37_500_000 || ss[0].Slots[0].Out != 300 {
		t.Fatalf("%d series, first slot %+v", len(ss), ss[999].Slots[0])
	}
}

// A 32-bit counter polled every 300 s wraps more than once above
// 2^32·8/300 = 114.53 Mbit/s (hand: 34,359,738,368 / 300 / 1e6). At 200
// Mbit/s (7.5e9 bytes per poll, 1.746 × 2^32) every poll wraps once or
// twice: it read as 85 Mbit/s with a "reset" at every second poll. It is
// refused naming the limit, with exit 2 as bad input.
func TestCSV32BitCounterTooFastForItsPollIsRefused(t *testing.T) {
	doc := counterCSV("timestamp,ifInOctets,ifOutOctets", 289, 0, 7_500_000_000, 32)
	for _, units := range []string{"counter32", "counter"} {
		_, err := readStr("fast32.csv", doc, ReadOptions{Units: units})
		var re *ReadError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "a 32-bit octet counter polled every 300 s can be read up to 114.5 Mbit/s") {
			t.Fatalf("200 Mbit/s on a 32-bit counter (--units %s): %v, want a ReadError naming 114.5 Mbit/s at 300 s", units, err)
		}
	}
	// At 100 Mbit/s (3.75e9 bytes per poll, 0.873 × 2^32) each wrap is a drop
	// of more than half the range, which reads as a reset: refused too.
	doc = counterCSV("timestamp,ifInOctets,ifOutOctets", 289, 0, 3_750_000_000, 32)
	if _, err := readStr("100m.csv", doc, ReadOptions{Units: "counter32"}); err == nil || !strings.Contains(err.Error(), "above 57.3 Mbit/s, reads as a reset") {
		t.Errorf("100 Mbit/s on a 32-bit counter: %v", err)
	}
	// At 50 Mbit/s (1.875e9 bytes per poll, 0.437 × 2^32) every wrap is
	// seen and the volume is right, with a warning that it is near the limit.
	doc = counterCSV("timestamp,ifInOctets,ifOutOctets", 289, 0, 1_875_000_000, 32)
	s := mustRead(t, "near32.csv", doc, ReadOptions{Units: "counter32"})[0]
	for _, sl := range s.Slots {
		if sl.In != 1_875_000_000 {
			t.Fatalf("50 Mbit/s slot %+v, want 1875000000 bytes in", sl)
		}
	}
	if !hasWarning(s, "within a factor 2 of the 57.3 Mbit/s above which a wrap between polls every 300 s reads as a reset") {
		t.Errorf("no warning near the 32-bit limit: %q", s.Warnings)
	}
	// 64-bit counters at 200 Mbit/s are read exactly.
	doc = counterCSV("timestamp,ifHCInOctets,ifHCOutOctets", 289, 0, 7_500_000_000, 64)
	s = mustRead(t, "hc.csv", doc, ReadOptions{Units: "counter64"})[0]
	if s.Slots[0].In != 7_500_000_000 {
		t.Errorf("64-bit slot %+v", s.Slots[0])
	}
}

// Without --units, the same 200 Mbit/s 32-bit counter does not look like a
// counter at all (it falls at about every other poll: hand, 7.5e9 mod 2^32 =
// 3,205,032,704 per poll, so a reading rises only while it stays under 2^32)
// and is read as bytes per interval, as before — but no longer silently: a
// warning names the 114.5 Mbit/s limit of a 300 s poll. Bytes per interval
// that do not fall, or that exceed 32 bits, get no such warning.
func TestCSVWrapping32BitCounterWithoutUnitsIsNamed(t *testing.T) {
	doc := counterCSV("timestamp,ifInOctets,ifOutOctets", 289, 0, 7_500_000_000, 32)
	s := mustRead(t, "fast32.csv", doc, ReadOptions{})[0]
	if !hasWarning(s, "are named like octet counters but fall in") || !hasWarning(s, "polled every 300 s (this log's step) it can be read up to 114.5 Mbit/s") {
		t.Fatalf("no warning for a wrapping 32-bit counter read without --units: %q", s.Warnings)
	}
	var b strings.Builder
	b.WriteString("timestamp,in_octets,out_octets\n")
	for i := range 100 {
		fmt.Fprintf(&b, "%d,%d,%d\n", 1780272000+i*300, 5_000_000_000+i%7*1000, 1000+i%5) // > 2^32: not a 32-bit counter
	}
	if s := mustRead(t, "bytes.csv", b.String(), ReadOptions{})[0]; hasWarning(s, "named like octet counters") {
		t.Errorf("bytes per interval above 32 bits warned as a 32-bit counter: %q", s.Warnings)
	}
	// A steady 100 Mbit/s in bytes per interval (about 3.75e9, up and down
	// by a few MB) falls half the time within 32 bits but spans no range.
	b.Reset()
	b.WriteString("timestamp,in_octets,out_octets\n")
	for i := range 100 {
		fmt.Fprintf(&b, "%d,%d,%d\n", 1780272000+i*300, 3_750_000_000+i%2*4_000_000, 3_700_000_000-i%3*1_000_000)
	}
	if s := mustRead(t, "steady.csv", b.String(), ReadOptions{})[0]; hasWarning(s, "named like octet counters") {
		t.Errorf("steady bytes per interval warned as a wrapping 32-bit counter: %q", s.Warnings)
	}
}

// Counter-named columns whose head holds no readable row (only a quoted
// row, which the detection passes over) left it nothing to judge: it
// indexed the first interface of none and panicked. The row's own error is
// what the user must see, as with byte-named columns.
func TestCSVCounterNamesWithNoReadableHeadRowAreNotJudged(t *testing.T) {
	for _, header := range []string{"timestamp,ifInOctets,ifOutOctets", "timestamp,in_bytes,out_bytes"} {
		_, err := readStr("t.csv", header+"\n\"x\",1,2\n", ReadOptions{})
		wantReadErr(t, err, `t.csv:2: timestamp: timestamp "x" is neither unix seconds nor RFC 3339`)
	}
}

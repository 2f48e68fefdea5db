package ingest

import (
	"testing"

	"github.com/linecheck/linecheck/billing"
)

func TestMRTGRowStampedTIsTheSlotStartingTMinus300(t *testing.T) {
	// Real rateup rows (reference billing-examples): the row stamped T holds the
	// average bytes/s of [T−300, T).
	s := mustReadFile(t, testdata("mrtg_head.log"), ReadOptions{From: 1767484800, To: 1767487200})[0]
	if s.Format != "mrtg" || s.Step != 300 || s.Name != "mrtg_head" {
		t.Errorf("format %s step %d name %s", s.Format, s.Step, s.Name)
	}
	wantSlots(t, s, []billing.Slot{
		// the oldest row has no row below it: its interval is taken as the
		// step above it (300 s)
		slot(1767484800, 2000000*300, 670228*300),
		slot(1767485100, 2032722*300, 591691*300),
		slot(1767485400, 2065429*300, 537952*300),
		slot(1767485700, 2098105*300, 559871*300),
		slot(1767486000, 2130734*300, 638267*300),
		slot(1767486300, 2163300*300, 501101*300),
		slot(1767486600, 2195789*300, 524009*300),
	})
}

func TestMRTGCoarseRowsAreSpreadAndMarked(t *testing.T) {
	// 5-minute rows down to 1767306900, then 30-minute rows (real rateup output).
	path := testdata("mrtg_coarse.log")
	fine := mustReadFile(t, path, ReadOptions{From: 1767306600, To: 1767308100})[0]
	if fine.Step != 300 || len(fine.Slots) != 5 {
		t.Fatalf("5-minute part: step %d, %d slots", fine.Step, len(fine.Slots))
	}
	s := mustReadFile(t, path, ReadOptions{From: 1767304800, To: 1767306600})[0]
	if s.Step != 1800 {
		t.Errorf("step %d, want 1800", s.Step)
	}
	// 1767306600 1322401 589250: [1767304800, 1767306600) = 6 slots of 1322401·300 bytes.
	var want []billing.Slot
	for k := int64(0); k < 6; k++ {
		want = append(want, slot(1767304800+300*k, 1322401*300, 589250*300))
	}
	wantSlots(t, s, want)
	if !hasWarning(s, "5-minute rows for the last") {
		t.Errorf("no coarse warning: %q", s.Warnings)
	}
}

func TestMRTGBadInput(t *testing.T) {
	head := "1767486900 522806823367 157206023882\n"
	for _, tc := range []struct{ in, want string }{
		{head + "1767486900 2195789 524009 2195789\n", "m.log:2: MRTG log: want 5 fields \"time avg_in avg_out max_in max_out\", got 4"},
		{head + "1767486900 2195789 -5 2195789 524009\n", "m.log:2: avg_out: \"-5\" is negative"},
		{head + "1767486900 2195789 x 2195789 524009\n", "m.log:2: avg_out: \"x\" is not a number"},
		{head + "1767486900 1 1 1 1\n1767486900 1 1 1 1\n", "m.log:3: time: duplicate timestamp 2026-01-04T00:35:00Z (line 2 has the same)"},
		{head + "1767486600 1 1 1 1\n1767486900 1 1 1 1\n", "m.log:3: time: timestamp 2026-01-04T00:35:00Z is out of order: MRTG rows are newest first, line 2 has the older 2026-01-04T00:30:00Z"},
		{head, "m.log:1: MRTG log without rate rows"},
	} {
		_, err := readStr("m.log", tc.in, ReadOptions{Format: "mrtg"})
		wantReadErr(t, err, tc.want)
	}
}

func TestMRTGUnsetRowIsAGap(t *testing.T) {
	// A fresh rateup log ends with "T -9223372036854775808 -9223372036854775808 0 0"
	// (testdata/readers/rateup_54h.log, written by rateup 2.17.10).
	s := mustReadFile(t, testdata("rateup_54h.log"), ReadOptions{From: 1711584000, To: 1711670400})[0]
	if len(s.Slots) != 0 {
		t.Errorf("the unset daily row gave %d slots", len(s.Slots))
	}
	s = mustReadFile(t, testdata("rateup_54h.log"), ReadOptions{From: 1780272000 + 6*3600, To: 1780272000 + 54*3600})[0]
	if s.Step != 300 || len(s.Slots) != 48*12 {
		t.Errorf("5-minute part: step %d, %d slots", s.Step, len(s.Slots))
	}
}

func TestMRTGJitteredPollsFillWholeSlots(t *testing.T) {
	// rateup fed at S+7, S+300+j … (j = 0..19 s of jitter, ~1000 B/s) writes
	// "1780284000 1010", "1780283703 1010", "1780283700 1010": a 297 s row and a
	// 3 s row that together fill the slot 1780283700 with 1010·300 bytes.
	s := mustReadFile(t, testdata("rateup_jitter.log"), ReadOptions{From: 1780272000 + 3600, To: 1780284000})[0]
	if len(s.Slots) != 28 || s.Step != 300 {
		t.Fatalf("%d slots, step %d; want 28, 300", len(s.Slots), s.Step)
	}
	if last := s.Slots[27]; last.Start != 1780283700 || last.In != 1010*300 || last.Out != 505*300 {
		t.Errorf("last slot %+v, want 1780283700 with 1010·300 / 505·300 bytes", last)
	}
	for _, sl := range s.Slots {
		if sl.In < 900*300 || sl.In > 1100*300 {
			t.Errorf("slot %s: in %v bytes, fed about 1000 B/s", fmtTime(sl.Start), sl.In)
		}
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %q", s.Warnings)
	}
}

package ingest

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/linecheck/linecheck/billing"
)

func TestVnstatEntriesAreBytesAtTheirStart(t *testing.T) {
	// Real vnstat 2.10 output: 02:55 rx 13037188 tx 128563, 03:00 rx 209125
	// tx 24764; updated 03:03, so the 03:00 entry was still filling.
	s := mustReadFile(t, testdata("vnstat_2.10_json_f.json"), ReadOptions{})[0]
	if s.Name != "eth0" || s.Step != 300 || s.Format != "vnstat" {
		t.Errorf("name %s step %d format %s", s.Name, s.Step, s.Format)
	}
	wantSlots(t, s, []billing.Slot{slot(1796007300, 13037188, 128563), slot(1796007600, 209125, 24764)})
	if !hasWarning(s, "still filling") {
		t.Errorf("no partial-entry warning: %q", s.Warnings)
	}
}

func TestVnstatBefore210UsesLocalDateAndTime(t *testing.T) {
	data, err := os.ReadFile(testdata("vnstat_2.10_json_f.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := regexp.MustCompile(`,"timestamp":\d+`).ReplaceAllString(string(data), "")
	s := mustRead(t, "v.json", old, ReadOptions{})[0]
	wantSlots(t, s, []billing.Slot{slot(1796007300, 13037188, 128563), slot(1796007600, 209125, 24764)})
	if !hasWarning(s, "local times only: read in UTC") {
		t.Errorf("no local-time warning: %q", s.Warnings)
	}
	// The same wall clock in UTC+8 is 8 hours earlier.
	cst := time.FixedZone("CST", 8*3600)
	s = mustRead(t, "v.json", old, ReadOptions{Loc: cst})[0]
	wantSlots(t, s, []billing.Slot{slot(1796007300-8*3600, 13037188, 128563), slot(1796007600-8*3600, 209125, 24764)})
}

func TestVnstatBadInput(t *testing.T) {
	head := "{\"vnstatversion\":\"2.10\",\"jsonversion\":\"2\",\"interfaces\":[{\"name\":\"eth0\",\n\"traffic\":{\"fiveminute\":[\n"
	e := func(ts, rx string) string {
		return `{"id":1,"date":{"year":2026,"month":11,"day":30},"time":{"hour":2,"minute":55},"timestamp":` + ts + `,"rx":` + rx + `,"tx":1}`
	}
	tail := "\n]}}]}"
	for _, tc := range []struct{ in, want string }{
		{head + e("1796007300", "-1") + tail, "v.json:3: fiveminute[0].rx: \"-1\" is negative"},
		{head + e("1796007300", "1") + ",\n" + e("1796007300", "1") + tail, "v.json:4: fiveminute: duplicate timestamp 2026-11-30T02:55:00Z (line 3 has the same)"},
		{head + e("1796007300", "1") + ",\n" + e("1796007400", "1") + tail, "v.json:4: fiveminute: mixed steps: 100 s after line 3, not a multiple of the 300 s step"},
		{head + e("1796007300", "\"x\"") + tail, "v.json:3: fiveminute[0]: want a number, got \"x\""},
		{`{"jsonversion":"1","interfaces":[]}`, "v.json:1: jsonversion: vnstat 1.x JSON has no 5-minute entries; use vnstat 2.x --json f"},
		{`{"vnstatversion":"2.10","interfaces":[]}`, "v.json:1: interfaces: no interfaces"},
		{`{"vnstatversion":"2.10","interfaces":[{"name":"eth0","traffic":{}}]}`, "v.json:1: eth0: no fiveminute, hour or day entries (write them with vnstat --json)"},
	} {
		_, err := readStr("v.json", tc.in, ReadOptions{Format: "vnstat"})
		wantReadErr(t, err, tc.want)
	}
}

package gpu

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func near(a *float64, b float64) bool { return a != nil && math.Abs(*a-b) < 1e-9 }

// The shares below were counted by hand from testdata/watch-constructed
// (see its section of testdata/README.md): card 0 holds the SW power cap
// in samples 3, 4, 6, 8 and SW thermal slowdown in sample 6 (0x24), idle
// (0x1, not throttling) in sample 1; card 1 HW thermal slowdown in samples
// 7, 8 and sync boost (0x10, not throttling) in 9, 10.
func TestWatchSharesAndReasonsOfARecordedSequence(t *testing.T) {
	b, err := os.ReadFile("testdata/watch-constructed/query-log.csv")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSamples(b, "query-log.csv", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 20 {
		t.Fatalf("%d samples", len(s))
	}
	w := Summarize(s)
	if len(w) != 2 {
		t.Fatalf("%d cards", len(w))
	}
	c0, c1 := w[0], w[1]
	if c0.Samples != 10 || c0.ReasonSamples != 10 || !near(c0.ThrottleShare, 0.4) || c0.ByReason["sw_power_cap"] != 0.4 ||
		c0.ByReason["sw_thermal_slowdown"] != 0.1 || len(c0.ByReason) != 2 {
		t.Errorf("card 0: share %v by %v", fv(c0.ThrottleShare), c0.ByReason)
	}
	if !near(c1.ThrottleShare, 0.2) || c1.ByReason["hw_thermal_slowdown"] != 0.2 || len(c1.ByReason) != 1 {
		t.Errorf("card 1: share %v by %v", fv(c1.ThrottleShare), c1.ByReason)
	}
	// temperatures: max 84 / 90, means 715/10 and 748/10
	if fv(c0.MaxTempC) != 84 || fv(c0.MeanTempC) != 71.5 || fv(c1.MaxTempC) != 90 || fv(c1.MeanTempC) != 74.8 {
		t.Errorf("temps %v %v %v %v", fv(c0.MaxTempC), fv(c0.MeanTempC), fv(c1.MaxTempC), fv(c1.MeanTempC))
	}
	// power: card 0 draws ≥ 686 W (98% of 700) in 4 of 10 samples, mean 5782/10
	if fv(c0.MaxPowerW) != 700 || fv(c0.PowerCapW) != 700 || !near(c0.AtCapShare, 0.4) || fv(c0.MeanPowerW) != 578.2 ||
		fv(c1.MaxPowerW) != 660 || !near(c1.AtCapShare, 0) || fv(c1.MeanPowerW) != 556.2 {
		t.Errorf("power %+v %+v", c0, c1)
	}
	if fv(c0.MinSMClockMHz) != 345 || fv(c0.MaxSMClockMHz) != 1980 || fv(c0.ECCUncorrectedNew) != 0 || fv(c1.ECCUncorrectedNew) != 1 {
		t.Errorf("clocks %v–%v ecc %v %v", fv(c0.MinSMClockMHz), fv(c0.MaxSMClockMHz), fv(c0.ECCUncorrectedNew), fv(c1.ECCUncorrectedNew))
	}
	if got := c0.Last.Sub(c0.First); got != 45*time.Second+63*time.Millisecond {
		t.Errorf("span %s", got)
	}
	ck := CheckWatch(Contract{MaxTempC: fptr(85), MaxThrottleShare: fptr(0.25)}, w)
	if ck[0].Pass || ck[0].Measured != 90.0 || !strings.Contains(ck[0].Note, "card 1 reached 90 °C") {
		t.Errorf("%+v", ck[0])
	}
	if ck[1].Pass || ck[1].Measured != 0.4 || !strings.Contains(ck[1].Note, "card 0 throttled 40.0% of the time (sw_power_cap 40.0%, sw_thermal_slowdown 10.0%)") ||
		strings.Contains(ck[1].Note, "card 1") {
		t.Errorf("%+v", ck[1])
	}
	ck = CheckWatch(Contract{MaxTempC: fptr(90), MaxThrottleShare: fptr(0.4)}, w)
	if !ck[0].Pass || !ck[1].Pass {
		t.Errorf("%+v", ck)
	}
	// no reasons column: the share is absent, and the check fails for want of data
	s2, err := ParseSamples([]byte("timestamp, index, temperature.gpu\n2024/11/14 07:10:00.000, 0, 40\n"), "q.csv", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	w2 := Summarize(s2)
	if w2[0].ThrottleShare != nil {
		t.Errorf("share %v without reasons", *w2[0].ThrottleShare)
	}
	if c := CheckWatch(Contract{MaxThrottleShare: fptr(0.1)}, w2)[0]; c.Pass || !strings.HasPrefix(c.Note, NoData) {
		t.Errorf("%+v", c)
	}
}

func TestWatchPerReasonColumnsAndErrors(t *testing.T) {
	in := "timestamp, index, clocks_throttle_reasons.sw_power_cap, clocks_throttle_reasons.hw_thermal_slowdown, clocks_throttle_reasons.gpu_idle\n" +
		"2024/11/14 07:10:00.000, 0, Active, Not Active, Not Active\n" +
		"2024/11/14 07:10:05.000, 0, Not Active, Not Active, Active\n" +
		"2024/11/14 07:10:10.000, 0, Active, Active, Not Active\n" +
		"2024/11/14 07:10:15.000, 0, Not Active, Not Active, Not Active\n"
	s, err := ParseSamples([]byte(in), "q.csv", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	w := Summarize(s)[0]
	if !near(w.ThrottleShare, 0.5) || w.ByReason["sw_power_cap"] != 0.5 || w.ByReason["hw_thermal_slowdown"] != 0.25 {
		t.Errorf("%v %v", fv(w.ThrottleShare), w.ByReason)
	}
	for _, tc := range []struct{ in, want string }{
		{"index, temperature.gpu\n0, 40\n", "q.csv:1: no timestamp column"},
		{"timestamp, index, temperature.gpu\nyesterday, 0, 40\n", `q.csv:2: timestamp "yesterday"`},
		{"timestamp, index, clocks_event_reasons.active\n2024/11/14 07:10:00.000, 0, 0xZZ\n", `q.csv:2: column clocks_event_reasons.active: "0xZZ" is not a hex bit mask`},
		{"timestamp, index, temperature.gpu\n2024/11/14 07:10:00.000, 0, 40\n2024/11/14 07:10:05.000, 0\n", "q.csv:3: 2 fields, the header has 3"},
	} {
		if _, err := ParseSamples([]byte(tc.in), "q.csv", time.UTC); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestParseXid(t *testing.T) {
	// the message form of the NVIDIA driver's Xid reports
	x, ok := ParseXid("NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus.", time.Unix(0, 0))
	if !ok || x.Code != 79 || x.BusID != "00000000:18:00" || !strings.Contains(x.Text, "fallen off the bus") {
		t.Errorf("%+v %v", x, ok)
	}
	if _, ok := ParseXid("NVRM: loading NVIDIA UNIX x86_64 Kernel Module", time.Unix(0, 0)); ok {
		t.Error("not an Xid")
	}
}

// A sample's power cap and a card's in the inventory are read alike: the
// enforced limit where the row has it (here the board is held at 650 W
// while software asked 700 W), power.limit otherwise.
func TestWatchAndInventoryReadThePowerCapAlike(t *testing.T) {
	const both = "power.limit [W], enforced.power.limit [W]\n"
	s, err := ParseSamples([]byte("timestamp, index, "+both+"2024/11/14 07:10:00.000, 0, 700.00 W, 650.00 W\n"), "w.csv", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseQueryCSV([]byte("index, "+both+"0, 700.00 W, 650.00 W\n"), "q.csv")
	if err != nil {
		t.Fatal(err)
	}
	if s[0].PowerLimitW == nil || *s[0].PowerLimitW != 650 || m.Cards[0].PowerLimitW == nil || *m.Cards[0].PowerLimitW != 650 {
		t.Errorf("watch %v, inventory %v: want the enforced 650 W in both", fv(s[0].PowerLimitW), fv(m.Cards[0].PowerLimitW))
	}
	s, err = ParseSamples([]byte("timestamp, index, power.limit [W]\n2024/11/14 07:10:00.000, 0, 700.00 W\n"), "w.csv", time.UTC)
	if err != nil || s[0].PowerLimitW == nil || *s[0].PowerLimitW != 700 {
		t.Errorf("power.limit alone: %v %v, want 700 W", err, s)
	}
}

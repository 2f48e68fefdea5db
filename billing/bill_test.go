package billing

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("time zone %s not available: %v", name, err)
	}
	return loc
}

// Hand arithmetic: 31 days × 288 = 8928; a local month that loses an hour to
// DST has 31·24 − 1 = 743 h = 8916 slots, one that gains an hour 745 h = 8940.
// EU summer time 2026 starts Sun 29 March and ends Sun 25 October; US 8 March.
func TestMonthPeriodSlotCounts(t *testing.T) {
	cases := []struct {
		tz    string
		year  int
		month time.Month
		want  int
		hours int64
	}{
		{"UTC", 2026, time.October, 8928, 744},
		{"UTC", 2026, time.February, 8064, 672},
		{"UTC", 2028, time.February, 8352, 696},
		{"Europe/Berlin", 2026, time.March, 8916, 743},
		{"Europe/Berlin", 2026, time.October, 8940, 745},
		{"Europe/Berlin", 2026, time.November, 8640, 720},
		{"America/New_York", 2026, time.March, 8916, 743},
		{"Asia/Shanghai", 2026, time.October, 8928, 744},
	}
	for _, c := range cases {
		p := MonthPeriod(c.year, c.month, mustLoc(t, c.tz))
		if got := p.ExpectedSlots(300); got != c.want {
			t.Errorf("%s %d-%02d: %d slots, want %d", c.tz, c.year, c.month, got, c.want)
		}
		if got := p.Hours(); got != c.hours {
			t.Errorf("%s %d-%02d: %d hours, want %d", c.tz, c.year, c.month, got, c.hours)
		}
	}
	p := MonthPeriod(2026, time.October, mustLoc(t, "Europe/Berlin"))
	if got := p.Start.UTC().Format(time.RFC3339); got != "2026-09-30T22:00:00Z" {
		t.Errorf("Berlin October starts at %s UTC, want 2026-09-30T22:00:00Z", got)
	}
	if n := len(p.Days()); n != 31 {
		t.Errorf("Berlin October has %d days", n)
	}
}

func TestRangePeriodInclusiveFromExclusiveTo(t *testing.T) {
	from, _ := ParseTime("2026-10-01T00:02:00Z", nil)
	to, _ := ParseTime("2026-10-01T01:00:00Z", nil)
	p, err := RangePeriod(from, to, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	// Slot starts 00:05 … 00:55 lie in [00:02, 01:00): 11 slots; 00:00 starts before --from.
	if got := p.ExpectedSlots(300); got != 11 {
		t.Errorf("%d slots, want 11", got)
	}
	day, _ := ParseTime("2026-10-02", time.UTC)
	p2, _ := RangePeriod(MonthPeriod(2026, 10, nil).Start, day, time.UTC)
	if got := p2.ExpectedSlots(300); got != 288 {
		t.Errorf("one day: %d slots, want 288", got)
	}
	if _, err := RangePeriod(day, day, time.UTC); err == nil {
		t.Error("an empty range must be refused")
	}
	if _, err := ParseMonth("2026-13", time.UTC); err == nil {
		t.Error("month 13 must be refused")
	}
	if u, err := ParseTime("1790812800", time.UTC); err != nil || u.Unix() != 1790812800 {
		t.Errorf("unix seconds: %v %v", u, err)
	}
}

func TestLastMonthWithData(t *testing.T) {
	// 2026-10-31T23:00Z is already November in Shanghai (UTC+8).
	s := &Series{Slots: []Slot{{Start: 1790000000}, {Start: mustUnix("2026-10-31T23:00:00Z")}}}
	p, err := LastMonthWithData([]*Series{s}, time.UTC)
	if err != nil || p.Label() != "2026-10" {
		t.Errorf("UTC: %v %v", p.Label(), err)
	}
	p, _ = LastMonthWithData([]*Series{s}, mustLoc(t, "Asia/Shanghai"))
	if p.Label() != "2026-11" {
		t.Errorf("Shanghai: %v, want 2026-11", p.Label())
	}
	if _, err := LastMonthWithData([]*Series{{}}, time.UTC); !errors.Is(err, ErrNoData) {
		t.Errorf("no data: %v", err)
	}
}

func mustUnix(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// 20 expected slots, 18 present with 1 … 18 Mbps out. skip: n = 18, rank
// ceil(17.1) = 18 → 18 Mbps. zero: n = 20, values 0, 0, 1 … 18, rank 19 → 17 Mbps.
func TestGapsSkipVersusZero(t *testing.T) {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p, _ := RangePeriod(start, start.Add(100*time.Minute), time.UTC)
	var in, out []float64
	for i := 1; i <= 18; i++ {
		in = append(in, 0)
		out = append(out, float64(i))
	}
	s := mbpsSeries(start, in, out) // slots 0..17; slots 18, 19 missing
	for _, c := range []struct {
		gaps     string
		p95, avg float64
		n        int
	}{{"skip", 18, 9.5, 18}, {"zero", 17, 8.55, 20}} {
		offers := mustOffers(t, `
offers:
  - name: avg
    currency: USD
    bandwidth: {scheme: average, direction: out, price_per_mbps: "1"}
`)
		r, err := BillSeries(s, p, offers, Options{Gaps: c.gaps})
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples.Expected != 20 || r.Samples.Present != 18 || r.Samples.Missing != 2 || r.Samples.GapRuns != 1 {
			t.Errorf("%s: samples %+v", c.gaps, r.Samples)
		}
		if len(r.Samples.GapList) != 1 || r.Samples.GapList[0].Start != "2026-10-01T01:30:00Z" || r.Samples.GapList[0].Slots != 2 {
			t.Errorf("%s: gap list %+v", c.gaps, r.Samples.GapList)
		}
		if math.Abs(r.P95.OutBps-c.p95*1e6) > 1e-6 || r.P95.N != c.n {
			t.Errorf("%s: p95 out %v over %d, want %v Mbps over %d", c.gaps, r.P95.OutBps, r.P95.N, c.p95, c.n)
		}
		if got := r.Bills[0].Amount; got != fmtF(c.avg) {
			t.Errorf("%s: average bill %s, want %s", c.gaps, got, fmtF(c.avg))
		}
	}
}

func fmtF(x float64) string {
	b, _ := json.Marshal(math.Round(x*100) / 100)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += ".00"
	} else if len(s)-strings.Index(s, ".") == 2 {
		s += "0"
	}
	return s
}

// Three items of 0.335 each: rounded once 1.005 → 1.01; rounding each first would give 1.02.
func TestMoneyRoundedOnceAtTheEnd(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 0, 1, nil)
	offers := mustOffers(t, `
offers:
  - name: thirds
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 100, price: "0"}
    items:
      - {kind: other, name: a, price_per_month: "0.335"}
      - {kind: other, name: b, price_per_month: "0.335"}
      - {kind: other, name: c, price_per_month: "0.335"}
  - name: yen
    currency: JPY
    bandwidth: {scheme: fixed, port_mbps: 100, price: "1234.5"}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Bills[0].Amount; got != "1.01" {
		t.Errorf("rounded once: %s, want 1.01", got)
	}
	if got := r.Bills[1].Amount; got != "1235" {
		t.Errorf("JPY has no minor unit: %s, want 1235", got)
	}
	if r.Cheapest != "" {
		t.Errorf("USD and JPY without exchange rates must not name a cheapest offer, got %q", r.Cheapest)
	}
}

// 60 000 GB out, 100 GB free, marginal tiers: 10 240 × 0.114 = 1167.36,
// 40 960 × 0.089 = 3645.44, (59 900 − 51 200) × 0.086 = 748.20 → 5561.00.
func TestPerGBMarginalTiersAndBase(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := &Series{Step: 300, Slots: []Slot{{Start: p.Start.Unix(), Out: 6e13, In: 5e12}}}
	offers := mustOffers(t, `
offers:
  - name: tiers
    currency: USD
    bandwidth:
      scheme: per-gb
      free_gb: 100
      tiers:
        - {up_to_gb: 10240, price_per_gb: "0.114"}
        - {up_to_gb: 51200, price_per_gb: "0.089"}
        - {up_to_gb: 153600, price_per_gb: "0.086"}
        - {price_per_gb: "0.084"}
  - name: gib
    currency: USD
    bandwidth: {scheme: per-gb, base: 1024, price_per_gb: "0.05"}
  - name: both-directions
    currency: USD
    bandwidth: {scheme: per-gb, direction: sum, price_per_gb: "0.01"}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Bills[0].Amount; got != "5561.00" {
		t.Errorf("tiers: %s, want 5561.00 (items %+v)", got, r.Bills[0].Items)
	}
	// 6e13 bytes / 2^30 = 55879.35447692871… GiB × 0.05 = 2793.967723846… → 2793.97
	if got := r.Bills[1].Amount; got != "2793.97" {
		t.Errorf("GiB: %s, want 2793.97", got)
	}
	// in + out = 65 000 GB × 0.01 = 650.00
	if got := r.Bills[2].Amount; got != "650.00" {
		t.Errorf("sum direction: %s, want 650.00", got)
	}
}

// Constant 250 Mbps out: commit 200 Mbps for 16 000 + 50 Mbps × 95 = 20 750.
func TestP95CommitOverageAndMinimumShare(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	offers := mustOffers(t, `
offers:
  - name: commit
    currency: CNY
    bandwidth: {scheme: p95, commit_mbps: 200, commit_price: "16000", price_per_mbps: "95"}
  - name: minimum
    currency: CNY
    bandwidth: {scheme: p95, port_mbps: 2000, min_share: 0.2, price_per_mbps: "10"}
`)
	r, err := BillSeries(constSeries(p, 10, 250, nil), p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Bills[0].Amount; got != "20750.00" {
		t.Errorf("commit+overage: %s, want 20750.00", got)
	}
	// 20 % of 2000 Mbps = 400 Mbps > 250 measured → 4000.00
	if got := r.Bills[1].Amount; got != "4000.00" {
		t.Errorf("minimum share: %s, want 4000.00", got)
	}
	r, _ = BillSeries(constSeries(p, 10, 150, nil), p, offers, Options{})
	if got := r.Bills[0].Amount; got != "16000.00" {
		t.Errorf("below commit: %s, want 16000.00", got)
	}
}

// Traffic on 10 of 31 days: the 95th over valid days' slots is 100 Mbps;
// 100 × 10/31 × 2.30 = 74.1935… → 74.19; with a 20 % minimum of 1000 Mbps: 460.00.
func TestP95ProrationByValidDays(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 0, 100, nil)
	for i := range s.Slots {
		if s.Slots[i].Start >= p.Start.Unix()+10*86400 {
			s.Slots[i].Out = 0 // present but idle: not valid days
		}
	}
	offers := mustOffers(t, `
offers:
  - name: prorated
    currency: USD
    bandwidth: {scheme: p95, direction: out, prorate: valid-days, price_per_mbps: "2.30"}
  - name: prorated-min
    currency: USD
    bandwidth: {scheme: p95, direction: out, prorate: valid-days, port_mbps: 1000, min_share: 0.2, price_per_mbps: "2.30"}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples.ValidDays != 10 || r.Bills[0].Rule.ValidDays != 10 || r.Bills[0].Rule.Days != 31 {
		t.Errorf("valid days %d, rule %+v", r.Samples.ValidDays, r.Bills[0].Rule)
	}
	if got := r.Bills[0].Amount; got != "74.19" {
		t.Errorf("prorated: %s, want 74.19", got)
	}
	if got := r.Bills[1].Amount; got != "460.00" {
		t.Errorf("prorated with minimum: %s, want 460.00", got)
	}
	// The valid-day sample is 10 × 288 = 2880 slots, rank ceil(0.95 · 2880) = 2736.
	if r.Bills[0].Rule.N != 2880 || r.Bills[0].Rule.Rank != 2736 {
		t.Errorf("valid-day sample: n %d rank %d", r.Bills[0].Rule.N, r.Bills[0].Rule.Rank)
	}
}

func TestFixedPortUtilisationAndSlotsAbovePort(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 20, 250, nil)
	for i := 100; i < 103; i++ {
		s.Slots[i].Out = 1200e6 * 300 / 8 // above the 1000 Mbps port: flagged, not clamped
	}
	offers := mustOffers(t, `
offers:
  - name: la
    currency: USD
    bandwidth: {scheme: fixed, port_mbps: 1000, price: "650"}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Bills[0]
	// Three slots of 1200 out; in+out (20 + 1200) is above the port in the same three.
	want := SlotsAbove{In: 0, Out: 3, Sum: 3, First: "2026-10-01T08:20:00Z"}
	if b.Amount != "650.00" || b.Utilisation == nil || b.Utilisation.SlotsAbove != want || b.Utilisation.P95 != 0.25 || b.Utilisation.Peak != 1.2 {
		t.Fatalf("fixed bill %+v utilisation %+v", b, b.Utilisation)
	}
	if b.Carry == nil || b.Carry.Status != CarryPeakAbove || !b.Carry.CanCarry || b.Carry.SlotsAbove != want || !b.Cheapest {
		t.Fatalf("carry %+v cheapest %v: a port only the peak exceeds carries the traffic, flagged", b.Carry, b.Cheapest)
	}
	if len(b.Flags) != 1 || !strings.Contains(b.Flags[0], "exceeds the 1000 Mbps port in 0 slots in, 3 out (3 in+out)") {
		t.Errorf("flags %q", b.Flags)
	}
	if r.Traffic.OutPeakBps != 1200e6 {
		t.Errorf("peak must be kept as measured (1200 Mbps), got %v", r.Traffic.OutPeakBps)
	}
}

func TestPeakAverageAndDailyPeakSchemes(t *testing.T) {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p, _ := RangePeriod(start, start.Add(48*time.Hour), time.UTC)
	s := constSeries(p, 0, 10, nil)
	s.Slots[50].Out = 100e6 * 300 / 8 // day 1 peak 100 Mbps
	s.Slots[51].Out = 90e6 * 300 / 8  // day 1 second peak 90
	s.Slots[300].Out = 50e6 * 300 / 8 // day 2 peak 50
	s.Slots[301].Out = 40e6 * 300 / 8 // day 2 second peak 40
	offers := mustOffers(t, `
offers:
  - name: peak
    currency: USD
    bandwidth: {scheme: peak, direction: out, price_per_mbps: "1"}
  - name: second-peak
    currency: USD
    bandwidth: {scheme: peak, nth: 2, direction: out, price_per_mbps: "1"}
  - name: daily
    currency: USD
    bandwidth: {scheme: daily-peak-average, direction: out, price_per_mbps: "1"}
  - name: daily-top1
    currency: USD
    bandwidth: {scheme: daily-peak-average, top_days: 1, direction: out, price_per_mbps: "1"}
  - name: daily-2nd
    currency: USD
    bandwidth: {scheme: daily-peak-average, daily_nth: 2, direction: out, price_per_mbps: "1"}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"100.00", "90.00", "75.00", "100.00", "65.00"}
	for i, w := range want {
		if r.Bills[i].Amount != w {
			t.Errorf("%s: %s, want %s (%s)", r.Bills[i].Offer, r.Bills[i].Amount, w, r.Bills[i].Rule.Text)
		}
	}
}

func TestCoarseDataRefusedForPercentiles(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 1, 2, nil)
	s.Step = 7200
	p95 := mustOffers(t, "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: p95, price_per_mbps: \"1\"}}\n")
	gb := mustOffers(t, "offers:\n  - {name: y, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: \"1\"}}\n")
	if _, err := BillSeries(s, p, p95, Options{}); !errors.Is(err, ErrCoarse) || !strings.Contains(err.Error(), "--allow-coarse") {
		t.Errorf("p95 on 2-hour data: %v", err)
	}
	if _, err := BillSeries(s, p, nil, Options{}); !errors.Is(err, ErrCoarse) {
		t.Errorf("95th report on 2-hour data: %v", err)
	}
	r, err := BillSeries(s, p, p95, Options{AllowCoarse: true})
	if err != nil || len(r.Warnings) == 0 {
		t.Errorf("allowed: %v %v", err, r)
	}
	r, err = BillSeries(s, p, gb, Options{})
	if err != nil || r.P95 != nil {
		t.Errorf("per-gb on coarse data must bill without a 95th: %v %+v", err, r)
	}
}

func TestEmptyPeriodSaysWhereTheDataIs(t *testing.T) {
	s := constSeries(MonthPeriod(2026, 10, nil), 1, 1, nil)
	_, err := BillSeries(s, MonthPeriod(2026, 9, nil), nil, Options{})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "2026-09") || !strings.Contains(err.Error(), "2026-10-01 00:00") {
		t.Errorf("empty period: %v", err)
	}
}

// Port A bursts in slots 0–1, port B in slots 2–3 (100 Mbps, else 10). Each
// port's 95th (rank 19 of 20) is 100, so adding per-port 95ths gives 200; the
// 95th of the per-slot sum (16 × 20, 4 × 110) is 110.
func TestAggregateSumsPerSlotNotPercentiles(t *testing.T) {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p, _ := RangePeriod(start, start.Add(100*time.Minute), time.UTC)
	a, b := make([]float64, 20), make([]float64, 20)
	for i := range a {
		a[i], b[i] = 10, 10
	}
	a[0], a[1], b[2], b[3] = 100, 100, 100, 100
	zero := make([]float64, 20)
	sa, sb := mbpsSeries(start, zero, a), mbpsSeries(start, zero, b)
	sa.Name, sb.Name = "eth0", "eth1"
	agg := Aggregate([]*Series{sa, sb}, "eth0+eth1")
	r, err := BillSeries(agg, p, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.P95.OutBps-110e6) > 1e-6 {
		t.Errorf("aggregate 95th %v, want 110 Mbps", r.P95.OutBps)
	}
	ra, _ := BillSeries(sa, p, nil, Options{})
	if math.Abs(ra.P95.OutBps-100e6) > 1e-6 {
		t.Errorf("port 95th %v, want 100 Mbps", ra.P95.OutBps)
	}
	sb.Slots = sb.Slots[:19]
	if agg := Aggregate([]*Series{sa, sb}, "x"); len(agg.Warnings) != 1 {
		t.Errorf("a slot present in one port only must be warned about: %q", agg.Warnings)
	}
}

// p95 offer: 10/Mbps + 1000 support; per-gb offer: 1/GB. At 1 Mbps constant for
// 31 days the volume is 1e6/8 · 2 678 400 / 1e9 = 334.8 GB per 1 Mbps, so
// 334.8 k = 10 k + 1000 → k = 1000 / 324.8 = 3.078818….
func TestComparisonCheapestRatioAndBreakEven(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	offers := mustOffers(t, `
offers:
  - name: burst
    currency: USD
    bandwidth: {scheme: p95, price_per_mbps: "10"}
    items: [{kind: support, price_per_month: "1000"}]
  - name: volume
    currency: USD
    bandwidth: {scheme: per-gb, price_per_gb: "1"}
`)
	r, err := BillSeries(constSeries(p, 0, 1, nil), p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cheapest != "volume" || !r.Bills[1].Cheapest || r.Bills[0].Cheapest {
		t.Fatalf("cheapest %q", r.Cheapest)
	}
	if r.Bills[0].Amount != "1010.00" || r.Bills[1].Amount != "334.80" {
		t.Errorf("amounts %s %s", r.Bills[0].Amount, r.Bills[1].Amount)
	}
	if want := 1010 / 334.8; math.Abs(r.Compare.Ratio-want) > 1e-5 {
		t.Errorf("ratio %v, want %v", r.Compare.Ratio, want)
	}
	if len(r.Compare.BreakEven) != 1 {
		t.Fatalf("break-even %+v", r.Compare.BreakEven)
	}
	be := r.Compare.BreakEven[0]
	if k := 1000 / 324.8; math.Abs(be.Scale-k) > 1e-5 || be.Offer != "burst" || be.Versus != "volume" {
		t.Errorf("break-even %+v, want scale %v", be, k)
	}
	// --scale 4 is past the break-even: the 95th offer wins.
	r, _ = BillSeries(constSeries(p, 0, 1, nil), p, offers, Options{Scale: 4})
	if r.Cheapest != "burst" || r.Bills[1].Amount != "1339.20" {
		t.Errorf("scale 4: cheapest %q, volume %s", r.Cheapest, r.Bills[1].Amount)
	}
}

func TestOverridesApplyToEveryOffer(t *testing.T) {
	in := []float64{10, 12, 11, 13, 12, 40, 11, 12, 10, 11, 12, 13, 11, 10, 12, 11, 35, 12, 11, 10}
	out := []float64{30, 31, 29, 30, 32, 5, 30, 31, 33, 29, 30, 31, 30, 29, 30, 31, 6, 32, 30, 45}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p, _ := RangePeriod(start, start.Add(100*time.Minute), time.UTC)
	offers := mustOffers(t, "offers:\n  - {name: x, currency: USD, bandwidth: {scheme: p95, direction: in, price_per_mbps: \"1\"}}\n")
	for dir, want := range map[Direction]string{"": "35.00", "sum": "45.00", "max": "40.00", "out": "33.00"} {
		r, err := BillSeries(mbpsSeries(start, in, out), p, offers, Options{Direction: dir})
		if err != nil {
			t.Fatal(err)
		}
		if r.Bills[0].Amount != want {
			t.Errorf("direction %q: %s, want %s", dir, r.Bills[0].Amount, want)
		}
	}
	if _, err := BillSeries(mbpsSeries(start, in, out), p, offers, Options{Method: "p96"}); err == nil {
		t.Error("unknown method must be refused")
	}
}

func TestReportJSONShape(t *testing.T) {
	s := loadSampleCSV(t, "../samples/traffic/2026-10.csv")
	offers, err := LoadOffers("../samples/offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := BillSeries(s, MonthPeriod(2026, 10, nil), offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "linecheck.bill/v1" {
		t.Errorf("schema %v", doc["schema"])
	}
	want := map[string][]string{
		"period":  {"start", "end", "tz"},
		"samples": {"expected", "present", "missing"},
		"traffic": {"in_bytes", "out_bytes"},
		"p95":     {"method", "in_bps", "out_bps", "greater_bps", "max_bps", "sum_bps"},
	}
	for k, fields := range want {
		m, ok := doc[k].(map[string]any)
		if !ok {
			t.Fatalf("%s missing", k)
		}
		for _, f := range fields {
			if _, ok := m[f]; !ok {
				t.Errorf("%s.%s missing", k, f)
			}
		}
	}
	sm := doc["samples"].(map[string]any)
	if sm["expected"] != 8928.0 || sm["present"] != 8915.0 || sm["missing"] != 13.0 {
		t.Errorf("sample month samples %v", sm)
	}
	bills := doc["bills"].([]any)
	if len(bills) != 15 || doc["cheapest"] == "" { // six offers, five what-if variants and four GPU usage models in samples/offers.yaml
		t.Fatalf("%d bills, cheapest %v", len(bills), doc["cheapest"])
	}
	for _, x := range bills {
		bm := x.(map[string]any)
		for _, f := range []string{"offer", "scheme", "amount", "currency", "items"} {
			if _, ok := bm[f]; !ok {
				t.Errorf("bill field %s missing", f)
			}
		}
		if _, ok := bm["amount"].(string); !ok {
			t.Errorf("amount must be a decimal string: %v", bm["amount"])
		}
	}
	// Without offers: "bills": [] (not null).
	r, _ = BillSeries(s, MonthPeriod(2026, 10, nil), nil, Options{})
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"bills":[]`) {
		t.Errorf("no offers must give \"bills\": []")
	}
}

func TestSyntheticHitsVolumeAndPeak(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	for _, shape := range Shapes {
		s, err := Synthetic(p, 40000, 300, shape)
		if err != nil {
			t.Fatal(err)
		}
		var out, peak float64
		for _, sl := range s.Slots {
			out += sl.Out
			peak = max(peak, sl.Out*8/300)
		}
		if math.Abs(out-40000e9)/40000e9 > 1e-9 {
			t.Errorf("%s: volume %v", shape, out)
		}
		if math.Abs(peak-300e6)/300e6 > 0.01 {
			t.Errorf("%s: peak %v Mbps, want 300 within 1 %%", shape, peak/1e6)
		}
		if len(s.Slots) != 8928 {
			t.Errorf("%s: %d slots", shape, len(s.Slots))
		}
	}
	if _, err := Synthetic(p, 1e6, 1, "flat"); err == nil {
		t.Error("a volume above the peak rate must be refused")
	}
	if _, err := Synthetic(p, 1, 1, "spiky"); err == nil {
		t.Error("unknown shape must be refused")
	}
}

func BenchmarkBillSeriesMonth(b *testing.B) {
	s := loadSampleCSV(b, "../samples/traffic/2026-10.csv")
	offers, err := LoadOffers("../samples/offers.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p := MonthPeriod(2026, 10, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BillSeries(s, p, offers, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBillSeriesMonthNoOffers(b *testing.B) {
	s := loadSampleCSV(b, "../samples/traffic/2026-10.csv")
	p := MonthPeriod(2026, 10, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BillSeries(s, p, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The break-even search prices offers without line items; a commit with a
// minimum share below it annotates the commit item, which must not be assumed.
func TestBreakEvenWithCommitAndMinimumShare(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	offers := mustOffers(t, `
offers:
  - name: commit
    currency: USD
    bandwidth: {scheme: p95, port_mbps: 100, min_share: 0.5, commit_mbps: 100, commit_price: "1000", price_per_mbps: "20"}
  - name: volume
    currency: USD
    bandwidth: {scheme: per-gb, price_per_gb: "0.5"}
`)
	r, err := BillSeries(constSeries(p, 0, 10, nil), p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 10 Mbps: volume 3348 GB × 0.5 = 1674 > 1000 (the commit, billed at its 50 Mbps
	// minimum): the commit is cheapest. Volume costs 1674 k, so they meet at
	// k = 1000/1674 = 0.597; above k = 10 the overage (200 k − 1000) stays below 1674 k.
	if r.Cheapest != "commit" || r.Bills[0].Items[0].Note == "" || len(r.Compare.BreakEven) != 1 {
		t.Fatalf("cheapest %q, items %+v, break-even %+v", r.Cheapest, r.Bills[0].Items, r.Compare.BreakEven)
	}
	if k := 1000 / 1674.0; math.Abs(r.Compare.BreakEven[0].Scale-k) > 1e-5 {
		t.Errorf("break-even at %v, want %v", r.Compare.BreakEven[0].Scale, k)
	}
}

func TestSyntheticShapes(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	peakAt := func(s *Series, keep func(time.Time) bool) float64 {
		m := 0.0
		for _, sl := range s.Slots {
			if keep(time.Unix(sl.Start, 0).UTC()) {
				m = max(m, sl.Out)
			}
		}
		return m
	}
	b, _ := Synthetic(p, 20000, 400, "business")
	weekend := peakAt(b, func(t time.Time) bool { return t.Weekday() == time.Saturday || t.Weekday() == time.Sunday })
	office := peakAt(b, func(t time.Time) bool { return t.Weekday() == time.Wednesday && t.Hour() == 11 })
	if weekend >= office/2 {
		t.Errorf("business: weekend peak %v should be far below a weekday 11:00 (%v)", weekend, office)
	}
	d, _ := Synthetic(p, 20000, 400, "diurnal")
	night := peakAt(d, func(t time.Time) bool { return t.Hour() == 4 })
	evening := peakAt(d, func(t time.Time) bool { return t.Hour() == 20 })
	if night >= evening/2 {
		t.Errorf("diurnal: 04:00 peak %v should be far below 20:00 (%v)", night, evening)
	}
	d2, _ := Synthetic(p, 20000, 400, "diurnal")
	for i := range d.Slots {
		if d.Slots[i] != d2.Slots[i] {
			t.Fatal("Synthetic must be deterministic")
		}
	}
}

// Offers built in code (compare, tui) have no exchange rate and may leave the
// method and direction empty: the defaults apply and the comparison still works.
func TestOffersBuiltInCode(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	a := &Offer{Name: "a", Currency: "USD", Bandwidth: Bandwidth{Scheme: "p95", PricePerMbps: Dec{Decimal: decimal.NewFromInt(10), Set: true}}}
	b := &Offer{Name: "b", Currency: "USD", Bandwidth: Bandwidth{Scheme: "per-gb", Base: 1000, Direction: "out", PricePerGB: Dec{Decimal: decimal.NewFromInt(1), Set: true}}}
	r, err := BillSeries(constSeries(p, 0, 1, nil), p, []*Offer{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bills[0].Amount != "10.00" || r.Bills[1].Amount != "334.80" || r.Cheapest != "a" || len(r.Compare.BreakEven) != 0 {
		t.Errorf("bills %s %s cheapest %q break-even %+v", r.Bills[0].Amount, r.Bills[1].Amount, r.Cheapest, r.Compare.BreakEven)
	}
}

// Slots above the port are counted per direction and in+out, as vnstat
// reports rx, tx and total: 600 in + 600 out is above a 1000 Mbps port only summed.
func TestSlotsAbovePortPerDirection(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 100, 100, nil)
	for i := 0; i < 5; i++ {
		s.Slots[i].In, s.Slots[i].Out = 600e6*300/8, 600e6*300/8 // sum only
	}
	for i := 10; i < 12; i++ {
		s.Slots[i].In = 1100e6 * 300 / 8 // in only (and the sum)
	}
	s.Slots[20].Out = 1500e6 * 300 / 8 // out only (and the sum)
	offers := mustOffers(t, "offers:\n  - {name: f, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1000, price: \"1\"}}\n")
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Bills[0].Carry.SlotsAbove
	if got.In != 2 || got.Out != 1 || got.Sum != 8 || got.First != "2026-10-01T00:50:00Z" {
		t.Errorf("slots above %+v, want in 2, out 1, in+out 8, first 00:50", got)
	}
}

// bill --scale 2 on a month that peaks near 1.5 Gbit/s: a 1000 Mbps port
// the 95th exceeds cannot carry it, is flagged and never cheapest; a port
// only the peak exceeds is flagged with its slots above.
func TestOfferWhosePortThe95thExceedsIsNeverCheapest(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := constSeries(p, 100, 1200, nil) // 95th out 1200 Mbps
	s.Slots[7].Out = 1500e6 * 300 / 8
	offers := mustOffers(t, `
offers:
  - {name: small-port, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1000, price: "100"}}
  - {name: big-port, currency: USD, bandwidth: {scheme: fixed, port_mbps: 1400, price: "900"}}
  - {name: p95-no-port, currency: USD, bandwidth: {scheme: p95, price_per_mbps: "1"}}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	small, big := r.Bills[0], r.Bills[1]
	if small.CanCarry() || small.Carry.Status != CarryCannot || small.Cheapest {
		t.Fatalf("small port: carry %+v cheapest %v", small.Carry, small.Cheapest)
	}
	if !strings.Contains(small.Carry.Reason, "95th (1200 Mbps) exceeds the 1000 Mbps port") {
		t.Errorf("reason %q", small.Carry.Reason)
	}
	if !big.CanCarry() || big.Carry.Status != CarryPeakAbove || big.Carry.SlotsAbove.Out != 1 {
		t.Errorf("big port: %+v", big.Carry)
	}
	// 900 for the big port against 1200 for the 95th at 1 USD/Mbps: the big
	// port is cheapest, although the small one costs less.
	if r.Cheapest != "big-port" || !big.Cheapest || r.Bills[2].Carry != nil {
		t.Errorf("cheapest %q; p95 offer carry %+v", r.Cheapest, r.Bills[2].Carry)
	}
	// Nothing that can carry it: no cheapest, and a warning says why.
	r, err = BillSeries(s, p, offers[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cheapest != "" || r.Bills[0].Cheapest || !strings.Contains(strings.Join(r.Warnings, "\n"), "no offer can carry this traffic") {
		t.Errorf("cheapest %q, warnings %q", r.Cheapest, r.Warnings)
	}
}

// LibreNMS bills October 2026 (8928 slots, slot i at i+1 Mbps out) on rows
// stamped at interval end with timestamp > from AND <= to (to = Oct 31
// 23:59:59): the slot ending on Nov 1 00:00:00 drops, n = 8927, and since PR
// #18481 the index is round(0.95·8927) − 2 = 8481 − 2 = 8479 (0-based), the
// slot at 8480 Mbps. By hand, at 1 USD per Mbps: 8480.00. The legacy index
// round(8480.65) − 1 = 8480 bills 8481 Mbps; slot-start boundaries (n = 8928,
// round(8481.6) − 2 = 8480) bill 8481 as well.
func TestLibreNMSBoundaryAndIndexReconcileToTheCent(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := &Series{Name: "port", Step: 300}
	for i := 0; i < 8928; i++ {
		s.Slots = append(s.Slots, Slot{Start: p.Start.Unix() + int64(i)*300, Out: float64(i+1) * 1e6 * 300 / 8})
	}
	// A slot before the month and one of the next month stay out under both rules.
	s.Slots = append([]Slot{{Start: p.Start.Unix() - 300, Out: 9e12}}, s.Slots...)
	s.Slots = append(s.Slots, Slot{Start: p.End.Unix(), Out: 9e12})
	offers := mustOffers(t, "offers:\n  - {name: l, currency: USD, bandwidth: {scheme: p95, method: librenms, direction: out, price_per_mbps: \"1\"}}\n")
	for _, c := range []struct {
		boundary Boundary
		method   Method
		n        int
		amount   string
	}{
		{BoundaryLibreNMS, LibreNMS, 8927, "8480.00"},
		{BoundaryLibreNMS, LibreNMSLegacy, 8927, "8481.00"},
		{BoundaryStart, LibreNMS, 8928, "8481.00"},
		{"", "", 8928, "8481.00"},
	} {
		r, err := BillSeries(s, p, offers, Options{Boundary: c.boundary, Method: c.method})
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples.Expected != c.n || r.Samples.Present != c.n || r.Samples.Missing != 0 || r.Bills[0].Amount != c.amount {
			t.Errorf("%s/%s: expected %d present %d missing %d amount %s, want n %d amount %s",
				c.boundary, c.method, r.Samples.Expected, r.Samples.Present, r.Samples.Missing, r.Bills[0].Amount, c.n, c.amount)
		}
	}
	if _, err := BillSeries(s, p, offers, Options{Boundary: "end"}); err == nil {
		t.Error("an unknown boundary must be refused")
	}
}

// Volumes never wrap: ten slots of 2e18 bytes (2e19 in all, beyond int64
// bytes) were printed as −9223372036854775808 B with exit 0. They are refused,
// naming the largest slot; a scale that overflows names --scale; a slot of
// 1e308 bytes, which made the money conversion panic on +Inf, is refused too.
func TestVolumesBeyondInt64AreRefusedNeverWrapped(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	offers := mustOffers(t, `
offers:
  - {name: gb, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: "0.01"}}
  - {name: p95, currency: USD, bandwidth: {scheme: p95, price_per_mbps: "1", port_mbps: 1000}}
`)
	mk := func(n int, bytes float64) *Series {
		s := &Series{Name: "big", Source: "big.csv", Step: 300}
		for i := 0; i < n; i++ {
			s.Slots = append(s.Slots, Slot{Start: p.Start.Unix() + int64(i)*300, In: bytes / 2, Out: bytes / 2})
		}
		return s
	}
	for _, c := range []struct {
		name  string
		s     *Series
		scale float64
		want  string
	}{
		{"ten slots of 2e18 bytes", mk(10, 2e18), 1, "big.csv: traffic beyond what can be billed: the period's volume (in+out 2e+19 bytes)"},
		{"1e308 bytes in a slot", mk(10, 1e308), 1, "the largest slot, at 2026-10-01T00:00:00Z, holds 5e+307 bytes in, 5e+307 out"},
		{"a scale that overflows", mk(8928, 2.5e10), 1e300, "--scale 1e+300: "},
		{"the month at --scale 1e6", mk(8928, 2e10), 1e6, "--scale 1e+06: the period's volume (in+out 1.79e+20 bytes)"},
	} {
		r, err := BillSeries(c.s, p, offers, Options{Scale: c.scale})
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: report %v, err %v; want ErrTooLarge with %q", c.name, r != nil, err, c.want)
		}
	}
	// Just below the limit bills, with a positive volume.
	r, err := BillSeries(mk(4, 2e18), p, offers, Options{})
	if err != nil || r.Traffic.TotalBytes != 8e18 || r.Traffic.InBytes <= 0 {
		t.Fatalf("8e18 bytes: %v %+v", err, r.Traffic)
	}
}

// An offer's nth above the sample count billed the smallest sample without a
// word; it is flagged (and warned), as are daily_nth and top_days beyond the data.
func TestNthAboveTheSampleCountIsFlagged(t *testing.T) {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	p, _ := RangePeriod(start, start.Add(2*time.Hour), time.UTC) // 24 slots
	s := constSeries(p, 0, 10, nil)
	offers := mustOffers(t, `
offers:
  - {name: pk, currency: USD, bandwidth: {scheme: peak, nth: 30, price_per_mbps: "1"}}
  - {name: ok, currency: USD, bandwidth: {scheme: peak, nth: 24, price_per_mbps: "1"}}
  - {name: dpa, currency: USD, bandwidth: {scheme: daily-peak-average, daily_nth: 25, top_days: 5, price_per_mbps: "1"}}
`)
	r, err := BillSeries(s, p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Join(r.Bills[0].Flags, "; "); !strings.Contains(f, "nth 30 is above the 24 samples") {
		t.Errorf("peak nth 30 of 24: flags %q", f)
	}
	if len(r.Bills[1].Flags) != 0 {
		t.Errorf("nth 24 of 24 is the smallest sample by the offer's own rule: flags %q", r.Bills[1].Flags)
	}
	f := strings.Join(r.Bills[2].Flags, "; ")
	if !strings.Contains(f, "daily_nth 25 is above the sample count of 1 day:") || !strings.Contains(f, "top_days 5 is above the 1 day with") {
		t.Errorf("daily peak flags %q", f)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "pk: nth 30 is above") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// peak_mbps: 1e308 in a compare traffic block drew a month of NaN slots (and
// made the pricing panic on decimal from +Inf); Synthetic refuses it, and
// non-finite figures, with ErrTooLarge or a message naming both keys.
func TestSyntheticRefusesFiguresBeyondBilling(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	for _, c := range []struct{ gb, peak float64 }{{40000, 1e308}, {1e308, 1e308}, {40000, math.Inf(1)}, {math.NaN(), 300}} {
		s, err := Synthetic(p, c.gb, c.peak, "diurnal")
		if err == nil {
			t.Errorf("%g GB at %g Mbps: drew %d slots, want a refusal", c.gb, c.peak, len(s.Slots))
		}
	}
	if _, err := Synthetic(p, 40000, 1e308, "flat"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
}

// A --from/--to range is bounded (the grid spans the whole period) and unix
// seconds stay within years 1970…9999.
func TestRangePeriodIsBounded(t *testing.T) {
	from := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := RangePeriod(from, from.AddDate(0, 0, MaxRangeDays), time.UTC); err != nil {
		t.Errorf("%d days: %v, want accepted", MaxRangeDays, err)
	}
	if _, err := RangePeriod(from, from.AddDate(0, 0, MaxRangeDays+1), time.UTC); err == nil {
		t.Errorf("%d days accepted, want refused", MaxRangeDays+1)
	}
	if _, err := RangePeriod(time.Unix(0, 0), time.Unix(1<<62, 0), time.UTC); err == nil {
		t.Error("a range of billions of years accepted")
	}
	for _, s := range []string{"99999999999999", "-1", "9223372036854775807"} {
		if _, err := ParseTime(s, nil); err == nil {
			t.Errorf("ParseTime(%q) accepted", s)
		}
	}
	if got, err := ParseTime("253402300799", nil); err != nil || got.Year() != 9999 {
		t.Errorf("ParseTime(253402300799) = %v, %v; want 9999-12-31T23:59:59Z", got, err)
	}
}

// A crossing at a traffic that an offer's port cannot carry is no
// break-even. By hand: 100 Mbit/s out for October (744 h) is
// 100e6/8 × 2,678,400 s = 33,480 GB; at 0.05 per GB the per-GB offer costs
// 1674 × k, so it meets a 5000 flat port at k = 5000/1674 = 2.987 (95th
// 298.7 Mbit/s): within a 500 Mbit/s port, beyond a 200 Mbit/s one (it
// carries up to 2×).
func TestBreakEvenOnlyWhereThePortCarriesTheTraffic(t *testing.T) {
	offers := mustOffers(t, `offers:
  - {name: pergb, currency: USD, bandwidth: {scheme: per-gb, price_per_gb: "0.05"}}
  - {name: port500, currency: USD, bandwidth: {scheme: fixed, port_mbps: 500, price: "5000"}}
  - {name: port200, currency: USD, bandwidth: {scheme: fixed, port_mbps: 200, price: "5000"}}
`)
	p := MonthPeriod(2026, time.October, time.UTC)
	r, err := BillSeries(constSeries(p, 10, 100, nil), p, offers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cheapest != "pergb" {
		t.Fatalf("cheapest %s, want pergb (1674.00)", r.Cheapest)
	}
	var got []string
	for _, be := range r.Compare.BreakEven {
		got = append(got, be.Offer+"/"+be.Versus)
		if be.Offer == "port500" && math.Abs(be.Scale-5000.0/1674) > 1e-4 {
			t.Errorf("port500/pergb at %v×, want %.6f×", be.Scale, 5000.0/1674)
		}
	}
	if !slices.Equal(got, []string{"port500/pergb"}) {
		t.Errorf("break-evens %v, want only port500/pergb (port200 cannot carry 2.99× this traffic)", got)
	}
}

package billing

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The invoice check on the bundled October (13 slots missing): the
// nearest-rank 95th of the outbound rates over the present slots, computed
// here by hand (ceil(0.95·n)), written at 2 decimals as an invoice would,
// is matched by that rule; every match rounds to it; nothing matches a
// figure no rule gives, and the nearest rules come nearest first.
func TestReconcileFindsTheRuleOfABilledMbps(t *testing.T) {
	s := loadSampleCSV(t, "../samples/traffic/2026-10.csv")
	var rates []float64
	for _, sl := range s.Slots {
		rates = append(rates, sl.Out*8/300)
	}
	slices.Sort(rates)
	n := len(rates)
	rank := (95*n + 99) / 100
	billed := strconv.FormatFloat(rates[rank-1]/1e6, 'f', 2, 64)
	utc := MonthPeriod(2026, 10, time.UTC)
	sh, _ := time.LoadLocation("Asia/Shanghai")
	rc, err := Reconcile(s, []Period{utc, MonthPeriod(2026, 10, sh)}, billed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 8915 || rc.Tried != 2*2*len(Methods)*len(Directions) || rc.Decimals != 2 || len(rc.Nearest) != 0 {
		t.Fatalf("n %d, tried %d, decimals %d, nearest %d", n, rc.Tried, rc.Decimals, len(rc.Nearest))
	}
	found := false
	for i, m := range rc.Matches {
		found = found || m.Method == NearestRank && m.Direction == DirOut && m.Gaps == "skip" && m.TZ == "UTC"
		if got := strconv.FormatFloat(m.BilledMbps, 'f', 2, 64); got != billed {
			t.Errorf("match %+v gives %s, not %s", m, got, billed)
		}
		if i > 0 && math.Abs(m.DiffMbps) < math.Abs(rc.Matches[i-1].DiffMbps) {
			t.Errorf("matches not nearest first: %+v after %+v", m, rc.Matches[i-1])
		}
	}
	if !found {
		t.Errorf("%s Mbps: nearest-rank/out/skip/UTC is not among %+v", billed, rc.Matches)
	}
	rc, err = Reconcile(s, []Period{utc}, "0.01", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Matches) != 0 || len(rc.Nearest) != NearestShown {
		t.Fatalf("0.01 Mbps: %d matches, %d nearest", len(rc.Matches), len(rc.Nearest))
	}
	for i := 1; i < len(rc.Nearest); i++ {
		if math.Abs(rc.Nearest[i].DiffMbps) < math.Abs(rc.Nearest[i-1].DiffMbps) {
			t.Errorf("nearest not in order: %+v", rc.Nearest)
		}
	}
	for _, bad := range []string{"", "-3", "1e3", "abc", "0"} {
		if _, err := Reconcile(s, []Period{utc}, bad, Options{}); err == nil {
			t.Errorf("billed %q accepted", bad)
		}
	}
}

// The invoice check recovers LibreNMS's rule (boundary and index since PR
// #18481) from its billed figure, 8480 Mbps, worked by hand in
// TestLibreNMSBoundaryAndIndexReconcileToTheCent; the legacy index bills
// 8481 and is not among the matches.
func TestReconcileRecoversLibreNMS(t *testing.T) {
	p := MonthPeriod(2026, 10, nil)
	s := &Series{Name: "port", Step: 300}
	for i := 0; i < 8928; i++ {
		s.Slots = append(s.Slots, Slot{Start: p.Start.Unix() + int64(i)*300, Out: float64(i+1) * 1e6 * 300 / 8})
	}
	rc, err := Reconcile(s, []Period{p}, "8480", Options{Boundary: BoundaryLibreNMS})
	if err != nil {
		t.Fatal(err)
	}
	has := func(m Method) bool {
		for _, f := range rc.Matches {
			if f.Method == m && f.Direction == DirOut && f.Gaps == "skip" {
				return true
			}
		}
		return false
	}
	if !has(LibreNMS) || has(LibreNMSLegacy) {
		t.Errorf("8480 Mbps: matches %+v", rc.Matches)
	}
	offers := mustOffers(t, "offers:\n  - {name: l, currency: USD, bandwidth: {scheme: p95, direction: out, price_per_mbps: \"1\"}}\n")
	rc, err = ReconcileAmount(s, []Period{p}, offers[0], "8480.00", Options{Boundary: BoundaryLibreNMS})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Matches) == 0 || rc.Matches[0].Amount != "8480.00" || rc.Offer != "l" || rc.Currency != "USD" {
		t.Errorf("8480.00 USD: %+v", rc)
	}
	for _, f := range rc.Matches {
		if f.Method == LibreNMSLegacy && f.Direction == DirOut {
			t.Errorf("the legacy index matches 8480.00: %+v", f)
		}
	}
}

// Prometheus as the billing tool: promtool evaluates quantile_over_time(0.95)
// over October 2026's 5-minute rates with 13 samples missing (the '_' of
// its input notation); the invoice check recovers linear over present slots.
func TestReconcileRecoversPrometheusQuantileOverTime(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getuid() == 0 {
			t.Fatal("promtool is missing (scripts/test installs prometheus)")
		}
		t.Skip("promtool not installed")
	}
	const n = 31 * 288
	in, _ := oracleData(n, 7)
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Unix()
	s := &Series{Name: "port", Step: 300}
	var vals []string
	for k := 0; k < n; k++ {
		if k >= 1000 && k < 1013 {
			vals = append(vals, "_")
			continue
		}
		vals = append(vals, strconv.FormatFloat(in[k], 'f', -1, 64))
		s.Slots = append(s.Slots, Slot{Start: start + int64(k)*300, In: in[k] * 300 / 8})
	}
	last := (n - 1) * 5
	test := fmt.Sprintf("evaluation_interval: 5m\ntests:\n  - interval: 5m\n    input_series:\n      - series: 'm'\n        values: '%s'\n"+
		"    promql_expr_test:\n      - expr: quantile_over_time(0.95, m[%dm])\n        eval_time: %dm\n        exp_samples:\n          - labels: '{}'\n            value: -1\n",
		strings.Join(vals, " "), last+2, last)
	f := filepath.Join(t.TempDir(), "t.yml")
	if err := os.WriteFile(f, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	outb, _ := exec.Command(bin, "test", "rules", f).CombinedOutput()
	m := regexp.MustCompile(`got: \{\} (\S+)`).FindSubmatch(outb)
	if m == nil {
		t.Fatalf("no value in promtool output:\n%s", outb)
	}
	bps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	billed := strconv.FormatFloat(bps/1e6, 'f', 4, 64)
	p := MonthPeriod(2026, 10, time.UTC)
	rc, err := Reconcile(s, []Period{p}, billed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rc.Matches {
		found = found || f.Method == Linear && f.Direction == DirIn && f.Gaps == "skip"
	}
	if !found {
		t.Errorf("Prometheus billed %s Mbps; matches %+v", billed, rc.Matches)
	}
}

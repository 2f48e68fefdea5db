package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Issue 30: the dashboard's hour-of-day panel gives each hour of the users'
// day (UTC+8) its loss and p95, run by promtool on series with a known
// change. promtool's clock starts at 00:00 UTC = 08:00 in Shanghai; 600
// probes a minute, all answered until minute 60, then 540 of 600 (loss
// 0.1), the answers in the (0.02, 0.05] bucket until minute 60 and in
// (0.05, 0.1] after. With a 2-minute rate window each 1-minute step sees
// the minute before it (the extrapolation is the same for both series of a
// ratio), so by hand:
//
//	hour 8 (steps 1..59 min): loss 0, p95 = 0.02 + 0.95·0.03 = 0.0485 s
//	hour 9 (steps 60..119), Prometheus 3 (a range is open on the left: two
//	  samples): step 60 is clean, 59 steps lose 0.1: loss 5.9/60; answers
//	  600 + 59·540 = 32460, 600 in (0.02, 0.05]: rank 0.95·32460 lies in
//	  (0.05, 0.1] at (0.95·32460 − 600)/(32460 − 600);
//	  Prometheus 2 (closed: three samples): step 61 spans the change (1140
//	  of 1200, loss 0.05), so loss (0.05 + 58·0.1)/60 = 5.85/60; answers per
//	  step 1200, 1140, then 1080 (×58), 1200 + 600 of them in (0.02, 0.05]
//	  at steps 60 and 61: rank 0.95·64980 at (0.95·64980 − 1800)/(64980 − 1800)
//	hour 10 (step 120): loss 0.1, p95 = 0.05 + 0.95·0.05 = 0.0975 s
func TestDashboardHourOfDayPanel(t *testing.T) {
	promtool := needTool(t, "promtool")
	d := loadDashboard(t)
	exprs := map[string]string{}
	for _, p := range d.Panels {
		if strings.HasPrefix(p.Title, "Hour of day") {
			for _, tg := range p.Targets {
				exprs[tg.RefID] = strings.NewReplacer("$__rate_interval", "2m", "$__interval", "1m", "$__range", "2h",
					"$vantage", ".*", "$candidate", ".*").Replace(tg.Expr)
			}
		}
	}
	if exprs["A"] == "" || exprs["B"] == "" {
		t.Fatalf("no hour-of-day panel with a loss (A) and a p95 (B) query: %v", exprs)
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	// 1 − 540/600 in float64 (0.09999999999999998), as the query computes
	// it; Go's constant arithmetic would give 0.1 exactly.
	recv, sent := 540.0, 600.0
	loss9, p95h9 := 5.9/60, 0.05+0.05*(0.95*32460-600)/(32460-600)
	if v, _ := exec.Command(promtool, "--version").CombinedOutput(); strings.Contains(string(v), "version 2.") {
		loss9, p95h9 = 5.85/60, 0.05+0.05*(0.95*64980-1800)/(64980-1800)
	}
	lbl := `job="linecheck",vantage="sh",candidate="c",target="127.0.0.1",protocol="icmp"`
	test := fmt.Sprintf(`rule_files: [empty.rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'linecheck_probes_sent_total{%[1]s}'
        values: '0+600x120'
      - series: 'linecheck_probes_received_total{%[1]s}'
        values: '0+600x60 36540+540x59'
      - series: 'linecheck_rtt_seconds_bucket{%[1]s,le="0.02"}'
        values: '0x120'
      - series: 'linecheck_rtt_seconds_bucket{%[1]s,le="0.05"}'
        values: '0+600x60 36000x59'
      - series: 'linecheck_rtt_seconds_bucket{%[1]s,le="0.1"}'
        values: '0+600x60 36540+540x59'
      - series: 'linecheck_rtt_seconds_bucket{%[1]s,le="+Inf"}'
        values: '0+600x60 36540+540x59'
    promql_expr_test:
      - expr: '%[2]s'
        eval_time: 120m
        exp_samples:
          - {labels: '{hour="8"}', value: 0}
          - {labels: '{hour="9"}', value: %[4]s}
          - {labels: '{hour="10"}', value: %[8]s}
      - expr: '%[3]s'
        eval_time: 120m
        exp_samples:
          - {labels: '{hour="8"}', value: %[5]s}
          - {labels: '{hour="9"}', value: %[6]s}
          - {labels: '{hour="10"}', value: %[7]s}
`, lbl, strings.ReplaceAll(exprs["A"], "'", "''"), strings.ReplaceAll(exprs["B"], "'", "''"),
		g(loss9), g(0.02+0.95*0.03), g(p95h9), g(0.05+0.95*0.05), g(1-recv/sent))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "empty.rules.yml"), []byte("groups: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hours.test.yml"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "hours.test.yml")).CombinedOutput()
	if err != nil {
		t.Errorf("promtool test rules: %v\n%s\n%s", err, out, test)
	}
}

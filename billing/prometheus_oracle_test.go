package billing

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Prometheus as the oracle for the linear method: promtool evaluates
// quantile_over_time(0.95, …) over the same samples (a unit test whose
// expected value is deliberately wrong, so that promtool prints what it got).
func TestP95LinearEqualsPrometheusQuantileOverTime(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getuid() == 0 {
			t.Fatal("promtool is missing (scripts/test installs prometheus)")
		}
		t.Skip("promtool not installed")
	}
	dir := t.TempDir()
	got := regexp.MustCompile(`got: \{\} (\S+)`)
	for i, n := range edgeSizes {
		in, out := oracleData(n, uint64(i+1)*104729)
		for _, vals := range [][]float64{in, out} {
			var b strings.Builder
			for j, v := range vals {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
			}
			// eval at the last sample; the range reaches 2 min before the first one.
			last := (n - 1) * 5
			test := fmt.Sprintf(`evaluation_interval: 5m
tests:
  - interval: 5m
    input_series:
      - series: 'm'
        values: '%s'
    promql_expr_test:
      - expr: quantile_over_time(0.95, m[%dm])
        eval_time: %dm
        exp_samples:
          - labels: '{}'
            value: -1
`, b.String(), last+2, last)
			f := filepath.Join(dir, fmt.Sprintf("t%d.yml", n))
			if err := os.WriteFile(f, []byte(test), 0o644); err != nil {
				t.Fatal(err)
			}
			outb, _ := exec.Command(bin, "test", "rules", f).CombinedOutput()
			m := got.FindSubmatch(outb)
			if m == nil {
				t.Fatalf("n=%d: no value in promtool output:\n%s", n, outb)
			}
			want, err := strconv.ParseFloat(string(m[1]), 64)
			if err != nil {
				t.Fatal(err)
			}
			sorted := append([]float64(nil), vals...)
			s := newSortedSample(sorted, 0)
			if g := s.p95("linear"); math.Abs(g-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("n=%d: linear %v, Prometheus %v", n, g, want)
			}
		}
	}
}

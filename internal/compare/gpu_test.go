package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/gpu"
	"github.com/linecheck/linecheck/internal/verdict"
)

// The bundled scenario with GPU deliveries recorded for two candidates: the
// 8 × H100 SXM5 machine and the 2 × H100 NVL one of internal/gpu/testdata
// (real recorded outputs), both against the same order.
func TestCompareRecordedGPUDelivery(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	abs := func(d string) string {
		p, err := filepath.Abs(filepath.Join("../gpu/testdata", d))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	order := "\n    gpu: {count: 8, model: H100 SXM5, memory_gib: 80, power_limit_w: 700, ecc: true, mig: false}\n"
	s := strings.Replace(string(b), "probes: rec/hk-cn2-gia-ping.ndjson}", "probes: rec/hk-cn2-gia-ping.ndjson, gpu: "+abs("h100-sxm5-8x")+"}"+order, 1)
	s = strings.Replace(s, "probes: rec/tokyo-ping.ndjson}", "probes: rec/tokyo-ping.ndjson, gpu: "+abs("h100-nvl-2x")+"}"+order, 1)
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*verdict.Evaluation{}
	for _, e := range r.Candidates {
		by[e.Name] = e
	}
	hk, tk := by["hk-cn2-gia"].GPU, by["tokyo"].GPU
	if by["hk-bgp"].GPU != nil || hk == nil || tk == nil {
		t.Fatalf("gpu %+v %+v %+v", by["hk-bgp"].GPU, hk, tk)
	}
	if hk.Verdict != gpu.VerdictPass || hk.Cards != 8 || hk.Model != "8 × NVIDIA H100 80GB HBM3 (SXM5)" {
		t.Errorf("hk %+v", hk)
	}
	if tk.Verdict != gpu.VerdictFail || strings.Join(tk.Failed(), ",") != "count,model,power_limit_w" || tk.Cards != 2 {
		t.Errorf("tokyo %+v failed %v", tk, tk.Failed())
	}
	// tokyo's line fails the SLA already: the ranking is the bundled one
	if strings.Join(r.Ranking, ",") != "hk-cn2-gia,hk-bgp,tokyo,la" {
		t.Errorf("ranking %v", r.Ranking)
	}
	warned := false
	for _, w := range by["tokyo"].Warnings {
		warned = warned || strings.Contains(w, "GPU delivery fails the gpu: block: count, model, power_limit_w")
	}
	if !warned {
		t.Errorf("warnings %q", by["tokyo"].Warnings)
	}
	// per delivered card-hour: the converted monthly total / used hours / cards delivered
	for _, e := range []*verdict.Evaluation{by["hk-cn2-gia"], by["tokyo"]} {
		total := e.Monthly.Converted.Amount
		hours := r.Traffic.PeriodEnd.Sub(r.Traffic.PeriodStart).Hours()
		if e.Usage != nil && e.Usage.UsedHours > 0 {
			hours = e.Usage.UsedHours
		}
		want := total.Div(decimal.NewFromFloat(hours).Mul(decimal.NewFromInt(int64(e.GPU.Cards)))).Round(2)
		got := e.GPU.PerDeliveredCardHour.Amount
		if !got.Equal(want) || e.GPU.PerDeliveredCardHour.Currency != r.FXBase {
			t.Errorf("%s: per delivered card-hour %+v, want %s %s (total %s, %g h, %d cards)", e.Name, e.GPU.PerDeliveredCardHour, want, r.FXBase, total, hours, e.GPU.Cards)
		}
	}
	// a gpu: block with a typo is refused with its line
	bad := strings.Replace(s, "power_limit_w: 700, ecc", "power_limt_w: 700, ecc", 1)
	if _, err := candidates.Parse([]byte(bad), samplesFile); err == nil || !strings.Contains(err.Error(), "power_limt_w") || !strings.Contains(err.Error(), "candidates.yaml:") {
		t.Errorf("%v", err)
	}
}

// The gpu: block's watch keys are checked on the samples under load the
// recorded.gpu directory holds (its query-log.csv here: the constructed
// sequence of internal/gpu/testdata, hottest card 90 °C, most throttled 0.4).
func TestCompareRecordedGPUWatchKeys(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{"h100-sxm5-8x/nvidia-smi-q.txt": "nvidia-smi-q.txt", "watch-constructed/query-log.csv": verdict.GPUQueryLog} {
		data, err := os.ReadFile(filepath.Join("../gpu/testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := strings.Replace(string(b), "probes: rec/hk-cn2-gia-ping.ndjson}", "probes: rec/hk-cn2-gia-ping.ndjson, gpu: "+dir+"}\n    gpu: {count: 8, max_temp_c: 85, max_throttle_share: 0.5}\n", 1)
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var g *verdict.GPUDelivery
	for _, e := range r.Candidates {
		if e.Name == "hk-cn2-gia" {
			g = e.GPU
		}
	}
	if g == nil || g.Verdict != gpu.VerdictFail || strings.Join(g.Failed(), ",") != gpu.CheckMaxTempC {
		t.Fatalf("%+v", g)
	}
	for _, c := range g.Checks {
		if c.Name == gpu.CheckMaxThrottleShare && (c.Measured != 0.4 || !c.Pass) {
			t.Errorf("%+v", c)
		}
	}
}

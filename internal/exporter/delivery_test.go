package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A recorded delivery counts in serve as in compare: the candidate whose
// recorded nvidia-smi output (two H100 NVL cards, internal/gpu/testdata)
// fails an order for eight H100 SXM5 has linecheck_delivery_pass{part=gpu}
// 0 and DeliveryFailed [gpu], so /compare does not recommend it; the one
// delivered as ordered (eight H100 SXM5) has 1; a candidate without a
// recorded delivery has no series.
func TestServeJudgesTheRecordedDelivery(t *testing.T) {
	gpuData, err := filepath.Abs("../gpu/testdata")
	if err != nil {
		t.Fatal(err)
	}
	order := "    gpu: {count: 8, model: H100 SXM5}\n"
	path := filepath.Join(t.TempDir(), "c.yaml")
	body := "candidates:\n" +
		"  - name: as-ordered\n    targets: [{addr: 127.0.0.1}]\n    recorded: {gpu: " + gpuData + "/h100-sxm5-8x}\n" + order +
		"  - name: wrong-machine\n    targets: [{addr: 127.0.0.2}]\n    recorded: {gpu: " + gpuData + "/h100-nvl-2x}\n" + order +
		"  - name: unrecorded\n    targets: [{addr: 127.0.0.3}]\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	conf, err := LoadConfig(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil)
	e.SetConfig(conf, time.Now())
	failed := map[string]string{}
	for _, ev := range e.Snapshot() {
		failed[ev.Name] = strings.Join(ev.DeliveryFailed, ",")
	}
	if failed["as-ordered"] != "" || failed["wrong-machine"] != "gpu" || failed["unrecorded"] != "" {
		t.Errorf("delivery failed: %v", failed)
	}
	for cand, want := range map[string]float64{"as-ordered": 1, "wrong-machine": 0} {
		m := metric(t, e, "linecheck_delivery_pass", map[string]string{"candidate": cand, "part": "gpu"})
		if m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("%s: linecheck_delivery_pass{part=gpu} = %v, want %v", cand, m, want)
		}
	}
	if m := metric(t, e, "linecheck_delivery_pass", map[string]string{"candidate": "unrecorded"}); m != nil {
		t.Errorf("a candidate without a recorded delivery has a delivery series: %v", m)
	}
	r := e.Report(time.Now())
	for _, c := range r.Candidates {
		if c.Name == "wrong-machine" && (c.Passes() || r.Recommended == c.Name) {
			t.Errorf("/compare: wrong-machine passes with a failed delivery")
		}
	}
}

package trial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSMI is an nvidia-smi printing a real saved -q -x (one A100) for -q,
// and for --query-gpu the CSV at csv, then waiting as -l does until stopped.
func fakeSMI(t *testing.T, csv string) string {
	t.Helper()
	xml, err := filepath.Abs("../gpu/testdata/a100-sxm4-mig/nvidia-smi-q.xml")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "nvidia-smi")
	script := "#!/bin/sh\ncase \"$1\" in\n-q) exec cat " + xml + ";;\n--query-gpu=*) cat " + csv + "; exec sleep 30;;\nesac\nexit 1\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog
}

// The samples taken during the baseline (the constructed sequence of
// internal/gpu/testdata): by hand, card 0 throttled 4 of 10 samples
// (sw_power_cap 4, sw_thermal_slowdown 1; 0x1 is idle, not throttling),
// card 1 2 of 10 (hw_thermal_slowdown; 0x10 is sync boost), hottest 90 °C:
// the order's max_temp_c 85 fails the part. The log lands in gpu/ as
// compare's recorded.gpu reads it.
func TestBaselineWatchJudgesTheSamples(t *testing.T) {
	csv, _ := filepath.Abs("../gpu/testdata/watch-constructed/query-log.csv")
	c, err := ParseContract([]byte("gpu: {max_temp_c: 85}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	if err := Run(t.Context(), b, Options{Root: t.TempDir(), Contract: c, NVIDIASMI: fakeSMI(t, csv), AllReducePerf: "linecheck-no-arp", IBStat: "linecheck-no-ibstat",
		Baseline: []string{"sleep", "0.5"}}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	bl := partsByName(m)[PartBaseline]
	lines := strings.Join(bl.Lines, "\n")
	for _, w := range []string{
		"GPU 0: 10 samples, throttled 40 % of them, mean utilisation",
		"(sw_power_cap 40 %, sw_thermal_slowdown 10 %)",
		"GPU 1: 10 samples, throttled 20 % of them",
		"(hw_thermal_slowdown 20 %)",
		"max_temp_c: required 85, measured 90 FAIL",
	} {
		if !strings.Contains(lines, w) {
			t.Errorf("lines lack %q:\n%s", w, lines)
		}
	}
	if bl.Status != StatusFail || bl.Reason != "under the baseline the GPUs fail the gpu: block: max_temp_c" {
		t.Errorf("%+v", bl)
	}
	if !strings.Contains(strings.Join(bl.Files, ","), "gpu/query-log.csv") {
		t.Errorf("files %v", bl.Files)
	}
}

// A card busy 30 % of the time and never throttled is starved.
func TestBaselineWatchReportsAStarvedGPU(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "q.csv")
	hdr := "timestamp, index, uuid, temperature.gpu, power.draw [W], power.limit [W], clocks.sm [MHz], clocks.mem [MHz], utilization.gpu [%], utilization.memory [%], clocks_event_reasons.active, ecc.errors.uncorrected.volatile.total, ecc.errors.corrected.volatile.total\n"
	row := func(ts, util string) string {
		return ts + ", 0, GPU-x, 50, 200.00 W, 700.00 W, 1980 MHz, 2619 MHz, " + util + " %, 10 %, 0x0000000000000000, 0, 0\n"
	}
	if err := os.WriteFile(csv, []byte(hdr+row("2026/12/07 06:00:00.000", "20")+row("2026/12/07 06:00:01.000", "40")), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBundle(t)
	if err := Run(t.Context(), b, Options{Root: t.TempDir(), NVIDIASMI: fakeSMI(t, csv), AllReducePerf: "linecheck-no-arp", IBStat: "linecheck-no-ibstat",
		Baseline: []string{"sleep", "0.5"}}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	bl := partsByName(m)[PartBaseline]
	if bl.Status != StatusRan || bl.Reason != "exit status 0; GPU 0 starved (input, network or shared host)" ||
		!strings.Contains(strings.Join(bl.Lines, "\n"), "GPU 0: 2 samples, throttled 0 % of them, mean utilisation 30 %; starved") {
		t.Errorf("%+v", bl)
	}
}

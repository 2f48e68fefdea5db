package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/journal"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// replaySequence writes a stand-in nvidia-smi that only replays the query
// outputs of testdata/watch-constructed, one per call, in order; it is not
// nvidia-smi and answers nothing else.
func replaySequence(t *testing.T) string { return replayFirst(t, 10) }

// replayFirst is replaySequence of the first n samples only: call n+1 fails.
func replayFirst(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "samples")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("sample-%02d.csv", i)
		b, err := os.ReadFile(filepath.Join(gpuTestdata, "watch-constructed", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `#!/bin/sh
# replays recorded query outputs, one per call; it is not nvidia-smi
case "$1" in --query-gpu=*) ;; *) echo "replay stand-in: no recording for $*" >&2; exit 3;; esac
n=$(cat "` + dir + `/count" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "` + dir + `/count"
f=$(printf '` + src + `/sample-%02d.csv' $n)
[ -f "$f" ] || { echo "replay stand-in: no sample $n" >&2; exit 3; }
exec cat "$f"
`
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGPUWatchJournalsSamplesAndReports(t *testing.T) {
	bin := replaySequence(t)
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "TZ=UTC"}
	j := filepath.Join(t.TempDir(), "gpu.ndjson")
	sla := writeContract(t, "gpu:\n  max_temp_c: 85\n  max_throttle_share: 0.25\n")
	// a first run of 4 samples, then a resumed one of 6: one journal of 10
	if _, stderr, code := runLC(t, env, "gpu", "--watch", "--every", "0.01", "--watch-cycles", "4", "--journal", j); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, stderr, code := runLC(t, env, "gpu", "--watch", "--every", "0.01", "--watch-cycles", "6", "--journal", j, "--contract", sla, "--format", "json")
	if code != 1 || !strings.Contains(stderr, "resuming") || !strings.Contains(stderr, "max_temp_c, max_throttle_share") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	entries, info, err := journal.Read(j)
	if err != nil || len(entries) != 10 || info.Torn {
		t.Fatalf("%d entries %+v %v", len(entries), info, err)
	}
	if entries[9].Run != 2 || entries[9].Cycle != 10 || len(entries[9].GPU) != 2 || entries[5].Kind != journal.KindGPU {
		t.Errorf("%+v", entries[9])
	}
	var d struct {
		Schema string `json:"schema"`
		Cards  []struct {
			Samples       int                `json:"samples"`
			MaxTempC      float64            `json:"max_temp_c"`
			ThrottleShare float64            `json:"throttle_share"`
			ByReason      map[string]float64 `json:"throttle_share_by_reason"`
		} `json:"cards"`
		Checks  []map[string]any `json:"checks"`
		Verdict string           `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Schema != "linecheck.gpu-watch/v1" || len(d.Cards) != 2 || d.Cards[0].Samples != 10 || d.Cards[0].ThrottleShare != 0.4 ||
		d.Cards[0].ByReason["sw_power_cap"] != 0.4 || d.Cards[1].MaxTempC != 90 || d.Cards[1].ByReason["hw_thermal_slowdown"] != 0.2 || d.Verdict != "fail" {
		t.Errorf("%s", out)
	}
	// --report over the journal draws the curve; over the provider's log, the same figures
	plot := filepath.Join(t.TempDir(), "temp.svg")
	out, _, code = runLC(t, env, "gpu", "--report", "--journal", j, "--plot", plot, "--wide")
	if code != 0 || !strings.Contains(out, "sw_power_cap 40.0%, sw_thermal_slowdown 10.0%") || !strings.Contains(out, "hw_thermal_slowdown 20.0%") {
		t.Errorf("exit %d\n%s", code, out)
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !strings.Contains(string(svg), "<svg") || !strings.Contains(string(svg), "GPU1") {
		t.Errorf("plot: %v", err)
	}
	out2, _, code := runLC(t, env, "gpu", "--report", "--query-log", gpuTestdata+"/watch-constructed/query-log.csv", "--tz", "UTC", "--wide")
	if code != 0 || strings.SplitN(out2, "\n", 2)[1] != strings.SplitN(out, "\n", 2)[1] {
		t.Errorf("exit %d: the log and the journal differ:\n%s\n%s", code, out2, out)
	}
	// a broken log: exit 2 with its line
	bad := filepath.Join(t.TempDir(), "log.csv")
	os.WriteFile(bad, []byte("timestamp, index, temperature.gpu\n2024/11/14 07:10:00.000, 0, hot\n"), 0o644)
	if _, stderr, code := runLC(t, env, "gpu", "--report", "--query-log", bad); code != 2 || !strings.Contains(stderr, bad+`:2: column temperature.gpu: "hot" is not a number`) {
		t.Errorf("exit %d %s", code, stderr)
	}
}

// serve --gpu-every exports what the samples say: four replayed samples
// (then the stand-in has none: an error is counted and the figures stay).
func TestServeExportsGPUMetrics(t *testing.T) {
	bin := replayFirst(t, 4)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	port := testbin.TCPListener(t)
	cfg := filepath.Join(t.TempDir(), "candidates.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("candidates:\n  - name: loopback\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: %d}]\n", port)), 0o644)
	_, log, listen := startServe(t, "--config", cfg, "--count", "2", "--interval", "200ms", "--gpu-every", "1s")
	var body string
	waitFor(t, 30*time.Second, "a GPU sample error after the four replayed samples", func() bool {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var sb strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		body = sb.String()
		return strings.Contains(body, "linecheck_gpu_sample_errors_total 1")
	})
	u0 := `gpu="0",uuid="GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"`
	u1 := `gpu="1",uuid="GPU-7c3cadbd-17e5-0913-f69b-c618122ea0cd"`
	for _, want := range []string{
		"linecheck_gpu_samples_total{" + u0 + "} 4",
		"linecheck_gpu_temperature_celsius{" + u0 + "} 74",
		"linecheck_gpu_temperature_celsius{" + u1 + "} 76",
		"linecheck_gpu_power_watts{" + u0 + "} 698",
		"linecheck_gpu_power_limit_watts{" + u0 + "} 700",
		"linecheck_gpu_sm_clock_hertz{" + u0 + "} 1.74e+09",
		"linecheck_gpu_utilization_ratio{" + u0 + "} 1",
		// card 0 held the SW power cap in samples 3 and 4 of the four
		`linecheck_gpu_throttled_samples_total{gpu="0",reason="any",uuid="GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"} 2`,
		`linecheck_gpu_throttled_samples_total{gpu="0",reason="sw_power_cap",uuid="GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"} 2`,
		`linecheck_gpu_throttled{gpu="0",reason="sw_power_cap",uuid="GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"} 1`,
		`linecheck_gpu_throttled_samples_total{gpu="1",reason="any",uuid="GPU-7c3cadbd-17e5-0913-f69b-c618122ea0cd"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, gpuLines(body))
		}
	}
	if !strings.Contains(log.String(), "GPU samples every 1s") {
		t.Errorf("log: %s", log.String())
	}
}

func gpuLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "linecheck_gpu") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

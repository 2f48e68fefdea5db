package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/trial"
)

// realDriverBaseline is the small baseline the real-driver trial runs: the
// command in LINECHECK_TRIAL_BASELINE (a shell line), else a minute of
// matrix multiplies through PyTorch when it imports with CUDA, else a
// minute of all_reduce_perf when nccl-tests are installed, else a minute of
// nothing (the GPUs idle: the samples are still taken and judged starved).
// what says which, for the log.
func realDriverBaseline(t *testing.T) (cmd []string, what string) {
	if s := os.Getenv("LINECHECK_TRIAL_BASELINE"); s != "" {
		return []string{"sh", "-c", s}, "LINECHECK_TRIAL_BASELINE"
	}
	const torch = `import time, torch
a = torch.randn(8192, 8192, device="cuda"); b = torch.randn(8192, 8192, device="cuda")
end = time.time() + 60
while time.time() < end:
    c = a @ b
torch.cuda.synchronize()`
	if exec.Command("python3", "-c", "import torch; assert torch.cuda.is_available()").Run() == nil {
		return []string{"python3", "-c", torch}, "a minute of 8192² matrix multiplies (PyTorch)"
	}
	if p, err := exec.LookPath("all_reduce_perf"); err == nil {
		return []string{"sh", "-c", "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do " + p + " -b 64M -e 1G -f 2 -g 1 || exit; done"},
			"a minute of all_reduce_perf"
	}
	return []string{"sleep", "60"}, "a minute idle (neither PyTorch with CUDA nor all_reduce_perf here)"
}

// On a machine with an NVIDIA GPU, trial runs against the real driver with
// a minute's baseline and fills every field of the bundle: the manifest
// verifies, host, gpu and baseline ran (the gpu part judged, not "not
// checked"), nvidia-smi's outputs and the samples taken during the
// baseline are in gpu/ (a sample a second or so: at least 20 for the
// minute, a bound a busy machine keeps), baseline.json holds the wall time
// and exit status 0, and compare reads the bundle unedited as
// recorded: {trial: DIR}. Elsewhere the test skips, saying why.
func TestTrialRealDriverFillsTheBundle(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Skip("no nvidia-smi on this machine (no NVIDIA GPU or driver): the real-driver trial runs only where one is")
	}
	if err := exec.Command("nvidia-smi", "-L").Run(); err != nil {
		t.Skipf("nvidia-smi is here but lists no GPU (%v): the real-driver trial needs a working driver", err)
	}
	baseline, what := realDriverBaseline(t)
	t.Logf("baseline: %s", what)
	dir := t.TempDir()
	out := filepath.Join(dir, "bundle")
	args := append([]string{"trial", "--out", out, "--"}, baseline...)
	stdout, stderr, code := runLC(t, nil, args...)
	t.Logf("exit %d\n%s", code, stdout)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	m, err := trial.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Complete || m.Interrupted || m.Host.Hostname == "" || m.Host.Kernel == "" || m.Host.Form == "" || m.Ended.Before(m.Started) {
		t.Errorf("manifest: complete %v interrupted %v host %+v started %v ended %v", m.Complete, m.Interrupted, m.Host, m.Started, m.Ended)
	}
	if m.Versions["linecheck"] == "" || m.Versions["nvidia_driver"] == "" || m.Versions["cuda"] == "" {
		t.Errorf("versions: %v", m.Versions)
	}
	st := map[string]trial.Part{}
	for _, p := range m.Parts {
		st[p.Name] = p
	}
	for _, name := range []string{trial.PartHost, trial.PartGPU, trial.PartBaseline} {
		p, ok := st[name]
		if !ok || p.Status == trial.StatusNotChecked || p.Status == trial.StatusError || p.Status == trial.StatusInterrupted {
			t.Errorf("part %s: %+v", name, p)
		}
	}
	files := map[string]bool{}
	for _, f := range m.Files {
		files[f.Path] = f.SHA256 != "" && f.Bytes > 0
	}
	for _, f := range []string{"host.json", "gpu/nvidia-smi-q.xml", "gpu/" + trial.QueryLogFile, trial.BaselineFile,
		"summary.txt", "summary.md", "summary.json", "summary.html"} {
		if !files[f] {
			t.Errorf("%s missing or empty in the manifest", f)
		}
	}
	var rec trial.BaselineRecord
	if b, err := os.ReadFile(filepath.Join(out, trial.BaselineFile)); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ExitCode == nil || *rec.ExitCode != 0 || rec.WallS < 50 {
		t.Errorf("baseline: %+v", rec)
	}
	f, err := os.Open(filepath.Join(out, "gpu", trial.QueryLogFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 21 {
		t.Errorf("%d rows of GPU samples during a minute's baseline", len(rows))
	}
	// The cards' fields, read back from the bundle as gpu --from reads a
	// provider's files.
	gout, gerr, gcode := runLC(t, nil, "gpu", "--from", filepath.Join(out, "gpu"), "--format", "json")
	if gcode != 0 {
		t.Fatalf("gpu --from the bundle: exit %d: %s", gcode, gerr)
	}
	var g map[string]any
	if err := json.Unmarshal([]byte(gout), &g); err != nil {
		t.Fatal(err)
	}
	cards, _ := g["cards"].([]any)
	if len(cards) == 0 {
		t.Fatal("no card in the bundle's nvidia-smi output")
	}
	for i, c := range cards {
		cm := c.(map[string]any)
		for _, k := range []string{"name", "bus_id", "uuid", "memory_mib", "power_limit_w", "form_factor"} {
			if v, ok := cm[k]; !ok || v == nil || v == "" {
				t.Errorf("card %d: %s empty", i, k)
			}
		}
	}
	// compare reads the bundle unedited, as the bundled scenario's first
	// candidate's recorded.trial.
	src, err := os.ReadFile("../../samples/candidates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Abs("../../samples")
	y := strings.ReplaceAll(string(src), "rec/", samples+"/rec/")
	y = strings.Replace(y, "offers: offers.yaml", "offers: "+samples+"/offers.yaml", 1)
	y = strings.Replace(y, "traffic: {log: traffic/", "traffic: {log: "+samples+"/traffic/", 1)
	y = strings.Replace(y, "hk-cn2-gia-ping.ndjson}", "hk-cn2-gia-ping.ndjson, trial: "+out+"}", 1)
	cands := filepath.Join(dir, "candidates.yaml")
	if err := os.WriteFile(cands, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cout, cerr, ccode := runLC(t, nil, "compare", "--offline", cands)
	if ccode == 2 || !strings.Contains(cout, "hk-cn2-gia") || !strings.Contains(cout, "GPU delivery") {
		t.Errorf("compare on the bundle: exit %d\n%s\n%s", ccode, cout, cerr)
	}
}

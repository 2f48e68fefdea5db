package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

const gpuTestdata = "../../internal/gpu/testdata"

// runLC runs the built binary (a fresh process: the options of one run do
// not carry into the next) and returns stdout, stderr and the exit code.
func runLC(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testbin.Linecheck(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

func writeContract(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "order.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type gpuJSON struct {
	Schema string `json:"schema"`
	Cards  []struct {
		Name       string   `json:"name"`
		FormFactor string   `json:"form_factor"`
		MemoryMiB  *float64 `json:"memory_mib"`
	} `json:"cards"`
	Checks []struct {
		Name     string `json:"name"`
		Required any    `json:"required"`
		Measured any    `json:"measured"`
		Pass     bool   `json:"pass"`
	} `json:"checks"`
	Verdict string `json:"verdict"`
}

func TestGPUFromRecordedOutputsJSONAndExitCodes(t *testing.T) {
	order := writeContract(t, "gpu:\n  count: 8\n  model: H100 SXM5\n  memory_gib: 80\n  power_limit_w: 700\n  pcie_gen: 5\n  ecc: true\n  mig: false\n")
	out, stderr, code := runLC(t, nil, "gpu", "--from", gpuTestdata+"/h100-sxm5-8x", "--contract", order, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d gpuJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Schema != "linecheck.gpu/v1" || len(d.Cards) != 8 || d.Cards[7].FormFactor != "SXM5" || d.Verdict != "pass" || len(d.Checks) != 7 {
		t.Fatalf("%+v", d)
	}
	for _, c := range d.Checks {
		if !c.Pass || c.Required == nil || c.Measured == nil {
			t.Errorf("%+v", c)
		}
	}
	// the same order against the H100 NVL pair: exit 1, the failed checks named
	out, stderr, code = runLC(t, nil, "gpu", "--from", gpuTestdata+"/h100-nvl-2x", "--contract", order)
	if code != 1 || !strings.Contains(stderr, "count, model, power_limit_w") || !strings.Contains(out, "Delivery against the contract: FAIL") {
		t.Errorf("exit %d stderr %q\n%s", code, stderr, out)
	}
	// only a topo matrix, as forums paste it: cards counted, interconnect checked
	out, stderr, code = runLC(t, nil, "gpu", "--topo", gpuTestdata+"/rtx4090-8x-topo/topo.txt",
		"--contract", writeContract(t, "gpu: {count: 8, interconnect: nvlink-pairs}"), "--format", "csv")
	if code != 1 || !strings.Contains(out, "interconnect,nvlink-pairs,pcie,FAIL") || !strings.Contains(out, "count,8,8,pass") {
		t.Errorf("exit %d stderr %q\n%s", code, stderr, out)
	}
	out, _, code = runLC(t, nil, "gpu", "--topo", gpuTestdata+"/h100-sxm5-8x-topo/topo.txt", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "| GPU0 | X | NV18 |") || !strings.Contains(out, "interconnect: nvlink-all-pairs (28 pairs NV18)") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestGPUBadInputExits2NamingFileAndLine(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(gpuTestdata + "/a100-sxm4-mig/nvidia-smi-q.xml")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "nvidia-smi-q.xml")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runLC(t, nil, "gpu", "--from", dir)
	if code != 2 || out != "" || !strings.Contains(stderr, cut+":") || !strings.Contains(stderr, "not well-formed XML") {
		t.Errorf("exit %d out %q stderr %q", code, out, stderr)
	}
	_, stderr, code = runLC(t, nil, "gpu", "--from", gpuTestdata+"/h100-nvl-2x", "--contract", writeContract(t, "gpu:\n  count: 2\n  eccc: true\n"))
	if code != 2 || !strings.Contains(stderr, "order.yaml:3") || !strings.Contains(stderr, "eccc") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
	_, stderr, code = runLC(t, nil, "gpu", "--from", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "none of nvidia-smi-q.xml") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
	_, stderr, code = runLC(t, []string{"PATH=" + t.TempDir()}, "gpu")
	if code != 2 || !strings.Contains(stderr, "nvidia-smi not found") || !strings.Contains(stderr, "--from DIR") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
}

// The live path (nvidia-smi run here) on a machine without a GPU: a
// stand-in program that only replays a recorded `nvidia-smi -q -x` (the
// A100 MIG machine of testdata) and refuses every other command line, as
// topo -m is refused on a machine without the matrix.
func TestGPULiveRunsNVIDIASMIReplayingARecordedOutput(t *testing.T) {
	dir := t.TempDir()
	xml, err := filepath.Abs(gpuTestdata + "/a100-sxm4-mig/nvidia-smi-q.xml")
	if err != nil {
		t.Fatal(err)
	}
	stand := filepath.Join(dir, "nvidia-smi")
	script := "#!/bin/sh\n# replays a recorded output; it is not nvidia-smi\nif [ \"$*\" = \"-q -x\" ]; then exec cat '" + xml + "'; fi\necho \"replay stand-in: no recording for $*\" >&2\nexit 3\n"
	if err := os.WriteFile(stand, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runLC(t, []string{"PATH=" + dir + ":" + os.Getenv("PATH")}, "gpu", "--format", "json",
		"--contract", writeContract(t, "gpu: {count: 1, model: A100 SXM4, mig: false}"))
	var d gpuJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d %s: %v\n%s", code, stderr, err, out)
	}
	if code != 1 || len(d.Cards) != 1 || d.Cards[0].Name != "NVIDIA A100-SXM4-40GB" || d.Cards[0].FormFactor != "SXM4" {
		t.Errorf("exit %d %+v", code, d)
	}
	for _, c := range d.Checks {
		if (c.Name == "mig") == c.Pass {
			t.Errorf("%+v", c)
		}
	}
}

// On a machine with an NVIDIA GPU the real nvidia-smi runs and every field
// the cards table shows must be filled.
func TestGPURealNVIDIASMIFillsEveryField(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Skip("no nvidia-smi on this machine (no NVIDIA GPU or driver): the real-driver check runs only where one is")
	}
	if err := exec.Command("nvidia-smi", "-L").Run(); err != nil {
		t.Skipf("nvidia-smi is here but lists no GPU (%v): the real-driver check needs a working driver", err)
	}
	out, stderr, code := runLC(t, nil, "gpu", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	cards, _ := d["cards"].([]any)
	if len(cards) == 0 {
		t.Fatal("no card")
	}
	for i, c := range cards {
		m := c.(map[string]any)
		for _, f := range []string{"name", "bus_id", "uuid", "memory_mib", "power_limit_w", "default_power_limit_w", "max_power_limit_w",
			"pcie_gen_current", "pcie_gen_max", "pcie_width_current", "pcie_width_max", "ecc", "mig", "form_factor"} {
			if v, ok := m[f]; !ok || v == nil || v == "" {
				t.Errorf("card %d: %s empty", i, f)
			}
		}
		if m["form_factor"] == "unknown" {
			t.Errorf("card %d: form factor unknown: %v", i, m["form_factor_evidence"])
		}
	}
	if d["driver_version"] == nil || d["cuda_version"] == nil {
		t.Errorf("driver %v cuda %v", d["driver_version"], d["cuda_version"])
	}
}

// compare puts the delivery verdict of recorded.gpu beside the line's, in
// every format and in the HTML report.
func TestCompareShowsGPUDeliveryInEveryFormat(t *testing.T) {
	b, err := os.ReadFile("../../samples/candidates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Abs("../../samples")
	td, _ := filepath.Abs(gpuTestdata)
	s := strings.ReplaceAll(string(b), "rec/", samples+"/rec/")
	s = strings.Replace(s, "offers: offers.yaml", "offers: "+samples+"/offers.yaml", 1)
	s = strings.Replace(s, "traffic: {log: traffic/", "traffic: {log: "+samples+"/traffic/", 1)
	order := "\n    gpu: {count: 8, model: H100 SXM5, power_limit_w: 700}\n"
	s = strings.Replace(s, "hk-cn2-gia-ping.ndjson}", "hk-cn2-gia-ping.ndjson, gpu: "+td+"/h100-sxm5-8x}"+order, 1)
	s = strings.Replace(s, "tokyo-ping.ndjson}", "tokyo-ping.ndjson, gpu: "+td+"/h100-nvl-2x}"+order, 1)
	cands := filepath.Join(t.TempDir(), "candidates.yaml")
	if err := os.WriteFile(cands, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, _ := runLC(t, nil, "compare", "--offline", cands, "--wide")
	if !strings.Contains(out, "GPU delivery (recorded nvidia-smi outputs") || !strings.Contains(out, "count, model, power_limit_w") {
		t.Fatalf("%s\n%s", stderr, out)
	}
	// the ranking's GPU column, beside SLA
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 12 || (f[0] != "1" && f[0] != "2" && f[0] != "3") {
			continue // not a ranking row
		}
		switch f[1] {
		case "hk-cn2-gia":
			if !strings.Contains(l, " pass  pass ") {
				t.Errorf("hk-cn2-gia ranking row: %q", l)
			}
		case "hk-bgp":
			if !strings.Contains(l, " FAIL  -  ") {
				t.Errorf("hk-bgp row without recorded.gpu: %q", l)
			}
		case "tokyo":
			if !strings.Contains(l, " FAIL  FAIL ") {
				t.Errorf("tokyo ranking row: %q", l)
			}
		}
	}
	md, _, _ := runLC(t, nil, "compare", "--offline", cands, "--format", "markdown")
	if !strings.Contains(md, "| SLA | GPU |") || !strings.Contains(md, "GPU delivery") {
		t.Errorf("markdown:\n%s", md)
	}
	csv, _, _ := runLC(t, nil, "compare", "--offline", cands, "--format", "csv", "--table", "gpu")
	if !strings.HasPrefix(csv, "candidate,delivered,cards,interconnect,delivery,failed_checks,per_delivered_card_hour,currency,source\n") ||
		!strings.Contains(csv, "tokyo,2 × NVIDIA H100 NVL (NVL),2,,FAIL,\"count, model, power_limit_w\",") {
		t.Errorf("csv:\n%s", csv)
	}
	js, _, _ := runLC(t, nil, "compare", "--offline", cands, "--format", "json")
	var doc struct {
		Candidates []struct {
			Name string `json:"name"`
			GPU  *struct {
				Verdict string `json:"verdict"`
				Per     *struct {
					Amount string `json:"amount"`
				} `json:"per_delivered_card_hour"`
			} `json:"gpu"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range doc.Candidates {
		if c.GPU != nil {
			seen++
			if c.GPU.Per == nil || c.GPU.Per.Amount == "" {
				t.Errorf("%s: no per delivered card-hour", c.Name)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d candidates with gpu in JSON", seen)
	}
	html, _, _ := runLC(t, nil, "compare", "--offline", cands, "--format", "html")
	if !strings.Contains(html, "<h2>GPU delivery</h2>") || !strings.Contains(html, "<th>GPU</th>") {
		t.Errorf("html has no GPU delivery")
	}
}

package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linecheck/linecheck/internal/candidates"
	"github.com/linecheck/linecheck/internal/testkit/testbin"
	"github.com/linecheck/linecheck/internal/verdict"
)

// gpuFixture is the absolute path of a recorded.gpu directory of
// internal/gpu/testdata (real nvidia-smi outputs).
func gpuFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../gpu/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withDelivery gives candidate cand of a samples file text a recorded.gpu
// directory and the order for 8 × H100 SXM5 80 GB.
func withDelivery(t *testing.T, s, cand, dir string) string {
	t.Helper()
	old := cand + "-ping.ndjson}"
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("no %q in the samples", old)
	}
	order := "\n    gpu: {count: 8, model: H100 SXM5, memory_gib: 80, power_limit_w: 700, ecc: true, mig: false}\n"
	return s[:i] + strings.TrimSuffix(old, "}") + ", gpu: " + dir + "}" + order + s[i+len(old):]
}

// The case: two candidates whose lines pass the same SLA, the
// cheaper one (tokyo, 95,129.47 CNY against hk-cn2-gia's 144,691.54)
// delivered as 2 × H100 NVL against an order for 8 × H100 SXM5 80 GB. Its
// failed delivery fails it: hk-cn2-gia is recommended, tokyo ranks among the
// failing and a note names the part and the checks that failed. Under
// --advisory-delivery the delivery is a warning only and tokyo is
// recommended, as before.
func TestFailedDeliveryIsNeverRecommended(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	// Without line_classes tokyo's line passes too (it failed that check only).
	s := strings.Replace(string(b), "line_classes: [cn2-gia, cu-9929, cmin2], ", "", 1)
	s = withDelivery(t, s, "hk-cn2-gia", gpuFixture(t, "h100-sxm5-8x"))
	s = withDelivery(t, s, "tokyo", gpuFixture(t, "h100-nvl-2x"))
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	run := func(advisory bool) (*Result, map[string]*verdict.Evaluation) {
		r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), AdvisoryDelivery: advisory})
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]*verdict.Evaluation{}
		for _, e := range r.Candidates {
			by[e.Name] = e
		}
		return r, by
	}

	r, by := run(false)
	hk, tk := by["hk-cn2-gia"], by["tokyo"]
	// The premise: both lines pass and tokyo is the cheaper.
	if !hk.SLA.Pass || !tk.SLA.Pass {
		t.Fatalf("SLA: hk-cn2-gia %v, tokyo %v; want both passing", hk.SLA.Pass, tk.SLA.Pass)
	}
	ch, _ := hk.Cost()
	ct, _ := tk.Cost()
	if !ct.LessThan(ch) {
		t.Fatalf("tokyo %s is not cheaper than hk-cn2-gia %s", ct, ch)
	}
	if r.Recommended != "hk-cn2-gia" {
		t.Errorf("recommended %q, want hk-cn2-gia (tokyo's delivery fails)", r.Recommended)
	}
	if strings.Join(tk.DeliveryFailed, ",") != "gpu" || len(hk.DeliveryFailed) != 0 || tk.Passes() || !hk.Passes() {
		t.Errorf("delivery failed: tokyo %v, hk-cn2-gia %v", tk.DeliveryFailed, hk.DeliveryFailed)
	}
	// Passing first: hk-cn2-gia alone; tokyo among the failing by cost
	// (hk-bgp 58,800 < tokyo 95,129 < la 109,099).
	if got := strings.Join(r.Ranking, ","); got != "hk-cn2-gia,hk-bgp,tokyo,la" {
		t.Errorf("ranking %s", got)
	}
	if r.Passing() != 1 || r.Savings != nil {
		t.Errorf("passing %d, savings %+v", r.Passing(), r.Savings)
	}
	if !strings.HasPrefix(r.Verdict, "2 of 4 candidates pass the SLA (1 of them fails its recorded delivery); recommended: hk-cn2-gia") {
		t.Errorf("verdict %q", r.Verdict)
	}
	noted := false
	for _, n := range r.Notes {
		noted = noted || strings.HasPrefix(n, "tokyo would cost 95,129.47 CNY (49,562.07 less than hk-cn2-gia) but fails GPU delivery (count, model, power_limit_w)")
	}
	if !noted {
		t.Errorf("no note names tokyo's failed GPU delivery: %q", r.Notes)
	}

	r, by = run(true)
	if r.Recommended != "tokyo" || len(by["tokyo"].DeliveryFailed) != 0 || r.Passing() != 2 {
		t.Errorf("advisory: recommended %q, tokyo delivery failed %v, passing %d", r.Recommended, by["tokyo"].DeliveryFailed, r.Passing())
	}
	warned := false
	for _, w := range by["tokyo"].Warnings {
		warned = warned || strings.Contains(w, "GPU delivery fails the gpu: block: count, model, power_limit_w") && strings.Contains(w, "advisory only")
	}
	if !warned {
		t.Errorf("advisory: warnings %q", by["tokyo"].Warnings)
	}
}

// The exit code follows the verdict: the only candidate whose line passes
// (hk-cn2-gia in the samples) with a failed delivery leaves none passing,
// exit 1; --advisory-delivery keeps it a warning, exit 0; --strict counts a
// failed delivery as a failure.
func TestFailedDeliveryExitCodes(t *testing.T) {
	bin := testbin.Linecheck(t)
	b, err := os.ReadFile(samplesCopy(t, "{rtt_p95_ms: 60, loss: 0.005, jitter_rfc3550_ms: 5, line_classes: [cn2-gia, cu-9929, cmin2], max_stretch: 2.5}"))
	if err != nil {
		t.Fatal(err)
	}
	s := withDelivery(t, string(b), "hk-cn2-gia", gpuFixture(t, "h100-nvl-2x"))
	wrong := filepath.Join(t.TempDir(), "wrong.yaml")
	if err := os.WriteFile(wrong, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"delivery fails the only passing line", []string{"--offline", wrong}, 1, "GPU  ", "no candidate passes: 1 of 4 pass the SLA but fail their recorded delivery"},
		{"advisory", []string{"--offline", "--advisory-delivery", wrong}, 0, "Recommended: hk-cn2-gia", ""},
		{"json", []string{"--offline", "--format", "json", wrong}, 1, "\"delivery_failed\": [\n        \"gpu\"\n      ]", "no candidate passes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"compare"}, tc.args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if code := exitCode(err); code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) || !strings.Contains(string(out), tc.stdout) {
				t.Errorf("stdout lacks %q or stderr lacks %q\nstdout:\n%s\nstderr: %s", tc.stdout, tc.stderr, out, stderr.String())
			}
			if tc.code == 1 && strings.Contains(string(out), "Recommended: hk-cn2-gia") {
				t.Errorf("a failed delivery is recommended:\n%s", out)
			}
		})
	}
}

// serve's /compare document (SnapshotResult) judges the recorded delivery
// as compare does: the evaluations serve passes carry none, and the
// snapshot reads and fails it.
func TestSnapshotResultFailsAFailedDelivery(t *testing.T) {
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "line_classes: [cn2-gia, cu-9929, cmin2], ", "", 1)
	s = withDelivery(t, s, "tokyo", gpuFixture(t, "h100-nvl-2x"))
	f, err := candidates.Parse([]byte(s), samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), f, Options{Offline: true, Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), AdvisoryDelivery: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended != "tokyo" {
		t.Fatalf("premise: advisory recommends tokyo, got %q", r.Recommended)
	}
	var evs []*verdict.Evaluation
	for _, e := range r.Candidates {
		c := *e
		c.GPU, c.DeliveryFailed, c.Warnings = nil, nil, nil
		evs = append(evs, &c)
	}
	snap := SnapshotResult(f, nil, evs, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	if snap.Recommended != "hk-cn2-gia" {
		t.Errorf("the snapshot recommends %q, want hk-cn2-gia (tokyo's delivery fails; verdict %q)", snap.Recommended, snap.Verdict)
	}
	for _, e := range snap.Candidates {
		if e.Name == "tokyo" && strings.Join(e.DeliveryFailed, ",") != "gpu" {
			t.Errorf("tokyo delivery failed %v", e.DeliveryFailed)
		}
	}
}

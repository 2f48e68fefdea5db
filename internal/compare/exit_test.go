package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linecheck/linecheck/internal/testkit/testbin"
)

// samplesCopy writes a copy of the bundled candidates file into a temp dir
// with absolute paths and the SLA line replaced by sla.
func samplesCopy(t *testing.T, sla string) string {
	t.Helper()
	b, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Dir(samplesFile))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "sla:") {
			l = "sla: " + sla
		}
		l = strings.ReplaceAll(l, " rec/", " "+abs+"/rec/")
		l = strings.ReplaceAll(l, "offers: offers.yaml", "offers: "+abs+"/offers.yaml")
		l = strings.ReplaceAll(l, "log: traffic/", "log: "+abs+"/traffic/")
		lines = append(lines, l)
	}
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	bin := testbin.Linecheck(t)
	noneCan := samplesCopy(t, "{rtt_p95_ms: 20}")
	allPass := samplesCopy(t, "{rtt_p95_ms: 500}")
	badYAML := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("vantage: {city: Shanghai}\ncandidates:\n  - name: x\n    targets: [{addr: 127.0.0.1, protocol: tcp}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"offline samples: one passes", []string{"--offline", samplesFile}, 0, ""},
		{"strict: three of four fail", []string{"--offline", "--strict", samplesFile}, 1, "--strict: 3 of 4 candidates fail"},
		{"none passes", []string{"--offline", noneCan}, 1, "no candidate passes"},
		{"strict, all pass", []string{"--offline", "--strict", allPass}, 0, ""},
		{"samples refused live", []string{samplesFile}, 2, "recorded_only"},
		{"bad format", []string{"--offline", "--format", "xml", samplesFile}, 2, `--format "xml"`},
		{"missing file", []string{"--offline", "/nonexistent/c.yaml"}, 2, "no such file"},
		{"bad input names file and line", []string{"--offline", badYAML}, 2, "bad.yaml:4: candidates[0] (x).targets[0].port: required for protocol tcp"},
		{"no argument", nil, 2, "compare takes one CANDIDATES.yaml, got none"},
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
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.stderr)
			}
			if tc.code != 2 && !strings.Contains(string(out), "Ranking") {
				t.Errorf("no report on stdout before the verdict:\n%s", out)
			}
		})
	}
}

// TestOfflineNeedsNoNetwork runs the offline samples in a network namespace
// with no interface up: nothing can be sent, and the report is complete.
func TestOfflineNeedsNoNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for unshare -n (a network namespace without interfaces)")
	}
	bin := testbin.Linecheck(t)
	out, err := exec.Command("unshare", "-n", bin, "compare", "--offline", "--format", "markdown", samplesFile).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Recommended: hk-cn2-gia") {
		t.Errorf("report:\n%s", out)
	}
}

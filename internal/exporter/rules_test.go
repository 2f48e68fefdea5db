package exporter

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The example rules and configuration of docs/scaleout.md are checked by
// promtool itself, and the alerts are unit-tested against hand-computed
// series (deploy/prometheus/tests).
func TestExampleRulesPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatal("promtool missing (Debian package prometheus); CI installs it")
		}
		t.Skip("promtool not installed and not root")
	}
	docs := filepath.Join("..", "..", "deploy", "prometheus")
	rules, _ := filepath.Glob(filepath.Join(docs, "*.rules.yml"))
	tests, _ := filepath.Glob(filepath.Join(docs, "tests", "*.yml"))
	if len(rules) == 0 || len(tests) == 0 {
		t.Fatalf("no rule files (%v) or rule tests (%v) under %s", rules, tests, docs)
	}
	for _, args := range [][]string{
		append([]string{"check", "rules"}, rules...),
		{"check", "config", filepath.Join(docs, "prometheus.yml")},
		append([]string{"test", "rules"}, tests...),
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

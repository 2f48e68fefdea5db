package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sla.min_path_mtu offline: the bundled scenario with the threshold at 1500
// and one candidate's recorded forward trace carrying the mtu of a `trace
// --mtu` (1400): that candidate fails the check with 1400 measured, the
// others fail it with "no data" (nothing measured), and the report says it.
func TestCompareMinPathMTUFromARecordedForwardTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../samples")); err != nil {
		t.Fatal(err)
	}
	cands := filepath.Join(dir, "candidates.yaml")
	b, err := os.ReadFile(cands)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nsla: {") {
		t.Fatal("the bundled candidates file has no sla line")
	}
	os.WriteFile(cands, []byte(strings.Replace(string(b), "\nsla: {", "\nsla: {min_path_mtu: 1500, ", 1)), 0o644)
	fwd := filepath.Join(dir, "rec", "hk-cn2-gia-forward.json")
	b, err = os.ReadFile(fwd)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["mtu"] = map[string]any{"path_mtu_bytes": 1400, "start_bytes": 1500,
		"drops": []any{map[string]any{"ttl": 3, "mtu_bytes": 1400, "reported_by": "10.77.1.2"}}}
	b, _ = json.Marshal(doc)
	os.WriteFile(fwd, b, 0o644)

	out, code := runCapture(t, "compare", "--offline", "--format", "json", cands)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (no candidate passes min_path_mtu 1500):\n%.3000s", code, out)
	}
	var res struct {
		SLA struct {
			MinPathMTU *int `json:"min_path_mtu"`
		} `json:"sla"`
		Candidates []struct {
			Name  string `json:"name"`
			Route struct {
				PathMTU int `json:"path_mtu_bytes"`
			} `json:"route"`
			Verdict struct {
				Checks []struct {
					Name     string `json:"name"`
					Measured any    `json:"measured"`
					Pass     bool   `json:"pass"`
					Note     string `json:"note"`
				} `json:"checks"`
			} `json:"sla"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%.2000s", err, out)
	}
	if res.SLA.MinPathMTU == nil || *res.SLA.MinPathMTU != 1500 {
		t.Errorf("sla.min_path_mtu %v, want 1500", res.SLA.MinPathMTU)
	}
	seen := 0
	for _, c := range res.Candidates {
		for _, ch := range c.Verdict.Checks {
			if ch.Name != "min_path_mtu" {
				continue
			}
			seen++
			switch {
			case ch.Pass:
				t.Errorf("%s: min_path_mtu passed: %+v", c.Name, ch)
			case c.Name == "hk-cn2-gia" && (ch.Measured != float64(1400) || c.Route.PathMTU != 1400):
				t.Errorf("%s: measured %v, route path_mtu_bytes %d, want 1400", c.Name, ch.Measured, c.Route.PathMTU)
			case c.Name != "hk-cn2-gia" && !strings.HasPrefix(ch.Note, "no data"):
				t.Errorf("%s: note %q, want no data", c.Name, ch.Note)
			}
		}
	}
	if seen != len(res.Candidates) || seen == 0 {
		t.Errorf("%d min_path_mtu checks for %d candidates", seen, len(res.Candidates))
	}
	out, _ = runCapture(t, "compare", "--offline", "--format", "markdown", cands)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "path MTU >= 1500 bytes") {
		t.Errorf("the table does not state the threshold:\n%.3000s", out)
	}
}

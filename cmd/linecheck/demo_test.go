package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// runCapture runs the CLI in-process with args and returns stdout and the exit code.
func runCapture(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	testIO.SetOut(&out)
	defer testIO.SetOut(nil)
	code := testIO.run(context.Background(), args)
	return out.String(), code
}

func TestDemoOffTerminalPrintsReportAndExitsZero(t *testing.T) {
	out, code := runCapture(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit code %d, want 0; output:\n%s", code, out)
	}
	for _, name := range []string{"hk-cn2-gia", "hk-bgp", "tokyo", "la"} {
		if !strings.Contains(out, name) {
			t.Errorf("demo report does not mention candidate %q:\n%s", name, out)
		}
	}
}

func TestDemoJSONIsACompareDocument(t *testing.T) {
	out, code := runCapture(t, "demo", "--format", "json")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var doc struct {
		Schema     string `json:"schema"`
		Candidates []struct {
			Name string `json:"name"`
		} `json:"candidates"`
		Ranking []string `json:"ranking"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("demo --format json is not JSON: %v\n%s", err, out)
	}
	if doc.Schema != "linecheck.compare/v1" || len(doc.Candidates) != 4 || len(doc.Ranking) != 4 {
		t.Errorf("schema %q, %d candidates, ranking %v; want linecheck.compare/v1 with 4 and 4", doc.Schema, len(doc.Candidates), doc.Ranking)
	}
}

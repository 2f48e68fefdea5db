package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareOutputIsAtomic: -o writes the whole report or nothing — into a
// directory that does not exist it fails with exit 2 naming the flag and
// leaves nothing; a successful run replaces the previous report and leaves
// no temporary file behind.
func TestCompareOutputIsAtomic(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := lcRun(t, "compare", "--offline", "../../samples/candidates.yaml", "-o", filepath.Join(dir, "missing", "r.txt"))
	if code != 2 || !strings.Contains(stderr, "-o ") {
		t.Errorf("missing directory: exit %d, %q; want 2 naming -o", code, stderr)
	}
	out := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(out, []byte("previous report\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := lcRun(t, "compare", "--offline", "../../samples/candidates.yaml")
	if code != 0 {
		t.Fatalf("compare to stdout: exit %d", code)
	}
	if _, _, code := lcRun(t, "compare", "--offline", "../../samples/candidates.yaml", "-o", out); code != 0 {
		t.Fatalf("compare -o: exit %d", code)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The Generated stamp is not in the table format: the two runs agree.
	if string(got) != stdout {
		t.Errorf("-o wrote %d bytes, stdout had %d: not the whole report", len(got), len(stdout))
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced report lost its mode: %v", st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// A candidates file that still says sla.jitter_rfc3550_ms is compared as if
// it said jitter_ms, with one warning on stderr naming the file, the key's
// line and the new key; the report is the same as the bundled samples'
// (issue 35).
func TestCompareReadsTheOldJitterKeyWithAWarning(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../samples")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "candidates.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), "jitter_ms: 5,", "jitter_rfc3550_ms: 5,", 1)
	if old == string(b) {
		t.Fatal("samples/candidates.yaml has no sla jitter_ms: 5")
	}
	line := 1 + strings.Count(old[:strings.Index(old, "jitter_rfc3550_ms")], "\n")
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, wantCode := lcRun(t, "compare", "--offline", "../../samples/candidates.yaml", "--format", "csv")
	got, stderr, code := lcRun(t, "compare", "--offline", p, "--format", "csv")
	if code != wantCode {
		t.Fatalf("exit %d, want %d as with the new key; stderr %q", code, wantCode, stderr)
	}
	warning := fmt.Sprintf("linecheck compare: warning: %s:%d: sla.jitter_rfc3550_ms is now jitter_ms", p, line)
	if strings.Count(stderr, "warning:") != 1 || !strings.Contains(stderr, warning) {
		t.Errorf("stderr %q, want one warning %q…", stderr, warning)
	}
	if got != want {
		t.Errorf("report differs from the one with jitter_ms:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(got, ",jitter_ms,") {
		t.Errorf("report has no jitter_ms check:\n%s", got)
	}
}

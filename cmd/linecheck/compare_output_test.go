package main

import (
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

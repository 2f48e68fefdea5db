package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o644&^testUmask() {
		t.Errorf("the report's mode: %v, want 0644 less the umask", st.Mode())
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

// testUmask is the process's umask (read by setting it and putting it back).
func testUmask() os.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return os.FileMode(m)
}

// TestOutputsFollowTheUmaskAndRefuseAFIFO: under umask 077 compare -o,
// bill --plot and ping --stream-file create 0600 files, also over a 0644
// file of that name; a FIFO at the output path is refused at once with
// exit 2, is not opened (no reader: an open would block) and stays.
func TestOutputsFollowTheUmaskAndRefuseAFIFO(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "r.txt")
	plot := filepath.Join(dir, "bill.svg")
	stream := filepath.Join(dir, "probes.ndjson")
	if err := os.WriteFile(report, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(report, 0o644)
	runs := func(compareOut, plotOut, streamOut string) [][]string {
		return [][]string{
			{"compare", "--offline", "../../samples/candidates.yaml", "-o", compareOut},
			{"bill", sampleCSV, "--offers", sampleOffers, "--plot", plotOut},
			{"ping", "--tcp", "9", "-c", "1", "--timeout", "100ms", "--stream-file", streamOut, "127.0.0.1"},
		}
	}
	// The children inherit the umask.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, args := range runs(report, plot, stream) {
		if _, stderr, code := lcRun(t, args...); code > 1 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, name := range []string{report, plot, stream} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v under umask 077, want 0600", filepath.Base(name), st.Mode().Perm())
		}
	}
	fifoDir := t.TempDir()
	fifos := []string{filepath.Join(fifoDir, "r.txt"), filepath.Join(fifoDir, "bill.svg"), filepath.Join(fifoDir, "probes.ndjson")}
	for _, f := range fifos {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	for _, args := range runs(fifos[0], fifos[1], fifos[2]) {
		_, stderr, code := lcRun(t, args...)
		if code != 2 || !strings.Contains(stderr, "named pipe (FIFO)") || !strings.Contains(stderr, fifoDir) {
			t.Errorf("%v: exit %d, %q; want 2 naming the FIFO", args[0], code, stderr)
		}
	}
	entries, _ := os.ReadDir(fifoDir)
	if len(entries) != len(fifos) {
		t.Errorf("left in the directory: %v", entries)
	}
}

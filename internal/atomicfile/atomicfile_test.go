package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "report.html")
	if err := WriteFile(name, []byte("first good report"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer that fails halfway (as a render does on ENOSPC) leaves the
	// previous report and no temporary file behind.
	boom := errors.New("no space left on device")
	err := Write(name, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half of the sec")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's error", err)
	}
	got, _ := os.ReadFile(name)
	if string(got) != "first good report" {
		t.Fatalf("previous report destroyed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := WriteFile(name, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(name)
	st, _ := os.Stat(name)
	if string(got) != "second" || st.Mode().Perm() != 0o644 {
		t.Fatalf("rewrite: %q mode %v (want the replaced file's 0644)", got, st.Mode().Perm())
	}
}

func TestWriteNewFileGetsPermAndMissingDirIsAnError(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "plot.svg")
	if err := WriteFile(name, []byte("<svg/>"), 0o640); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	missing := filepath.Join(dir, "no", "such", "x.svg")
	if err := WriteFile(missing, nil, 0o644); err == nil || err.Error() != "create "+missing+": no such file or directory" {
		t.Fatalf("a missing directory: %v, want an error naming %s", err, missing)
	}
}

func TestWriteToDevNullWritesDirectly(t *testing.T) {
	if err := WriteFile(os.DevNull, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCreateStreamsToATempFileAndCommitsWhole(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "probes.ndjson")
	if err := WriteFile(name, []byte("previous good run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A run that fails keeps the previous file and leaves no temporary one.
	f, err := Create(name, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "record 1\n")
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	// While the run lasts, the records are readable in the temporary file.
	if got, _ := os.ReadFile(f.TempName()); string(got) != "record 1\n" {
		t.Fatalf("temp file while streaming: %q", got)
	}
	f.Abort()
	if got, _ := os.ReadFile(name); string(got) != "previous good run\n" {
		t.Fatalf("aborted run destroyed the previous file: %q", got)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left behind: %v", es)
	}
	// A run that ends well replaces it, with the replaced file's mode.
	f, err = Create(name, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "record A\nrecord B\n")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	got, _ := os.ReadFile(name)
	st, _ := os.Stat(name)
	if string(got) != "record A\nrecord B\n" || st.Mode().Perm() != 0o600 {
		t.Fatalf("committed: %q mode %v", got, st.Mode().Perm())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left behind: %v", es)
	}
}

func TestCreateInAReadOnlyDirFailsAndKeepsTheFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into a read-only directory")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "probes.ndjson")
	os.WriteFile(name, []byte("good"), 0o644)
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if _, err := Create(name, 0o644); err == nil || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "good" {
		t.Fatalf("file changed: %q", got)
	}
}

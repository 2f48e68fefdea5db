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

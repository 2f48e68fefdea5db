package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	if string(got) != "second" || st.Mode().Perm() != 0o600 {
		t.Fatalf("rewrite: %q mode %v (want the 0600 asked for, not the replaced file's 0644)", got, st.Mode().Perm())
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
	// A run that ends well replaces it, with the mode asked for less the
	// umask (not the replaced file's 0600).
	defer syscall.Umask(syscall.Umask(0o022))
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
	if string(got) != "record A\nrecord B\n" || st.Mode().Perm() != 0o644 {
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

// withUmask runs fn under umask mask (process-wide: these tests are not
// parallel).
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

func TestNewAndReplacedFilesFollowTheUmask(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.html")
	replaced := filepath.Join(dir, "old.html")
	if err := os.WriteFile(replaced, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(replaced, 0o644); err != nil {
		t.Fatal(err)
	}
	withUmask(t, 0o077, func() {
		for _, name := range []string{fresh, replaced} {
			if err := WriteFile(name, []byte("report"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The streaming writer too (ping --stream-file).
		f, err := Create(filepath.Join(dir, "records.jsonl"), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("{}\n"))
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
	})
	for _, name := range []string{fresh, replaced, filepath.Join(dir, "records.jsonl")} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v under umask 077, want 0600", filepath.Base(name), st.Mode().Perm())
		}
	}
	withUmask(t, 0o022, func() {
		if err := WriteFile(fresh, []byte("again"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("umask 022: mode %v, want 0644", st.Mode().Perm())
	}
}

func TestAFIFOOrDeviceIsRefusedNotOpened(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opening the FIFO for writing would block until someone reads it: the
	// write must fail at once instead.
	done := make(chan error, 1)
	go func() { done <- WriteFile(fifo, []byte("secret report"), 0o644) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WriteFile blocked on a FIFO")
	}
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe (FIFO)") {
		t.Fatalf("err = %v, want ErrNotRegular naming %s as a named pipe", err, fifo)
	}
	if _, err := Create(fifo, 0o644); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Create: %v, want ErrNotRegular", err)
	}
	if err := WriteFile(os.DevNull, []byte("x"), 0o644); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
		t.Fatalf("%s: %v, want ErrNotRegular (a character device)", os.DevNull, err)
	}
	if err := WriteFile(dir, []byte("x"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a directory: %v, want ErrNotRegular", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced or removed: %v %v", st, err)
	}
}

func TestASymlinkIsReplacedNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.html")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("report"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Fatalf("the link's target was written: %q", got)
	}
	if st, _ := os.Lstat(link); !st.Mode().IsRegular() {
		t.Fatalf("%s is still %v", link, st.Mode())
	}
}

// deadPID is the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("true: %v", err)
	}
	pid := cmd.Process.Pid
	if syscall.Kill(pid, 0) != syscall.ESRCH {
		t.Skipf("pid %d reused already", pid)
	}
	return pid
}

func TestTheNextWriterRemovesTheTemporaryFilesOfKilledWriters(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "report.html")
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Skipf("sleep: %v", err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	dead := deadPID(t)
	stale := []string{
		".report.html.tmp-" + strconv.Itoa(dead) + "-0a1b2c3d",
		".report.html.tmp-" + strconv.Itoa(dead) + "-99999999",
	}
	keep := []string{
		".report.html.tmp-" + strconv.Itoa(live.Process.Pid) + "-0a1b2c3d", // a writer still running
		".other.html.tmp-" + strconv.Itoa(dead) + "-0a1b2c3d",              // another output's
		".report.html.tmp-notapid",
		"report.html.tmp-" + strconv.Itoa(dead) + "-1",
	}
	for _, n := range append(append([]string{}, stale...), keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(name, []byte("report"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := append([]string{"report.html"}, keep...)
	for _, n := range want {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed (or missing): %v", n, err)
		}
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s (PID %d, not running) left behind", n, dead)
		}
	}
	if len(got) != len(want) {
		t.Errorf("directory holds %v, want %v", got, want)
	}
}

func TestAKilledWriterLeavesATemporaryFileTheNextWriterRemoves(t *testing.T) {
	if os.Getenv("ATOMICFILE_CHILD") != "" {
		f, err := Create(os.Getenv("ATOMICFILE_CHILD"), 0o644)
		if err != nil {
			os.Exit(3)
		}
		f.Write([]byte("half"))
		f.Flush()
		os.Stdout.WriteString(f.TempName() + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "records.jsonl")
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAKilledWriterLeavesATemporaryFileTheNextWriterRemoves$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+name)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var b [4096]byte
		n, _ := out.Read(b[:])
		cmd.Process.Kill()
		cmd.Wait()
		if !strings.Contains(string(b[:n]), ".records.jsonl.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-") {
			t.Fatalf("child wrote %q, want its temporary file's name with its PID", b[:n])
		}
		// Each writer removed the previous killed one's file: one is left.
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("after a killed writer: %v, want its temporary file only", entries)
		}
	}
	if err := WriteFile(name, []byte("whole"), 0o644); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "records.jsonl" {
		t.Fatalf("after the next write: %v, want only records.jsonl", entries)
	}
}

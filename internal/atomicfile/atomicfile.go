// Package atomicfile writes output files so that a reader never sees half of
// one: the data goes to a temporary file in the same directory, which is
// synced and then renamed over the target. On any error (ENOSPC, a failed
// render) the temporary file is removed and a previous file of that name is
// left as it was.
package atomicfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Write calls fn with a buffered writer onto a temporary file next to name and,
// when fn and every write succeed, renames it to name. The file is created
// with perm less the process's umask, as a shell redirection would create
// it, whatever the mode of a file it replaces. A name that is a FIFO, a
// device, a socket or a directory is refused (ErrNotRegular): opening a FIFO
// would block, or hand the report to whoever reads it.
func Write(name string, perm fs.FileMode, fn func(w io.Writer) error) error {
	a, err := Create(name, perm)
	if err != nil {
		return err
	}
	if err := fn(a.bw); err != nil {
		a.Abort()
		return err
	}
	return a.Commit()
}

// WriteFile is Write for data already in memory, in the manner of os.WriteFile.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ErrNotRegular is wrapped by the error for an output name that exists and
// is not a regular file (or a symbolic link, which is replaced, not
// followed).
var ErrNotRegular = errors.New("not a regular file")

// File is an output written as it is produced (a stream of records) that
// still replaces name only whole: the data goes to a temporary file next to
// name (".NAME.tmp-PID-RANDOM", which a `tail -f` can follow while the run
// lasts) and Commit renames it over name. Abort, or a Commit that fails,
// removes the temporary file and leaves a previous file of that name as it
// was. A writer killed before either leaves its temporary file; the next
// Create of the same name removes those whose PID is no longer running.
type File struct {
	name, tmp string
	f         *os.File
	bw        *bufio.Writer
	done      bool
}

// Check says whether name can be written: it is absent, a regular file or a
// symbolic link (replaced, never followed). Commands call it before a long
// run so that a bad output name fails at once, not at the end.
func Check(name string) error {
	st, err := os.Lstat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	m := st.Mode()
	if m.IsRegular() || m&fs.ModeSymlink != 0 {
		return nil
	}
	return fmt.Errorf("%s is %s, %w: linecheck writes an output only to a regular file it can replace whole (write to stdout and redirect it, or name a file)", name, kind(m), ErrNotRegular)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}

// tmpPrefix starts the name of every temporary file of name's writers.
func tmpPrefix(base string) string { return "." + base + ".tmp-" }

// Create starts a File that will become name, created with perm less the
// umask. It first removes the temporary files that killed writers of name
// left behind.
func Create(name string, perm fs.FileMode) (*File, error) {
	if err := Check(name); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	f, err := createTemp(dir, base, perm)
	if err != nil {
		// Name the file the user asked for, not the temporary one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &fs.PathError{Op: "create", Path: name, Err: pe.Err}
		}
		return nil, err
	}
	return &File{name: name, tmp: f.Name(), f: f, bw: bufio.NewWriter(f)}, nil
}

// createTemp creates ".BASE.tmp-PID-RANDOM" in dir with perm less the umask
// (the kernel applies it at O_CREAT); O_EXCL never opens what is there,
// a symbolic link included.
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	prefix := filepath.Join(dir, tmpPrefix(base)+strconv.Itoa(os.Getpid())+"-")
	for range 100 {
		var r [4]byte
		_, _ = rand.Read(r[:])
		f, err := os.OpenFile(prefix+hex.EncodeToString(r[:]), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm.Perm())
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, &fs.PathError{Op: "create", Path: prefix + "*", Err: fs.ErrExist}
}

// removeStale removes base's temporary files whose writer (the PID in the
// name) no longer runs: each was left by a writer killed before it could
// commit or abort. Files of a running writer, of this process, or in
// another form are left alone.
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tmpPrefix(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Write appends p (buffered; Flush pushes it to the temporary file).
func (a *File) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Flush writes the buffered data to the temporary file, so that a reader
// following it sees every record written so far.
func (a *File) Flush() error { return a.bw.Flush() }

// TempName is the file the data goes to until Commit.
func (a *File) TempName() string { return a.tmp }

// Commit flushes, syncs and renames the temporary file to name. On an error
// the temporary file is removed.
func (a *File) Commit() (err error) {
	if a.done {
		return errors.New("atomicfile: " + a.name + " already closed")
	}
	a.done = true
	defer func() {
		if err != nil {
			a.f.Close()
			os.Remove(a.tmp)
		}
	}()
	if err = a.bw.Flush(); err != nil {
		return err
	}
	if err = a.f.Sync(); err != nil {
		return err
	}
	if err = a.f.Close(); err != nil {
		return err
	}
	return os.Rename(a.tmp, a.name)
}

// Abort drops what was written: the temporary file is removed and name is
// left as it was. After Commit it does nothing, so it can be deferred.
func (a *File) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	os.Remove(a.tmp)
}

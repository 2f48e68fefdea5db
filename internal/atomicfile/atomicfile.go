// Package atomicfile writes output files so that a reader never sees half of
// one: the data goes to a temporary file in the same directory, which is
// synced and then renamed over the target. On any error (ENOSPC, a failed
// render) the temporary file is removed and a previous file of that name is
// left as it was.
package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write calls fn with a buffered writer onto a temporary file next to name and,
// when fn and every write succeed, renames it to name. The file gets perm (or
// the mode of the file it replaces). A special target such as /dev/stdout is
// written directly: it cannot be renamed over.
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

// File is an output written as it is produced (a stream of records) that
// still replaces name only whole: the data goes to a temporary file next to
// name (".NAME.tmp-*", which a `tail -f` can follow while the run lasts) and
// Commit renames it over name. Abort, or a Commit that fails, removes the
// temporary file and leaves a previous file of that name as it was.
type File struct {
	name, tmp string
	perm      fs.FileMode
	f         *os.File
	bw        *bufio.Writer
	direct    bool // a special target such as /dev/stdout, written in place
	done      bool
}

// Create starts a File that will become name, with perm (or the mode of the
// file it replaces).
func Create(name string, perm fs.FileMode) (*File, error) {
	if st, err := os.Stat(name); err == nil {
		if !st.Mode().IsRegular() {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, perm)
			if err != nil {
				return nil, err
			}
			return &File{name: name, f: f, bw: bufio.NewWriter(f), direct: true}, nil
		}
		perm = st.Mode().Perm()
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		// Name the file the user asked for, not the temporary one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &fs.PathError{Op: "create", Path: name, Err: pe.Err}
		}
		return nil, err
	}
	return &File{name: name, tmp: f.Name(), perm: perm, f: f, bw: bufio.NewWriter(f)}, nil
}

// Write appends p (buffered; Flush pushes it to the temporary file).
func (a *File) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Flush writes the buffered data to the temporary file, so that a reader
// following it sees every record written so far.
func (a *File) Flush() error { return a.bw.Flush() }

// TempName is the file the data goes to until Commit (name itself for a
// special target).
func (a *File) TempName() string {
	if a.direct {
		return a.name
	}
	return a.tmp
}

// Commit flushes, syncs and renames the temporary file to name. On an error
// the temporary file is removed.
func (a *File) Commit() (err error) {
	if a.done {
		return errors.New("atomicfile: " + a.name + " already closed")
	}
	a.done = true
	if a.direct {
		return errors.Join(a.bw.Flush(), a.f.Close())
	}
	defer func() {
		if err != nil {
			a.f.Close()
			os.Remove(a.tmp)
		}
	}()
	if err = a.bw.Flush(); err != nil {
		return err
	}
	if err = a.f.Chmod(a.perm); err != nil {
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
	if !a.direct {
		os.Remove(a.tmp)
	}
}

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
func Write(name string, perm fs.FileMode, fn func(w io.Writer) error) (err error) {
	if st, err := os.Stat(name); err == nil {
		if !st.Mode().IsRegular() {
			return writeDirect(name, perm, fn)
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
			return &fs.PathError{Op: "create", Path: name, Err: pe.Err}
		}
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = fn(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// WriteFile is Write for data already in memory, in the manner of os.WriteFile.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func writeDirect(name string, perm fs.FileMode, fn func(w io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	return errors.Join(err, f.Close())
}

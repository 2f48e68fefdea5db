// Package readlimit reads input files with a bound on what is held: a file
// read whole is refused past a size named in the error, and a line reader
// refuses a line past a length. Pointed at /dev/zero, a FIFO that never
// ends or a multi-gigabyte file by mistake, a reader stops within its
// bound (issue 35: `trace --replay /dev/zero` grew to 6.5 GB and hung).
package readlimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// MiB is a mebibyte, the unit limits are named in.
const MiB = 1 << 20

// Limits of the files linecheck reads whole. Each is far above any real
// input of its kind (a trace of 64 hops is tens of kB, nvidia-smi -q -x of
// eight GPUs about 1 MB).
const (
	// Document is a JSON or YAML document read whole: a recorded trace, a
	// backtrace document, a target list.
	Document = 16 * MiB
	// ToolOutput is a saved tool output: nvidia-smi XML, query CSV or
	// topo -m text.
	ToolOutput = 16 * MiB
	// Line is the longest line of a line-oriented file (a journal entry).
	Line = 16 * MiB
)

// ErrTooLarge is wrapped by the error for an input past its limit.
var ErrTooLarge = errors.New("input too large")

// ReadFile reads path whole, refusing more than limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		// Said at once; a device or a FIFO has no size and is read.
		return nil, tooLarge(path, limit)
	}
	return ReadAll(f, path, limit)
}

// ReadAll reads r to its end, refusing more than limit bytes; name is used
// in the error.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(name, limit)
	}
	return b, nil
}

func tooLarge(name string, limit int64) error {
	return fmt.Errorf("%s: larger than %s; linecheck reads at most %s of it (%w: not the file meant?)", name, size(limit), size(limit), ErrTooLarge)
}

// LineReader reads lines of at most a limit.
type LineReader struct {
	br    *bufio.Reader
	limit int
	buf   []byte
}

// NewLineReader reads r line by line, refusing a line longer than limit
// bytes.
func NewLineReader(r io.Reader, limit int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64*1024), limit: limit}
}

// ReadLine is bufio.Reader.ReadBytes('\n') with the limit: the line with
// its newline (without at the end of the input), and ErrTooLarge wrapped
// in an error naming the limit once a line passes it. The slice is valid
// until the next call.
func (lr *LineReader) ReadLine() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		b, err := lr.br.ReadSlice('\n')
		if len(lr.buf)+len(b) > lr.limit {
			return nil, fmt.Errorf("a line longer than %s; linecheck reads lines of at most %s (%w: not the file meant?)", size(int64(lr.limit)), size(int64(lr.limit)), ErrTooLarge)
		}
		lr.buf = append(lr.buf, b...)
		if err != bufio.ErrBufferFull {
			return lr.buf, err
		}
	}
}

// Peek is the underlying reader's Peek.
func (lr *LineReader) Peek(n int) ([]byte, error) { return lr.br.Peek(n) }

func size(n int64) string {
	if n%MiB == 0 {
		return fmt.Sprintf("%d MiB", n/MiB)
	}
	return fmt.Sprintf("%d bytes", n)
}

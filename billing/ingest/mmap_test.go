package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logrotate's copytruncate cuts a live log to nothing while bill may be
// reading it. The reader maps large files: reading a page past the new end
// raised SIGBUS and killed the process. Now it is a ReadError naming the
// file (exit 2 in bill), whatever the reader was doing.
func TestMappedFileTruncatedWhileReadIsAnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.csv")
	var b strings.Builder
	b.WriteString("timestamp,interface,in_bytes,out_bytes\n")
	for i := range 60000 { // ~2.6 MB: mapped, several chunks
		fmt.Fprintf(&b, "%d,if%d,%d,%d\n", 1780272000+int64(i/4)*300, i%4, i, 2*i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int64
		opts ReadOptions
	}{
		{"to nothing, latest month", 0, ReadOptions{}},
		{"to nothing, a period", 0, ReadOptions{From: 1780272000, To: 1780272000 + 86400*60}},
		{"mid-file, latest month", 1 << 20, ReadOptions{}},
		{"inside the first page", 100, ReadOptions{From: 1780272000, To: 1780272000 + 86400*60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readFile(path, tc.opts, func() {
				if err := os.Truncate(path, tc.size); err != nil {
					t.Fatal(err)
				}
			})
			var re *ReadError
			if !errors.As(err, &re) || !errors.Is(err, ErrTruncated) || re.File != path ||
				!strings.Contains(err.Error(), "shrank") {
				t.Fatalf("err %v, want a ReadError for the truncated file", err)
			}
		})
	}
	// Untouched, the same file reads.
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if ss, err := readFile(path, ReadOptions{}, func() {}); err != nil || len(ss) != 4 {
		t.Fatalf("%d series, %v", len(ss), err)
	}
}

package readlimit

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestReadFileOfDevZeroStopsAtTheLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("/dev/zero", 2*MiB)
	if !errors.Is(err, ErrTooLarge) || err.Error() != "/dev/zero: larger than 2 MiB; linecheck reads at most 2 MiB of it (input too large: not the file meant?)" {
		t.Fatalf("%v", err)
	}
}

func TestReadAllKeepsWhatFits(t *testing.T) {
	b, err := ReadAll(strings.NewReader("0123456789"), "x", 10)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadAll(strings.NewReader("0123456789A"), "x", 10); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "x: larger than 10 bytes") {
		t.Fatalf("11 bytes, limit 10: %v", err)
	}
}

func TestLineReaderSplitsAndBoundsLines(t *testing.T) {
	long := strings.Repeat("a", 200*1024) // past the 64 KiB buffer: joined
	lr := NewLineReader(strings.NewReader("one\n"+long+"\nlast"), 300*1024)
	var got []string
	for {
		b, err := lr.ReadLine()
		if len(b) > 0 {
			got = append(got, string(b))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 || got[0] != "one\n" || got[1] != long+"\n" || got[2] != "last" {
		t.Fatalf("%d lines", len(got))
	}
	lr = NewLineReader(io.LimitReader(zeros{}, 1<<30), MiB)
	if _, err := lr.ReadLine(); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a line longer than 1 MiB") {
		t.Fatalf("an endless line: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestARegularFileOverTheLimitIsRefusedUnread(t *testing.T) {
	name := t.TempDir() + "/big.json"
	if err := os.WriteFile(name, []byte("0123456789A"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(name, 10); !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), name+": larger than 10 bytes") {
		t.Fatalf("%v", err)
	}
	if b, err := ReadFile(name, 11); err != nil || len(b) != 11 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
}

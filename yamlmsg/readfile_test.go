package yamlmsg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileRefusesFilesOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxConfigBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(big)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), big+": larger than a configuration file may be: the limit is 16 MiB") {
		t.Errorf("one byte over: %v", err)
	}
	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, make([]byte, MaxConfigBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ok); err != nil || len(b) != MaxConfigBytes {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	// An endless stream stops at the limit.
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero"); !errors.Is(err, ErrTooLarge) {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}

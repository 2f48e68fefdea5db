package yamlmsg

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxConfigBytes is the size limit of a configuration file (offers,
// candidates): 16 MiB holds a candidates file of 100,000 targets several
// times over, and stops /dev/zero or an endless pipe before the YAML parser
// holds gigabytes.
const MaxConfigBytes = 16 << 20

// ErrTooLarge is wrapped by ReadFile's error for a file over MaxConfigBytes.
var ErrTooLarge = errors.New("larger than a configuration file may be")

// ReadFile reads a configuration file of at most MaxConfigBytes; a larger
// one (or an endless stream) is refused after that many bytes, saying the limit.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: %w: the limit is %d MiB (is it the right file?)", path, ErrTooLarge, MaxConfigBytes>>20)
	}
	return data, nil
}

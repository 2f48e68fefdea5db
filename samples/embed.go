// Package samples holds the bundled, illustrative scenario that `linecheck
// demo` runs: four candidate servers with recorded forward and return traces
// and probe streams, a month of traffic and the providers' offers. All of it is
// synthetic (see README.md here); the addresses are never probed.
package samples

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed candidates.yaml offers.yaml rec/*.json rec/*.ndjson traffic/*.csv
var files embed.FS

// FS returns the bundled sample files.
func FS() fs.FS { return files }

// Extract writes the bundled samples into dir (created if needed) and returns
// the path of the candidates file in it.
func Extract(dir string) (string, error) {
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "candidates.yaml"), nil
}
